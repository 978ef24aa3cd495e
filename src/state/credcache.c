/* credcache — upstream credentials shared by the processes of a host (credcache.h). */
#include "autoconf.h"

#include <pthread.h>
#include <string.h>

#include "credcache.h"
#include "secret.h"
#include "state.h"

#define CC_SETS		128
#define CC_WAYS		(CREDCACHE_ENTRIES / CC_SETS)
#define CC_MAGIC	0x43524331u	/* "CRC1" */

struct cc_entry {
	unsigned char key[CREDCACHE_KEY_BYTES];
	int64_t until_ms;		/* the value lives until then; 0 = no value */
	int64_t pending_until_ms;	/* claimed until then; 0 = not claimed */
	uint32_t len;			/* of value, without its NUL */
	char value[CREDCACHE_VALUE_MAX];
};

struct cc_set {
	pthread_mutex_t lock;
	struct cc_entry e[CC_WAYS];
};

struct credcache {
	uint32_t magic;
	struct cc_set sets[CC_SETS];
};

static void
credcache_region_init(void *region, size_t size, int shared)
{
	struct credcache *cc = region;
	size_t i;

	(void)size;
	for (i = 0; i < CC_SETS; i++)
		state_mutex_init(&cc->sets[i].lock, shared);
}

const struct state_region credcache_region_def = {
	"credcache", sizeof(struct credcache), CC_MAGIC, offsetof(struct credcache, magic), STATE_NO_LOCK, 0,
	credcache_region_init, NULL, NULL, 0,
};

/* key's set, locked: NULL when the region cannot be used now. */
static struct cc_set *
set_lock(struct credcache *cc, const unsigned char *key)
{
	struct cc_set *s;

	if (cc == NULL || !state_owned(&cc->magic, CC_MAGIC))
		return NULL;
	s = &cc->sets[(key[0] | key[1] << 8) % CC_SETS];
	/* A dead owner may have left an entry half-written: its length is checked on
	 * every read, and a value that does not open is its owner's miss. */
	return state_lock(&s->lock) < 0 ? NULL : s;
}

static void
entry_clear(struct cc_entry *e)
{
	secret_wipe(e, sizeof(*e));
}

static int
entry_live(const struct cc_entry *e, int64_t now_ms)
{
	return e->until_ms > now_ms || e->pending_until_ms > now_ms;
}

/* key's entry in s, or NULL. */
static struct cc_entry *
find(struct cc_set *s, const unsigned char *key, int64_t now_ms)
{
	int i;

	for (i = 0; i < CC_WAYS; i++)
		if (entry_live(&s->e[i], now_ms) && secret_equal(s->e[i].key, key, CREDCACHE_KEY_BYTES))
			return &s->e[i];
	return NULL;
}

/* key's entry in s whose value lapsed (dead, its key still there), or NULL. */
static struct cc_entry *
lapsed(struct cc_set *s, const unsigned char *key, int64_t now_ms)
{
	int i;

	for (i = 0; i < CC_WAYS; i++)
		if (!entry_live(&s->e[i], now_ms) && s->e[i].until_ms > 0 &&
		    secret_equal(s->e[i].key, key, CREDCACHE_KEY_BYTES))
			return &s->e[i];
	return NULL;
}

/* An entry to take for a new key: a free or dead one, else the live value that
 * expires first (a claim in progress is not taken; with every entry claimed, NULL). */
static struct cc_entry *
victim(struct cc_set *s, int64_t now_ms)
{
	struct cc_entry *v = NULL;
	int i;

	for (i = 0; i < CC_WAYS; i++) {
		if (!entry_live(&s->e[i], now_ms))
			return &s->e[i];
		if (s->e[i].pending_until_ms <= now_ms && (v == NULL || s->e[i].until_ms < v->until_ms))
			v = &s->e[i];
	}
	return v;
}

