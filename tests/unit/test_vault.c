/* Unit tests: the vault of people's connected accounts — its region (vault.c: get, put
 * and replace, ends, least-recently-used eviction handing back what went, a flood,
 * refresh claims, a region written over, its size from an entry count) in a private
 * mapping, and what goes in it (vault_seal.c: names, sealing bound to the name and the
 * session key, the fixed shape read strictly, no token in clear in the region), and
 * its place in the state file: absent unless the layout gives it a size, a file of an
 * older build (without the region) opened as it is. */
#include "autoconf.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "credcache.h"
#include "gateway.h"
#include "introspect.h"
#include "secret.h"
#include "state.h"
#include "vault.h"
#include "vault_seal.h"
#include "tap.h"

static const int64_t now = 1700000000000LL;	/* ms */

/* A region of entries in private memory, attached; its memory in *mem, its size in *size. */
static struct vault *
vault_new(uint32_t entries, void **mem, size_t *size)
{
	*size = vault_region_size(entries);
	*mem = calloc(1, *size);
	state_region_make(&vault_region_def, *mem, *size, 0);
	return vault_attach(*mem, *size);
}

static void
name_of(int i, unsigned char name[VAULT_NAME_BYTES])
{
	char s[32];

	snprintf(s, sizeof(s), "name %d", i);
	secret_digest(s, strlen(s), name, VAULT_NAME_BYTES);
}

/* A name whose set is set (of nsets): the set is the name's first four bytes' value. */
static void
name_in_set(int i, uint32_t set, uint32_t nsets, unsigned char name[VAULT_NAME_BYTES])
{
	uint32_t h;

	for (;; i += 7919) {
		name_of(i, name);
		memcpy(&h, name, sizeof(h));
		if (h % nsets == set)
			return;
	}
}

static void
test_size(void)
{
	void *mem;
	size_t size;
	struct vault *v = vault_new(20, &mem, &size);

	ok(v != NULL, "a region of 20 entries attaches");
	is_int((long long)vault_region_entries(size), 24, "… holding whole sets of %d: 24", VAULT_WAYS);
	ok(vault_region_size_ok(vault_region_size(1024)) && !vault_region_size_ok(vault_region_size(1024) + 1) &&
	    !vault_region_size_ok(0), "a size some count gives, and only that");
	ok(vault_region_size(0) == vault_region_size(1), "no entries: still one set");
	ok(vault_region_size(UINT32_MAX) == vault_region_size(VAULT_ENTRIES_MAX), "a count past the most: the most");
	ok(vault_attach(mem, 0) == NULL && vault_attach(NULL, size) == NULL, "an absent region attaches as none");
	is_int((long long)vault_region_entries(0), 0, "… and holds nothing");
	vault_detach(v);
	free(mem);
}

/* A copy of the region read as `mcpgate explain` reads the state file's: nothing
 * locked, the same answers as vault_get, and a copy that is not a vault's refused. */
static void
test_peek(void)
{
	unsigned char k1[VAULT_NAME_BYTES], k2[VAULT_NAME_BYTES];
	char out[VAULT_VALUE_MAX], ev[VAULT_VALUE_MAX];
	void *mem, *copy;
	size_t size;
	struct vault *v = vault_new(64, &mem, &size);

	name_of(1, k1);
	name_of(2, k2);
	is_int(vault_put(v, k1, now, &(struct vault_value){ "sealed-1", now + 60000 }, ev, sizeof(ev)), 0, "stored");
	copy = malloc(size);
	memcpy(copy, mem, size);
	is_int(vault_peek(copy, size, k1, now + 1, out, sizeof(out)), VAULT_HIT, "peek: a hit in the copy");
	is_str(out, "sealed-1", "… with the value");
	is_int(vault_peek(copy, size, k2, now + 1, out, sizeof(out)), VAULT_NONE, "peek: another name: none");
	is_int(vault_peek(copy, size, k1, now + 60000, out, sizeof(out)), VAULT_NONE, "peek: its end passed: none");
	is_int(vault_peek(copy, size, k1, now, out, 4), VAULT_UNAVAILABLE, "peek: out too small: unavailable");
	is_int(vault_peek(copy, size - 1, k1, now, out, sizeof(out)), VAULT_UNAVAILABLE, "peek: not a vault's size");
	is_int(vault_peek(NULL, size, k1, now, out, sizeof(out)), VAULT_UNAVAILABLE, "peek: no copy");
	memset(copy, 0, 4);
	is_int(vault_peek(copy, size, k1, now, out, sizeof(out)), VAULT_UNAVAILABLE, "peek: its magic gone");
	free(copy);
	vault_detach(v);
	free(mem);
}

