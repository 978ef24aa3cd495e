/* mcp_call — an /mcp request as the parts of the exchange share it: mcp.c (the envelope,
 * the two eras, the way out), mcp_methods.c (the methods' handlers), mcp_list.c (list
 * pages and cursors), mcp_access.c (the policy's word and the audit log) and
 * mcp_session.c (sessions, DELETE, the standalone stream). Nothing outside them includes
 * it: the rest of the gateway sees mcp.h.
 *
 * Two lifetimes. A struct exchange is the HTTP request (a POST): mcp_exchange() fills
 * it as its checks pass and releases what it holds (the catalog reference, the visible
 * set) at its one exit. A struct element is one JSON-RPC request of it (the single
 * message, or one request of a batch): whoever dispatches it declares it zeroed with its
 * exchange, and it holds nothing to release once mcp_dispatch() returned. Handlers take
 * the element and reach the exchange through el->x. */
#ifndef GW_MCP_CALL_H
#define GW_MCP_CALL_H

#include <stdint.h>

#include "federate.h"
#include "input_seal.h"
#include "jsonrpc.h"
#include "mcp.h"
#include "method.h"
#include "policy.h"

/* What holds for the whole HTTP request. */
struct exchange {
	const struct req_ctx *rc;	/* the request, as the router made it */
	const struct mcp_env *env;
	const struct config *cfg;
	const struct caller *caller;
	const struct request *req;
	struct response *resp;
	struct limiter *lim;		/* the request's rate limits; NULL: none */
	int64_t until_ms;		/* the request's deadline (request-timeout-ms), monotonic */
	int modern;			/* 2026-07-28: JSON-RPC error bodies on 4xx, results with resultType */
	int stream_ok;			/* the client takes an event stream */
	int in_batch;			/* a batch: refusals are each element's JSON-RPC error, nothing is relayed */
	int splice_ok;			/* one answer, as a JSON body: a list page may come from the cache */
	struct session *sess;		/* the caller's session; NULL = stateless */
	json_t *doc;			/* the catalog: our reference, see mcp_catalog() */
	int doc_mine;			/* it is the caller's own (catalog_caller.h) */
	struct policy_caller pc;	/* who sees which tool (policy.c) */
	unsigned char profile[16];	/* what that depends on: list pages are cached per profile */
	/* The records of kind vis_kind the caller sees (NULL = all), decided by a list of
	 * that kind and kept for the request's next ones (a batch's elements) until a list
	 * of another kind replaces them. */
	uint32_t *vis;
	size_t n_vis;
	int vis_kind;			/* -1: none decided yet */
	const char *log_level;		/* the level the session set, once looked up (mcp_level_of) */
	int log_level_known;
};

/* One JSON-RPC request of the exchange. denied, denied_scopes, limit_rc and session_gone
 * say how a single request's HTTP answer departs from its JSON-RPC one; a batch element
 * answers with its JSON-RPC error alone. */
struct element {
	struct exchange *x;		/* the request it is part of */
	const struct method *mm;	/* its method (mcp_dispatch sets it) */
	json_t *id;			/* its request id (borrowed; mcp_dispatch sets it) */
	enum gw_err denied;		/* a single request the policy or a limit refused: its HTTP answer */
	char denied_scopes[512];	/* for insufficient_scope */
	int limit_rc;			/* refused by a rate limit: limiter.h's LIMIT_* */
	int pin_held;			/* a tool the pins hold back (pinning.h): refused */
	int session_gone;		/* an upstream forgot the caller's session: 404 it */
	json_t *err_data;		/* data of the error its method returns (mcp_dispatch takes it) */
	const char *splice;		/* its list page's serialized array (borrowed from the cache) */
	size_t splice_len;
};

/* A method's handler: its result, or NULL with err set. */
typedef json_t *mcp_fn(struct element *el, json_t *params, struct gw_error *err);

/* mcp_connect.c: a call of upstream (its section name) needs the person's account
 * there, not connected: a 2026-07-28 input_required result, or NULL with err (and
 * el->err_data) that send the person to the connect page. */
json_t *mcp_connect_required(struct element *el, json_t *params, const char *upstream, struct gw_error *err);
/* A 2026-07-28 call retried after our input_required (its requestState ours, for this
 * caller; its answer to our input "accept"): 1 with *relay, params without them (a new
 * reference); 0 when params carry no answer to ours; -1 with err (a requestState not
 * ours for this caller, or the person declined). */
