/* credcache — the upstream credentials a host obtained for its callers (tokens from a
 * token exchange), in a region of the state file, so that every process of the host
 * makes one exchange per caller and upstream. What it holds is sealed by its owner
 * (upcred.c) before it comes here: the region sees a keyed digest and ciphertext,
 * never a token. 128 sets of 8 entries, a robust mutex per set; a "pending" entry makes
 * concurrent misses of one key wait for a single exchange, and is taken over when its
 * owner died or overran its deadline. `now` is passed in (ms, wall clock). */
#ifndef GW_CREDCACHE_H
#define GW_CREDCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "state.h"

#define CREDCACHE_KEY_BYTES	32
#define CREDCACHE_VALUE_MAX	5632	/* a sealed value, with its NUL */
#define CREDCACHE_ENTRIES	1024	/* a token and its marker (upcred.c) take two */

enum cc_status {
	CC_HIT = 1,	/* a live value: copied out */
	CC_MISS,	/* claimed for us: obtain it, then credcache_put or credcache_release */
	CC_BUSY,	/* another request is obtaining it: wait, ask again */
	CC_UNAVAILABLE,	/* the region cannot be used now: obtain it without caching */
	CC_REFRESH,	/* a miss claimed for us where this key's value lapsed (its end passed, its
			 * entry not yet taken by another): obtain it again, as for CC_MISS */
};
/* A miss that is ours to fill (a claim, to put or drop). */
#define CC_CLAIMED(st)	((st) == CC_MISS || (st) == CC_REFRESH)

struct credcache;	/* the region (opaque; its init is a state_layout's) */

extern const struct state_region credcache_region_def;

/* The value for key: CC_HIT with it in out (NUL-terminated); CC_MISS with key claimed
 * until now_ms + pending_ms; CC_BUSY; or CC_UNAVAILABLE (also when out is too small
 * for what is stored). */
enum cc_status credcache_get(struct credcache *cc, const unsigned char *key, int64_t now_ms,
    int64_t pending_ms, char *out, size_t outlen);
/* Stores value (NUL-terminated, under CREDCACHE_VALUE_MAX) for key until until_ms,
 * replacing our claim, or an entry that is free, dead, or the soonest to expire. 0, or
 * -1 when it cannot be stored (nothing is). */
int credcache_put(struct credcache *cc, const unsigned char *key, int64_t now_ms, int64_t until_ms,
    const char *value);
/* Drops key's entry, a value or a claim (the exchange failed; the upstream refused the
 * value): the next get is a miss. */
void credcache_drop(struct credcache *cc, const unsigned char *key);
/* key's value in copy, a copy of the region (size bytes) read from the state file
 * without mapping it (state_peek_region: another process's, no lock taken, an entry
 * perhaps half-written: what it holds must be checked, as a sealed value is when
 * opened): CC_HIT with it in out (NUL-terminated), CC_MISS, or CC_UNAVAILABLE when copy
 * is not this region (or out is too small for the value). */
enum cc_status credcache_peek(const void *copy, size_t size, const unsigned char *key, int64_t now_ms,
    char *out, size_t outlen);
/* Live values (tests, stats). */
size_t credcache_count(struct credcache *cc, int64_t now_ms);

#endif