static void
test_region(void)
{
	unsigned char k1[VAULT_NAME_BYTES], k2[VAULT_NAME_BYTES];
	char out[VAULT_VALUE_MAX], ev[VAULT_VALUE_MAX], *big = malloc(VAULT_VALUE_MAX + 1);
	void *mem;
	size_t size;
	struct vault *v = vault_new(64, &mem, &size);

	name_of(1, k1);
	name_of(2, k2);
	is_int(vault_get(v, k1, now, out, sizeof(out)), VAULT_NONE, "nothing yet: none");
	is_int(vault_put(v, k1, now, &(struct vault_value){ "sealed-1", now + 60000 }, ev, sizeof(ev)), 0, "stored");
	is_int(vault_get(v, k1, now + 1, out, sizeof(out)), VAULT_HIT, "then a hit");
	is_str(out, "sealed-1", "… with the value");
	is_int(vault_get(v, k2, now + 1, out, sizeof(out)), VAULT_NONE, "another name: none");
	is_int(vault_put(v, k1, now + 2, &(struct vault_value){ "sealed-1b", now + 90000 }, ev, sizeof(ev)), 0, "replaced");
	is_int(vault_get(v, k1, now + 3, out, sizeof(out)), VAULT_HIT, "… a hit");
	is_str(out, "sealed-1b", "… with the new value");
	is_int((long long)vault_count(v, now + 3), 1, "one entry for one name");
	is_int(vault_get(v, k1, now + 90000, out, sizeof(out)), VAULT_NONE, "its end passed: none");
	is_int((long long)vault_count(v, now), 0, "… and it is gone, whatever the time asked");
	is_int(vault_put(v, k2, now, &(struct vault_value){ "sealed-2", 0 }, ev, sizeof(ev)), 0, "a value with no end said");
	is_int(vault_get(v, k2, now + 86400000LL * 365, out, sizeof(out)), VAULT_HIT, "… lives on");
	is_int(vault_get(v, k2, now, out, 5), VAULT_UNAVAILABLE, "a value larger than the buffer: unavailable, not cut");
	vault_drop(v, k2);
	is_int(vault_get(v, k2, now, out, sizeof(out)), VAULT_NONE, "dropped: none");
	is_int(vault_put(v, k1, now, &(struct vault_value){ "x", now }, ev, sizeof(ev)), -1, "an end already passed: not stored");
	is_int(vault_put(v, k1, now, &(struct vault_value){ "", 0 }, ev, sizeof(ev)), -1, "an empty value: not stored");
	memset(big, 'a', VAULT_VALUE_MAX);
	big[VAULT_VALUE_MAX] = '\0';
	is_int(vault_put(v, k1, now, &(struct vault_value){ big, 0 }, ev, sizeof(ev)), -1, "a value of VAULT_VALUE_MAX bytes and its NUL: not stored");
	big[VAULT_VALUE_MAX - 1] = '\0';
	is_int(vault_put(v, k1, now, &(struct vault_value){ big, 0 }, ev, sizeof(ev)), 0, "one byte less: stored");
	is_int(vault_get(v, k1, now, out, sizeof(out)), VAULT_HIT, "… and read whole");
	ok(strlen(out) == VAULT_VALUE_MAX - 1, "… every byte");
	free(big);
	vault_detach(v);
	free(mem);
}

