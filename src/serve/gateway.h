/* gateway — long-lived state: the current configuration and its reload, the host's
 * shared state file (token cache, metadata mirror, tombstones, catalog, counters, the
 * keys, DPoP proofs seen) and its re-opening, and per-thread workers. */
#ifndef GW_GATEWAY_H
#define GW_GATEWAY_H

#include <pthread.h>

#include "catalog_store.h"
#include "auth.h"
#include "config.h"
#include "credcache.h"
#include "fragcache.h"
#include "introspect.h"
#include "jwks.h"
#include "loglevels.h"
#include "leases.h"
#include "mailbox.h"
#include "subs.h"
#include "mcp.h"
#include "metrics.h"
#include "ratelimit.h"
#include "replay.h"
#include "rstore.h"
#include "session.h"
#include "state.h"
#include "token_cache.h"
#include "vault.h"

/* The host's shared state as this process has it (docs/ARCHITECTURE.md §7): the state
 * file (or, when its file system is full, a private mapping, said loudly), the token
 * cache on it and its regions. The FastCGI tick replaces it whole when the file was
 * replaced, removed or broke (gateway_tick); a request holds a reference for its
 * duration (router_dispatch), so the mapping it uses stays until it is done. */
/* The regions of the state file, in their order in it. */
enum gw_region {
	GW_REGION_ASMETA,	/* authorization-server metadata mirror (introspect.c) */
	GW_REGION_CACHE,	/* token cache (token_cache.c) */
	GW_REGION_TOMBS,	/* ended sessions (session.c) */
	GW_REGION_CATALOG,	/* the federated tool catalog (catalog.c) */
	GW_REGION_LIMITS,	/* rate-limit buckets (ratelimit.c) */
	GW_REGION_METRICS,	/* counters and dependency states (metrics.c) */
	GW_REGION_JWKS,		/* the issuer's JWK set (jwks.c) */
	GW_REGION_REPLAY,	/* the DPoP proofs seen (replay.c) */
	GW_REGION_CREDS,	/* upstream credentials obtained for callers (credcache.c) */
	GW_REGION_MAILBOX,	/* clients' answers on their way to the call that asked (mailbox.c) */
	GW_REGION_LOGLEVELS,	/* the log levels sessions set, for stateless upstreams (loglevels.c) */
	GW_REGION_SUBS,		/* what sessions subscribed to at stateless upstreams (subs.c) */
	GW_REGION_LEASES,	/* what callers hold at once: their listen streams (leases.c) */
	GW_REGION_VAULT,	/* people's connected accounts' tokens (vault.c); empty unless made: last */
	GW_REGIONS
};
_Static_assert(GW_REGIONS == STATE_NREGIONS, "every region of the state file has its owner");

struct shared {
	long refs;			/* __atomic */
	struct state *state;
	struct token_cache *tokens;	/* NULL: caching off */
	struct asmeta_region *asmeta;
	struct tombstones *tombs;			/* ended sessions */
	struct catalog_region *catalog;			/* the federated tool catalog */
	struct ratelimit *limits;			/* rate-limit buckets; NULL: unusable */
	struct jwks_region *jwks;			/* the issuer's JWK set */
	struct replay *replay;				/* the DPoP proofs seen */
	struct credcache *creds;			/* upstream credentials, sealed */
	struct vault *vault;				/* people's connected accounts; NULL: none */
	struct mailbox *mailbox;			/* clients' answers to the gateway's questions */
	struct loglevels *loglevels;			/* the log levels sessions set */
	struct subs *subs;				/* what sessions subscribed to at stateless upstreams */
	struct leases *leases;				/* what callers hold at once: their listen streams */
	struct metrics *metrics;			/* counters and dependency states; NULL: unusable */
	int64_t opened_s;		/* when this process mapped it (wall clock): the state's "since" */
	int64_t broken_s;		/* __atomic: when it was first seen broken; 0: not yet */
	char degraded[GW_ERROR_DETAIL];		/* "": the host's shared file; else why not (/mcp/health) */
};

struct gateway {
	pthread_mutex_t lock;
	struct config *cfg;	/* current; NULL when none could be loaded */
	struct config *failed;	/* provenance of the last broken files, not retried until they change */
	char *config_path;
	long workers;		/* -w, 0 = from config */
	/* The state file, from the first configuration (a changed `state` needs a restart). */
	char *state_path;
	struct shared *shared;	/* current, behind lock; NULL: the state could not be had */
	int64_t state_retry_ms;	/* the tick's next try after a failed re-open */
	char state_error[GW_ERROR_DETAIL + 128];	/* gateway_init's reason, then the last failure logged by the tick (not repeated) */
	/* Standalone streams (GET /mcp) hold a worker each: at most listen_max at once in
	 * this process (the front sets it: workers - 1 under FastCGI, 1 for CGI). */
	long listen_max;
	long listeners;		/* __atomic */
	int redis_outage;	/* __atomic: Redis failed and has not answered since (rstore.c) */
};

