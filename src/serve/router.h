/* router — the route table and the one gate every request passes. */
#ifndef GW_ROUTER_H
#define GW_ROUTER_H

#include "config.h"
#include "gateway.h"
#include "request.h"
#include "response.h"
#include "auth.h"
#include "req_ctx.h"
#include "sink.h"

/* 1 when a browser Origin may use /mcp: the resource's own origin, or one listed in
 * allowed-origins ("*" = any), compared without regard to case. */
int router_origin_allowed(const struct config *cfg, const char *origin);
/* A token the gateway itself obtained at the issuer (the connect page's sign-in),
 * checked as a caller's is (auth_verify_token), with the worker's auth environment. */
int router_verify_token(struct req_ctx *rc, const char *tok, size_t len, struct caller *caller,
    struct gw_error *err);
/* Routes, checks and runs the handler; fills resp. cfg may be NULL (no usable config). */
void router_dispatch(struct worker *w, const struct config *cfg, struct request *req,
    struct response *resp);
/* The whole exchange: dispatch on the current configuration, write, log one line. */
void router_serve(struct worker *w, struct request *req, struct sink *out);

#endif