/* A full set gives up its least recently used entry, and hands it back. */
static void
test_evict(void)
{
	unsigned char k[VAULT_WAYS + 1][VAULT_NAME_BYTES];
	char out[VAULT_VALUE_MAX], ev[VAULT_VALUE_MAX], val[32];
	void *mem;
	size_t size;
	struct vault *v = vault_new(16, &mem, &size);	/* two sets */
	int i, rc, all = 1;

	for (i = 0; i <= VAULT_WAYS; i++)
		name_in_set(i, 1, 2, k[i]);
	for (i = 0; i < VAULT_WAYS; i++) {
		snprintf(val, sizeof(val), "sealed-%d", i);
		all &= vault_put(v, k[i], now + i, &(struct vault_value){ val, 0 }, ev, sizeof(ev)) == 0;
	}
	ok(all, "a set filled: nothing evicted");
	is_int(vault_get(v, k[0], now + 100, out, sizeof(out)), VAULT_HIT, "the first read again: used last");
	is_int(vault_put(v, k[VAULT_WAYS], now + 101, &(struct vault_value){ "sealed-new", 0 }, NULL, 0), -1,
	    "one more with nowhere to hand back what would go: not stored");
	is_int(vault_get(v, k[1], now + 102, out, sizeof(out)), VAULT_HIT, "… nothing went");
	is_int(vault_put(v, k[VAULT_WAYS], now + 103, &(struct vault_value){ "sealed-new", 0 }, ev, 4), -1, "… nor with too small a buffer");
	/* k[1] was just read: k[2] is now the least recently used. */
	rc = vault_put(v, k[VAULT_WAYS], now + 104, &(struct vault_value){ "sealed-new", 0 }, ev, sizeof(ev));
	is_int(rc, 1, "one more: stored, one evicted (1)");
	is_str(ev, "sealed-2", "… the least recently used one, handed back");
	is_int(vault_get(v, k[2], now + 105, out, sizeof(out)), VAULT_NONE, "… and gone");
	is_int(vault_get(v, k[VAULT_WAYS], now + 105, out, sizeof(out)), VAULT_HIT, "the new one is there");
	is_int((long long)vault_count(v, now + 105), VAULT_WAYS, "the set still holds %d", VAULT_WAYS);
	/* An entry whose end passed goes first, silently: it was of no use. */
	vault_drop(v, k[VAULT_WAYS]);
	is_int(vault_put(v, k[2], now + 106, &(struct vault_value){ "short", now + 200 }, ev, sizeof(ev)), 0, "a short-lived one");
	is_int(vault_put(v, k[VAULT_WAYS], now + 300, &(struct vault_value){ "sealed-new", 0 }, ev, sizeof(ev)), 0,
	    "past its end, its entry taken: nothing evicted (0)");
	/* Entries being refreshed are not evicted. */
	for (i = 0, all = 1; i < VAULT_WAYS; i++)
		all &= vault_claim_refresh(v, i == 2 ? k[VAULT_WAYS] : k[i], now + 400, 5000) == VAULT_CLAIMED;
	ok(all, "every entry of the set claimed");
	is_int(vault_put(v, k[2], now + 401, &(struct vault_value){ "sealed-2", 0 }, ev, sizeof(ev)), -1, "then no room: not stored");
	vault_release(v, k[5]);
	is_int(vault_put(v, k[2], now + 402, &(struct vault_value){ "sealed-2", 0 }, ev, sizeof(ev)), 1, "one released: it goes");
	is_str(ev, "sealed-5", "… handed back");
	vault_detach(v);
	free(mem);
}

static void
test_flood(void)
{
	char ev[VAULT_VALUE_MAX], val[32];
	void *mem;
	size_t size;
	struct vault *v = vault_new(64, &mem, &size);
	unsigned char k[VAULT_NAME_BYTES];
	int i, evicted = 0, stored = 0, older = 0;

	for (i = 0; i < 1000; i++) {
		name_of(1000 + i, k);
		snprintf(val, sizeof(val), "v%d", i);
		switch (vault_put(v, k, now + i, &(struct vault_value){ val, 0 }, ev, sizeof(ev))) {
		case 1:
			evicted++;
			older += ev[0] == 'v' && strtol(ev + 1, NULL, 10) < i;
			/* FALLTHROUGH */
		case 0:
			stored++;
			break;
		}
	}
	is_int(stored, 1000, "a flood of 1000 names: each stored");
	is_int((long long)vault_count(v, now), 64, "… the region holds its 64 entries, no more");
	is_int(evicted, 1000 - 64, "… each one past them evicted one, handed back");
	is_int(older, evicted, "… an older one each time");
	for (i = 1000 - 8, stored = 0; i < 1000; i++) {
		char out[64];

		name_of(1000 + i, k);
		stored += vault_get(v, k, now + 2000, out, sizeof(out)) == VAULT_HIT;
	}
	is_int(stored, 8, "… the latest names stay");
	vault_detach(v);
	free(mem);
}

