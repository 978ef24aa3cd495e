/* gateway — long-lived state: the current configuration and its reload, the host's
 * shared state file (token cache, metadata mirror), and per-thread workers. */
#ifndef GW_GATEWAY_H
#define GW_GATEWAY_H

#include <pthread.h>

#include "catalog.h"
#include "config.h"
#include "fragcache.h"
#include "introspect.h"
#include "session.h"
#include "state.h"
#include "token_cache.h"

struct gateway {
	pthread_mutex_t lock;
	struct config *cfg;	/* current; NULL when none could be loaded */
	struct config *failed;	/* provenance of the last broken files, not retried until they change */
	char *config_path;
	long workers;		/* -w, 0 = from config */
	/* Opened once from the first configuration; a changed `state` needs a restart. */
	struct state *state;	/* NULL when even a private mapping failed */
	struct token_cache *tokens;
	void *asmeta;
	void *tombs;		/* ended sessions */
	void *catalog;		/* the federated tool catalog */
	/* Standalone streams (GET /mcp) hold a worker each: at most listen_max at once in
	 * this process (the front sets it: workers - 1 under FastCGI, 1 for CGI). */
	long listen_max;
	long listeners;		/* __atomic */
};

/* What one thread needs for the outbound calls of its requests. */
struct worker {
	struct gateway *gw;
	struct introspect *ix;	/* one reused connection to the authorization server */
	struct upstream_pool *ups;	/* reused connections and sessions to the upstreams */
	struct catalog_view cat;	/* the catalog as this thread last parsed it */
	struct fragcache *pages;	/* list pages it serialized from cat */
};

/* Loads the configuration; on failure gw->cfg stays NULL and errs says why. */
int gateway_init(struct gateway *gw, const char *config_path, struct cfg_errors *errs);
void gateway_free(struct gateway *gw);
/* The current configuration, referenced: config_unref() it when done. May be NULL. */
struct config *gateway_config(struct gateway *gw);
/* Reloads when forced or when the files changed. 1 = reloaded, 0 = unchanged,
 * -1 = the new files are broken (logged, the old configuration stays). */
int gateway_reload(struct gateway *gw, int force);

/* The key that seals sessions: session-key-file when configured, else the host's. */
const unsigned char *gateway_session_key(const struct gateway *gw, const struct config *cfg);

int worker_init(struct worker *w, struct gateway *gw);
void worker_free(struct worker *w);
/* Ends the sessions the worker opened at the upstreams for itself (not its callers'). */
void worker_end_sessions(struct worker *w);

#endif
