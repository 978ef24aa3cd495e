/* token_cache — set-associative slots behind striped robust mutexes. */
#include "autoconf.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "secret.h"
#include "state.h"
#include "token_cache.h"

#define TC_WAYS		8
#define TC_MAGIC	0x54434831u	/* "TCH1" */

enum { E_EMPTY = 0, E_POSITIVE, E_NEGATIVE, E_PENDING };

struct tc_entry {
	unsigned char key[TC_KEY_BYTES];
	uint32_t kind;
	int32_t owner;		/* pending: pid of the introspecting process */
	int64_t until_ms;	/* positive/negative: expiry; pending: deadline */
	struct claims claims;
	char reason[TC_REASON_MAX];
};

struct tc_stripe {
	pthread_mutex_t lock;
	struct tc_entry e[TC_WAYS];
};

struct tc_region {
	uint32_t magic;
	uint32_t nstripes;
	struct tc_stripe stripes[];
};

struct token_cache {
	struct tc_region *r;
	uint32_t nstripes;	/* from the validated region size, never re-read */
};

size_t
token_cache_region_size(uint32_t entries)
{
	uint32_t n = (entries + TC_WAYS - 1) / TC_WAYS;

	return sizeof(struct tc_region) + (size_t)(n ? n : 1) * sizeof(struct tc_stripe);
}

int
token_cache_region_size_ok(size_t size)
{
	return size > sizeof(struct tc_region) &&
	    (size - sizeof(struct tc_region)) % sizeof(struct tc_stripe) == 0 &&
	    (size - sizeof(struct tc_region)) / sizeof(struct tc_stripe) <= UINT32_MAX / TC_WAYS;
}

size_t
token_cache_region_entries(size_t size)
{
	return token_cache_region_size_ok(size) ?
	    (size - sizeof(struct tc_region)) / sizeof(struct tc_stripe) * TC_WAYS : 0;
}

static void
token_cache_region_init(void *region, size_t size, int shared)
{
	struct tc_region *r = region;
	uint32_t i;

	r->nstripes = (uint32_t)((size - sizeof(*r)) / sizeof(struct tc_stripe));
	for (i = 0; i < r->nstripes; i++)
		state_mutex_init(&r->stripes[i].lock, shared);
}

/* Its size is the layout's: token_cache_region_size(cache-entries). */
const struct state_region token_cache_region_def = {
	"tokens", 0, TC_MAGIC, offsetof(struct tc_region, magic), STATE_NO_LOCK, 0, token_cache_region_init,
	token_cache_region_size_ok, NULL, 0,
};

struct token_cache *
token_cache_attach(void *region, size_t size)
{
	struct tc_region *r = region;
	struct token_cache *tc;

	/* (The region's own magic is checked on every lookup: it may be written over.) */
	if (!token_cache_region_size_ok(size))
		return NULL;
	if ((tc = malloc(sizeof(*tc))) != NULL) {
		tc->r = r;
		tc->nstripes = (uint32_t)((size - sizeof(*r)) / sizeof(struct tc_stripe));
	}
	return tc;
}

void
token_cache_detach(struct token_cache *tc)
{
	free(tc);
}

static struct tc_stripe *
stripe_of(struct token_cache *tc, const unsigned char *key)
{
	uint32_t h;

	memcpy(&h, key, sizeof(h));	/* the key is a keyed digest: uniform */
	return &tc->r->stripes[h % tc->nstripes];
}

/* Locks a stripe: 0, or -1 when it cannot be had or the region is no longer ours (a
 * broken mapping reads as zeros, an overwritten one as garbage): not locked then.
 * When a dead process held it, its slots are suspect: cleared. */
static int
lock_stripe(struct token_cache *tc, struct tc_stripe *s)
{
	int rc;

	if (!state_owned(&tc->r->magic, TC_MAGIC) || (rc = state_lock(&s->lock)) < 0)
		return -1;
	if (rc == 1)
		memset(s->e, 0, sizeof(s->e));
	return 0;
}

