/* mcp_call — one /mcp request as the parts of the exchange share it: mcp.c (the
 * envelope, the two eras, the way out), mcp_methods.c (the methods' handlers), mcp_list.c
 * (list pages and cursors), mcp_access.c (the policy's word and the audit log) and
 * mcp_session.c (sessions, DELETE, the standalone stream). Nothing outside them
 * includes it: the rest of the gateway sees mcp.h. */
#ifndef GW_MCP_CALL_H
#define GW_MCP_CALL_H

#include <stdint.h>

#include "federate.h"
#include "jsonrpc.h"
#include "mcp.h"
#include "method.h"
#include "policy.h"

struct mcp_call {
	const struct mcp_env *env;
	const struct method *mm;	/* the method being answered */
	json_t *id;			/* its request id (borrowed) */
	struct session *sess;		/* the caller's session; NULL = stateless */
	json_t *doc;			/* the catalog: our reference, see mcp_catalog() */
	int session_gone;		/* an upstream forgot the caller's session: 404 it */
	struct policy_caller pc;	/* who sees which tool (policy.c) */
	unsigned char profile[16];	/* what that depends on: list pages are cached per profile */
	uint32_t *vis;			/* the records of kind vis_kind this caller sees; NULL = all */
	size_t n_vis;
	int vis_kind;			/* -1: none decided yet */
	enum gw_err denied;		/* a request the policy refused: the answer of a single request */
	char denied_scopes[512];	/* for insufficient_scope */
	int limit_rc;			/* denied by a rate limit: limiter.h's LIMIT_* */
	json_t *err_data;		/* data of the error a method returns (mcp_dispatch takes it) */
	const struct config *cfg;
	const struct caller *caller;
	const struct request *req;
	struct response *resp;
	int64_t until_ms;	/* the request's deadline (request-timeout-ms), monotonic */
	int in_batch;
	int modern;		/* 2026-07-28: JSON-RPC error bodies on 4xx, results with resultType */
	int stream_ok;		/* the client takes an event stream */
	int splice_ok;		/* one answer, as a JSON body: a list page may come from the cache */
	const char *splice;	/* that page's serialized array (borrowed from the cache) */
	size_t splice_len;
};

/* A method returns its result, or NULL with err set. */
typedef json_t *mcp_fn(struct mcp_call *c, json_t *params, struct gw_error *err);

/* mcp_methods.c */
/* 1 when v is a revision that initialize negotiates. */
int mcp_version_legacy(const char *v);
/* Every revision this gateway speaks, newest first, as a new JSON array. */
json_t *mcp_versions_json(void);
/* The catalog, taken once per request (a reference the exchange releases at its end). */
json_t *mcp_catalog(struct mcp_call *c);
/* 1 when mm is offered to this request: its era, and an upstream the caller may reach. */
int mcp_method_offered(struct mcp_call *c, const struct method *mm);
/* *f filled for a federated call of this request (no catalog yet). */
void mcp_fed_init(struct mcp_call *c, struct fed_call *f);
/* A JSON-RPC error response to id: e's code, and why (NULL: e's message). */
json_t *mcp_error(json_t *id, enum gw_err e, const char *why);
/* One valid request to its response object. */
json_t *mcp_dispatch(struct mcp_call *c, const struct jr_msg *m);
/* A caller's notifications/cancelled, and its answer to a request an upstream made of
 * it, to its upstream sessions. */
void mcp_forward_cancel(struct mcp_call *c, json_t *params);
void mcp_forward_answer(struct mcp_call *c, json_t *msg);

/* mcp_list.c */
/* tools/list, prompts/list, resources/list, resources/templates/list. */
json_t *mcp_list(struct mcp_call *c, json_t *params, struct gw_error *err);
/* A list answer whose page came from the cache (c->splice) into resp. Steals out. */
void mcp_answer_spliced(const struct mcp_call *c, struct response *resp, json_t *out);

/* mcp_access.c */
/* May the caller reach this upstream's prompts, resources, completions, log level? */
int mcp_reaches(const struct mcp_call *c, const char *name);
/* The policy's word on a tools/call, audited: 0 to go on, or -1 with err. */
int mcp_gate_call(struct mcp_call *c, json_t *params, struct gw_error *err);
/* federate.c's gate (struct fed_call's gate) for what upstreams offer besides tools. */
int mcp_gate_upstream(struct fed_call *f, const char *method, const struct cfg_upstream *up, int alone);
/* The caller's tenant exists (or there is no policy): 0, or -1 with the 403 in resp. */
int mcp_tenant_check(const struct config *cfg, const struct caller *caller, struct response *resp);

/* mcp_session.c */
/* The caller digest sessions and cursors are bound to. */
void mcp_caller_who(const struct caller *caller, char who[33]);
/* After an initialize that succeeded: a fresh Mcp-Session-Id, with upstream sessions. */
void mcp_issue_session(struct mcp_call *c, json_t *params, json_t *answer);
/* A presented Mcp-Session-Id opened for this caller into *s (none: stateless, 0); -1
 * when it is not one, -2 when its tombstones cannot be read. */
int mcp_check_session(const struct mcp_env *env, const struct caller *caller, const struct request *req,
    struct session *s);

#endif