int mcp_connect_retry(struct element *el, json_t *params, json_t **relay, struct gw_error *err);

/* mcp_input.c: an upstream's input_required relayed to a 2026-07-28 caller. */
/* A retry whose requestState is one of ours: 1 with *relay, params with the upstream's
 * own state (a new reference), and f->bound set to upstream (filled here) so that it
 * goes only there; 0 when there is none (or the caller is of an older revision); -1
 * with err when it is not ours for this caller, altered or expired. */
int mcp_input_retry(struct element *el, json_t *params, struct fed_call *f, char upstream[INPUT_UPSTREAM_MAX],
    json_t **relay, struct gw_error *err);
/* An upstream's input_required (result, stolen) from f->answered, for the caller: with
 * our requestState, or NULL with err (an older caller, a request that takes no input,
 * a malformed one). */
json_t *mcp_input_relay(struct element *el, const struct fed_call *f, json_t *result, struct gw_error *err);

/* mcp_ask.c: an upstream's input_required asked of a caller of an older revision. */
/* The SESSION_F_* flags of a client's capabilities at initialize. */
unsigned mcp_ask_flags(json_t *caps);
/* The client capabilities to declare to a stateless upstream for this request of an
 * older caller: what its session declared, when it can be asked (a session, an event
 * stream, not a batch); a new object, or NULL (nothing: not a caller who can be asked). */
json_t *mcp_ask_caps(const struct exchange *x);
/* The input result (stolen) from f->answered asked of the caller, answered, and the
 * upstream retried with params and the answers until it completes: its result, or NULL
 * with err. */
json_t *mcp_ask(struct element *el, struct fed_call *f, json_t *params, json_t *result, struct gw_error *err);
/* A caller's POSTed answer (msg) to a question of ours: kept for the call that waits
 * (1), or 0 when msg answers none of ours. */
int mcp_ask_answer(const struct exchange *x, json_t *msg);

/* mcp_level.c: logging/setLevel kept for the stateless upstreams of an older caller. */
/* The level params names, kept for x's session: 0, or -1 with err (not a level: -32602;
 * nowhere to keep it). */
int mcp_level_set(const struct exchange *x, json_t *params, struct gw_error *err);
/* fed_call.log_level of an older caller (f->ctx its element): the level its session set
 * ("debug".."emergency", static), or NULL (none set, no session); looked up once an
 * exchange. */
const char *mcp_level_of(const struct fed_call *f);

/* mcp_stream.c: the resources/subscribe, unsubscribe of an older caller at an upstream
 * it reaches statelessly, kept for its session (fed_call.keep; f->ctx an element). */
int mcp_stream_keep(struct fed_call *f, const char *uri, int on);

/* mcp_watch.c: the gateway's lists, as a stream watches them for changes. */
enum { MCP_WATCH_TOOLS, MCP_WATCH_PROMPTS, MCP_WATCH_RESOURCES, MCP_WATCH_N };
struct mcp_watch {
	int asked[MCP_WATCH_N];			/* which lists it watches */
	unsigned char digest[MCP_WATCH_N][32];	/* of each list's records, as last told */
	uint64_t serial;			/* of the worker's catalog view then */
};
/* List i's change as a 2026-07-28 listen names it ("toolsListChanged", ...). */
const char *mcp_watch_filter(size_t i);
/* w (its asked set) begins with the lists as doc holds them. */
void mcp_watch_begin(struct mcp_watch *w, const struct exchange *x, json_t *doc);
/* The lists now (the catalog fetched again when stale): for each watched that changed
 * since last told, and for list said (an index, or -1) whether or not, tell(ctx, its
 * list_changed method). 0, or tell's -1. */
int mcp_watch_now(struct mcp_watch *w, const struct exchange *x, int said, int (*tell)(void *ctx, const char *method),
    void *ctx);
/* An upstream's notification method: the list it says changed (an index; the host's
 * catalog expired, to be fetched again), or -1 when it is none of the lists'. */
int mcp_watch_upstream(const struct exchange *x, const char *method);

/* mcp_subscribe.c: subscriptions/listen (2026-07-28). */
json_t *mcp_subscribe(struct element *el, json_t *params, struct gw_error *err);

