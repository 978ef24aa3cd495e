/* upstream — mcpgate as an MCP client of its [upstream] servers (Streamable HTTP over
 * libcurl): initialize with the gateway's own identity, the negotiated version and
 * session id per upstream, JSON or event-stream answers (sse.c, with caps), one reused
 * connection per worker and upstream, per-upstream timeouts. Credentials: the
 * upstream's auth-header-file, or, for an upstream reached as the caller, the token
 * the call's upstream_cred gives (one obtained for that upstream); the caller's own
 * token is never sent. */
#ifndef GW_UPSTREAM_H
#define GW_UPSTREAM_H

#include <jansson.h>
#include <stdint.h>

#include "config.h"
#include "err.h"
#include "sink.h"

#define UPSTREAM_MAX_RESPONSE	(8u << 20)	/* a JSON answer, or one event's data */
/* One event-stream line. A data line carries a whole JSON-RPC message, so this must
 * admit a message as large as UPSTREAM_MAX_RESPONSE, and its field name. */
#define UPSTREAM_LINE_SLACK	64u
#define UPSTREAM_MAX_LINE	(UPSTREAM_MAX_RESPONSE + UPSTREAM_LINE_SLACK)
/* An upstream's max-result ranges up to it. */
_Static_assert(UPSTREAM_MAX_RESPONSE == CFG_MAX_RESULT_LIMIT, "max-result's ceiling");
#define UPSTREAM_MAX_SESSION_ID	1024		/* an upstream's Mcp-Session-Id, in bytes */
#define UPSTREAM_WHO_MAX	48		/* upstream_call.who, with its NUL */
/* Callers without an upstream session of their own (a stateless revision, a client
 * that skipped initialize, an upstream whose session failed to open) are each carried
 * on a session the pool opens for them alone, never on another's: at most this many per
 * upstream and worker, the least recently used ended (DELETE) to make room. */
#define UPSTREAM_CALLER_SESSIONS	32
#define UPSTREAM_CLIENT_VERSION	"2025-11-25"	/* what initialize asks for */
/* The stateless revision: no initialize, no session; each request carries the protocol
 * version, the client's capabilities and clientInfo in params._meta, and the
 * MCP-Protocol-Version, Mcp-Method and Mcp-Name headers. An upstream speaks it when its
 * server/discover lists it. */
#define UPSTREAM_MODERN_VERSION	"2026-07-28"
#define UPSTREAM_DISCOVER_MS	2000	/* server/discover unanswered this long: an upstream of sessions */
/* After the answer on an event stream, how long the upstream may take to end the
 * stream (so that the connection is reused) before it is dropped. */
#define UPSTREAM_END_GRACE_MS	50
#define UPSTREAM_SLOW_MS	10	/* upstream_pool_on_wait: a call waiting this long, */
#define UPSTREAM_SLOW_AGAIN_MS	1000	/* and every this long after */
#define UPSTREAM_CLOSE_MS	1000	/* at most this long for a session's DELETE */
#define UPSTREAM_CANCEL_MS	1000	/* and for the notifications/cancelled of an abandoned call */

/* Per worker: a curl handle for each upstream (by section name), the gateway's own
 * session with it, and the sessions of callers that have none of their own (one per
 * caller: two callers never share an upstream session). Not shared between threads. */
struct upstream_pool;

struct upstream_pool *upstream_pool_new(void);
void upstream_pool_free(struct upstream_pool *p);
/* Connections opened so far: fewer than the requests made when connections are reused. */
unsigned long upstream_pool_connects(const struct upstream_pool *p);
/* fn(ctx, waited_ms) is called on the pool's thread when one of its calls has waited
 * UPSTREAM_SLOW_MS for its answer, and again every UPSTREAM_SLOW_AGAIN_MS it waits on:
 * the thread is then held by the upstream rather than working (the front may start
 * another worker meanwhile). A quicker answer, the usual one on a local network, calls
 * nothing. NULL: nothing is called. */
void upstream_pool_on_wait(struct upstream_pool *p, void (*fn)(void *ctx, int64_t waited_ms), void *ctx);

