/* handlers — one function per endpoint; each describes a response, none writes it.
 * A handler takes the request's context (req_ctx.h), made by the router. */
#ifndef GW_HANDLERS_H
#define GW_HANDLERS_H

#include "config.h"
#include "gateway.h"
#include "req_ctx.h"
#include "request.h"
#include "response.h"

typedef void route_fn(struct req_ctx *rc);

route_fn h_health;		/* h_health.c */
route_fn h_mcp_metadata;	/* h_meta.c */
route_fn h_protected_resource;
route_fn h_authorization_server;
route_fn h_server_json;
route_fn h_client_document;	/* the connect page's Client ID Metadata Document */
route_fn h_mcp;			/* h_mcp.c */
route_fn h_metrics;		/* h_metrics.c */
route_fn h_connect;		/* h_connect.c */

#endif
