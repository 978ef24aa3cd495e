/* upstream_pool — what the parts of the MCP client share: upstream.c (the pool and the
 * lifecycle of sessions), upstream_post.c (one POST: the transfer engine, the wire's
 * checks) and upstream_listen.c (standalone streams). Nothing outside them includes
 * it: the rest of the gateway sees upstream.h. */
#ifndef GW_UPSTREAM_POOL_H
#define GW_UPSTREAM_POOL_H

#include <curl/curl.h>

#include "buf.h"

#include "upstream.h"

#define CONNECT_MAX_MS	5000L

/* A session the pool holds with an upstream: the gateway's own, or one for a caller. */
struct up_session {
	char who[UPSTREAM_WHO_MAX];	/* the caller it is for; "" = the gateway itself */
	int ready;		/* initialized: version (and session, when given) are valid */
	char *session;		/* Mcp-Session-Id the upstream gave us; NULL = none */
	char version[16];	/* negotiated protocol version */
	json_t *caps;		/* the server capabilities initialize answered (the gateway's own) */
	uint64_t used;		/* the pool's count of uses when last used: the least recent gives way */
};

struct up_conn {
	char *name;		/* the [upstream "name"] this is for */
	char *url;		/* the URL the sessions below belong to */
	CURL *h;
	struct up_session own;	/* the gateway's own session: the catalog, and the callers of a
				 * stateless upstream */
	/* The upstream keeps no sessions (its last initialize gave no Mcp-Session-Id): no
	 * caller's state can be kept there, so callers share the gateway's own. */
	int stateless;
	/* Whether it speaks UPSTREAM_MODERN_VERSION: 1 yes (no session is ever opened), -1
	 * no, 0 not known yet (sessions, as for one that does not). */
	int modern;
	struct up_session callers[UPSTREAM_CALLER_SESSIONS];
	size_t n_callers;
};

struct upstream_pool {
	CURLM *multi;		/* owns the connection cache */
	/* For an answer the gateway sends an upstream while one of its transfers is still
	 * running (declining a request the upstream made in the middle of a call). */
	CURLM *side_multi;
	CURL *side;
	struct up_conn *conns;
	size_t n;
	int64_t next_id;	/* JSON-RPC ids of the gateway's own requests */
	uint64_t uses;		/* sessions taken from the pool so far (up_session.used) */
	unsigned long connects;
	void (*on_wait)(void *ctx, int64_t waited_ms);	/* upstream_pool_on_wait */
	void *on_wait_ctx;
};

/* One POST: what to send, and what came back besides the body. */
struct post {
	const char *method;
	json_t *params;		/* borrowed; NULL = none */
	json_t *id;		/* borrowed; NULL = a notification */
	const char *session;	/* Mcp-Session-Id to send; NULL = none */
	const char *version;	/* MCP-Protocol-Version to send; NULL = none */
	int relay;		/* other messages go to the call's on_msg */
	int del;		/* a DELETE of the session, not a POST of method */
	json_t *raw;		/* borrowed: the message to POST as is (an answer) instead of method */
	int side;		/* on the pool's side handle: another transfer is running */
	int modern;		/* UPSTREAM_MODERN_VERSION: _meta and the Mcp-* headers */
	json_t *client_caps;	/* borrowed: the capabilities its _meta declares (NULL: none) */
	const char *log_level;	/* the log level its _meta asks for, unless the caller's does (NULL: none) */
	const char *name;	/* and its Mcp-Name header (NULL: none) */
	const char *bearer;	/* the caller's token for the upstream (upstream_post's); NULL = none */
	int64_t deadline_ms;	/* monotonic: the POST ends by then */
	long status;		/* out: HTTP status, 0 = none */
	char session_got[UPSTREAM_MAX_SESSION_ID + 1];	/* out: the answer's Mcp-Session-Id */
	int session_bad;	/* out: it had one, but not a usable one */
	int abandoned;		/* out: on_msg asked to stop */
};

/* upstream.c */
/* The pool's entry for an upstream; a changed URL starts over with a new session. */
struct up_conn *upstream_conn(struct upstream_pool *p, const struct cfg_upstream *up);

/* upstream_post.c */
/* One POST of one JSON-RPC message, by q->deadline_ms, with the upstream's
 * credentials (the caller's token obtained again, and the POST made once more, after a
 * 401 on one). 0: for a request, its answer in *resp; for a notification, it was
 * accepted. -1 with err (q->status holds the HTTP status). */
int upstream_post(struct upstream_pool *p, struct up_conn *c, const struct upstream_call *call,
    struct post *q, json_t **resp, struct gw_error *err);
/* Declines a request the upstream made (req) with a JSON-RPC error, on the side
 * handle, at most a second. */
void upstream_decline(struct upstream_pool *p, const struct upstream_call *call, const char *session,
    const char *version, json_t *req);
/* The body and headers of q for call's upstream (the credentials but a caller's
 * token, which the caller adds as q->bearer): 0; -2 when the body is over
 * UPSTREAM_MAX_RESPONSE; -1 (out of memory, a header that does not fit). */
int upstream_build(const struct post *q, const struct upstream_call *call, struct buf *body, struct curl_slist **hdrs);
/* The deadline of a call that takes up to timeout_ms: its own, or its request's. */
int64_t upstream_deadline(const struct upstream_call *call, long timeout_ms);
/* The headers of an MCP request to up: version and session when given, and the
 * credentials: bearer (the caller's token for up) when given, else the upstream's own
 * header (*bad set when one does not fit). */
struct curl_slist *upstream_mcp_headers(struct curl_slist *l, const struct cfg_upstream *up,
    const char *version, const char *session, const char *bearer, int *bad);
/* The caller's token for call's upstream when it is reached as the caller
 * (credentials = exchange; again: the last one was refused): 0 with *token (NULL for
 * any other upstream; free it with upstream_bearer_free), or -1 with err. */
int upstream_bearer(const struct upstream_call *call, int again, char **token, struct gw_error *err);
void upstream_bearer_free(char *token);
/* An Mcp-Session-Id we can send back: 1 to UPSTREAM_MAX_SESSION_ID visible ASCII. */
int upstream_session_ok(const char *s, size_t n);
/* "Name: value" of one header line, the value without blanks around it: 1, or 0. */
int upstream_header_value(const char *line, size_t len, const char *name, const char **v, size_t *vlen);
/* The media type of a Content-Type is want (parameters aside). */
int upstream_media_is(const char *ctype, const char *want);
/* A JSON-RPC 2.0 object. */
int upstream_is_jsonrpc(json_t *m);

#endif
