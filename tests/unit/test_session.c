/* Unit tests: sealed sessions, tombstones, what sessions set for stateless upstreams
 * (their log levels, their subscriptions), and the leases of callers' streams. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "leases.h"
#include "loglevels.h"
#include "secret.h"
#include "session.h"
#include "subs.h"
#include "tap.h"

/* What the tests share: the key, two gateways (their binding), the tombstones, alice's
 * digest at gateway A, her session and its id. */
static const unsigned char key[32] = { 1 };
static const unsigned char gw_a[SESSION_BIND_BYTES] = { 0xa }, gw_b[SESSION_BIND_BYTES] = { 0xb };
static void *tombs;
static char alice[33];
static struct session s;
static char id[SESSION_ID_MAX];

/* The caller digest: one per gateway (its binding), subject, client and tenant. */
static void
test_who(void)
{
	char bob[33], buf[64];

	session_who(gw_a, "alice", "cli", "acme", alice);
	session_who(gw_a, "bob", "cli", "acme", bob);
	ok(strcmp(alice, bob) != 0 && strlen(alice) == 32, "caller digests differ per identity");
	session_who(gw_a, "alice", "cli", "beta", bob);
	ok(strcmp(alice, bob) != 0, "the tenant is part of the identity");
	session_who(gw_b, "alice", "cli", "acme", bob);
	ok(strcmp(alice, bob) != 0, "so is the gateway: alice of another resource or issuer is another caller");
	/* The digest of the binding, then the three NUL-separated (what every issued session
	 * holds) */
	memcpy(buf, gw_a, SESSION_BIND_BYTES);
	memcpy(buf + SESSION_BIND_BYTES, "alice\0cli\0acme", 14);
	secret_digest_hex(buf, SESSION_BIND_BYTES + 14, bob, 16);
	is_str(alice, bob, "the digest of the binding, then subject, client and tenant, NUL-separated");
	session_who(NULL, "alice", "cli", "acme", bob);
	secret_digest_hex("alice\0cli\0acme", 14, buf, 16);
	is_str(bob, buf, "no binding (the audit log's subject digest): the three alone");
	{
		char big[1100], want[33], got[33];

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		session_who(NULL, big, "cli", "acme", got);
		secret_digest_hex(big, 1023, want, 16);
		is_str(got, want, "a subject past 1023 bytes: the first 1023 bytes alone");
		big[1021] = '\0';
		session_who(NULL, big, "cli", "acme", got);
		memcpy(big + 1021, "\0c", 2);
		secret_digest_hex(big, 1023, want, 16);
		is_str(got, want, "the parts cut at 1023 bytes");
	}
}

/* A sealed id: opaque, and opened only by its caller, with its key, before expiry. */
static void
test_seal_open(void)
{
	unsigned char other[32] = { 2 };
	char bad[SESSION_ID_MAX], bob[33];
	struct session got;
	size_t i;

	memset(&s, 0, sizeof(s));
	strcpy(s.version, "2025-06-18");
	memcpy(s.who, alice, 33);
	s.exp = 1000;
	s.upstreams = json_pack("{s:s}", "github", "up-session-1");
	ok(session_seal(key, &s, id) == 0, "sealed");
	ok(strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == strlen(id),
	    "the id is visible ASCII (base64url)");
	ok(strstr(id, "2025") == NULL && strstr(id, "alice") == NULL, "nothing readable inside");
	ok(session_open(key, tombs, id, alice, 999, &got) == 0, "opens for its caller before expiry");
	is_str(got.version, "2025-06-18", "version kept");
	is_str(json_string_value(json_object_get(got.upstreams, "github")), "up-session-1", "upstream session ids kept");
	session_clear(&got);
	ok(session_open(key, tombs, id, alice, 1000, &got) < 0, "expired: refused");
	session_who(gw_a, "bob", "cli", "acme", bob);
	ok(session_open(key, tombs, id, bob, 10, &got) < 0, "another caller's: refused");
	session_who(gw_b, "alice", "cli", "acme", bob);
	ok(session_open(key, tombs, id, bob, 10, &got) < 0,
	    "alice of another gateway (resource, issuer) under the same key: refused");
	ok(session_open(other, tombs, id, alice, 10, &got) < 0, "another key: refused");
	for (i = 0; i < strlen(id); i += 7) {
		strcpy(bad, id);
		bad[i] = bad[i] == 'A' ? 'B' : 'A';
		if (session_open(key, tombs, bad, alice, 10, &got) == 0)
			break;
	}
	ok(i >= strlen(id), "any altered character: refused");
	ok(session_open(key, tombs, "", alice, 10, &got) < 0 && session_open(key, tombs, "!!!", alice, 10, &got) < 0,
	    "garbage: refused");
}

