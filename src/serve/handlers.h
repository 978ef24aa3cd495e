/* handlers — one function per endpoint; each describes a response, none writes it. */
#ifndef GW_HANDLERS_H
#define GW_HANDLERS_H

#include "config.h"
#include "gateway.h"
#include "request.h"
#include "response.h"

struct caller;
struct limiter;

/* One request, as the router hands it to a handler: what it holds for the whole
 * request (the worker of the thread, the shared state and the configuration it took
 * at the start, even if a reload or the tick swaps in others meanwhile), the request
 * and its response, and on a route that needs one the caller and its rate limits. */
struct req_ctx {
	struct worker *w;
	struct shared *sh;
	const struct config *cfg;
	struct request *req;
	struct response *resp;
	const struct caller *caller;	/* NULL on public routes */
	struct limiter *lim;		/* the caller's rate limits; NULL: none */
};

typedef void route_fn(struct req_ctx *rc);

route_fn h_health;		/* h_health.c */
route_fn h_mcp_metadata;	/* h_meta.c */
route_fn h_protected_resource;
route_fn h_authorization_server;
route_fn h_server_json;
route_fn h_mcp;			/* h_mcp.c */
route_fn h_metrics;		/* h_metrics.c */

#endif