/* What one thread keeps between its requests: its connection to the Redis store (which
 * auth, the limits and the exchange share), and a slot for each module that keeps state
 * of its own (worker_slots in gateway.c: auth's connection to the authorization server
 * and keys, the exchange's catalog view, upstream pool, list pages and last session).
 * Only the module a slot is named for looks inside it (worker_auth, worker_mcp). */
struct worker {
	struct gateway *gw;
	struct rstore *rs;	/* opened on first use */
	void *slot[REQ_SLOTS];
};

/* Loads the configuration and opens the state file; on a configuration failure
 * gw->cfg stays NULL and errs says why. When the shared state cannot be had (a
 * foreign lock file, an unusable directory) gw->shared stays NULL and gw->state_error
 * says why, for the caller to say (log_fatal under FastCGI, which must not start; a
 * CGI run logs it and answers 500). */
int gateway_init(struct gateway *gw, const char *config_path, struct cfg_errors *errs);
void gateway_free(struct gateway *gw);
/* The current configuration, referenced: config_unref() it when done. May be NULL. */
struct config *gateway_config(struct gateway *gw);
/* Reloads when forced or when the files changed. 1 = reloaded, 0 = unchanged,
 * -1 = the new files are broken (logged, the old configuration stays). */
int gateway_reload(struct gateway *gw, int force);

/* The current shared state, referenced: shared_unref() it when done. May be NULL. */
struct shared *gateway_shared(struct gateway *gw);
void shared_unref(struct shared *sh);
/* Once a second (FastCGI): when the state file was replaced or removed, or the mapping
 * broke (the file shrank, was overwritten, its locks keep failing), or this process
 * runs on a private state for want of room, re-opens the file and swaps it in. Every
 * process converges on the one file at the path; a removed file is rebuilt with the
 * keys and tombstones of an intact mapping, so sessions survive it. now_ms: monotonic. */
void gateway_tick(struct gateway *gw, int64_t now_ms);
/* Why this process's state is not the host's shared file, or "" (for /mcp/health). */
void gateway_state_degraded(const struct shared *sh, char *out, size_t n);
/* The state file as a dependency (/mcp/health): METRICS_UP (the host's shared file) or
 * METRICS_DOWN (why in out, as gateway_state_degraded), and since when (*since_s, wall
 * clock: when this process mapped it, or first saw it broken). */
int gateway_state_health(struct shared *sh, int64_t now_s, int64_t *since_s, char *out, size_t n);
/* For `mcpgate -t`: the state file cfg would use and, when an existing file keeps
 * another token-cache size than cache-entries asks for, a note saying so. */
void gateway_state_note(const struct config *cfg, char *out, size_t n);

/* For `mcpgate -t`: the catalog the gateway last stored in the state file cfg would use
 * (read, not mapped), when it was fetched for cfg's upstreams: a new document, or NULL
 * with err. */
json_t *gateway_saved_catalog(const struct config *cfg, struct gw_error *err);
/* What `mcpgate explain` reads of the state file cfg names (else the default one) to
 * say whether a token is cached or a person connected: a copy of its region id (the
 * credential cache, the vault; *copy malloc'd, *size its length) and the session key its
 * values are sealed under (session-key-file's, else the file's own). 0, or -1 with err
 * when there is no such file (or region) this user may read (the copy then NULL). Wipe
 * the key when done. */
int gateway_saved_region(const struct config *cfg, enum gw_region id, void **copy, size_t *size,
    unsigned char key[32], struct gw_error *err);

/* The key that seals sessions: session-key-file when configured, else the host's. */
const unsigned char *gateway_session_key(const struct shared *sh, const struct config *cfg);
/* The key of the keyed digests that name shared records (token cache entries, rate-limit
 * buckets): with a Redis store the configuration's shared key (the same on every host),
 * else the state file's. */
const unsigned char *gateway_digest_key(const struct shared *sh, const struct config *cfg);
/* The worker's Redis store when the configuration has one, else NULL. */
struct rstore *worker_rstore(const struct worker *w, const struct config *cfg);

/* The thread's state of auth and of the exchange. */
static inline struct auth_thread *worker_auth(const struct worker *w) { return w->slot[REQ_SLOT_AUTH]; }
static inline struct mcp_thread *worker_mcp(const struct worker *w) { return w->slot[REQ_SLOT_MCP]; }

/* 0, or -1 when out of memory (worker_free it then). */
int worker_init(struct worker *w, struct gateway *gw);
void worker_free(struct worker *w);
/* Ends the sessions the worker opened at the upstreams for itself (not its callers'). */
void worker_end_sessions(struct worker *w);

#endif