/* An ended session is refused while its tombstone lasts. */
static void
test_end(void)
{
	struct session got;

	session_end(tombs, id, s.exp, 10);
	ok(session_open(key, tombs, id, alice, 11, &got) < 0, "ended (DELETE): refused");
	ok(session_open(key, NULL, id, alice, 11, &got) == 0, "(without the tombstones the blob itself is still valid)");
	session_clear(&got);
}

/* A second spelling of the same sealed box is refused. */
static void
test_second_spelling(void)
{
	static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789-_";
	char sealed[256], alias[256], plain[64];
	size_t n, last;
	int refused = 1;

	/* Another spelling of the same box (unused low bits of the last character set)
	 * would dodge a tombstone keyed by the spelling: decoding must refuse it. Boxes
	 * of 40 + n bytes, n = 27 and 28, leave 4 and 2 unused bits. */
	for (n = 27; n <= 28; n++) {
		secret_seal(key, "0123456789012345678901234567", n, "ad", sealed, sizeof(sealed));
		strcpy(alias, sealed);
		last = strlen(alias) - 1;
		alias[last] = alpha[(strchr(alpha, alias[last]) - alpha) ^ 1];
		refused &= strlen(sealed) % 4 != 0 &&
		    secret_open(key, sealed, "ad", plain, sizeof(plain)) == (long)n &&
		    secret_open(key, alias, "ad", plain, sizeof(plain)) < 0;
	}
	ok(refused, "a second spelling of the same sealed box: refused");
}

/* Each seal has its own nonce, and so its own id and tombstone. */
static void
test_nonce(void)
{
	char bad[SESSION_ID_MAX];
	struct session got;

	ok(session_seal(key, &s, bad) == 0 && strcmp(bad, id) != 0, "sealing twice gives different ids (random nonce)");
	ok(session_open(key, tombs, bad, alice, 11, &got) == 0, "and ending one does not end the other");
	session_clear(&got);
}

/* A session sealed without upstream ids opens with an empty map. */
static void
test_no_upstreams(void)
{
	struct session got;

	json_decref(s.upstreams);
	s.upstreams = NULL;
	ok(session_seal(key, &s, id) == 0 && session_open(key, NULL, id, alice, 11, &got) == 0 &&
	    json_is_object(got.upstreams) && json_object_size(got.upstreams) == 0,
	    "without upstream ids: an empty map comes back");
	session_clear(&got);
}

/* A flood of DELETEs cannot bring an ended session back. */
static void
test_tombstone_flood(void)
{
	char bad[SESSION_ID_MAX], flood[64];
	struct session got;
	int j, errors = 0;

	/* A flood of DELETEs (here 20,000 ended sessions, some 39 per bucket, expiring
	 * later) cannot bring an ended session back: when a live tombstone must give way,
	 * the sessions of its bucket expiring by then count as ended. */
	state_region_make(&session_tombstones_def, tombs, session_tombstones_def.size, 0);
	s.exp = 1000;
	ok(session_seal(key, &s, id) == 0 && session_end(tombs, id, s.exp, 10) == 0, "a session ended");
	for (j = 0; j < 20000; j++) {
		snprintf(flood, sizeof(flood), "flood-%d", j);
		errors += session_end(tombs, flood, 2000 + j, 10) != 0;
	}
	is_int(errors, 0, "20000 more sessions ended");
	ok(session_open(key, tombs, id, alice, 11, &got) < 0, "the first ended session stays ended");
	s.exp = 900;
	ok(session_seal(key, &s, bad) == 0 && session_open(key, tombs, bad, alice, 11, &got) < 0,
	    "a session never ended but expiring before the evicted ones: ended too (fail closed)");
	s.exp = 30000;
	ok(session_seal(key, &s, bad) == 0 && session_open(key, tombs, bad, alice, 11, &got) == 0,
	    "a session expiring after every tombstone still opens");
	session_clear(&got);
}

