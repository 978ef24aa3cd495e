/* fragcache — per-worker cache of serialized JSON fragments. */
#include "autoconf.h"

#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fragcache.h"

/* A text and its holders: the entry that stores it, and the answers being written
 * from it (fragcache_hold). */
struct text {
	unsigned refs;
	char bytes[];
};

struct frag {
	unsigned char key[FRAGCACHE_KEY_MAX];
	size_t klen;
	struct text *text;	/* NULL = a free slot */
	size_t len;
	uint64_t used;		/* the tick of its last use */
};

struct fragcache {
	uint64_t epoch;
	uint64_t tick;
	size_t bytes, max_bytes;
	unsigned n;
	struct frag slot[];
};

struct fragcache *
fragcache_new(size_t max_bytes, unsigned max_entries)
{
	struct fragcache *fc;

	if (max_entries == 0 || (fc = calloc(1, sizeof(*fc) + max_entries * sizeof(struct frag))) == NULL)
		return NULL;
	fc->max_bytes = max_bytes;
	fc->n = max_entries;
	return fc;
}

static struct text *
text_of(const char *bytes)
{
	return (struct text *)(void *)((char *)(uintptr_t)bytes - offsetof(struct text, bytes));
}

void
fragcache_hold(const char *text)
{
	if (text)
		text_of(text)->refs++;
}

void
fragcache_release(const char *text)
{
	struct text *t;

	if (text && --(t = text_of(text))->refs == 0)
		free(t);
}

void
fragcache_release_cb(void *text)
{
	fragcache_release(text);
}

static void
drop(struct fragcache *fc, struct frag *f)
{
	assert(f->text != NULL);	/* a slot in use holds its text */
	fc->bytes -= f->len;
	fragcache_release(f->text->bytes);
	memset(f, 0, sizeof(*f));
}

static void
drop_all(struct fragcache *fc)
{
	unsigned i;

	for (i = 0; i < fc->n; i++)
		if (fc->slot[i].text)
			drop(fc, &fc->slot[i]);
}

void
fragcache_free(struct fragcache *fc)
{
	if (fc == NULL)
		return;
	drop_all(fc);
	free(fc);
}

static struct frag *
find(struct fragcache *fc, uint64_t epoch, const void *key, size_t klen)
{
	unsigned i;

	if (epoch != fc->epoch) {
		drop_all(fc);
		fc->epoch = epoch;
		return NULL;
	}
	for (i = 0; i < fc->n; i++)
		if (fc->slot[i].text && fc->slot[i].klen == klen && memcmp(fc->slot[i].key, key, klen) == 0)
			return &fc->slot[i];
	return NULL;
}

const char *
fragcache_get(struct fragcache *fc, uint64_t epoch, const void *key, size_t klen, size_t *len)
{
	struct frag *f;

	if (fc == NULL || (f = find(fc, epoch, key, klen)) == NULL)
		return NULL;
	f->used = ++fc->tick;
	*len = f->len;
	return f->text->bytes;
}

/* The least recently used entry, or NULL when there is none. */
static struct frag *
oldest(struct fragcache *fc)
{
	struct frag *v = NULL;
	unsigned i;

	for (i = 0; i < fc->n; i++)
		if (fc->slot[i].text && (v == NULL || fc->slot[i].used < v->used))
			v = &fc->slot[i];
	return v;
}

static struct frag *
free_slot(struct fragcache *fc)
{
	unsigned i;

	for (i = 0; i < fc->n; i++)
		if (fc->slot[i].text == NULL)
			return &fc->slot[i];
	return NULL;
}

/* Stores t (its holder's count 1: the entry) under key, evicting as needed: 0. */
static int
store(struct fragcache *fc, uint64_t epoch, const void *key, size_t klen, struct text *copy, size_t len)
{
	struct frag *f;

	if ((f = find(fc, epoch, key, klen)) != NULL)
		drop(fc, f);
	/* Room in bytes, then a slot. */
	while (fc->bytes + len > fc->max_bytes && (f = oldest(fc)) != NULL)
		drop(fc, f);
	if ((f = free_slot(fc)) == NULL) {
		f = oldest(fc);
		assert(f != NULL);	/* no free slot: every one is in use, one of them the oldest */
		drop(fc, f);
	}
	memcpy(f->key, key, klen);
	f->klen = klen;
	f->text = copy;
	f->len = len;
	f->used = ++fc->tick;
	fc->bytes += len;
	return 0;
}

int
fragcache_put(struct fragcache *fc, uint64_t epoch, const void *key, size_t klen,
    const char *text, size_t len)
{
	struct text *copy;

	if (fc == NULL || klen > FRAGCACHE_KEY_MAX || len > fc->max_bytes ||
	    (copy = malloc(sizeof(*copy) + len + 1)) == NULL)
		return -1;
	copy->refs = 1;
	memcpy(copy->bytes, text, len);
	copy->bytes[len] = '\0';
	return store(fc, epoch, key, klen, copy, len);
}

int
fragcache_take(struct fragcache *fc, uint64_t epoch, const void *key, size_t klen,
    char *text, size_t len)
{
	struct text *t;

	if (fc == NULL || klen > FRAGCACHE_KEY_MAX || len > fc->max_bytes ||
	    (t = realloc(text, sizeof(*t) + len + 1)) == NULL) {
		free(text);
		return -1;
	}
	/* the holders' count goes before the text: moved once, when the page is made */
	memmove(t->bytes, t, len + 1);
	t->refs = 1;
	return store(fc, epoch, key, klen, t, len);
}

