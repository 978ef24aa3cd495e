/* The connect page's tickets and states (src/access/connect_seal.c), under a fixed key.
 * The first byte picks what the rest is: its low bit 0, a plaintext of the kind
 * (byte >> 1) % 6 + 1 (1 ticket, 2 the issuer's leg, 3 the upstream's, 4 a sign-in's
 * leg, 5 a session, 6 a retry), read by
 * connect_parse (the reader of the fixed layout behind an authentic seal); 1, a sealed
 * value as a browser could send it (connect_open on it as every kind, and as kinds that
 * are none: forged, torn or altered, it must not open). Properties: what parses or
 * opens is of its kind, ends at or after 0, names an upstream of 1 to 127 characters
 * and no control character on a ticket, the two connecting legs and a retry, none
 * elsewhere; a subject only on the upstream's leg and a session, non-empty there; on
 * every leg a verifier of 43 RFC 7636 characters, none on a ticket, session or retry; a
 * person's digest only on a ticket, the issuer's leg and a retry, no browser's on a
 * ticket or retry; sealed again it opens to the same
 * claim before its end, and not at its end nor as another kind; and its plaintext is
 * the input, byte for byte (a claim has one way to be written). What does not parse or
 * open leaves the claim zeroed.
 *
 * A plaintext, big-endian (the corpus's files but sealed-*, after their first byte; the
 * sealed-* are claims sealed under the harness's key, good until CONNECT_NOW + 10 min):
 *   kind (1) | until_ms (8) | id (16)
 *   | person (16)                           ticket, issuer's leg
 *   | browser (16)                          every leg, a session
 *   | verifier (43)                         every leg
 *   | upstream length (1) | upstream        ticket, issuer's and upstream's legs
 *   | subject length (2) | subject          upstream's leg, a session */
#include "autoconf.h"

#include "connect_seal.h"
#include "fuzz.h"

#define CONNECT_NOW	1700000000000LL	/* where sealed inputs are opened */

static struct connect_keys keys;
/* The associated data of each kind, as connect_seal.c seals it. */
static const char *const ads[CONNECT_KINDS] = {
	[CONNECT_TICKET] = "mcpgate connect ticket v1",
	[CONNECT_AT_ISSUER] = "mcpgate connect issuer v1",
	[CONNECT_AT_UPSTREAM] = "mcpgate connect upstream v1",
	[CONNECT_SIGN_IN] = "mcpgate connect sign-in v1",
	[CONNECT_SESSION] = "mcpgate connect session v1",
	[CONNECT_RETRY] = "mcpgate connect retry v1",
};

void
fuzz_setup(void)
{
	static const unsigned char skey[STATE_KEY_BYTES] = { 0x42 };

	connect_keys_derive(&keys, skey);
}

static int
zero(const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

/* A terminated string within size, without a control character. */
static int
text_ok(const char *s, size_t size)
{
	if (memchr(s, '\0', size) == NULL)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

/* c, read as kind: checked; sealed again, opened again and compared; its plaintext
 * compared with plain (n bytes) when there is one. */
static void
check(const struct connect_claim *c, int kind, const unsigned char *plain, size_t n)
{
	static const char unreserved[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
	static char sealed[CONNECT_SEALED_MAX], again[CONNECT_SEALED_MAX];
	struct connect_claim d;
	long m;
	int k;

	FUZZ_CHECK(c->kind == kind && c->until_ms >= 0);
	FUZZ_CHECK(text_ok(c->upstream, sizeof(c->upstream)));
	FUZZ_CHECK((c->upstream[0] != '\0') == (kind <= CONNECT_AT_UPSTREAM || kind == CONNECT_RETRY));
	FUZZ_CHECK(text_ok(c->subject, sizeof(c->subject)));
	FUZZ_CHECK((c->subject[0] != '\0') == (kind == CONNECT_AT_UPSTREAM || kind == CONNECT_SESSION));
	FUZZ_CHECK(memchr(c->verifier, '\0', sizeof(c->verifier)) != NULL);
	if (kind == CONNECT_TICKET || kind == CONNECT_SESSION || kind == CONNECT_RETRY) {
		FUZZ_CHECK(c->verifier[0] == '\0');
	} else {
		FUZZ_CHECK(strlen(c->verifier) == CONNECT_VERIFIER_LEN &&
		    strspn(c->verifier, unreserved) == CONNECT_VERIFIER_LEN);
	}
	if (kind == CONNECT_TICKET || kind == CONNECT_RETRY)
		FUZZ_CHECK(zero(c->browser, sizeof(c->browser)));
	if (kind != CONNECT_TICKET && kind != CONNECT_AT_ISSUER && kind != CONNECT_RETRY)
		FUZZ_CHECK(zero(c->person, sizeof(c->person)));
	FUZZ_CHECK(connect_seal(&keys, c, sealed, sizeof(sealed)) == 0);
	FUZZ_CHECK(strlen(sealed) < CONNECT_SEALED_MAX);
	FUZZ_CHECK(connect_open(&keys, sealed, kind, c->until_ms - 1, &d) == 0);
	FUZZ_CHECK(memcmp(&d, c, sizeof(d)) == 0);
	FUZZ_CHECK(connect_open(&keys, sealed, kind, c->until_ms, &d) < 0 && zero(&d, sizeof(d)));
	for (k = 0; k <= CONNECT_KINDS; k++)
		if (k != kind)
			FUZZ_CHECK(connect_open(&keys, sealed, k, c->until_ms - 1, &d) < 0 && zero(&d, sizeof(d)));
	if (plain != NULL) {
		m = secret_open(keys.seal, sealed, ads[kind], again, sizeof(again));
		FUZZ_CHECK(m >= 0 && (size_t)m == n && memcmp(again, plain, n) == 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct connect_claim c;
	char *s;
	int kind;

	if (size < 1)
		return 0;
	if ((data[0] & 1) == 0) {
		kind = (data[0] >> 1) % (CONNECT_KINDS - 1) + 1;
		if (connect_parse(data + 1, size - 1, kind, &c) == 0)
			check(&c, kind, data + 1, size - 1);
		else
			FUZZ_CHECK(zero(&c, sizeof(c)));
		return 0;
	}
	s = fuzz_cstr(data + 1, size - 1);
	for (kind = 0; kind <= CONNECT_KINDS; kind++) {
		if (connect_open(&keys, s, kind, CONNECT_NOW, &c) == 0) {
			FUZZ_CHECK(kind >= CONNECT_TICKET && kind < CONNECT_KINDS && c.until_ms > CONNECT_NOW);
			check(&c, kind, NULL, 0);
		} else
			FUZZ_CHECK(zero(&c, sizeof(c)));
	}
	free(s);
	return 0;
}
