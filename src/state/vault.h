/* vault — the tokens people connected at third-party upstreams (their access token,
 * refresh token, ends and granted scopes), one entry per person and upstream, in a
 * region of the state file that every process of the host shares. What it holds is
 * sealed by its owner (vault_seal.c) before it comes here: the region sees a keyed
 * digest for a name and ciphertext for a value, never a token.
 *
 * Unlike the credential cache (credcache.c), an entry is not something to obtain
 * again: losing it drops a person's connection. So entries go least-recently-used
 * when a set is full, and the one that goes is handed back to the caller (vault_put),
 * who can say whose connection was dropped; a region that cannot be used changes
 * nothing. A refresh claim makes one process of the host refresh an entry's tokens
 * while the others wait; a claim past its deadline (its owner died, or overran) is
 * taken over.
 *
 * The region is made only when the layout gives it a size (vault_region_size of an
 * entry count); its geometry comes from that size, validated once and kept in process
 * memory (vault_attach), never from the shared memory. Entries sit in sets of
 * VAULT_WAYS behind a robust mutex each. `now_ms` is passed in (ms, wall clock). */
#ifndef GW_VAULT_H
#define GW_VAULT_H

#include <stddef.h>
#include <stdint.h>

#include "state.h"

#define VAULT_NAME_BYTES	32	/* an entry's name: a keyed digest made by the owner */
#define VAULT_WAYS		8	/* entries a set */
/* A sealed value, with its NUL. What is sealed is at most VAULT_PLAIN_MAX bytes
 * (vault_seal.h: a 4 KiB access token, a 4 KiB refresh token, 1 KiB of scopes, the
 * upstream's name, the person's digest, three times and the JSON around them: 9,584
 * bytes at most, rounded up); sealing adds a 24-byte nonce and a 16-byte tag, and
 * base64url 4/3: (9728 + 40) * 4 / 3 = 13,024 characters, and the NUL. */
#define VAULT_PLAIN_MAX		9728
#define VAULT_VALUE_MAX		13056
#define VAULT_ENTRIES_MAX	65536	/* a layout's most: 850 MiB (a state file holds 1 GiB) */

enum vault_status {
	VAULT_HIT = 1,		/* a live value: copied out */
	VAULT_NONE,		/* no entry of that name (or its end passed) */
	VAULT_CLAIMED,		/* the refresh is ours: refresh, then vault_put or vault_release */
	VAULT_BUSY,		/* another process refreshes it: wait, then vault_get */
	VAULT_UNAVAILABLE,	/* the region cannot be used now (or out is too small) */
};

struct vault;	/* an attached region (opaque) */

/* The region's size for entries (rounded up to whole sets; at least one set), whether
 * a size is one a count gives (an existing file's region is adopted at its size), and
 * the entries a size holds (0: not a vault's size). */
size_t vault_region_size(uint32_t entries);
int vault_region_size_ok(size_t size);
size_t vault_region_entries(size_t size);
extern const struct state_region vault_region_def;	/* of vault_region_size() */

/* The region of size bytes at region (state_region's): NULL when size is not a
 * vault's (an absent region: 0). Detach frees the handle only. */
struct vault *vault_attach(void *region, size_t size);
void vault_detach(struct vault *v);

/* name's value: VAULT_HIT with it in out (NUL-terminated) and the entry marked used at
 * now_ms; VAULT_NONE; VAULT_UNAVAILABLE (v NULL, the region written over, a lock not
 * had, or out too small for what is stored). A claimed entry is still read: its access
 * token may be good while another process refreshes it. */
enum vault_status vault_get(struct vault *v, const unsigned char name[VAULT_NAME_BYTES], int64_t now_ms,
    char *out, size_t outlen);
/* A value to store: sealed (NUL-terminated, under VAULT_VALUE_MAX), of use until
 * until_ms (0: no end said). */
struct vault_value {
	const char *sealed;
	int64_t until_ms;
};
/* Stores val as name's value, replacing name's entry (and its claim), else taking a
 * free or dead entry, else the least recently used one not being refreshed. When that
 * was a live entry of another name, its value is copied to evicted (NUL-terminated),
 * so that the owner can open it and say whose connection went: 1. 0: stored, nothing
 * evicted; -1: not stored (the region unusable, until_ms passed, sealed too long or
 * empty, every entry of the set being refreshed, or evicted NULL or too small for the
 * value that would go: eviction never loses a value silently). */
int vault_put(struct vault *v, const unsigned char name[VAULT_NAME_BYTES], int64_t now_ms,
    const struct vault_value *val, char *evicted, size_t evicted_len);
/* Claims name's refresh until now_ms + claim_ms: VAULT_CLAIMED (ours), VAULT_BUSY
 * (another's claim within its deadline), VAULT_NONE (no live entry), or
 * VAULT_UNAVAILABLE. */
enum vault_status vault_claim_refresh(struct vault *v, const unsigned char name[VAULT_NAME_BYTES],
    int64_t now_ms, int64_t claim_ms);
/* Ends our claim on name, its value kept (the refresh failed, or was not needed). */
void vault_release(struct vault *v, const unsigned char name[VAULT_NAME_BYTES]);
/* Removes name's entry, wiped (the person disconnected; the upstream refused it). */
void vault_drop(struct vault *v, const unsigned char name[VAULT_NAME_BYTES]);
/* name's value as vault_get reads it, in copy, a copy of the region (size bytes, read
 * from the state file without mapping it: `mcpgate explain`), nothing locked or marked:
 * VAULT_HIT, VAULT_NONE, or VAULT_UNAVAILABLE (not a vault's region, out too small). */
enum vault_status vault_peek(const void *copy, size_t size, const unsigned char name[VAULT_NAME_BYTES],
    int64_t now_ms, char *out, size_t outlen);
/* Live entries (tests, metrics). */
size_t vault_count(struct vault *v, int64_t now_ms);

#endif
