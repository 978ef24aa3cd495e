/* state — the host's shared state file (DESIGN §1): one bounded, memory-mapped file
 * that every worker, FastCGI process and CGI run of a host maps. It holds regions
 * (the token cache, the authorization-server metadata, keys) behind robust
 * process-shared mutexes, so a process killed while holding a lock blocks nobody.
 * A missing, corrupt, foreign (other owner, group/other-writable, not a regular file)
 * or differently laid-out file is rebuilt, never trusted. */
#ifndef GW_STATE_H
#define GW_STATE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define STATE_KEY_BYTES	32

enum state_region_id {
	STATE_ASMETA,	/* authorization-server metadata mirror (introspect.c) */
	STATE_CACHE,	/* token cache (token_cache.c) */
	STATE_TOMBS,	/* ended sessions (session.c) */
	STATE_CATALOG,	/* the federated tool catalog (catalog.c) */
	STATE_NREGIONS
};

/* Each region's size and its initialiser, run once when the file is (re)built, with
 * the file locked; shared = 1 for a file, 0 for a private mapping. */
struct state_layout {
	struct {
		size_t size;
		void (*init)(void *region, size_t size, int shared);
	} region[STATE_NREGIONS];
};

struct state;	/* opaque */

/* Opens (creating or rebuilding as needed) path with this layout. path NULL: a
 * private anonymous mapping (nothing shared, same API). */
int state_open(const char *path, const struct state_layout *layout, struct state **out,
    struct gw_error *err);
void state_close(struct state *st);
/* 1 when path now names another file than the one mapped (rebuilt by someone). */
int state_stale(const struct state *st);

void *state_region(struct state *st, enum state_region_id id, size_t *size);
const unsigned char *state_digest_key(const struct state *st);	/* STATE_KEY_BYTES */
const unsigned char *state_session_key(const struct state *st);	/* STATE_KEY_BYTES */

/* Robust mutexes living in shared memory. state_lock returns 0, or 1 when the
 * previous owner died while holding it (the lock is then held and made consistent;
 * the caller should treat what it protects as suspect), or -1 on error. */
int state_mutex_init(pthread_mutex_t *m, int shared);
int state_lock(pthread_mutex_t *m);
void state_unlock(pthread_mutex_t *m);

#endif
