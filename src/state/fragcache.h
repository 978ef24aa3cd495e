/* fragcache — a worker's serialized JSON fragments (the pages of a list answer), so
 * that a page the worker already wrote for this catalog is sent as it is, not
 * serialized again. Entries belong to an epoch (the catalog copy they were made from):
 * a lookup with another epoch drops them all. Least recently used goes first; bytes and
 * entries are capped. A text can be held past its entry (an answer being written while
 * the entry is evicted): it is freed when the last holder lets go. One per thread: no
 * locking, and a text is held and let go on the thread of its cache. */
#ifndef GW_FRAGCACHE_H
#define GW_FRAGCACHE_H

#include <stddef.h>
#include <stdint.h>

#define FRAGCACHE_KEY_MAX	64

struct fragcache;

struct fragcache *fragcache_new(size_t max_bytes, unsigned max_entries);
void fragcache_free(struct fragcache *fc);
/* The text stored under key in epoch, or NULL; borrowed until the next call. */
const char *fragcache_get(struct fragcache *fc, uint64_t epoch, const void *key, size_t klen,
    size_t *len);
/* Stores a copy of text under key (klen <= FRAGCACHE_KEY_MAX), evicting as needed. A
 * text over the byte cap is not stored. 0 or -1. */
int fragcache_put(struct fragcache *fc, uint64_t epoch, const void *key, size_t klen,
    const char *text, size_t len);
/* The same, taking text (malloc'd, NUL-terminated at len) instead of copying it: freed
 * by the cache, or here when it is not stored (-1). */
int fragcache_take(struct fragcache *fc, uint64_t epoch, const void *key, size_t klen,
    char *text, size_t len);
/* Holds a text fragcache_get returned (before the next call), so that it stays valid
 * after its entry goes, and after the cache is freed, until fragcache_release. */
void fragcache_hold(const char *text);
void fragcache_release(const char *text);
/* fragcache_release with the signature of a release callback (response.h). */
void fragcache_release_cb(void *text);

#endif