/* A worker's memory of its last session answers the same id as session_open would:
 * the caller, the expiry and the tombstones checked anew; another key or another id is
 * opened afresh; a failed open leaves the memory as it was. */
static void
test_memo(void)
{
	struct session_memo *m = session_memo_new();
	const struct session_opener o = { key, tombs, m };
	unsigned char other[32] = { 3 };
	char second[SESSION_ID_MAX], bob[33];
	struct session got;

	state_region_make(&session_tombstones_def, tombs, session_tombstones_def.size, 0);
	memset(&s, 0, sizeof(s));
	strcpy(s.version, "2025-11-25");
	memcpy(s.who, alice, 33);
	s.exp = 1000;
	s.upstreams = json_pack("{s:s}", "up", "up-session-7");
	ok(m && session_seal(key, &s, id) == 0 && session_seal(key, &s, second) == 0, "a memory, two sessions");
	ok(session_open_memo(&o, id, alice, 10, &got) == 0, "opened, and remembered");
	session_clear(&got);
	ok(session_open_memo(&o, id, alice, 11, &got) == 0, "the same id again: from the memory");
	is_str(got.version, "2025-11-25", "… its version");
	is_str(json_string_value(json_object_get(got.upstreams, "up")), "up-session-7", "… its upstream sessions");
	{
		json_t *first = got.upstreams;

		session_clear(&got);	/* the memory keeps its reference */
		ok(session_open_memo(&o, id, alice, 12, &got) == 0 && got.upstreams == first &&
		    strcmp(json_string_value(json_object_get(got.upstreams, "up")), "up-session-7") == 0,
		    "… its upstream map shared, not copied, and whole after a request let it go");
	}
	session_clear(&got);
	session_who(gw_a, "bob", "cli", "acme", bob);
	ok(session_open_memo(&o, id, bob, 12, &got) < 0, "another caller's: refused from the memory too");
	session_who(gw_b, "alice", "cli", "acme", bob);
	ok(session_open_memo(&o, id, bob, 12, &got) < 0,
	    "alice of another gateway sharing the key: refused from the memory too");
	ok(session_open_memo(&o, id, alice, 1000, &got) < 0, "expired: refused from the memory too");
	ok(session_open_memo(&(struct session_opener){ other, tombs, m }, id, alice, 12, &got) < 0,
	    "another key: opened afresh, refused");
	ok(session_open_memo(&o, "garbage", alice, 12, &got) < 0, "garbage: refused");
	ok(session_open_memo(&o, id, alice, 13, &got) == 0, "… and the memory still answers");
	session_clear(&got);
	session_end(tombs, id, s.exp, 13);
	ok(session_open_memo(&o, id, alice, 14, &got) < 0, "ended (DELETE): refused from the memory too");
	ok(session_open_memo(&o, second, alice, 14, &got) == 0, "another session of the caller: opened");
	session_clear(&got);
	ok(session_open_memo(&o, id, alice, 15, &got) < 0, "the ended one, opened afresh: still refused");
	session_memo_free(m);
	session_memo_free(NULL);
	json_decref(s.upstreams);
	s.upstreams = NULL;
}

/* The log levels sessions set (loglevels.c): by key, until the session's end; a full
 * bucket gives up the level expiring soonest. */