static void
test_claims(void)
{
	unsigned char k1[VAULT_NAME_BYTES], k2[VAULT_NAME_BYTES];
	char out[64], ev[64];
	void *mem;
	size_t size;
	struct vault *v = vault_new(64, &mem, &size);

	name_of(1, k1);
	name_of(2, k2);
	is_int(vault_claim_refresh(v, k1, now, 1000), VAULT_NONE, "no entry: nothing to claim");
	vault_put(v, k1, now, &(struct vault_value){ "old", now + 3600000 }, ev, sizeof(ev));
	is_int(vault_claim_refresh(v, k1, now, 1000), VAULT_CLAIMED, "a claim: ours");
	is_int(vault_claim_refresh(v, k1, now + 10, 1000), VAULT_BUSY, "another process meanwhile: busy");
	is_int(vault_get(v, k1, now + 10, out, sizeof(out)), VAULT_HIT, "… it still reads the value");
	is_int(vault_claim_refresh(v, k1, now + 1000, 1000), VAULT_CLAIMED, "past its deadline: taken over");
	vault_release(v, k1);
	is_int(vault_get(v, k1, now + 1001, out, sizeof(out)), VAULT_HIT, "released: the value kept");
	is_str(out, "old", "… as it was");
	is_int(vault_claim_refresh(v, k1, now + 1002, 1000), VAULT_CLAIMED, "released: claimed again at once");
	is_int(vault_put(v, k1, now + 1003, &(struct vault_value){ "new", now + 7200000 }, ev, sizeof(ev)), 0, "refreshed: stored");
	is_int(vault_claim_refresh(v, k1, now + 1004, 1000), VAULT_CLAIMED, "a put ends the claim");
	vault_release(v, k1);
	is_int(vault_claim_refresh(v, k2, now, 1000), VAULT_NONE, "another name: none");
	is_int(vault_claim_refresh(v, k1, now + 7200000, 1000), VAULT_NONE, "its end passed: none");
	vault_detach(v);
	free(mem);
}

static void
test_written_over(void)
{
	unsigned char k1[VAULT_NAME_BYTES];
	char out[64], ev[64];
	void *mem, *copy;
	size_t size;
	struct vault *v = vault_new(64, &mem, &size);

	name_of(1, k1);
	vault_put(v, k1, now, &(struct vault_value){ "kept", 0 }, ev, sizeof(ev));
	memset(mem, 0x5a, 4);	/* its magic */
	copy = malloc(size);
	memcpy(copy, mem, size);
	is_int(vault_get(v, k1, now, out, sizeof(out)), VAULT_UNAVAILABLE, "a region written over: unavailable");
	is_int(vault_put(v, k1, now, &(struct vault_value){ "v", 0 }, ev, sizeof(ev)), -1, "… nothing stored");
	is_int(vault_claim_refresh(v, k1, now, 1000), VAULT_UNAVAILABLE, "… nothing claimed");
	vault_release(v, k1);
	vault_drop(v, k1);
	is_int((long long)vault_count(v, now), 0, "… nothing counted");
	ok(memcmp(copy, mem, size) == 0, "… and not a byte changed");
	is_int(vault_get(NULL, k1, now, out, sizeof(out)), VAULT_UNAVAILABLE, "no region: unavailable");
	is_int(vault_put(NULL, k1, now, &(struct vault_value){ "v", 0 }, ev, sizeof(ev)), -1, "… nothing stored");
	is_int(vault_claim_refresh(NULL, k1, now, 1000), VAULT_UNAVAILABLE, "… nothing claimed");
	vault_drop(NULL, k1);
	vault_release(NULL, k1);
	is_int((long long)vault_count(NULL, now), 0, "… nothing counted");
	free(copy);
	vault_detach(v);
	free(mem);
}

/* --- sealing ------------------------------------------------------------------------ */

static char *
token(char c, size_t n)
{
	char *t = malloc(n + 1);

	memset(t, c, n);
	t[n] = '\0';
	return t;
}

static void
tokens_of(struct vault_tokens *t, char *at, char *rt, char *scope)
{
	memset(t, 0, sizeof(*t));
	t->access_token = at;
	t->refresh_token = rt;
	t->scope = scope;
	t->access_until_ms = now + 3600000;
	t->refresh_until_ms = now + 86400000LL * 30;
	t->obtained_ms = now;
	snprintf(t->who, sizeof(t->who), "0123456789abcdef0123456789abcdef");
	snprintf(t->upstream, sizeof(t->upstream), "github");
}

/* Long: one connection through every step — named, sealed at the largest, stored,
 * read, opened — then what must not open, and a scan of the region for a token. */
