/* token_cache — introspection results shared by every process of a host, in a region
 * of the state file. Keyed by a keyed digest of the token (never the token). Positive
 * entries carry the caller's claims; negative ones the reason; a "pending" entry makes
 * concurrent misses of one token wait for a single introspection, and is taken over
 * when its owner died or overran its deadline. `now` is passed in (ms, wall clock). */
#ifndef GW_TOKEN_CACHE_H
#define GW_TOKEN_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "claims.h"
#include "state.h"

#define TC_KEY_BYTES	32
#define TC_REASON_MAX	96

enum tc_status {
	TC_HIT = 1,	/* positive, unexpired: claims filled */
	TC_NEGATIVE,	/* known bad: reason filled */
	TC_MISS,	/* claimed for us: introspect, then fill or release */
	TC_BUSY,	/* another request is introspecting this token: wait, retry */
	TC_UNAVAILABLE,	/* the shared region cannot be used now (a lock that cannot be
			 * had, a broken mapping): introspect without caching */
};

struct token_cache;

size_t token_cache_region_size(uint32_t entries);
/* A region size some entries count gives (an existing file's cache is adopted). */
int token_cache_region_size_ok(size_t size);
size_t token_cache_region_entries(size_t size);
extern const struct state_region token_cache_region_def;	/* of token_cache_region_size() */
/* The region's geometry comes from size (validated once, kept in process memory),
 * never from the shared memory. NULL when size is not a cache region's. */
struct token_cache *token_cache_attach(void *region, size_t size);
void token_cache_detach(struct token_cache *tc);

/* How much longer than now an entry may still live, whatever its stored end says (the
 * configuration's cache-ttl and negative-ttl): one that promises more was stored under
 * a longer lifetime (a reload lowered it: the lower one holds at once) or before the
 * clock was set back, and is not taken (a miss: verified again). NULL: no bound. */
struct tc_life {
	int64_t positive_ms, negative_ms;
};

/* How a lookup treats lifetimes: the bound on the results it takes (NULL: none), and
 * how long a claim it makes may stay pending. */
struct tc_lookup {
	const struct tc_life *life;
	int64_t pending_ms;
};

/* reason is filled for TC_NEGATIVE, claims for TC_HIT. */
enum tc_status token_cache_lookup(struct token_cache *tc, const unsigned char *key, int64_t now_ms,
    const struct tc_lookup *how, struct claims *claims, char reason[TC_REASON_MAX]);
/* A positive, unexpired entry for key: TC_HIT with claims; anything else is TC_MISS,
 * and nothing is claimed or changed (what may be decided before the network). */
enum tc_status token_cache_peek(struct token_cache *tc, const unsigned char *key, int64_t now_ms,
    const struct tc_life *life, struct claims *claims);
/* Store a positive result until until_ms (replacing our claim, or evicting). 0, or
 * -1 when the region cannot be used (nothing stored). */
int token_cache_fill(struct token_cache *tc, const unsigned char *key, int64_t now_ms,
    const struct claims *claims, int64_t until_ms);
int token_cache_fill_negative(struct token_cache *tc, const unsigned char *key,
    int64_t now_ms, const char *reason, int64_t until_ms);
/* Drop our pending claim (the introspection failed: nothing is cached). */
void token_cache_release(struct token_cache *tc, const unsigned char *key);
/* Entries in use (tests, stats). */
size_t token_cache_count(struct token_cache *tc, int64_t now_ms);

#endif
