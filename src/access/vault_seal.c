/* vault_seal — a person's connection, written, sealed, opened and read (vault_seal.h). */
#include "autoconf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secret.h"
#include "vault_seal.h"

#define MS_DIGITS	18	/* a time in ms: 18 digits reach past the year 30,000 */
#define MS_MAX		INT64_C(999999999999999999)
/* The longest plaintext vault_seal writes: the fixed shape, then the fields at most. */
#define SHAPE		"{\"v\":1,\"who\":\"\",\"up\":\"\",\"at\":\"\",\"at_exp\":,\"rt\":\"\",\"rt_exp\":," \
			"\"scope\":\"\",\"made\":}"
#define PLAIN_LONGEST	(sizeof(SHAPE) - 1 + VAULT_WHO_LEN + VAULT_UPSTREAM_MAX - 1 + 2 * VAULT_TOKEN_MAX + \
			VAULT_SCOPE_MAX + 3 * MS_DIGITS)
_Static_assert(PLAIN_LONGEST < VAULT_PLAIN_MAX, "the vault's plaintext bound holds its longest value");
_Static_assert(VAULT_PLAIN_MAX <= SECRET_SEAL_MAX, "what the vault seals can be sealed");
_Static_assert((VAULT_PLAIN_MAX + 40) * 4 / 3 + 2 <= VAULT_VALUE_MAX, "a sealed value fits an entry");

static void
derive(const unsigned char *key, const char *label, unsigned char out[32])
{
	secret_keyed_digest(key, label, strlen(label), out);
}

void
vault_keys_derive(struct vault_keys *k, const unsigned char session_key[STATE_KEY_BYTES])
{
	/* Labels of their own: a vault value never opens as an upstream credential's
	 * (upcred.c), nor a name collides with one. */
	derive(session_key, "mcpgate vault seal v1", k->seal);
	derive(session_key, "mcpgate vault name v1", k->name);
}

void
vault_keys_clear(struct vault_keys *k)
{
	secret_wipe(k, sizeof(*k));
}

void
vault_name(const struct vault_keys *k, const char *issuer, const char *subject, const char *upstream,
    unsigned char name[VAULT_NAME_BYTES])
{
	/* Each part with its NUL: ("ab", "c") and ("a", "bc") name different entries. */
	struct secret_part parts[3] = {
		{ issuer, strlen(issuer) + 1 }, { subject, strlen(subject) + 1 }, { upstream, strlen(upstream) + 1 },
	};

	secret_keyed_digest_parts(k->name, parts, 3, name);
}

int64_t
vault_tokens_until(const struct vault_tokens *t)
{
	return t->refresh_token && t->refresh_token[0] ? t->refresh_until_ms : t->access_until_ms;
}

/* --- what may be written --------------------------------------------------------- */

enum cclass { C_TOKEN, C_SCOPE, C_HEX };

static int
char_ok(enum cclass c, unsigned char ch)
{
	switch (c) {
	case C_TOKEN:
		return ch > 0x20 && ch < 0x7f && ch != '"' && ch != '\\';
	case C_SCOPE:
		return ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\';
	default:
		return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
	}
}

/* s (n bytes) is min..max characters of class c. */
static int
text_ok(const char *s, size_t n, size_t min, size_t max, enum cclass c)
{
	size_t i;

	if (n < min || n > max)
		return 0;
	for (i = 0; i < n; i++)
		if (!char_ok(c, (unsigned char)s[i]))
			return 0;
	return 1;
}

/* s (NUL-terminated; NULL: empty) as text_ok says. */
static int
field_ok(const char *s, size_t min, size_t max, enum cclass c)
{
	return s == NULL ? min == 0 : text_ok(s, strnlen(s, max + 1), min, max, c);
}

static int
storable(const struct vault_tokens *t)
{
	return t->access_token != NULL && field_ok(t->access_token, 1, VAULT_TOKEN_MAX, C_TOKEN) &&
	    field_ok(t->refresh_token, 0, VAULT_TOKEN_MAX, C_TOKEN) && field_ok(t->scope, 0, VAULT_SCOPE_MAX, C_SCOPE) &&
	    field_ok(t->who, VAULT_WHO_LEN, VAULT_WHO_LEN, C_HEX) &&
	    field_ok(t->upstream, 1, VAULT_UPSTREAM_MAX - 1, C_TOKEN) &&
	    t->access_until_ms >= 0 && t->access_until_ms <= MS_MAX && t->refresh_until_ms >= 0 &&
	    t->refresh_until_ms <= MS_MAX && t->obtained_ms >= 0 && t->obtained_ms <= MS_MAX;
}

/* The associated data of name's value: its hex. */
static void
name_ad(const unsigned char name[VAULT_NAME_BYTES], char ad[2 * VAULT_NAME_BYTES + 1])
{
	secret_hex(name, VAULT_NAME_BYTES, ad);
}

int
vault_seal(const struct vault_keys *k, const unsigned char name[VAULT_NAME_BYTES], const struct vault_tokens *t,
    char *out, size_t outlen)
{
	char ad[2 * VAULT_NAME_BYTES + 1], *plain;
	int n, rc = -1;

	if (!storable(t) || (plain = malloc(VAULT_PLAIN_MAX)) == NULL)
		return -1;
	n = snprintf(plain, VAULT_PLAIN_MAX, "{\"v\":1,\"who\":\"%s\",\"up\":\"%s\",\"at\":\"%s\",\"at_exp\":%" PRId64
	    ",\"rt\":\"%s\",\"rt_exp\":%" PRId64 ",\"scope\":\"%s\",\"made\":%" PRId64 "}", t->who, t->upstream,
	    t->access_token, t->access_until_ms, t->refresh_token ? t->refresh_token : "", t->refresh_until_ms,
	    t->scope ? t->scope : "", t->obtained_ms);
	name_ad(name, ad);
	if (n > 0 && n < VAULT_PLAIN_MAX)
		rc = secret_seal(k->seal, plain, (size_t)n, ad, out, outlen);
	secret_wipe(plain, VAULT_PLAIN_MAX);
	free(plain);
	return rc;
}

