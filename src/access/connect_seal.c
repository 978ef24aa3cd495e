/* connect_seal — the connect page's tickets and states (connect_seal.h).
 *
 * Plaintext layout (big-endian), every field in this order, a kind's own only:
 *   kind (1) | until_ms (8) | id (16)
 *   | person (16)                           ticket, issuer's leg, a retry
 *   | browser (16)                          every leg, a session
 *   | verifier (43)                         every leg
 *   | upstream length (1) | upstream        ticket, both connecting legs, a retry
 *   | subject length (2) | subject          upstream's leg, a session
 * and nothing after. */
#include "autoconf.h"

#include <string.h>

#include "connect_seal.h"
#include "secret.h"

#define CONNECT_PLAIN_MAX	(1 + 8 + CONNECT_ID_BYTES + CONNECT_PERSON_BYTES + CONNECT_BROWSER_BYTES + \
	CONNECT_VERIFIER_LEN + 1 + VAULT_UPSTREAM_MAX + 2 + CLAIMS_SUBJECT_MAX)

/* What each kind carries, one row each; and its associated data. */
static const struct kind_row {
	const char *ad;
	unsigned person:1, browser:1, verifier:1, upstream:1, subject:1;
} kinds[CONNECT_KINDS] = {
	[CONNECT_TICKET] = { "mcpgate connect ticket v1", 1, 0, 0, 1, 0 },
	[CONNECT_AT_ISSUER] = { "mcpgate connect issuer v1", 1, 1, 1, 1, 0 },
	[CONNECT_AT_UPSTREAM] = { "mcpgate connect upstream v1", 0, 1, 1, 1, 1 },
	[CONNECT_SIGN_IN] = { "mcpgate connect sign-in v1", 0, 1, 1, 0, 0 },
	[CONNECT_SESSION] = { "mcpgate connect session v1", 0, 1, 0, 0, 1 },
	[CONNECT_RETRY] = { "mcpgate connect retry v1", 1, 0, 0, 1, 0 },
};

static const struct kind_row *
kind_of(int kind)
{
	return kind > 0 && kind < CONNECT_KINDS ? &kinds[kind] : NULL;
}

void
connect_keys_derive(struct connect_keys *k, const unsigned char session_key[STATE_KEY_BYTES])
{
	static const char seal[] = "mcpgate connect seal v1", person[] = "mcpgate connect person v1";

	secret_keyed_digest(session_key, seal, sizeof(seal) - 1, k->seal);
	secret_keyed_digest(session_key, person, sizeof(person) - 1, k->person);
}

void
connect_keys_clear(struct connect_keys *k)
{
	secret_wipe(k, sizeof(*k));
}

void
connect_person(const struct connect_keys *k, const char *issuer, const char *subject,
    unsigned char out[CONNECT_PERSON_BYTES])
{
	const struct secret_part parts[2] = { { issuer, strlen(issuer) + 1 }, { subject, strlen(subject) } };
	unsigned char d[32];

	secret_keyed_digest_parts(k->person, parts, 2, d);
	memcpy(out, d, CONNECT_PERSON_BYTES);
	secret_wipe(d, sizeof(d));
}

/* A verifier as RFC 7636 §4.1 has it, of our length. */
static int
verifier_ok(const char *v)
{
	size_t i;

	for (i = 0; i < CONNECT_VERIFIER_LEN; i++)
		if (!(v[i] >= 'A' && v[i] <= 'Z') && !(v[i] >= 'a' && v[i] <= 'z') && !(v[i] >= '0' && v[i] <= '9') &&
		    (v[i] == '\0' || !strchr("-._~", v[i])))
			return 0;
	return v[i] == '\0';
}

