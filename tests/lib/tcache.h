/* tcache.h — the token cache of a state file, as the unit tests reach it:
 *   cache_layout(lay, entries)   a layout of the authorization server metadata's region
 *                                and a cache of that many entries (no other region)
 *   cache_of(st)                 the cache in st's region
 *   cache_key(token, key)        a token's cache key under a fixed digest key
 *   unbounded                    a lookup that takes results whatever their end, its
 *                                claim pending 3 s (unbounded_long: 60 s) */
#ifndef GW_TEST_TCACHE_H
#define GW_TEST_TCACHE_H

#include <string.h>

#include "introspect.h"
#include "secret.h"
#include "state.h"
#include "token_cache.h"

static const struct tc_lookup unbounded = { NULL, 3000 };
static const struct tc_lookup unbounded_long = { NULL, 60000 };

static void __attribute__((unused))
cache_layout(struct state_layout *lay, uint32_t entries)
{
	memset(lay, 0, sizeof(*lay));
	lay->region[GW_REGION_ASMETA].def = &introspect_asmeta_region_def;
	lay->region[GW_REGION_CACHE].def = &token_cache_region_def;
	lay->region[GW_REGION_CACHE].size = token_cache_region_size(entries);
}

static struct token_cache *__attribute__((unused))
cache_of(struct state *st)
{
	size_t size;
	void *region = state_region(st, GW_REGION_CACHE, &size);

	return token_cache_attach(region, size);
}

static void __attribute__((unused))
cache_key(const char *token, unsigned char key[TC_KEY_BYTES])
{
	static const unsigned char k[32] = { 1, 2, 3 };

	secret_keyed_digest(k, token, strlen(token), key);
}

#endif