/* mcp_methods.c */
/* 1 when v is a revision that initialize negotiates. */
int mcp_version_legacy(const char *v);
/* Every revision this gateway speaks, newest first, as a new JSON array. */
json_t *mcp_versions_json(void);
/* The catalog, taken once per request (a reference the exchange releases at its end). */
json_t *mcp_catalog(struct exchange *x);
/* 1 when mm is offered to this request: its era, and an upstream the caller may reach. */
int mcp_method_offered(struct exchange *x, const struct method *mm);
/* *f filled for a federated call of this request (no catalog yet). */
void mcp_fed_init(const struct exchange *x, struct fed_call *f);
/* A JSON-RPC error response to id: e's code, and why (NULL: e's message). */
json_t *mcp_error(json_t *id, enum gw_err e, const char *why);
/* One valid request, el (zeroed but for el->x), to its response object; el then says
 * how a single request's HTTP answer departs from it (struct element). */
json_t *mcp_dispatch(struct element *el, const struct jr_msg *m);
/* A caller's notifications/cancelled, and its answer to a request an upstream made of
 * it, to its upstream sessions. */
void mcp_forward_cancel(const struct exchange *x, json_t *params);
void mcp_forward_answer(const struct exchange *x, json_t *msg);

/* mcp_list.c */
/* tools/list, prompts/list, resources/list, resources/templates/list. */
json_t *mcp_list(struct element *el, json_t *params, struct gw_error *err);
/* A list answer whose page came from the cache (el->splice) into the exchange's
 * response. Steals out. */
void mcp_answer_spliced(const struct element *el, json_t *out);

/* mcp_access.c */
/* Does the caller see record key of kind that upstream up offers (a list's filter: the
 * policy's word on it, policy_decide)? */
int mcp_sees(const struct exchange *x, enum catalog_kind kind, const char *key, const struct cfg_upstream *up);
/* May the caller reach the upstream named name for the kinds (bits of 1 << enum
 * catalog_kind) of what it offers: its own group admits it, or the caller sees a record
 * of one of those kinds from it (a group's prompts or resources grant it)? For its
 * capabilities (initialize) and its log level. */
int mcp_reaches(struct exchange *x, const char *name, unsigned kinds);
/* The policy's word on a tools/call, audited, then the tool's rate limit: 0 to go on,
 * or -1 with err (and el->denied for a single request). */
int mcp_gate_call(struct element *el, json_t *params, struct gw_error *err);

/* mcp_check.c: a tool's schemas held against its calls. */
/* A tools/call's arguments (params.arguments; none: {}) against its tool's inputSchema,
 * when its upstream validates: 0 to go on; -1 with err (GW_EPARAMS and the first error,
 * also in el->err_data; GW_EUPSTREAM when the schema cannot be checked). */
int mcp_check_args(struct element *el, json_t *params, struct gw_error *err);
/* A tools/call's result (stolen) against its tool's outputSchema, per validate-output:
 * the result, or (yes) a tool error saying why it was not passed on. Logged when it
 * does not match. */
json_t *mcp_check_result(struct element *el, json_t *params, json_t *result);
/* federate.c's gate (struct fed_call's gate, f->ctx the element) for what upstreams
 * offer besides tools. */
int mcp_gate_upstream(struct fed_call *f, const char *method, const struct cfg_upstream *up, enum catalog_kind kind,
    const char *key, int alone);
/* The caller's tenant exists (or there is no policy): 0, or -1 with the 403 in resp. */
int mcp_tenant_check(const struct config *cfg, const struct caller *caller, struct response *resp);

/* mcp_session.c */
/* The caller digest sessions and cursors are bound to (cfg's bind and the caller). */
void mcp_caller_who(const struct config *cfg, const struct caller *caller, char who[33]);
/* After an initialize that succeeded: a fresh Mcp-Session-Id, with upstream sessions. */
void mcp_issue_session(struct exchange *x, json_t *params, json_t *answer);
/* A presented Mcp-Session-Id opened for this caller into *s (none: stateless, 0); -1
 * when it is not one, -2 when its tombstones cannot be read. */
int mcp_check_session(const struct req_ctx *rc, struct session *s);
/* What DELETE and GET /mcp begin with: never stored, and only for a caller of a
 * configured tenant. 0, or -1 answered. */
int mcp_session_route(struct req_ctx *rc);

#endif