static struct tc_entry *
find(struct tc_stripe *s, const unsigned char *key)
{
	int i;

	for (i = 0; i < TC_WAYS; i++)	/* (a kind we never write is garbage: not found) */
		if (s->e[i].kind != E_EMPTY && s->e[i].kind <= E_PENDING &&
		    secret_equal(s->e[i].key, key, TC_KEY_BYTES))
			return &s->e[i];
	return NULL;
}

static int
owner_alive(int32_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

static int
live(const struct tc_entry *e, int64_t now_ms)
{
	if (e->kind == E_EMPTY)
		return 0;
	if (e->kind == E_PENDING)
		return e->until_ms > now_ms && owner_alive(e->owner);
	return e->until_ms > now_ms;
}

/* A live result whose stored end lies further ahead than life allows: not to be taken
 * (compared as until - now, both within a sane range of the epoch: no overflow). */
static int
overlong(const struct tc_entry *e, int64_t now_ms, const struct tc_life *life)
{
	if (life == NULL || e->kind == E_PENDING)
		return 0;
	return e->until_ms - now_ms > (e->kind == E_POSITIVE ? life->positive_ms : life->negative_ms);
}

/* A slot for key: empty, else dead, else the one expiring soonest. */
static struct tc_entry *
victim(struct tc_stripe *s, int64_t now_ms)
{
	struct tc_entry *best = NULL;
	int i;

	for (i = 0; i < TC_WAYS; i++) {
		struct tc_entry *e = &s->e[i];

		if (!live(e, now_ms))
			return e;
		if (e->kind != E_PENDING && (best == NULL || e->until_ms < best->until_ms))
			best = e;
	}
	return best ? best : &s->e[0];
}

/* Copies src (a string of at most srcmax bytes with its NUL; the shared memory's may
 * lack it) into dst of n bytes. */
static void
copy_str(char *dst, size_t n, const char *src, size_t srcmax)
{
	size_t len = strnlen(src, srcmax);

	if (len >= n)
		len = n - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* The claims of a positive entry; strings from shared memory end inside their fields. */
static void
copy_claims(struct claims *claims, const struct tc_entry *e)
{
	*claims = e->claims;
	claims->subject[sizeof(claims->subject) - 1] = '\0';
	claims->client_id[sizeof(claims->client_id) - 1] = '\0';
	claims->scope[sizeof(claims->scope) - 1] = '\0';
	claims->groups[sizeof(claims->groups) - 1] = '\0';
	claims->tenant[sizeof(claims->tenant) - 1] = '\0';
}

enum tc_status
token_cache_peek(struct token_cache *tc, const unsigned char *key, int64_t now_ms, const struct tc_life *life,
    struct claims *claims)
{
	struct tc_stripe *s = stripe_of(tc, key);
	struct tc_entry *e;
	enum tc_status st = TC_MISS;

	if (lock_stripe(tc, s) < 0)
		return TC_MISS;
	e = find(s, key);
	if (e && live(e, now_ms) && e->kind == E_POSITIVE && !overlong(e, now_ms, life) &&
	    e->claims.exp > now_ms / 1000) {
		copy_claims(claims, e);
		st = TC_HIT;
	}
	state_unlock(&s->lock);
	return st;
}

enum tc_status
token_cache_lookup(struct token_cache *tc, const unsigned char *key, int64_t now_ms,
    const struct tc_lookup *how, struct claims *claims, char reason[TC_REASON_MAX])
{
	const struct tc_life *life = how->life;
	struct tc_stripe *s = stripe_of(tc, key);
	struct tc_entry *e;
	enum tc_status st;

	if (lock_stripe(tc, s) < 0)
		return TC_UNAVAILABLE;
	e = find(s, key);
	if (e && live(e, now_ms) && !overlong(e, now_ms, life)) {
		if (e->kind == E_PENDING) {
			st = TC_BUSY;
		} else if (e->kind == E_NEGATIVE) {
			copy_str(reason, TC_REASON_MAX, e->reason, sizeof(e->reason));
			st = TC_NEGATIVE;
		} else if (e->claims.exp <= now_ms / 1000) {
			/* exp is re-checked on every hit: an expired token turns negative. */
			e->kind = E_NEGATIVE;
			copy_str(e->reason, sizeof(e->reason), "token expired", sizeof("token expired"));
			copy_str(reason, TC_REASON_MAX, e->reason, sizeof(e->reason));
			st = TC_NEGATIVE;
		} else {
			copy_claims(claims, e);
			st = TC_HIT;
		}
		state_unlock(&s->lock);
		return st;
	}
	if (e == NULL)
		e = victim(s, now_ms);
	memset(e, 0, sizeof(*e));
	memcpy(e->key, key, TC_KEY_BYTES);
	e->kind = E_PENDING;
	e->owner = (int32_t)getpid();
	e->until_ms = now_ms + how->pending_ms;
	state_unlock(&s->lock);
	return TC_MISS;
}

/* The pending entry we claimed, if still ours. */
static struct tc_entry *
claimed(struct tc_stripe *s, const unsigned char *key)
{
	struct tc_entry *e = find(s, key);

	return e && e->kind == E_PENDING && e->owner == (int32_t)getpid() ? e : NULL;
}

/* A result for key, of kind until until_ms (its claims, or its reason), made in r. */
static void
result(struct tc_entry *r, const unsigned char *key, uint32_t kind, int64_t until_ms)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->key, key, TC_KEY_BYTES);
	r->kind = kind;
	r->until_ms = until_ms;
}

