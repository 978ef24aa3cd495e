/* mcp — POST /mcp: media type, body, JSON-RPC payload (one message or a batch), the
 * lifecycle of every revision (initialize and sealed sessions up to 2025-11-25, the
 * stateless 2026-07-28 with server/discover and its header checks) and the method
 * table. Federation (federate.c) and the policy (policy.c) plug into the table's
 * handlers. */
#ifndef GW_MCP_H
#define GW_MCP_H

#include <pthread.h>

#include "auth.h"
#include "catalog_caller.h"
#include "catalog_store.h"
#include "config.h"
#include "fragcache.h"
#include "limiter.h"
#include "loglevels.h"
#include "leases.h"
#include "mailbox.h"
#include "subs.h"
#include "metrics.h"
#include "req_ctx.h"
#include "request.h"
#include "response.h"
#include "schemas.h"
#include "session.h"

#define MCP_LATEST_VERSION	"2025-11-25"	/* the newest that initialize negotiates */
#define MCP_MODERN_VERSION	"2026-07-28"	/* stateless: per-request _meta, no initialize */
#define MCP_LISTEN_MAX_MS	300000	/* a standalone stream ends after this; the client reconnects */
#define MCP_LISTEN_TICK_MS	5000	/* keep-alive comments: how soon a gone client is noticed */

/* What the exchange keeps for one thread (the worker's REQ_SLOT_MCP slot): the catalog
 * as it last parsed it, its upstream connections and sessions, the list pages it
 * serialized, the last session it opened. */
struct mcp_thread {
	struct catalog_view cat;
	struct catalog_callers *callers;	/* the catalogs of callers (catalog = per-caller) */
	struct upstream_pool *ups;
	struct fragcache *pages;
	struct session_memo *sessions;
	struct schemas *schemas;
};

/* A new one (NULL when out of memory); the end of the sessions it opened at the
 * upstreams for itself (not its callers'), with cfg (may be NULL); its end. */
void *mcp_thread_new(void);
void mcp_thread_end(void *th, const struct config *cfg);
void mcp_thread_free(void *th);

/* What the exchange uses from the gateway: a request's REQ_SLOT_MCP slot (h_mcp fills
 * it). The configuration, the caller and the rate limits are the request's (req_ctx). */
struct mcp_env {
	const unsigned char *session_key;	/* 32 bytes */
	struct tombstones *tombstones;			/* may be NULL */
	struct catalog_region *catalog;				/* the state-file region; may be NULL */
	struct catalog_view *view;		/* the worker's copy */
	struct catalog_callers *callers;	/* the worker's catalogs of callers; may be NULL */
	struct upstream_pool *pool;		/* the worker's upstream connections */
	struct fragcache *pages;		/* the worker's serialized list pages; may be NULL */
	struct schemas *schemas;		/* the worker's compiled tool schemas; NULL: no check */
	struct session_memo *sessions;		/* the worker's last opened session; may be NULL */
	long *listeners;			/* the process's open standalone streams (__atomic) */
	long listen_max;			/* how many it may have */
	struct leases *leases;			/* what callers hold at once on the host (their listens); may be NULL */
	struct rstore *rs;			/* the Redis store (tombstones); NULL: none */
	const unsigned char *shared_key;	/* with rs: what names its records */
	struct metrics *metrics;		/* the host's counters and dependency states; may be NULL */
	struct mailbox *mailbox;		/* clients' answers to the gateway's questions; may be NULL */
	struct loglevels *loglevels;		/* the log levels sessions set; may be NULL */
	struct subs *subs;			/* what sessions subscribed to at stateless upstreams; may be NULL */
	/* The caller's credentials at the upstreams reached as the caller (upcred.h); NULL:
	 * none configured. */
	const struct upstream_cred *cred;
	const struct upstream_cred *own_cred;	/* the gateway's own token for an upstream (its catalog) */
};

#define MCP_CURSOR_MAX	256	/* a sealed list cursor */

/* One caller holds at most MCP_LISTENS_PER_CALLER subscriptions/listen streams at once
 * on a host (each holds a worker thread; leases.c), for MCP_LISTEN_MAX_MS each. */
#define MCP_LISTENS_PER_CALLER	4

/* 1 when v is a protocol revision this gateway speaks. */
int mcp_version_supported(const char *v);
/* A list's nextCursor: offset off of list (the catalog array's name) sealed under key
 * for the caller digest who (session_who). 0, or -1 when out is too small. */
int mcp_cursor_seal(const unsigned char *key, const char *list, const char *who, size_t off,
    char *out, size_t outlen);
/* The offset (> 0) a cursor sealed for that list and caller holds: 0, or -1 when it is
 * anything else. */
int mcp_cursor_open(const unsigned char *key, const char *list, const char *who, const char *cursor,
    size_t *off);
/* The exchange after the gate (origin, size, token): fills resp. */
void mcp_exchange(struct req_ctx *rc);
/* GET /mcp with a session (mcp_stream.c): the caller's standalone stream, carrying
 * what its upstream sessions send outside of calls (resource updates, log messages,
 * requests for the client) and the updates of what it subscribed to at upstreams it
 * reaches statelessly, with keep-alive comments, until the client leaves, the
 * upstreams end their streams (unless a subscription there may come), or
 * MCP_LISTEN_MAX_MS. 405 when there is nothing to listen to or every slot is taken. */
void mcp_listen(struct req_ctx *rc);
/* DELETE /mcp: ends the caller's session (204), 404 when it is not one, 400 without it. */
void mcp_end_session(struct req_ctx *rc);

#endif
