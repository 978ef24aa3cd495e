/* Unit tests: the per-worker cache of serialized list pages — lookups by key and
 * epoch, an epoch change dropping everything, least-recently-used eviction by count
 * and by bytes, and texts over the cap refused. */
#include "autoconf.h"

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

int
main(void)
{
	struct fragcache *fc = fragcache_new(32, 3);
	char big[64], longkey[FRAGCACHE_KEY_MAX + 2];
	const char *t;
	size_t len = 0;

	ok(fc != NULL, "a cache of 3 entries and 32 bytes");
	ok(get(fc, 1, "a") == NULL, "empty: a miss");
	is_int(put(fc, 1, "a", "[1]"), 0, "put a");
	t = fragcache_get(fc, 1, "a", 1, &len);
	ok(t && len == 3 && memcmp(t, "[1]", 3) == 0, "get a: the text and its length");
	ok(get(fc, 1, "ab") == NULL, "a longer key is another key");
	put(fc, 1, "b", "[2]");
	put(fc, 1, "c", "[3]");
	get(fc, 1, "a");	/* a is now more recent than b */
	put(fc, 1, "d", "[4]");
	ok(get(fc, 1, "b") == NULL && get(fc, 1, "a") && get(fc, 1, "c") && get(fc, 1, "d"),
	    "a fourth entry evicts the least recently used (b)");
	put(fc, 1, "a", "[11]");
	is_str(get(fc, 1, "a"), "[11]", "a put under a present key replaces it");
	memset(big, 'x', 30);
	big[30] = '\0';
	is_int(put(fc, 1, "e", big), 0, "a 30-byte text");
	ok(get(fc, 1, "e") && get(fc, 1, "a") == NULL && get(fc, 1, "c") == NULL && get(fc, 1, "d") == NULL,
	    "… evicts as many as the byte cap needs");
	memset(big, 'y', 40);
	big[40] = '\0';
	is_int(put(fc, 1, "f", big), -1, "a text over the byte cap is refused");
	ok(get(fc, 1, "e") != NULL, "… and evicts nothing");
	memset(longkey, 'k', sizeof(longkey) - 1);
	longkey[sizeof(longkey) - 1] = '\0';
	is_int(put(fc, 1, longkey, "[]"), -1, "a key over FRAGCACHE_KEY_MAX is refused");
	put(fc, 1, "g", "[7]");
	ok(get(fc, 2, "g") == NULL, "another epoch: a miss");
	ok(get(fc, 1, "g") == NULL && get(fc, 1, "e") == NULL, "… that dropped the old epoch's entries");
	is_int(put(fc, 2, "g", "[8]"), 0, "the new epoch fills again");
	is_str(get(fc, 2, "g"), "[8]", "… and answers");
	fragcache_free(fc);
	fragcache_free(NULL);
	ok(1, "fragcache_free(NULL) is harmless");
	return done_testing();
}
