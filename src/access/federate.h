/* federate — the requests the gateway passes on to an upstream: which upstream a
 * tools/call, prompts/get, resources/read, completion/complete or logging/setLevel
 * belongs to (by exposed name, by URI or URI template, by completion reference, or all
 * that offer it), the name it has there, and the upstream's answer or a JSON-RPC error
 * a caller may read (what happened, never where). Also the capabilities the gateway
 * offers: the union of what its upstreams offer and it can relay. */
#ifndef GW_FEDERATE_H
#define GW_FEDERATE_H

#include <jansson.h>
#include <stdint.h>

#include "catalog.h"
#include "config.h"
#include "metrics.h"
#include "upstream.h"

enum { FED_DENIED = -1, FED_PASS = 0, FED_HIDDEN = 1 };

struct fed_call {
	const struct config *cfg;
	struct upstream_pool *pool;
	json_t *doc;			/* the catalog (catalog.h) */
	/* What the upstream sends before its answer. A request it makes of the caller
	 * (sampling, elicitation, roots) comes only over the caller's own session, with an
	 * id fed_answer() routes back; UPSTREAM_DECLINE refuses it. */
	upstream_msg_fn *on_msg;
	void *ctx;
	int64_t now_ms;			/* monotonic */
	int64_t until_ms;		/* the caller's request's deadline: no call lasts past it; 0 = none */
	struct sink *client;		/* the caller's connection, watched during calls (upstream.h); NULL = not */
	/* The caller's own upstream sessions, from its Mcp-Session-Id: {upstream name:
	 * [session id, version]}; NULL or absent names: a session the pool holds for who
	 * (below). */
	json_t *sessions;
	/* Whom the calls are for, when the caller has no session of its own at an upstream
	 * (upstream_call.who): its upstream session there is its alone. "" = the gateway. */
	char who[UPSTREAM_WHO_MAX];
	/* The caller's credentials for the upstreams reached as the caller (upcred.h); NULL:
	 * none (such an upstream is not called). */
	const struct upstream_cred *cred;
	json_t *id;			/* the caller's request id (borrowed) */
	/* The client capabilities the caller declared in its request (a stateless caller's
	 * _meta), which stateless upstreams are told: their input_required may ask for what
	 * they name (borrowed; NULL: none). */
	json_t *client_caps;
	/* The log level an older caller's session set (logging/setLevel), which an upstream
	 * it reaches statelessly is asked for in each request: asked of this only for such
	 * a call (a static string, or NULL: none). NULL: none. */
	const char *(*log_level)(const struct fed_call *f);
	/* resources/subscribe, unsubscribe (on: which) of uri at an upstream the caller
	 * reaches statelessly (which has neither): kept for the caller's session, which
	 * listens there on its standalone stream; 0, or -1 with f->err. NULL: refused. */
	int (*keep)(struct fed_call *f, const char *uri, int on);
	/* May the caller have what method names at up (NULL: always)? key is what it names
	 * there, a record of kind: an exposed name, a URI (a resource's, or one a template
	 * expands), a URI template; NULL for the upstream as a whole (logging/setLevel).
	 * FED_PASS; FED_HIDDEN, answered exactly as a name or URI the catalog does not hold;
	 * or FED_DENIED, with f->err set by the gate. alone: up is the request's one upstream
	 * (a refusal is its answer); 0 for one of several (the upstreams that offer a URI,
	 * those that offer logging), asked quietly. */
	int (*gate)(struct fed_call *f, const char *method, const struct cfg_upstream *up, enum catalog_kind kind,
	    const char *key, int alone);
	struct metrics *metrics;	/* where calls are counted ([metrics]) and upstreams observed; may be NULL */
	/* The upstream the request may go to alone (a retry whose requestState that
	 * upstream wrote): another is refused (-32602). NULL: any. */
	const char *bound;
	const char *answered;		/* out: the upstream that answered (borrowed from cfg) */
	struct gw_error err;		/* out, when the request fails */
	/* out: the data of the upstream's own JSON-RPC error, when it fails with one (a new
	 * reference: fed_request's caller releases it). */
	json_t *err_data;
	int session_gone;		/* an upstream no longer knows the caller's session */
};

/* 1 when method is one the gateway passes on (fed_request). */
int fed_relays(const char *method);
/* The result of method with params (borrowed) from the upstream it belongs to: a new
 * reference, or NULL with f->err. */
json_t *fed_request(struct fed_call *f, const char *method, json_t *params);
/* Sessions for a caller that just initialized: one with every upstream left in the
 * catalog, initialized with the caller's client capabilities. The map to keep in its
 * Mcp-Session-Id (a new reference; upstreams that failed or keep no session are left
 * out, and their calls go on a session the pool holds for this caller alone). */
json_t *fed_open_sessions(struct fed_call *f, json_t *client_caps);
/* The caller's answer (msg, a JSON-RPC response) to a request an upstream made of it
 * through on_msg: to that upstream, on the caller's session, under the original id.
 * 0, or -1 when the id is not one of ours, names no session of the caller's, or the
 * upstream did not take it. */
int fed_answer(struct fed_call *f, json_t *msg);
/* DELETE of every session in f->sessions (the caller ended its own). */
void fed_close_sessions(struct fed_call *f);
/* A notification (notifications/cancelled) to every session in f->sessions: each
 * upstream ignores a request id it does not know. */
void fed_notify_sessions(struct fed_call *f, const char *method, json_t *params);
/* What listen streams ask of each upstream of 2026-07-28 in the catalog (a
 * 2026-07-28 caller's subscriptions/listen, an older caller's standalone stream for
 * what its session subscribed to there): lists, the list changes asked for
 * ({toolsListChanged: true, ...}, or {}), and the URIs of uris the caller may read that
 * it owns, each appended to accepted: {name: notifications} (a new object; an upstream
 * asked nothing is left out). */
json_t *fed_listening(struct fed_call *f, json_t *lists, json_t *uris, json_t *accepted);
/* The caller's streams at once: a GET on each of its upstream sessions (f->sessions)
 * and, for each upstream of by (fed_listening's), a POST of subscriptions/listen under
 * f->id; every message to f->on_msg (requests under routing ids, as during a call),
 * until the streams end (unless the tick holds), on_msg or the tick returns -1, or
 * until_ms: upstream_listen's answer, or -1. */
int fed_listen(struct fed_call *f, json_t *by, const struct upstream_tick *tick, int64_t until_ms);
/* Which upstreams a caller may reach for a capability they offer besides tools
 * (prompts, resources, completions, logging: the policy's word, mcp_access.c); NULL:
 * all of them. */
struct fed_admit {
	int (*fn)(void *ctx, const char *upstream, const char *capability);
	void *ctx;
	/* The caller speaks a revision of initialize: an upstream spoken to statelessly
	 * offers it what it offered that revision (legacyCaps), when it keeps its sessions. */
	int legacy;
};
/* 0 when method needs a capability (resources, prompts, completions, logging) no
 * upstream of doc the caller may reach offers: the gateway then answers it as an
 * unknown method. */
int fed_offers(json_t *doc, const char *method, const struct fed_admit *admit);
/* The capabilities to announce to that caller for the catalog doc: a new object. */
json_t *fed_capabilities(json_t *doc, const struct fed_admit *admit);

#endif