/* A name or subject: 1 to max - 1 bytes, no control character. */
static int
text_ok(const char *s, size_t n, size_t max)
{
	size_t i;

	if (n == 0 || n >= max)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

int
connect_seal(const struct connect_keys *k, const struct connect_claim *c, char *out, size_t outlen)
{
	const struct kind_row *r = kind_of(c->kind);
	unsigned char p[CONNECT_PLAIN_MAX];
	size_t n = 0, un = strnlen(c->upstream, sizeof(c->upstream)), sn = strnlen(c->subject, sizeof(c->subject));
	int i, rc;

	if (r == NULL || (r->upstream ? !text_ok(c->upstream, un, sizeof(c->upstream)) : un != 0) ||
	    (r->subject ? !text_ok(c->subject, sn, sizeof(c->subject)) : sn != 0) ||
	    (r->verifier ? !verifier_ok(c->verifier) : c->verifier[0] != '\0'))
		return -1;
	p[n++] = (unsigned char)c->kind;
	for (i = 7; i >= 0; i--)
		p[n++] = (unsigned char)((uint64_t)c->until_ms >> (8 * i));
	memcpy(p + n, c->id, CONNECT_ID_BYTES), n += CONNECT_ID_BYTES;
	if (r->person)
		memcpy(p + n, c->person, CONNECT_PERSON_BYTES), n += CONNECT_PERSON_BYTES;
	if (r->browser)
		memcpy(p + n, c->browser, CONNECT_BROWSER_BYTES), n += CONNECT_BROWSER_BYTES;
	if (r->verifier)
		memcpy(p + n, c->verifier, CONNECT_VERIFIER_LEN), n += CONNECT_VERIFIER_LEN;
	if (r->upstream) {
		p[n++] = (unsigned char)un;
		memcpy(p + n, c->upstream, un), n += un;
	}
	if (r->subject) {
		p[n++] = (unsigned char)(sn >> 8);
		p[n++] = (unsigned char)sn;
		memcpy(p + n, c->subject, sn), n += sn;
	}
	rc = secret_seal(k->seal, p, n, r->ad, out, outlen);
	secret_wipe(p, sizeof(p));
	return rc;
}

/* Takes len bytes at *at of the n: a pointer to them, or NULL when fewer are left. */
static const unsigned char *
take(const unsigned char *p, size_t n, size_t *at, size_t len)
{
	const unsigned char *q = p + *at;

	if (len > n - *at)
		return NULL;
	*at += len;
	return q;
}

/* Long: one field after another, each checked as it is taken. */
int
connect_parse(const unsigned char *p, size_t n, int kind, struct connect_claim *c)
{
	const struct kind_row *r = kind_of(kind);
	const unsigned char *q;
	size_t at = 0, len;
	uint64_t until = 0;
	int i;

	memset(c, 0, sizeof(*c));
	if (r == NULL || (q = take(p, n, &at, 9)) == NULL || q[0] != kind)
		goto bad;
	for (i = 1; i <= 8; i++)
		until = until << 8 | q[i];
	if (until > INT64_MAX)
		goto bad;
	c->kind = kind;
	c->until_ms = (int64_t)until;
	if ((q = take(p, n, &at, CONNECT_ID_BYTES)) == NULL)
		goto bad;
	memcpy(c->id, q, CONNECT_ID_BYTES);
	if (r->person) {
		if ((q = take(p, n, &at, CONNECT_PERSON_BYTES)) == NULL)
			goto bad;
		memcpy(c->person, q, CONNECT_PERSON_BYTES);
	}
	if (r->browser) {
		if ((q = take(p, n, &at, CONNECT_BROWSER_BYTES)) == NULL)
			goto bad;
		memcpy(c->browser, q, CONNECT_BROWSER_BYTES);
	}
	if (r->verifier) {
		if ((q = take(p, n, &at, CONNECT_VERIFIER_LEN)) == NULL)
			goto bad;
		memcpy(c->verifier, q, CONNECT_VERIFIER_LEN);
		if (!verifier_ok(c->verifier))
			goto bad;
	}
	if (r->upstream) {
		if ((q = take(p, n, &at, 1)) == NULL || (len = q[0]) == 0 || (q = take(p, n, &at, len)) == NULL ||
		    !text_ok((const char *)q, len, sizeof(c->upstream)))
			goto bad;
		memcpy(c->upstream, q, len);
	}
	if (r->subject) {
		if ((q = take(p, n, &at, 2)) == NULL)
			goto bad;
		len = (size_t)q[0] << 8 | q[1];
		if ((q = take(p, n, &at, len)) == NULL || !text_ok((const char *)q, len, sizeof(c->subject)))
			goto bad;
		memcpy(c->subject, q, len);
	}
	if (at == n)
		return 0;
bad:
	secret_wipe(c, sizeof(*c));
	return -1;
}

int
connect_open(const struct connect_keys *k, const char *sealed, int kind, int64_t now_ms,
    struct connect_claim *c)
{
	const struct kind_row *r = kind_of(kind);
	char p[CONNECT_PLAIN_MAX + 1];
	long n;
	int rc = -1;

	secret_wipe(c, sizeof(*c));
	if (r == NULL || sealed == NULL || strlen(sealed) >= CONNECT_SEALED_MAX)
		return -1;
	if ((n = secret_open(k->seal, sealed, r->ad, p, sizeof(p))) < 0)
		return -1;
	if (connect_parse((const unsigned char *)p, (size_t)n, kind, c) == 0 && c->until_ms > now_ms)
		rc = 0;
	else
		secret_wipe(c, sizeof(*c));
	secret_wipe(p, sizeof(p));
	return rc;
}