static void
test_seal(void)
{
	static const unsigned char skey[STATE_KEY_BYTES] = { 1, 2, 3 }, other[STATE_KEY_BYTES] = { 9 };
	struct vault_keys k, k2;
	struct vault_tokens t, got;
	unsigned char n1[VAULT_NAME_BYTES], n2[VAULT_NAME_BYTES], n3[VAULT_NAME_BYTES];
	char *sealed = malloc(VAULT_VALUE_MAX), *out = malloc(VAULT_VALUE_MAX), ev[64];
	char *at = token('A', VAULT_TOKEN_MAX), *rt = token('R', VAULT_TOKEN_MAX), *scope = token('s', VAULT_SCOPE_MAX);
	void *mem;
	size_t size, i;
	struct vault *v = vault_new(64, &mem, &size);

	vault_keys_derive(&k, skey);
	vault_keys_derive(&k2, other);
	vault_name(&k, "https://idp.example", "alice", "github", n1);
	vault_name(&k, "https://idp.example", "bob", "github", n2);
	ok(memcmp(n1, n2, VAULT_NAME_BYTES) != 0, "names differ per subject");
	vault_name(&k, "https://idp.example", "alice", "gitlab", n2);
	ok(memcmp(n1, n2, VAULT_NAME_BYTES) != 0, "… per upstream");
	vault_name(&k, "https://other.example", "alice", "github", n2);
	ok(memcmp(n1, n2, VAULT_NAME_BYTES) != 0, "… per issuer");
	vault_name(&k, "https://idp.example", "alicegithub", "", n2);
	ok(memcmp(n1, n2, VAULT_NAME_BYTES) != 0, "… and parts do not run together");
	vault_name(&k2, "https://idp.example", "alice", "github", n2);
	ok(memcmp(n1, n2, VAULT_NAME_BYTES) != 0, "… per session key");
	vault_name(&k, "https://idp.example", "alice", "github", n3);
	ok(memcmp(n1, n3, VAULT_NAME_BYTES) == 0, "the same three: the same name");

	/* The largest: two 4 KiB tokens and 1 KiB of scopes, a long upstream name. */
	tokens_of(&t, at, rt, scope);
	memset(t.upstream, 'u', sizeof(t.upstream) - 1);
	t.upstream[sizeof(t.upstream) - 1] = '\0';
	is_int(vault_seal(&k, n1, &t, sealed, VAULT_VALUE_MAX), 0, "the largest connection seals into VAULT_VALUE_MAX");
	is_int(vault_put(v, n1, now, &(struct vault_value){ sealed, vault_tokens_until(&t) }, ev, sizeof(ev)), 0, "… and is stored");
	ok(vault_tokens_until(&t) == t.refresh_until_ms, "… until the refresh token's end");
	for (i = 0; i + 16 <= size; i++)
		if (memcmp((char *)mem + i, "AAAAAAAAAAAAAAAA", 16) == 0 ||
		    memcmp((char *)mem + i, "RRRRRRRRRRRRRRRR", 16) == 0 ||
		    memcmp((char *)mem + i, "ssssssssssssssss", 16) == 0 || memcmp((char *)mem + i, "alice", 5) == 0)
			break;
	ok(i + 16 > size, "no token, scope or subject in clear anywhere in the region");
	is_int(vault_get(v, n1, now, out, VAULT_VALUE_MAX), VAULT_HIT, "read back");
	is_int(vault_open(&k, n1, out, &got), 0, "… opens");
	ok(got.access_token && strcmp(got.access_token, at) == 0 && got.refresh_token &&
	    strcmp(got.refresh_token, rt) == 0 && got.scope && strcmp(got.scope, scope) == 0,
	    "… its tokens and scopes as sealed");
	ok(got.access_until_ms == t.access_until_ms && got.refresh_until_ms == t.refresh_until_ms &&
	    got.obtained_ms == now && strcmp(got.who, t.who) == 0 && strcmp(got.upstream, t.upstream) == 0,
	    "… its ends, its person and its upstream");
	vault_tokens_free(&got);
	ok(got.access_token == NULL && got.refresh_token == NULL && got.scope == NULL, "freed: empty");

	ok(vault_open(&k, n2, out, &got) < 0 && got.access_token == NULL, "a value moved under another name: does not open");
	ok(vault_open(&k2, n1, out, &got) < 0, "… under another session key: does not open");
	out[100] = out[100] == 'A' ? 'B' : 'A';
	ok(vault_open(&k, n1, out, &got) < 0, "… a byte altered: does not open");
	ok(vault_open(&k, n1, "", &got) < 0 && vault_open(&k, n1, "!!", &got) < 0, "… nothing, or not base64url");

	/* An access token alone, no scope: its end is the entry's. */
	tokens_of(&t, at, NULL, NULL);
	is_int(vault_seal(&k, n1, &t, sealed, VAULT_VALUE_MAX), 0, "an access token alone");
	ok(vault_tokens_until(&t) == t.access_until_ms, "… until its end");
	ok(vault_open(&k, n1, sealed, &got) == 0 && got.refresh_token == NULL && got.scope == NULL,
	    "… opens with no refresh token and no scope");
	vault_tokens_free(&got);
	t.access_until_ms = 0;
	ok(vault_tokens_until(&t) == 0, "… no end said: 0");

	/* What is not stored. */
	at[10] = '"';
	ok(vault_seal(&k, n1, &t, sealed, VAULT_VALUE_MAX) < 0, "a token with a quote: refused");
	at[10] = ' ';
	ok(vault_seal(&k, n1, &t, sealed, VAULT_VALUE_MAX) < 0, "… with a blank: refused");
	at[10] = 'A';
	tokens_of(&t, "", NULL, NULL);
	ok(vault_seal(&k, n1, &t, sealed, VAULT_VALUE_MAX) < 0, "an empty access token: refused");
	tokens_of(&t, NULL, NULL, NULL);
	ok(vault_seal(&k, n1, &t, sealed, VAULT_VALUE_MAX) < 0, "none: refused");
	free(at);
	at = token('A', VAULT_TOKEN_MAX + 1);
	tokens_of(&t, at, NULL, NULL);
	ok(vault_seal(&k, n1, &t, sealed, VAULT_VALUE_MAX) < 0, "a token past VAULT_TOKEN_MAX: refused");
	tokens_of(&t, "tok", NULL, NULL);
	t.who[3] = 'X';
	ok(vault_seal(&k, n1, &t, sealed, VAULT_VALUE_MAX) < 0, "a person's digest not lowercase hex: refused");
	tokens_of(&t, "tok", NULL, NULL);
	t.upstream[0] = '\0';
	ok(vault_seal(&k, n1, &t, sealed, VAULT_VALUE_MAX) < 0, "no upstream: refused");
	tokens_of(&t, "tok", NULL, NULL);
	t.access_until_ms = -1;
	ok(vault_seal(&k, n1, &t, sealed, VAULT_VALUE_MAX) < 0, "a negative time: refused");
	tokens_of(&t, "tok", NULL, NULL);
	ok(vault_seal(&k, n1, &t, sealed, 40) < 0, "too small a buffer: -1");

	vault_keys_clear(&k);
	vault_keys_clear(&k2);
	free(at);
	free(rt);
	free(scope);
	free(sealed);
	free(out);
	vault_detach(v);
	free(mem);
}