/* Our claim for r's key (or an evicted slot) becomes the result r (nothing, when it
 * ends by now). 0, or -1 when the stripe cannot be had. */
static int
store(struct token_cache *tc, const struct tc_entry *r, int64_t now_ms)
{
	struct tc_stripe *s = stripe_of(tc, r->key);
	struct tc_entry *e;

	if (lock_stripe(tc, s) < 0)
		return -1;
	if ((e = claimed(s, r->key)) == NULL)
		e = victim(s, now_ms);
	*e = *r;
	if (r->until_ms <= now_ms)
		e->kind = E_EMPTY;
	state_unlock(&s->lock);
	return 0;
}

int
token_cache_fill(struct token_cache *tc, const unsigned char *key, int64_t now_ms,
    const struct claims *claims, int64_t until_ms)
{
	struct tc_entry r;

	result(&r, key, E_POSITIVE, until_ms);
	r.claims = *claims;
	return store(tc, &r, now_ms);
}

int
token_cache_fill_negative(struct token_cache *tc, const unsigned char *key, int64_t now_ms,
    const char *reason, int64_t until_ms)
{
	struct tc_entry r;

	result(&r, key, E_NEGATIVE, until_ms);
	copy_str(r.reason, sizeof(r.reason), reason, TC_REASON_MAX);
	return store(tc, &r, now_ms);
}

void
token_cache_release(struct token_cache *tc, const unsigned char *key)
{
	struct tc_stripe *s = stripe_of(tc, key);
	struct tc_entry *e;

	if (lock_stripe(tc, s) < 0)
		return;
	if ((e = claimed(s, key)) != NULL)
		memset(e, 0, sizeof(*e));
	state_unlock(&s->lock);
}

size_t
token_cache_count(struct token_cache *tc, int64_t now_ms)
{
	size_t n = 0;
	uint32_t i;
	int j;

	for (i = 0; i < tc->nstripes; i++) {
		struct tc_stripe *s = &tc->r->stripes[i];

		if (lock_stripe(tc, s) < 0)
			continue;
		for (j = 0; j < TC_WAYS; j++)
			n += live(&s->e[j], now_ms);
		state_unlock(&s->lock);
	}
	return n;
}