/* --- what is read ---------------------------------------------------------------- */

struct rd {
	const char *p, *end;
};

static int
lit(struct rd *r, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(r->end - r->p) < n || memcmp(r->p, s, n) != 0)
		return -1;
	r->p += n;
	return 0;
}

/* A string's characters up to its closing quote (none of them a quote: the class
 * allows none), checked: its start and length. */
static int
text(struct rd *r, size_t min, size_t max, enum cclass c, const char **s, size_t *n)
{
	const char *q = memchr(r->p, '"', (size_t)(r->end - r->p));

	if (q == NULL || !text_ok(r->p, (size_t)(q - r->p), min, max, c))
		return -1;
	*s = r->p;
	*n = (size_t)(q - r->p);
	r->p = q + 1;
	return 0;
}

/* A string into a malloc'd copy (NULL when empty and min is 0). */
static int
text_dup(struct rd *r, size_t min, size_t max, enum cclass c, char **out)
{
	const char *s;
	size_t n;

	if (text(r, min, max, c, &s, &n) < 0)
		return -1;
	if (n == 0)
		return 0;
	if ((*out = malloc(n + 1)) == NULL)
		return -1;
	memcpy(*out, s, n);
	(*out)[n] = '\0';
	return 0;
}

/* A string into out (size bytes). */
static int
text_into(struct rd *r, size_t min, enum cclass c, char *out, size_t size)
{
	const char *s;
	size_t n;

	if (text(r, min, size - 1, c, &s, &n) < 0)
		return -1;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

/* A time in ms: 0, or digits without a leading zero, at most MS_DIGITS. */
static int
ms(struct rd *r, int64_t *v)
{
	int i;

	*v = 0;
	if (r->p < r->end && *r->p == '0') {
		r->p++;
		return 0;
	}
	for (i = 0; r->p < r->end && *r->p >= '0' && *r->p <= '9'; i++, r->p++) {
		if (i == MS_DIGITS)
			return -1;
		*v = *v * 10 + (*r->p - '0');
	}
	return i > 0 ? 0 : -1;
}

int
vault_tokens_parse(const char *plain, size_t n, struct vault_tokens *t)
{
	struct rd r = { plain, plain + n };
	int ok;

	memset(t, 0, sizeof(*t));
	ok = lit(&r, "{\"v\":1,\"who\":\"") == 0 && text_into(&r, VAULT_WHO_LEN, C_HEX, t->who, sizeof(t->who)) == 0 &&
	    lit(&r, ",\"up\":\"") == 0 && text_into(&r, 1, C_TOKEN, t->upstream, sizeof(t->upstream)) == 0 &&
	    lit(&r, ",\"at\":\"") == 0 && text_dup(&r, 1, VAULT_TOKEN_MAX, C_TOKEN, &t->access_token) == 0 &&
	    lit(&r, ",\"at_exp\":") == 0 && ms(&r, &t->access_until_ms) == 0 &&
	    lit(&r, ",\"rt\":\"") == 0 && text_dup(&r, 0, VAULT_TOKEN_MAX, C_TOKEN, &t->refresh_token) == 0 &&
	    lit(&r, ",\"rt_exp\":") == 0 && ms(&r, &t->refresh_until_ms) == 0 &&
	    lit(&r, ",\"scope\":\"") == 0 && text_dup(&r, 0, VAULT_SCOPE_MAX, C_SCOPE, &t->scope) == 0 &&
	    lit(&r, ",\"made\":") == 0 && ms(&r, &t->obtained_ms) == 0 && lit(&r, "}") == 0 && r.p == r.end;
	if (!ok) {
		vault_tokens_free(t);
		return -1;
	}
	return 0;
}

int
vault_open(const struct vault_keys *k, const unsigned char name[VAULT_NAME_BYTES], const char *sealed,
    struct vault_tokens *t)
{
	char ad[2 * VAULT_NAME_BYTES + 1], *plain;
	long n;
	int rc = -1;

	memset(t, 0, sizeof(*t));
	if (strnlen(sealed, VAULT_VALUE_MAX) >= VAULT_VALUE_MAX || (plain = malloc(VAULT_PLAIN_MAX)) == NULL)
		return -1;
	name_ad(name, ad);
	if ((n = secret_open(k->seal, sealed, ad, plain, VAULT_PLAIN_MAX)) > 0)
		rc = vault_tokens_parse(plain, (size_t)n, t);
	secret_wipe(plain, VAULT_PLAIN_MAX);
	free(plain);
	return rc;
}

static void
wipe_free(char **s)
{
	if (*s != NULL) {
		secret_wipe(*s, strlen(*s));
		free(*s);
		*s = NULL;
	}
}

void
vault_tokens_free(struct vault_tokens *t)
{
	wipe_free(&t->access_token);
	wipe_free(&t->refresh_token);
	wipe_free(&t->scope);
	secret_wipe(t, sizeof(*t));
}
