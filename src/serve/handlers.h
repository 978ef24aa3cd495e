/* handlers — one function per endpoint; each describes a response, none writes it. */
#ifndef GW_HANDLERS_H
#define GW_HANDLERS_H

#include "config.h"
#include "gateway.h"
#include "request.h"
#include "response.h"

struct caller;

/* caller is NULL on public routes. */
typedef void route_fn(struct worker *w, const struct config *cfg, struct request *req,
    const struct caller *caller, struct response *resp);

route_fn h_health;		/* h_health.c */
route_fn h_mcp_metadata;	/* h_meta.c */
route_fn h_protected_resource;
route_fn h_authorization_server;
route_fn h_server_json;
route_fn h_mcp;			/* h_mcp.c */
route_fn h_metrics;		/* h_metrics.c */

#endif