/* A message the upstream sends before its answer (notifications/progress,
 * notifications/message, a server-to-client request): 0 to go on, -1 to abandon the
 * call (the stream is dropped and notifications/cancelled sent for it), or
 * UPSTREAM_DECLINE: a request is then answered with an error at once (as is every
 * request when there is no on_msg). Borrowed.
 * Only JSON-RPC notifications and requests (a string "method") get here; nothing in
 * them is checked beyond that. Messages after the answer are dropped. */
typedef int upstream_msg_fn(void *ctx, json_t *msg);
#define UPSTREAM_DECLINE	1

/* How an upstream with credentials = exchange is reached as the caller: bearer(ctx, up,
 * again, &token, err) gives the token to send it (malloc'd, NUL-terminated; the pool
 * wipes and frees it); again = 1 after the upstream refused the last one (401): that
 * one is forgotten and another obtained. 0, or -1 with err. */
struct upstream_cred {
	int (*bearer)(void *ctx, const struct cfg_upstream *up, int again, char **token, struct gw_error *err);
	void *ctx;
};

struct upstream_call {
	const struct config *cfg;	/* the gateway's name and version for clientInfo */
	const struct cfg_upstream *up;
	const char *method;
	json_t *params;			/* borrowed; NULL = none */
	/* The upstream session to use: NULL = one the pool holds (initialized on first use,
	 * re-initialized once when the upstream answers 404): who's, else the gateway's own.
	 * A given one is sent as is (visible ASCII only) and a 404 on it is an error. */
	const char *session_id;
	/* Whom the call is for, when it has no session_id: an opaque digest of the caller
	 * (at most UPSTREAM_WHO_MAX - 1 bytes), whose session no other caller's call ever
	 * uses; NULL or "" = the gateway itself (the catalog). */
	const char *who;
	const char *version;		/* with session_id: its negotiated version (NULL = the newest) */
	/* The revision the catalog found the upstream speaking (UPSTREAM_MODERN_VERSION, or a
	 * revision of initialize); NULL = not known: sessions then, as before. The pool
	 * follows it: a stateless upstream gets no initialize and no session. */
	const char *revision;
	/* For a stateless upstream: the client capabilities to declare in each request's
	 * _meta (the caller's own, which the upstream's input_required may ask for);
	 * borrowed, NULL = none. */
	json_t *client_caps;
	/* For a stateless upstream: the log level to ask for in each request's _meta
	 * (MCP_META_LOG_LEVEL) when the caller's own _meta names none: what an older
	 * caller's session set with logging/setLevel; NULL = none. */
	const char *log_level;
	/* For a stateless upstream: what the request names (a tool or prompt name, a
	 * resource URI: its Mcp-Name header); NULL = nothing. */
	const char *mcp_name;
	/* The caller's credentials for an upstream reached as the caller (credentials =
	 * exchange); NULL: a call for no caller, which such an upstream does not get. */
	const struct upstream_cred *cred;
	/* The request's JSON-RPC id (borrowed): with a caller's own session, the caller's
	 * id, so that its notifications/cancelled can name it; NULL = the pool's next. */
	json_t *id;
	upstream_msg_fn *on_msg;	/* NULL = drop them */
	void *ctx;
	int64_t now_ms;			/* monotonic: the call ends by now_ms + timeout-ms */
	int64_t until_ms;		/* and by this (the caller's request's deadline); 0 = none */
	/* The caller's connection (borrowed; NULL = not watched): while a request waits,
	 * sink_gone() is asked at every wake-up, and a caller that went away abandons the
	 * call as an on_msg returning -1 does. A request is not sent for a caller already
	 * gone. */
	struct sink *client;
};

/* One JSON-RPC request to an upstream. 0 with *response the whole JSON-RPC response
 * object as the upstream sent it (a new reference): "jsonrpc" "2.0", the id the
 * gateway sent (call->id, else the pool's next number: the caller puts its client's
 * id back), and either an
 * object "result" or an object "error" (whose members are not checked). -1 with err
 * (GW_EUPSTREAM, and a reason fit for the log, "upstream NAME: ...") when the upstream
 * is down, slow past timeout-ms, answers garbage, over the caps, or not MCP; a
 * warning is logged then. */
