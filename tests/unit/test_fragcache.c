/* Unit tests: the per-worker cache of serialized list pages — lookups by key and
 * epoch, an epoch change dropping everything, least-recently-used eviction by count
 * and by bytes, and texts over the cap refused. */
#include "autoconf.h"

#include <stdint.h>
#include <string.h>

#include "fragcache.h"
#include "tap.h"

static const char *
get(struct fragcache *fc, uint64_t epoch, const char *key)
{
	size_t len;

	return fragcache_get(fc, epoch, key, strlen(key), &len);
}

static int
put(struct fragcache *fc, uint64_t epoch, const char *key, const char *text)
{
	return fragcache_put(fc, epoch, key, strlen(key), text, strlen(text));
}

/* Lookups in a new cache: misses, a put and its text, keys compared whole. */
static void
test_get_put(struct fragcache *fc)
{
	const char *t;
	size_t len = 0;

	ok(fc != NULL, "a cache of 3 entries and 32 bytes");
	ok(get(fc, 1, "a") == NULL, "empty: a miss");
	is_int(put(fc, 1, "a", "[1]"), 0, "put a");
	t = fragcache_get(fc, 1, "a", 1, &len);
	ok(t && len == 3 && memcmp(t, "[1]", 3) == 0, "get a: the text and its length");
	ok(get(fc, 1, "ab") == NULL, "a longer key is another key");
}

/* Past the entry count, the least recently used entry goes. */
static void
test_evict_by_count(struct fragcache *fc)
{
	put(fc, 1, "b", "[2]");
	put(fc, 1, "c", "[3]");
	get(fc, 1, "a");	/* a is now more recent than b */
	put(fc, 1, "d", "[4]");
	ok(get(fc, 1, "b") == NULL && get(fc, 1, "a") && get(fc, 1, "c") && get(fc, 1, "d"),
	    "a fourth entry evicts the least recently used (b)");
}

/* A put under a key already present replaces its text. */
static void
test_replace(struct fragcache *fc)
{
	put(fc, 1, "a", "[11]");
	is_str(get(fc, 1, "a"), "[11]", "a put under a present key replaces it");
}

/* The byte cap: a large text evicts what it must, one over the cap is refused. */
static void
test_evict_by_bytes(struct fragcache *fc)
{
	char big[64];

	memset(big, 'x', 30);
	big[30] = '\0';
	is_int(put(fc, 1, "e", big), 0, "a 30-byte text");
	ok(get(fc, 1, "e") && get(fc, 1, "a") == NULL && get(fc, 1, "c") == NULL && get(fc, 1, "d") == NULL,
	    "… evicts as many as the byte cap needs");
	memset(big, 'y', 40);
	big[40] = '\0';
	is_int(put(fc, 1, "f", big), -1, "a text over the byte cap is refused");
	ok(get(fc, 1, "e") != NULL, "… and evicts nothing");
}

/* A key longer than FRAGCACHE_KEY_MAX is refused. */
static void
test_key_max(struct fragcache *fc)
{
	char longkey[FRAGCACHE_KEY_MAX + 2];

	memset(longkey, 'k', sizeof(longkey) - 1);
	longkey[sizeof(longkey) - 1] = '\0';
	is_int(put(fc, 1, longkey, "[]"), -1, "a key over FRAGCACHE_KEY_MAX is refused");
}

/* A lookup under another epoch drops the old epoch's entries. */
static void
test_epoch(struct fragcache *fc)
{
	put(fc, 1, "g", "[7]");
	ok(get(fc, 2, "g") == NULL, "another epoch: a miss");
	ok(get(fc, 1, "g") == NULL && get(fc, 1, "e") == NULL, "… that dropped the old epoch's entries");
	is_int(put(fc, 2, "g", "[8]"), 0, "the new epoch fills again");
	is_str(get(fc, 2, "g"), "[8]", "… and answers");
}

/* A held text outlives its entry, and the cache: evicted, replaced or the cache freed,
 * it stays readable until let go (valgrind and ASan see a leak or a use after free). */
static void
test_hold(void)
{
	struct fragcache *fc = fragcache_new(64, 2);
	const char *t, *u;
	size_t len;

	put(fc, 1, "a", "[\"held\"]");
	t = fragcache_get(fc, 1, "a", 1, &len);
	fragcache_hold(t);
	put(fc, 1, "b", "[2]");
	put(fc, 1, "c", "[3]");
	ok(get(fc, 1, "a") == NULL, "a held entry is still evicted");
	is_str(t, "[\"held\"]", "… its text still readable");
	put(fc, 1, "b", "[22]");	/* replaced while held */
	u = get(fc, 1, "b");
	fragcache_hold(u);
	fragcache_hold(u);
	fragcache_release(u);
	fragcache_free(fc);
	is_str(u, "[22]", "a text held twice, let go once, outlives the cache");
	fragcache_release(u);
	fragcache_release_cb((void *)(uintptr_t)t);
	fragcache_hold(NULL);
	fragcache_release(NULL);
	ok(1, "… and both let go (NULL: nothing)");
}

/* Freeing no cache does nothing. */
static void
test_free_null(void)
{
	fragcache_free(NULL);
	ok(1, "fragcache_free(NULL) is harmless");
}

int
main(int argc, char **argv)
{
	struct fragcache *fc = fragcache_new(32, 3);

	tap_args(argc, argv);
	run_case(test_get_put, fc);
	run_case(test_evict_by_count, fc);
	run_case(test_replace, fc);
	run_case(test_evict_by_bytes, fc);
	run_case(test_key_max, fc);
	run_case(test_epoch, fc);
	fragcache_free(fc);
	run_case(test_hold);
	run_case(test_free_null);
	return done_testing();
}