/* The plaintext's shape, read strictly: anything else is refused, and leaves nothing. */
static void
test_parse(void)
{
	static const char *const bad[] = {
		"",
		"{}",
		"{\"v\":2,\"who\":\"0123456789abcdef0123456789abcdef\",\"up\":\"u\",\"at\":\"a\",\"at_exp\":0,"
		    "\"rt\":\"\",\"rt_exp\":0,\"scope\":\"\",\"made\":0}",
		"{\"v\":1,\"who\":\"0123456789abcdef0123456789abcde\",\"up\":\"u\",\"at\":\"a\",\"at_exp\":0,"
		    "\"rt\":\"\",\"rt_exp\":0,\"scope\":\"\",\"made\":0}",
		"{\"v\":1,\"who\":\"0123456789abcdef0123456789abcdef\",\"up\":\"\",\"at\":\"a\",\"at_exp\":0,"
		    "\"rt\":\"\",\"rt_exp\":0,\"scope\":\"\",\"made\":0}",
		"{\"v\":1,\"who\":\"0123456789abcdef0123456789abcdef\",\"up\":\"u\",\"at\":\"\",\"at_exp\":0,"
		    "\"rt\":\"\",\"rt_exp\":0,\"scope\":\"\",\"made\":0}",
		"{\"v\":1,\"who\":\"0123456789abcdef0123456789abcdef\",\"up\":\"u\",\"at\":\"a\",\"at_exp\":01,"
		    "\"rt\":\"\",\"rt_exp\":0,\"scope\":\"\",\"made\":0}",
		"{\"v\":1,\"who\":\"0123456789abcdef0123456789abcdef\",\"up\":\"u\",\"at\":\"a\",\"at_exp\":-1,"
		    "\"rt\":\"\",\"rt_exp\":0,\"scope\":\"\",\"made\":0}",
		"{\"v\":1,\"who\":\"0123456789abcdef0123456789abcdef\",\"up\":\"u\",\"at\":\"a\",\"at_exp\":"
		    "1234567890123456789,\"rt\":\"\",\"rt_exp\":0,\"scope\":\"\",\"made\":0}",
		"{\"v\":1,\"who\":\"0123456789abcdef0123456789abcdef\",\"up\":\"u\",\"at\":\"a\\\"b\",\"at_exp\":0,"
		    "\"rt\":\"\",\"rt_exp\":0,\"scope\":\"\",\"made\":0}",
		"{\"v\":1,\"who\":\"0123456789abcdef0123456789abcdef\",\"up\":\"u\",\"at\":\"a\",\"at_exp\":0,"
		    "\"rt\":\"r\",\"rt_exp\":0,\"scope\":\"a\\tb\",\"made\":0}",
		"{\"v\":1,\"who\":\"0123456789abcdef0123456789abcdef\",\"up\":\"u\",\"at\":\"a\",\"at_exp\":0,"
		    "\"rt\":\"r\",\"rt_exp\":0,\"scope\":\"\",\"made\":0} ",
		"{\"v\":1,\"who\":\"0123456789abcdef0123456789abcdef\",\"up\":\"u\",\"at\":\"a\",\"at_exp\":0,"
		    "\"rt\":\"r\",\"rt_exp\":0,\"scope\":\"\",\"made\":0",
	};
	static const char good[] = "{\"v\":1,\"who\":\"0123456789abcdef0123456789abcdef\",\"up\":\"u\",\"at\":\"a\","
	    "\"at_exp\":5,\"rt\":\"r\",\"rt_exp\":999999999999999999,\"scope\":\"x y\",\"made\":0}";
	struct vault_tokens t;
	size_t i;
	int refused = 0;

	is_int(vault_tokens_parse(good, strlen(good), &t), 0, "the shape vault_seal writes: read");
	ok(strcmp(t.access_token, "a") == 0 && strcmp(t.refresh_token, "r") == 0 && strcmp(t.scope, "x y") == 0 &&
	    t.access_until_ms == 5 && t.refresh_until_ms == 999999999999999999LL && strcmp(t.upstream, "u") == 0,
	    "… every field");
	vault_tokens_free(&t);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (vault_tokens_parse(bad[i], strlen(bad[i]), &t) < 0 && t.access_token == NULL && t.refresh_token == NULL)
			refused++;
		else
			printf("#   read: %s\n", bad[i]);
	is_int(refused, (int)(sizeof(bad) / sizeof(bad[0])), "every other shape refused, nothing left");
	for (i = 0; i < strlen(good); i++)
		refused += vault_tokens_parse(good, i, &t) < 0;
	is_int(refused, (int)(sizeof(bad) / sizeof(bad[0]) + strlen(good)), "every cut of it refused");
}