int upstream_request(struct upstream_pool *p, const struct upstream_call *call,
    json_t **response, struct gw_error *err);

/* For an upstream spoken to in UPSTREAM_MODERN_VERSION: the capabilities it offers
 * clients of the revisions of initialize, which it may keep sessions for too (what
 * the gateway offers such callers, whose sessions it opens there): asked by a session
 * opened and ended (DELETE) at once. A new reference, or NULL when it keeps none (it
 * refuses initialize; nothing is logged). */
json_t *upstream_legacy_capabilities(struct upstream_pool *p, const struct upstream_call *call);

/* A new session with the upstream for one of the gateway's callers: initialize with the
 * caller's client capabilities (so that the upstream may ask it for sampling,
 * elicitation, roots) and the gateway's clientInfo. 0 with *session_id (malloc'd, NULL
 * when the upstream keeps no sessions) and version; -1 with err. Pass both back in
 * upstream_call.session_id/.version; a 404 on that session is then GW_ESESSION. */
int upstream_open(struct upstream_pool *p, const struct upstream_call *call, json_t *client_caps,
    char **session_id, char version[16], struct gw_error *err);
/* A message of the gateway's caller for the upstream, POSTed as is on
 * call->session_id: the answer to a request the upstream made (sampling, elicitation,
 * roots). 0 or -1 with err. */
int upstream_respond(struct upstream_pool *p, const struct upstream_call *call, json_t *msg,
    struct gw_error *err);
/* DELETE of call->session_id (best effort, UPSTREAM_CLOSE_MS at most): 0 when the
 * upstream took it, -1 when not (logged; left to expire there). */
int upstream_close(struct upstream_pool *p, const struct upstream_call *call);

/* What a standalone stream's reader calls every every_ms (the caller's keep-alives):
 * fn(ctx), which returns -1 to stop, else 0. fn NULL: nothing is called. */
struct upstream_tick {
	int (*fn)(void *ctx);
	void *ctx;
	int64_t every_ms;
	int hold;	/* go on ticking until until_ms when no stream is left (or none began) */
};

/* Standalone streams: a GET on each of the n calls' sessions (their up, session_id,
 * version, on_msg, ctx), or, for a call whose revision is UPSTREAM_MODERN_VERSION, a
 * POST of its method (subscriptions/listen) with its params and id, statelessly; read
 * together until every stream ends (unless the tick holds), an on_msg returns -1, the
 * tick returns -1, or until_ms (monotonic). Requests an on_msg declines are answered
 * with an error. 0 when the streams ended or time ran out, 1 when stopped by on_msg or
 * the tick. */
int upstream_listen(struct upstream_pool *p, const struct upstream_call *calls, size_t n,
    const struct upstream_tick *tick, int64_t until_ms);

/* Ends the pool's sessions (DELETE, UPSTREAM_CLOSE_MS each at most; once one is not
 * taken, the upstream's others are left to expire): a CGI run that opened them, or a
 * FastCGI worker that stops. cfg names the upstreams. */
void upstream_pool_end(struct upstream_pool *p, const struct config *cfg);

/* One notification (e.g. notifications/cancelled) on the call's session, else the
 * pool's (initialized first if need be); the upstream must answer 200, 202 or 204.
 * 0 or -1 with err. */
int upstream_notify(struct upstream_pool *p, const struct upstream_call *call,
    struct gw_error *err);

/* The capabilities the upstream offers, and the revision it is spoken to in (into
 * version, when not NULL): asked by server/discover first, unless the pool knows the
 * upstream for one that does not speak UPSTREAM_MODERN_VERSION; else those the
 * pool's initialize answered (which this makes first if need be). A new reference to
 * an object, or NULL with err. call->method names what they are wanted for (for the
 * log). */
json_t *upstream_capabilities(struct upstream_pool *p, const struct upstream_call *call,
    char version[16], struct gw_error *err);

#endif
