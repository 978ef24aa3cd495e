/* Unit tests: sealed sessions and tombstones. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "secret.h"
#include "session.h"
#include "tap.h"

int
main(void)
{
	unsigned char key[32] = { 1 }, other[32] = { 2 };
	char id[SESSION_ID_MAX], bad[SESSION_ID_MAX], alice[33], bob[33];
	struct session s, got;
	void *tombs;
	size_t i;

	secret_init();
	tombs = malloc(session_tombstones_size());
	session_tombstones_init(tombs, session_tombstones_size(), 0);
	session_who("alice", "cli", "acme", alice);
	session_who("bob", "cli", "acme", bob);
	ok(strcmp(alice, bob) != 0 && strlen(alice) == 32, "caller digests differ per identity");
	session_who("alice", "cli", "beta", bob);
	ok(strcmp(alice, bob) != 0, "the tenant is part of the identity");

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
	session_who("bob", "cli", "acme", bob);
	ok(session_open(key, tombs, id, bob, 10, &got) < 0, "another caller's: refused");
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
	session_end(tombs, id, s.exp, 10);
	ok(session_open(key, tombs, id, alice, 11, &got) < 0, "ended (DELETE): refused");
	ok(session_open(key, NULL, id, alice, 11, &got) == 0, "(without the tombstones the blob itself is still valid)");
	session_clear(&got);
	{
		/* Another spelling of the same box (unused low bits of the last character set)
		 * would dodge a tombstone keyed by the spelling: decoding must refuse it. Boxes
		 * of 40 + n bytes, n = 27 and 28, leave 4 and 2 unused bits. */
		static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
		char sealed[256], alias[256], plain[64];
		size_t n, last;
		int refused = 1;

		for (n = 27; n <= 28; n++) {
			secret_seal(key, "0123456789012345678901234567", n, "ad", sealed, sizeof(sealed));
			strcpy(alias, sealed);
			last = strlen(alias) - 1;
			alias[last] = alpha[(strchr(alpha, alias[last]) - alpha) ^ 1];
			refused &= strlen(sealed) % 4 != 0 && secret_open(key, sealed, "ad", plain, sizeof(plain)) == (long)n &&
			    secret_open(key, alias, "ad", plain, sizeof(plain)) < 0;
		}
		ok(refused, "a second spelling of the same sealed box: refused");
	}
	ok(session_seal(key, &s, bad) == 0 && strcmp(bad, id) != 0, "sealing twice gives different ids (random nonce)");
	ok(session_open(key, tombs, bad, alice, 11, &got) == 0, "and ending one does not end the other");
	session_clear(&got);
	json_decref(s.upstreams);
	s.upstreams = NULL;
	ok(session_seal(key, &s, id) == 0 && session_open(key, NULL, id, alice, 11, &got) == 0 &&
	    json_is_object(got.upstreams) && json_object_size(got.upstreams) == 0,
	    "without upstream ids: an empty map comes back");
	session_clear(&got);

	/* A flood of DELETEs (here 20,000 ended sessions, some 39 per bucket, expiring
	 * later) cannot bring an ended session back: when a live tombstone must give way,
	 * the sessions of its bucket expiring by then count as ended. */
	session_tombstones_init(tombs, session_tombstones_size(), 0);
	s.exp = 1000;
	ok(session_seal(key, &s, id) == 0 && session_end(tombs, id, s.exp, 10) == 0, "a session ended");
	{
		char flood[64];
		int j, errors = 0;

		for (j = 0; j < 20000; j++) {
			snprintf(flood, sizeof(flood), "flood-%d", j);
			errors += session_end(tombs, flood, 2000 + j, 10) != 0;
		}
		is_int(errors, 0, "20000 more sessions ended");
	}
	ok(session_open(key, tombs, id, alice, 11, &got) < 0, "the first ended session stays ended");
	s.exp = 900;
	ok(session_seal(key, &s, bad) == 0 && session_open(key, tombs, bad, alice, 11, &got) < 0,
	    "a session never ended but expiring before the evicted ones: ended too (fail closed)");
	s.exp = 30000;
	ok(session_seal(key, &s, bad) == 0 && session_open(key, tombs, bad, alice, 11, &got) == 0,
	    "a session expiring after every tombstone still opens");
	session_clear(&got);
	free(tombs);
	return done_testing();
}