/* --- the state file ------------------------------------------------------------------- */

/* The header as a build of nine regions (before the vault) wrote it, field for field. */
struct old_header {
	char magic[8];
	uint32_t version, nregions;
	uint64_t file_size, offset[9], size[9];
	unsigned char digest_key[32], session_key[32];
	uint64_t check;
};

static uint64_t
old_check(const struct old_header *h)
{
	unsigned char d[8];
	uint64_t v = 0;
	int i;

	secret_digest(h, offsetof(struct old_header, check), d, sizeof(d));
	for (i = 0; i < 8; i++)
		v = v << 8 | d[i];
	return v;
}

/* A layout reaching the last region before the vault, as the gateway's does. */
static void
file_layout(struct state_layout *lay, uint32_t vault_entries)
{
	memset(lay, 0, sizeof(*lay));
	lay->region[GW_REGION_ASMETA].def = &introspect_asmeta_region_def;
	lay->region[GW_REGION_CREDS].def = &credcache_region_def;
	if (vault_entries) {
		lay->region[GW_REGION_VAULT].def = &vault_region_def;
		lay->region[GW_REGION_VAULT].size = vault_region_size(vault_entries);
	}
}

static ino_t
inode(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? sb.st_ino : 0;
}

/* Long: one file through its life — built without the vault (as an older build wrote
 * it), its header replaced by an older build's own, a newer build's, then with the
 * vault, and without it again. */
