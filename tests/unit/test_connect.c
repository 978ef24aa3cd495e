/* Unit tests: the connect page's tickets and states (connect_seal.c: each kind sealed
 * and opened, bound to its kind and the session key, its end, the strict layout, what a
 * browser sees holds nothing in clear) and the query parameters the page reads
 * (url_query_param: decoding, absent, twice, broken escapes, control characters). */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "connect_seal.h"
#include "secret.h"
#include "url.h"
#include "tap.h"

static const int64_t now = 1700000000000LL;	/* ms */

static void
claim_of(int kind, struct connect_claim *c)
{
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->until_ms = now + CONNECT_STATE_MS;
	memset(c->id, 0x11, sizeof(c->id));
	if (kind == CONNECT_TICKET || kind == CONNECT_AT_ISSUER || kind == CONNECT_RETRY)
		memset(c->person, 0x22, sizeof(c->person));
	if (kind != CONNECT_TICKET && kind != CONNECT_RETRY)
		memset(c->browser, 0x33, sizeof(c->browser));
	if (kind == CONNECT_AT_ISSUER || kind == CONNECT_AT_UPSTREAM || kind == CONNECT_SIGN_IN)
		memset(c->verifier, 'v', CONNECT_VERIFIER_LEN);
	if (kind <= CONNECT_AT_UPSTREAM || kind == CONNECT_RETRY)
		snprintf(c->upstream, sizeof(c->upstream), "tracker");
	if (kind == CONNECT_AT_UPSTREAM || kind == CONNECT_SESSION)
		snprintf(c->subject, sizeof(c->subject), "alice@example");
}

static void
test_kinds(const struct connect_keys *k, const struct connect_keys *other)
{
	struct connect_claim c, o;
	char sealed[CONNECT_SEALED_MAX];
	int kind, j;

	for (kind = CONNECT_TICKET; kind < CONNECT_KINDS; kind++) {
		claim_of(kind, &c);
		ok(connect_seal(k, &c, sealed, sizeof(sealed)) == 0, "kind %d seals", kind);
		ok(strstr(sealed, "tracker") == NULL && strstr(sealed, "alice") == NULL && strstr(sealed, "vvvv") == NULL,
		    "kind %d: nothing in clear", kind);
		ok(connect_open(k, sealed, kind, now, &o) == 0 && memcmp(&o, &c, sizeof(c)) == 0,
		    "kind %d opens to what was sealed", kind);
		for (j = CONNECT_TICKET; j < CONNECT_KINDS; j++)
			if (j != kind)
				ok(connect_open(k, sealed, j, now, &o) < 0 && o.kind == 0,
				    "kind %d does not open as kind %d", kind, j);
		ok(connect_open(other, sealed, kind, now, &o) < 0, "kind %d: another session key does not open it", kind);
		ok(connect_open(k, sealed, kind, c.until_ms, &o) < 0, "kind %d: not at its end", kind);
		ok(connect_open(k, sealed, kind, c.until_ms - 1, &o) == 0, "kind %d: just before its end", kind);
		sealed[strlen(sealed) / 2] ^= 1;
		ok(connect_open(k, sealed, kind, now, &o) < 0, "kind %d: altered, it does not open", kind);
	}
}

static void
test_refused(const struct connect_keys *k)
{
	struct connect_claim c;
	char sealed[CONNECT_SEALED_MAX];

	claim_of(CONNECT_TICKET, &c);
	c.upstream[0] = '\0';
	ok(connect_seal(k, &c, sealed, sizeof(sealed)) < 0, "no upstream: not sealed");
	claim_of(CONNECT_TICKET, &c);
	snprintf(c.subject, sizeof(c.subject), "x");
	ok(connect_seal(k, &c, sealed, sizeof(sealed)) < 0, "a ticket with a subject: not sealed");
	claim_of(CONNECT_AT_UPSTREAM, &c);
	c.subject[0] = '\0';
	ok(connect_seal(k, &c, sealed, sizeof(sealed)) < 0, "the upstream's leg without a subject: not sealed");
	claim_of(CONNECT_AT_ISSUER, &c);
	c.verifier[5] = '+';
	ok(connect_seal(k, &c, sealed, sizeof(sealed)) < 0, "a verifier outside RFC 7636's characters: not sealed");
	claim_of(CONNECT_AT_ISSUER, &c);
	c.verifier[5] = '\0';
	ok(connect_seal(k, &c, sealed, sizeof(sealed)) < 0, "a verifier cut short by a NUL: not sealed");
	claim_of(CONNECT_AT_ISSUER, &c);
	c.upstream[2] = '\n';
	ok(connect_seal(k, &c, sealed, sizeof(sealed)) < 0, "a control character: not sealed");
	claim_of(CONNECT_KINDS, &c);
	ok(connect_seal(k, &c, sealed, sizeof(sealed)) < 0, "no such kind: not sealed");
	claim_of(CONNECT_SESSION, &c);
	snprintf(c.upstream, sizeof(c.upstream), "tracker");
	ok(connect_seal(k, &c, sealed, sizeof(sealed)) < 0, "a session with an upstream: not sealed");
	claim_of(CONNECT_SESSION, &c);
	memset(c.verifier, 'v', CONNECT_VERIFIER_LEN);
	ok(connect_seal(k, &c, sealed, sizeof(sealed)) < 0, "a session with a verifier: not sealed");
	claim_of(CONNECT_SIGN_IN, &c);
	c.verifier[0] = '\0';
	ok(connect_seal(k, &c, sealed, sizeof(sealed)) < 0, "a sign-in's leg without a verifier: not sealed");
	claim_of(CONNECT_TICKET, &c);
	ok(connect_seal(k, &c, sealed, 40) < 0, "out too small: not sealed");
	ok(connect_open(k, "", CONNECT_TICKET, now, &c) < 0, "empty: does not open");
	ok(connect_open(k, NULL, CONNECT_TICKET, now, &c) < 0, "NULL: does not open");
}

