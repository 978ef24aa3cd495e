/* req_ctx — one request as every module above the front takes it: the request and its
 * response, the configuration it started with, its caller and rate limits once the
 * router's gate has them, and a slot for each module that needs state of its own
 * (what the host shares and what the thread keeps, as that module sees it). The router
 * makes it (router.c); a handler, auth and the /mcp exchange take it whole instead of
 * each of its parts. Nothing in it is owned by it: it lives on the router's stack for
 * the one request. */
#ifndef GW_REQ_CTX_H
#define GW_REQ_CTX_H

#include "request.h"
#include "response.h"

struct worker;
struct shared;
struct config;
struct caller;
struct limiter;

/* The modules with a slot: each fills its own (auth's by the router's gate, mcp's by
 * h_mcp) with the environment its header declares, and reads it back with its
 * accessor, never another module's. */
enum req_slot {
	REQ_SLOT_AUTH,		/* struct auth_env (auth.h) */
	REQ_SLOT_MCP,		/* struct mcp_env (mcp.h) */
	REQ_SLOTS
};

struct req_ctx {
	struct worker *w;		/* the thread's (gateway.h): only the serve folder looks inside */
	struct shared *sh;		/* the host's shared state, held for the whole request */
	const struct config *cfg;	/* as the request started, even if a reload swaps in another */
	struct request *req;
	struct response *resp;
	const struct caller *caller;	/* NULL on public routes, and before the gate */
	struct limiter *lim;		/* the caller's rate limits; NULL: none */
	const void *slot[REQ_SLOTS];	/* each module's environment; NULL until it is filled */
};

#endif