static void
test_file(void)
{
	struct gw_error err = { GW_OK, 0, "" };
	char dir[] = "/tmp/mcpgate-test-vault-XXXXXX", path[256], out[64], ev[64];
	struct state_layout lay;
	struct state *st = NULL, *st2 = NULL;
	struct old_header h;
	unsigned char key[32], name[VAULT_NAME_BYTES];
	struct vault *v;
	void *region;
	size_t size;
	ino_t ino;
	int fd;

	ok(mkdtemp(dir) != NULL, "a directory");
	snprintf(path, sizeof(path), "%s/state", dir);
	file_layout(&lay, 0);
	ok(state_open(path, &lay, NULL, &st, &err) == 0, "a file without the vault");
	ok(state_region(st, GW_REGION_VAULT, &size) != NULL && size == 0 && vault_attach(NULL, size) == NULL,
	    "… its vault region empty: no bytes, none attached");
	fd = open(path, O_RDWR);
	ok(pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) && h.nregions == 9 && h.check == old_check(&h) &&
	    h.file_size == (uint64_t)lseek(fd, 0, SEEK_END), "… its header as a build of nine regions writes it");
	/* The file an older build made: its own keys, its own check. */
	secret_random_bytes(h.session_key, sizeof(h.session_key));
	memcpy(key, h.session_key, sizeof(key));
	h.check = old_check(&h);
	ok(pwrite(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h), "an older build's header written");
	state_close(st);
	ino = inode(path);
	ok(state_open(path, &lay, NULL, &st, &err) == 0 && inode(path) == ino &&
	    memcmp(state_session_key(st), key, 32) == 0, "… opened as it is: not rebuilt, its keys kept");
	ok(!state_broken(st, NULL), "… and not taken for broken");
	state_close(st);
	/* A newer build's, with more regions than this one knows: rebuilt. */
	h.nregions = STATE_NREGIONS + 1;
	h.check = old_check(&h);
	(void)!pwrite(fd, &h, sizeof(h), 0);
	close(fd);
	ok(state_open(path, &lay, NULL, &st, &err) == 0 && inode(path) != ino, "more regions than known: rebuilt");
	state_close(st);
	/* With the vault: the file is rebuilt once, then kept, the vault shared through it. */
	ino = inode(path);
	file_layout(&lay, 16);
	ok(state_open(path, &lay, NULL, &st, &err) == 0 && inode(path) != ino, "the vault asked for: rebuilt with it");
	region = state_region(st, GW_REGION_VAULT, &size);
	v = vault_attach(region, size);
	is_int((long long)vault_region_entries(size), 16, "… of 16 entries");
	name_of(1, name);
	is_int(vault_put(v, name, now, &(struct vault_value){ "sealed", 0 }, ev, sizeof(ev)), 0, "… a value stored");
	vault_detach(v);
	ino = inode(path);
	ok(state_open(path, &lay, NULL, &st2, &err) == 0 && inode(path) == ino, "opened again: kept");
	region = state_region(st2, GW_REGION_VAULT, &size);
	v = vault_attach(region, size);
	is_int(vault_get(v, name, now, out, sizeof(out)), VAULT_HIT, "… the value there");
	vault_detach(v);
	state_close(st2);
	state_close(st);
	/* A layout without it (a host not configured for it) does not keep it. */
	file_layout(&lay, 0);
	ok(state_open(path, &lay, NULL, &st, &err) == 0 && inode(path) != ino, "asked for without the vault: rebuilt");
	state_close(st);
	unlink(path);
	snprintf(path, sizeof(path), "%s/state.lock", dir);
	unlink(path);
	rmdir(dir);
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	if (secret_init() < 0)
		return 1;
	run_case(test_size);
	run_case(test_region);
	run_case(test_peek);
	run_case(test_evict);
	run_case(test_flood);
	run_case(test_claims);
	run_case(test_written_over);
	run_case(test_seal);
	run_case(test_parse);
	run_case(test_file);
	return done_testing();
}