static void
test_loglevels(void)
{
	size_t size = loglevels_region_def.size;
	void *mem = calloc(1, size);
	struct loglevels *l = mem;
	unsigned char k[LOGLEVELS_KEY_BYTES] = { 1 }, k2[LOGLEVELS_KEY_BYTES] = { 2 };
	const int64_t t = 1700000000;
	int i, rc = 0;

	state_region_make(&loglevels_region_def, mem, size, 0);
	ok(loglevels_get(l, k, t) == 0, "none set: 0");
	ok(loglevels_put(l, k, 3, t + 60, t) == 0 && loglevels_get(l, k, t) == 3, "set: its level");
	ok(loglevels_get(l, k2, t) == 0, "another session's: none");
	ok(loglevels_put(l, k, 7, t + 60, t) == 0 && loglevels_get(l, k, t) == 7, "set again: the new level");
	ok(loglevels_get(l, k, t + 60) == 0, "past the session's end: none");
	ok(loglevels_put(l, k, 0, t + 60, t) < 0 && loglevels_put(l, k, 256, t + 60, t) < 0 &&
	    loglevels_put(l, k, 1, t, t) < 0, "level 0, over 255, or no time left: refused");
	/* (the bucket is the key's first two bytes: k2's, with other bytes after them) */
	for (i = 0; i < LOGLEVELS_WAYS; i++) {
		k2[2] = (unsigned char)i;
		rc |= loglevels_put(l, k2, 2, t + 100 + i, t);
	}
	k2[2] = 0;
	ok(rc == 0 && loglevels_get(l, k2, t) == 2, "a bucket filled");
	k2[2] = 0xff;
	ok(loglevels_put(l, k2, 5, t + 500, t) == 0 && loglevels_get(l, k2, t) == 5, "one more: kept");
	k2[2] = 0;
	ok(loglevels_get(l, k2, t) == 0, "… in place of the one expiring soonest");
	k2[2] = 1;
	ok(loglevels_get(l, k2, t) == 2, "… the others kept");
	ok(loglevels_put(NULL, k, 1, t + 60, t) < 0 && loglevels_get(NULL, k, t) < 0, "no region: unusable");
	memset(mem, 0x5a, sizeof(uint32_t));	/* its magic written over */
	ok(loglevels_get(l, k, t) < 0 && loglevels_put(l, k, 1, t + 60, t) < 0, "a region written over: unusable");
	free(mem);
}

/* Sessions' subscriptions (subs.c): URIs, one a line, added once, removed, the slot
 * freed with the last; no room: refused, nobody else's dropped. */
static void
test_subs(void)
{
	size_t size = subs_region_def.size;
	void *mem = calloc(1, size);
	struct subs *r = mem;
	unsigned char k[SUBS_KEY_BYTES] = { 1 }, k2[SUBS_KEY_BYTES] = { 2 };
	char out[SUBS_TEXT_MAX], uri[600];
	const int64_t t = 1700000000;
	int i, rc = 0;

	state_region_make(&subs_region_def, mem, size, 0);
	ok(subs_get(r, k, out, sizeof(out), t) == 0 && out[0] == '\0', "none: \"\"");
	ok(subs_edit(r, k, "test://a", 1, t + 60, t) == 0 && subs_edit(r, k, "test://b", 1, t + 60, t) == 0 &&
	    subs_edit(r, k, "test://a", 1, t + 60, t) == 0 && subs_get(r, k, out, sizeof(out), t) == 0 &&
	    strcmp(out, "test://a\ntest://b\n") == 0, "two URIs, the first added twice: each once, one a line");
	ok(subs_get(r, k2, out, sizeof(out), t) == 0 && out[0] == '\0', "another session's: none");
	ok(subs_edit(r, k, "test://a", 0, t + 60, t) == 0 && subs_get(r, k, out, sizeof(out), t) == 0 &&
	    strcmp(out, "test://b\n") == 0, "one removed: the other left");
	ok(subs_edit(r, k, "test://b/", 0, t + 60, t) == 0 && subs_edit(r, k, "test://", 0, t + 60, t) == 0 &&
	    subs_get(r, k, out, sizeof(out), t) == 0 && strcmp(out, "test://b\n") == 0,
	    "removing a URI it lacks (longer, a prefix): nothing changes");
	ok(subs_get(r, k, out, 5, t) < 0, "not fitting out: -1");
	ok(subs_get(r, k, out, sizeof(out), t + 60) == 0 && out[0] == '\0', "past the session's end: none");
	ok(subs_edit(r, k, "", 1, t + 60, t) < 0 && subs_edit(r, k, "a\nb", 1, t + 60, t) < 0 &&
	    subs_edit(r, k, "x", 1, t, t) < 0, "an empty URI, one with a newline, no time left: refused");
	memset(uri, 'u', sizeof(uri) - 1);
	uri[sizeof(uri) - 1] = '\0';
	for (i = 0; i < 3; i++) {
		uri[0] = (char)('a' + i);
		rc |= subs_edit(r, k2, uri, 1, t + 60, t);
	}
	uri[0] = 'z';
	ok(rc == 0 && subs_edit(r, k2, uri, 1, t + 60, t) == -2, "a session's URIs full: -2");
	ok(subs_edit(r, k2, "test://short", 1, t + 60, t) == 0, "… a shorter one still fits");
	for (i = 2; i < SUBS_SLOTS; i++) {	/* (k and k2 hold two slots already) */
		k2[1] = (unsigned char)i, k2[2] = (unsigned char)(i >> 8);
		rc |= subs_edit(r, k2, "test://x", 1, t + 60, t);
	}
	k2[1] = 0xff, k2[2] = 0xff;
	ok(rc == 0 && subs_edit(r, k2, "test://x", 1, t + 60, t) == -2, "every slot live: -2");
	k2[1] = 2, k2[2] = 0;
	ok(subs_edit(r, k2, "test://x", 0, t + 60, t) == 0 && (k2[1] = 0xff, k2[2] = 0xff,
	    subs_edit(r, k2, "test://x", 1, t + 60, t)) == 0, "a session's last one removed: its slot free again");
	ok(subs_edit(NULL, k, "x", 1, t + 60, t) < 0 && subs_get(NULL, k, out, sizeof(out), t) < 0, "no region: unusable");
	memset(mem, 0x5a, sizeof(uint32_t));	/* its magic written over */
	ok(subs_get(r, k, out, sizeof(out), t) < 0, "a region written over: unusable");
	free(mem);
}