enum cc_status
credcache_get(struct credcache *cc, const unsigned char *key, int64_t now_ms, int64_t pending_ms,
    char *out, size_t outlen)
{
	struct cc_set *s = set_lock(cc, key);
	struct cc_entry *e;
	enum cc_status st;

	if (s == NULL)
		return CC_UNAVAILABLE;
	if ((e = find(s, key, now_ms)) != NULL && e->until_ms > now_ms) {
		if (e->len < sizeof(e->value) && e->len < outlen) {
			memcpy(out, e->value, e->len);
			out[e->len] = '\0';
			st = CC_HIT;
		} else
			st = CC_UNAVAILABLE;
	} else if (e != NULL) {
		st = CC_BUSY;	/* claimed, and its owner still within its time */
	} else if ((e = lapsed(s, key, now_ms)) == NULL && (e = victim(s, now_ms)) == NULL) {
		st = CC_UNAVAILABLE;
	} else {
		st = e->until_ms > 0 && secret_equal(e->key, key, CREDCACHE_KEY_BYTES) ? CC_REFRESH : CC_MISS;
		entry_clear(e);
		memcpy(e->key, key, CREDCACHE_KEY_BYTES);
		e->pending_until_ms = now_ms + pending_ms;
	}
	state_unlock(&s->lock);
	return st;
}

int
credcache_put(struct credcache *cc, const unsigned char *key, int64_t now_ms, int64_t until_ms,
    const char *value)
{
	size_t n = strlen(value);
	struct cc_set *s;
	struct cc_entry *e;

	if (n >= CREDCACHE_VALUE_MAX || until_ms <= now_ms || (s = set_lock(cc, key)) == NULL)
		return -1;
	if ((e = find(s, key, now_ms)) == NULL)
		e = victim(s, now_ms);
	if (e != NULL) {
		entry_clear(e);
		memcpy(e->key, key, CREDCACHE_KEY_BYTES);
		memcpy(e->value, value, n + 1);
		e->len = (uint32_t)n;
		e->until_ms = until_ms;
	}
	state_unlock(&s->lock);
	return e ? 0 : -1;
}

void
credcache_drop(struct credcache *cc, const unsigned char *key)
{
	struct cc_set *s = set_lock(cc, key);
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < CC_WAYS; i++)
		if (secret_equal(s->e[i].key, key, CREDCACHE_KEY_BYTES))
			entry_clear(&s->e[i]);
	state_unlock(&s->lock);
}

enum cc_status
credcache_peek(const void *copy, size_t size, const unsigned char *key, int64_t now_ms, char *out, size_t outlen)
{
	const struct credcache *cc = copy;
	const struct cc_set *s;
	const struct cc_entry *e;
	int i;

	if (copy == NULL || size != sizeof(*cc) || cc->magic != CC_MAGIC)
		return CC_UNAVAILABLE;
	s = &cc->sets[(key[0] | key[1] << 8) % CC_SETS];
	for (i = 0; i < CC_WAYS; i++) {
		e = &s->e[i];
		if (e->until_ms <= now_ms || !secret_equal(e->key, key, CREDCACHE_KEY_BYTES))
			continue;
		if (e->len >= sizeof(e->value) || e->len >= outlen)
			return CC_UNAVAILABLE;
		memcpy(out, e->value, e->len);
		out[e->len] = '\0';
		return CC_HIT;
	}
	return CC_MISS;
}

size_t
credcache_count(struct credcache *cc, int64_t now_ms)
{
	size_t n = 0, i;
	int j;

	if (cc == NULL || !state_owned(&cc->magic, CC_MAGIC))
		return 0;
	for (i = 0; i < CC_SETS; i++) {
		if (state_lock(&cc->sets[i].lock) < 0)
			continue;
		for (j = 0; j < CC_WAYS; j++)
			n += cc->sets[i].e[j].until_ms > now_ms;
		state_unlock(&cc->sets[i].lock);
	}
	return n;
}
