/* vault — people's connected accounts' tokens, sealed, shared by the processes of a
 * host (vault.h). */
#include "autoconf.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "secret.h"
#include "state.h"
#include "vault.h"

#define VAULT_MAGIC	0x564c5431u	/* "VLT1" */

struct vault_entry {
	unsigned char name[VAULT_NAME_BYTES];
	int64_t until_ms;	/* of no more use then; 0: no end said */
	int64_t used_ms;	/* last stored or read: the least recent goes first */
	int64_t claim_until_ms;	/* a refresh claimed until then; 0: none */
	uint32_t len;		/* of value, without its NUL; 0: a free entry */
	char value[VAULT_VALUE_MAX];
};

struct vault_set {
	pthread_mutex_t lock;
	struct vault_entry e[VAULT_WAYS];
};

struct vault_region {
	uint32_t magic;
	uint32_t nsets;		/* for a reader of the file; the handle's count is the one used */
	struct vault_set sets[];
};

struct vault {
	struct vault_region *r;
	uint32_t nsets;		/* from the validated region size, never re-read */
};

size_t
vault_region_size(uint32_t entries)
{
	uint32_t n;

	if (entries > VAULT_ENTRIES_MAX)
		entries = VAULT_ENTRIES_MAX;
	n = (entries + VAULT_WAYS - 1) / VAULT_WAYS;
	return sizeof(struct vault_region) + (size_t)(n ? n : 1) * sizeof(struct vault_set);
}

int
vault_region_size_ok(size_t size)
{
	return size > sizeof(struct vault_region) &&
	    (size - sizeof(struct vault_region)) % sizeof(struct vault_set) == 0 &&
	    (size - sizeof(struct vault_region)) / sizeof(struct vault_set) <= VAULT_ENTRIES_MAX / VAULT_WAYS;
}

size_t
vault_region_entries(size_t size)
{
	return vault_region_size_ok(size) ?
	    (size - sizeof(struct vault_region)) / sizeof(struct vault_set) * VAULT_WAYS : 0;
}

static void
vault_region_init(void *region, size_t size, int shared)
{
	struct vault_region *r = region;
	uint32_t i;

	r->nsets = (uint32_t)((size - sizeof(*r)) / sizeof(struct vault_set));
	for (i = 0; i < r->nsets; i++)
		state_mutex_init(&r->sets[i].lock, shared);
}

/* Its size is the layout's: vault_region_size(entries); none (an empty region) unless
 * the layout asks for it. */
const struct state_region vault_region_def = {
	"vault", 0, VAULT_MAGIC, offsetof(struct vault_region, magic), STATE_NO_LOCK, 0, vault_region_init,
	vault_region_size_ok, NULL, 0,
};

struct vault *
vault_attach(void *region, size_t size)
{
	struct vault *v;

	/* (The region's own magic is checked on every call: it may be written over.) */
	if (region == NULL || !vault_region_size_ok(size) || (v = malloc(sizeof(*v))) == NULL)
		return NULL;
	v->r = region;
	v->nsets = (uint32_t)((size - sizeof(*v->r)) / sizeof(struct vault_set));
	return v;
}

void
vault_detach(struct vault *v)
{
	free(v);
}

static void
entry_clear(struct vault_entry *e)
{
	secret_wipe(e, sizeof(*e));
}

/* Locks name's set: NULL when the region cannot be used now. When a process died
 * holding the lock, an entry it was writing may be torn: a length out of bounds is
 * wiped here, a value torn within its bounds does not open (its owner drops it). The
 * others are kept: they are people's connections, not a cache. */
static struct vault_set *
set_lock(struct vault *v, const unsigned char *name)
{
	struct vault_set *s;
	uint32_t h;
	int rc, i;

	if (v == NULL || !state_owned(&v->r->magic, VAULT_MAGIC))
		return NULL;
	memcpy(&h, name, sizeof(h));	/* a keyed digest: uniform */
	s = &v->r->sets[h % v->nsets];
	if ((rc = state_lock(&s->lock)) < 0)
		return NULL;
	for (i = 0; rc == 1 && i < VAULT_WAYS; i++)
		if (s->e[i].len >= VAULT_VALUE_MAX)
			entry_clear(&s->e[i]);
	return s;
}

static int
entry_live(const struct vault_entry *e, int64_t now_ms)
{
	return e->len > 0 && e->len < VAULT_VALUE_MAX && (e->until_ms == 0 || e->until_ms > now_ms);
}

/* name's live entry in s, or NULL; an entry of that name whose end passed is wiped on
 * the way (of no more use, it is not kept). */
static struct vault_entry *
find(struct vault_set *s, const unsigned char *name, int64_t now_ms)
{
	struct vault_entry *e;
	int i;

	for (i = 0; i < VAULT_WAYS; i++) {
		e = &s->e[i];
		if (e->len == 0 || !secret_equal(e->name, name, VAULT_NAME_BYTES))
			continue;
		if (entry_live(e, now_ms))
			return e;
		entry_clear(e);
	}
	return NULL;
}

/* An entry to take for a new name: a free or dead one, else the least recently used
 * live one whose refresh is not claimed (NULL when every one is). */
static struct vault_entry *
victim(struct vault_set *s, int64_t now_ms)
{
	struct vault_entry *v = NULL, *e;
	int i;

	for (i = 0; i < VAULT_WAYS; i++) {
		e = &s->e[i];
		if (!entry_live(e, now_ms))
			return e;
		if (e->claim_until_ms <= now_ms && (v == NULL || e->used_ms < v->used_ms))
			v = e;
	}
	return v;
}