/* Leases (leases.c): at most max live at once per key, given back, ended by time; a
 * lease ending implausibly late is free. */
static void
test_leases(void)
{
	size_t size = leases_region_def.size;
	void *mem = calloc(1, size);
	struct leases *l = mem;
	unsigned char k[LEASES_KEY_BYTES] = { 1 }, k2[LEASES_KEY_BYTES] = { 1, 0, 9 };
	const int64_t t = 1700000000000LL;
	unsigned tk[5], other;
	int i, rc = 1;

	state_region_make(&leases_region_def, mem, size, 0);
	for (i = 0; i < 4; i++)
		rc &= leases_take(l, k, 4, t + 1000, t, &tk[i]) == 1;
	ok(rc, "four leases of one key");
	ok(leases_take(l, k, 4, t + 1000, t, &tk[4]) == 0, "a fifth: refused");
	ok(leases_take(l, k2, 4, t + 1000, t, &other) == 1, "another key (the same bucket): its own");
	leases_give(l, k2, tk[0]);
	ok(leases_take(l, k, 4, t + 1000, t, &tk[4]) == 0, "a ticket given back under another key: nothing given");
	leases_give(l, k, tk[0]);
	ok(leases_take(l, k, 4, t + 1000, t, &tk[0]) == 1, "one given back: one more");
	ok(leases_take(l, k, 4, t + 2000, t + 1000, &tk[4]) == 1, "past their end: room again");
	ok(leases_take(l, k, 4, t + LEASES_LONGEST_MS + 1, t, &tk[4]) < 0 && leases_take(l, k, 4, t, t, &tk[4]) < 0,
	    "a lease too long, or already over: refused");
	memset(mem, 0, size);
	state_region_make(&leases_region_def, mem, size, 0);
	for (i = 0; i < LEASES_WAYS; i++) {
		k2[2] = (unsigned char)i;
		rc &= leases_take(l, k2, 4, t + 1000, t, &other) == 1;
	}
	ok(rc && leases_take(l, k, 4, t + 1000, t, &tk[0]) == 0, "a bucket full of others' leases: refused");
	ok(leases_take(l, k, 4, t - 2 * LEASES_LONGEST_MS + 1000, t - 2 * LEASES_LONGEST_MS, &tk[0]) == 1,
	    "the clock set back: the leases ending implausibly late are free");
	ok(leases_take(NULL, k, 4, t + 1000, t, &tk[0]) < 0, "no region: unusable");
	memset(mem, 0x5a, sizeof(uint32_t));	/* its magic written over */
	ok(leases_take(l, k, 4, t + 1000, t, &tk[0]) < 0, "a region written over: unusable");
	leases_give(l, k, tk[0]);	/* (nothing, and no crash) */
	free(mem);
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	secret_init();
	tombs = malloc(session_tombstones_def.size);
	state_region_make(&session_tombstones_def, tombs, session_tombstones_def.size, 0);
	run_case(test_who);
	run_case(test_seal_open);
	run_case(test_end);
	run_case(test_second_spelling);
	run_case(test_nonce);
	run_case(test_no_upstreams);
	run_case(test_tombstone_flood);
	run_case(test_memo);
	run_case(test_loglevels);
	run_case(test_subs);
	run_case(test_leases);
	free(tombs);
	return done_testing();
}