/* The layout read strictly: one byte more, one less, a length past the end. */
static void
test_parse(void)
{
	unsigned char p[512];
	struct connect_claim c;
	size_t n = 0;

	memset(p, 0, sizeof(p));
	p[n++] = CONNECT_TICKET;
	n += 8;
	p[8] = 1;	/* until */
	n += CONNECT_ID_BYTES + CONNECT_PERSON_BYTES;
	p[n++] = 2;
	p[n++] = 'g', p[n++] = 'h';
	ok(connect_parse(p, n, CONNECT_TICKET, &c) == 0 && strcmp(c.upstream, "gh") == 0 && c.until_ms == 1,
	    "a minimal ticket parses");
	ok(connect_parse(p, n + 1, CONNECT_TICKET, &c) < 0, "a byte after it: refused");
	ok(connect_parse(p, n - 1, CONNECT_TICKET, &c) < 0, "a byte short: refused");
	p[n - 3] = 3;
	ok(connect_parse(p, n, CONNECT_TICKET, &c) < 0, "a length past the end: refused");
	p[n - 3] = 2;
	p[0] = CONNECT_AT_ISSUER;
	ok(connect_parse(p, n, CONNECT_TICKET, &c) < 0, "another kind's first byte: refused");
	p[0] = CONNECT_TICKET;
	p[1] = 0x80;
	ok(connect_parse(p, n, CONNECT_TICKET, &c) < 0, "an end past INT64_MAX: refused");
}

static void
test_query(void)
{
	char v[16];

	ok(url_query_param("a=1&code=x%2By+z&b=2", "code", v, sizeof(v)) == 1 && strcmp(v, "x+y z") == 0,
	    "a parameter decoded");
	ok(url_query_param("a=1&b=2", "code", v, sizeof(v)) == 0 && v[0] == '\0', "absent: 0");
	ok(url_query_param(NULL, "code", v, sizeof(v)) == 0, "no query: 0");
	ok(url_query_param("xcode=1&code_x=2", "code", v, sizeof(v)) == 0, "names that only start or end alike: 0");
	ok(url_query_param("code=1&code=2", "code", v, sizeof(v)) < 0, "twice: refused");
	ok(url_query_param("code=%2", "code", v, sizeof(v)) < 0, "a broken escape: refused");
	ok(url_query_param("code=%zz", "code", v, sizeof(v)) < 0, "a bad escape: refused");
	ok(url_query_param("code=a%0Ab", "code", v, sizeof(v)) < 0, "a control character: refused");
	ok(url_query_param("code=0123456789abcdef", "code", v, sizeof(v)) < 0, "too long: refused");
	ok(url_query_param("code=", "code", v, sizeof(v)) == 1 && v[0] == '\0', "empty: found, empty");
	ok(url_query_param("state=s&iss=https%3A%2F%2Fa", "iss", v, sizeof(v)) == 1 && strcmp(v, "https://a") == 0,
	    "an issuer decoded");
}

int
main(void)
{
	static const unsigned char key1[STATE_KEY_BYTES] = { 1 }, key2[STATE_KEY_BYTES] = { 2 };
	struct connect_keys k, other;
	unsigned char a[CONNECT_PERSON_BYTES], b[CONNECT_PERSON_BYTES];

	secret_init();
	connect_keys_derive(&k, key1);
	connect_keys_derive(&other, key2);
	test_kinds(&k, &other);
	test_refused(&k);
	test_parse();
	test_query();
	connect_person(&k, "https://idp.example", "alice", a);
	connect_person(&k, "https://idp.example", "bob", b);
	ok(memcmp(a, b, sizeof(a)) != 0, "two people, two digests");
	connect_person(&k, "https://idp.example/x", "alice", b);
	ok(memcmp(a, b, sizeof(a)) != 0, "one subject at two issuers: two digests");
	connect_person(&other, "https://idp.example", "alice", b);
	ok(memcmp(a, b, sizeof(a)) != 0, "another session key: another digest");
	connect_keys_clear(&k);
	connect_keys_clear(&other);
	return done_testing();
}