enum vault_status
vault_get(struct vault *v, const unsigned char name[VAULT_NAME_BYTES], int64_t now_ms, char *out, size_t outlen)
{
	struct vault_set *s = set_lock(v, name);
	struct vault_entry *e;
	enum vault_status st = VAULT_NONE;

	if (s == NULL)
		return VAULT_UNAVAILABLE;
	if ((e = find(s, name, now_ms)) != NULL) {
		if (e->len < outlen) {	/* (find took only a length within value) */
			memcpy(out, e->value, e->len);
			out[e->len] = '\0';
			if (e->used_ms < now_ms)
				e->used_ms = now_ms;
			st = VAULT_HIT;
		} else
			st = VAULT_UNAVAILABLE;
	}
	state_unlock(&s->lock);
	return st;
}

/* One pass under the set's lock — the entry to write (name's own, else a victim), what
 * a live victim held handed back, then the value written — so that no other process
 * sees a value evicted but not yet handed back, or half of the new one. */
int
vault_put(struct vault *v, const unsigned char name[VAULT_NAME_BYTES], int64_t now_ms,
    const struct vault_value *val, char *evicted, size_t evicted_len)
{
	size_t n = strnlen(val->sealed, VAULT_VALUE_MAX);
	struct vault_set *s;
	struct vault_entry *e;
	int rc = -1;

	if (n == 0 || n >= VAULT_VALUE_MAX || (val->until_ms != 0 && val->until_ms <= now_ms) ||
	    (s = set_lock(v, name)) == NULL)
		return -1;
	if ((e = find(s, name, now_ms)) != NULL) {
		rc = 0;
	} else if ((e = victim(s, now_ms)) == NULL) {
		goto out;	/* every entry being refreshed */
	} else if (!entry_live(e, now_ms)) {
		rc = 0;
	} else {
		/* A person's connection goes: its value to the caller, or nothing is done. */
		if (evicted == NULL || e->len >= evicted_len) {
			e = NULL;
			goto out;
		}
		memcpy(evicted, e->value, e->len);
		evicted[e->len] = '\0';
		rc = 1;
	}
	entry_clear(e);
	memcpy(e->name, name, VAULT_NAME_BYTES);
	memcpy(e->value, val->sealed, n);
	e->value[n] = '\0';
	e->until_ms = val->until_ms;
	e->used_ms = now_ms;
	e->len = (uint32_t)n;	/* last: a length says a value is there */
out:
	state_unlock(&s->lock);
	return rc;
}

enum vault_status
vault_claim_refresh(struct vault *v, const unsigned char name[VAULT_NAME_BYTES], int64_t now_ms, int64_t claim_ms)
{
	struct vault_set *s = set_lock(v, name);
	struct vault_entry *e;
	enum vault_status st = VAULT_NONE;

	if (s == NULL)
		return VAULT_UNAVAILABLE;
	if ((e = find(s, name, now_ms)) != NULL) {
		if (e->claim_until_ms > now_ms) {
			st = VAULT_BUSY;
		} else {
			e->claim_until_ms = now_ms + (claim_ms > 0 ? claim_ms : 1);
			st = VAULT_CLAIMED;
		}
	}
	state_unlock(&s->lock);
	return st;
}

/* name's entries in its set (a live one, and any whose end passed): their claim let
 * go, or, with wipe, the entries wiped. */
static void
let_go(struct vault *v, const unsigned char name[VAULT_NAME_BYTES], int wipe)
{
	struct vault_set *s = set_lock(v, name);
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < VAULT_WAYS; i++) {
		if (s->e[i].len == 0 || !secret_equal(s->e[i].name, name, VAULT_NAME_BYTES))
			continue;
		if (wipe)
			entry_clear(&s->e[i]);
		else
			s->e[i].claim_until_ms = 0;
	}
	state_unlock(&s->lock);
}

void
vault_release(struct vault *v, const unsigned char name[VAULT_NAME_BYTES])
{
	let_go(v, name, 0);
}

void
vault_drop(struct vault *v, const unsigned char name[VAULT_NAME_BYTES])
{
	let_go(v, name, 1);
}

size_t
vault_count(struct vault *v, int64_t now_ms)
{
	size_t n = 0;
	uint32_t i;
	int j;

	if (v == NULL || !state_owned(&v->r->magic, VAULT_MAGIC))
		return 0;
	for (i = 0; i < v->nsets; i++) {
		if (state_lock(&v->r->sets[i].lock) < 0)
			continue;
		for (j = 0; j < VAULT_WAYS; j++)
			n += entry_live(&v->r->sets[i].e[j], now_ms);
		state_unlock(&v->r->sets[i].lock);
	}
	return n;
}

enum vault_status
vault_peek(const void *copy, size_t size, const unsigned char name[VAULT_NAME_BYTES], int64_t now_ms,
    char *out, size_t outlen)
{
	const struct vault_region *r = copy;
	const struct vault_set *set;
	const struct vault_entry *e;
	uint32_t h;
	int i;

	if (copy == NULL || !vault_region_size_ok(size) || r->magic != VAULT_MAGIC)
		return VAULT_UNAVAILABLE;
	memcpy(&h, name, sizeof(h));
	set = &r->sets[h % (uint32_t)((size - sizeof(*r)) / sizeof(struct vault_set))];
	for (i = 0; i < VAULT_WAYS; i++) {
		e = &set->e[i];
		if (!entry_live(e, now_ms) || !secret_equal(e->name, name, VAULT_NAME_BYTES))
			continue;
		if (e->len >= outlen)
			return VAULT_UNAVAILABLE;
		memcpy(out, e->value, e->len);
		out[e->len] = '\0';
		return VAULT_HIT;
	}
	return VAULT_NONE;
}
