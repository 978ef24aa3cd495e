/* jws — compact JWS, JWK sets and thumbprints over cjose (loaded on first need by
 * joseload.c; the only other file that includes it). */
#include "autoconf.h"

#include <cjose/cjose.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "jsonw.h"
#include "jws.h"
#include "secret.h"

/* The algorithms accepted, the key each needs, and the length of its signature (0: the
 * key's modulus decides). */
static const struct {
	const char *name;
	unsigned bit;
	cjose_jwk_kty_t kty;
	int crv;		/* EC: the curve; RSA: 0 */
	size_t sig_len;
} algs[] = {
	{ "RS256", JWS_RS256, CJOSE_JWK_KTY_RSA, 0, 0 },
	{ "RS384", JWS_RS384, CJOSE_JWK_KTY_RSA, 0, 0 },
	{ "RS512", JWS_RS512, CJOSE_JWK_KTY_RSA, 0, 0 },
	{ "PS256", JWS_PS256, CJOSE_JWK_KTY_RSA, 0, 0 },
	{ "PS384", JWS_PS384, CJOSE_JWK_KTY_RSA, 0, 0 },
	{ "PS512", JWS_PS512, CJOSE_JWK_KTY_RSA, 0, 0 },
	{ "ES256", JWS_ES256, CJOSE_JWK_KTY_EC, CJOSE_JWK_EC_P_256, 64 },
	{ "ES384", JWS_ES384, CJOSE_JWK_KTY_EC, CJOSE_JWK_EC_P_384, 96 },
	{ "ES512", JWS_ES512, CJOSE_JWK_KTY_EC, CJOSE_JWK_EC_P_521, 132 },
};
#define NALGS	(sizeof(algs) / sizeof(algs[0]))

/* Names refused outright, and why (for the configuration's errors). */
static const struct {
	const char *name;
	const char *why;
} refused[] = {
	{ "none", "never accepted: an unsigned token proves nothing" },
	{ "HS256", "never accepted: an HMAC algorithm would take the issuer's public key for a shared secret" },
	{ "HS384", "never accepted: an HMAC algorithm would take the issuer's public key for a shared secret" },
	{ "HS512", "never accepted: an HMAC algorithm would take the issuer's public key for a shared secret" },
	{ "EdDSA", "not supported: the JOSE library of this build (cjose 0.6) has no Ed25519 or Ed448 keys" },
};

#define RSA_MIN_BITS	2048

struct jws {
	json_t *header;
	json_t *payload;
	unsigned alg;		/* its bit */
	char *compact;		/* a copy, for cjose */
	size_t len;
};

struct jws_key {
	cjose_jwk_t *jwk;
	char *kid;		/* NULL: none */
	unsigned algs;		/* what it may verify */
};

struct jws_keys {
	size_t n;
	struct jws_key k[JWS_KEYS_MAX];
};

int
jws_alg_parse(const char *name, unsigned *bit, struct gw_error *err)
{
	const char *why = "unknown algorithm (RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512)";
	size_t i;

	for (i = 0; i < NALGS; i++)
		if (strcmp(name, algs[i].name) == 0) {
			*bit = algs[i].bit;
			return 0;
		}
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (strcmp(name, refused[i].name) == 0)
			why = refused[i].why;
	gw_error_set(err, GW_ECONFIG, "%s", why);
	return -1;
}

void
jws_alg_names(unsigned bits, char *out, size_t n)
{
	size_t i, o = 0;
	int w;

	if (n == 0)
		return;
	out[0] = '\0';
	for (i = 0; i < NALGS; i++) {
		if (!(bits & algs[i].bit))
			continue;
		w = snprintf(out + o, n - o, "%s%s", o ? " " : "", algs[i].name);
		if (w < 0 || (size_t)w >= n - o)
			break;
		o += (size_t)w;
	}
}

static int
alg_index(const char *name)
{
	size_t i;

	for (i = 0; name && i < NALGS; i++)
		if (strcmp(name, algs[i].name) == 0)
			return (int)i;
	return -1;
}

/* 1 when the n bytes at p are strictly base64url. */
static int
b64url_ok_n(const char *p, size_t n)
{
	unsigned char *raw;
	int ok;

	if (n == 0 || (raw = malloc(n)) == NULL)
		return 0;
	ok = secret_unb64url(p, n, raw, n) >= 0;
	free(raw);
	return ok;
}

/* A base64url part decoded as a JSON object (no duplicate members): NULL when not. */
static json_t *
part_object(const char *p, size_t n)
{
	unsigned char *raw;
	json_t *j = NULL;
	long len;

	if (n == 0 || (raw = malloc(n)) == NULL)
		return NULL;
	if ((len = secret_unb64url(p, n, raw, n)) > 0)
		j = json_loadb((const char *)raw, (size_t)len, JSON_REJECT_DUPLICATES, NULL);
	free(raw);
	if (!json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* The three parts of tok: 0 with the two dots, or -1 when it is not three non-empty
 * base64url runs. */
static int
split(const char *tok, size_t len, size_t *d1, size_t *d2)
{
	size_t i, dots = 0;

	if (len == 0 || len > JWS_COMPACT_MAX)
		return -1;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)tok[i];

		if (c == '.') {
			if (dots == 2)
				return -1;
			*(dots++ ? d2 : d1) = i;
		} else if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_'))
			return -1;
	}
	if (dots != 2 || *d1 == 0 || *d2 == *d1 + 1 || *d2 + 1 == len)
		return -1;
	return 0;
}

int
jws_looks_like(const char *tok, size_t len)
{
	size_t d1, d2;

	/* "eyJ": the base64url of '{"', how every JWS header begins. Decoding it would tell
	 * no more: a token shaped so that is not a JWS is refused as one. */
	return len > 3 && memcmp(tok, "eyJ", 3) == 0 && split(tok, len, &d1, &d2) == 0;
}

int
jws_parse(const char *tok, size_t len, unsigned allowed, struct jws **out, struct gw_error *err)
{
	struct jws *j = NULL;
	size_t d1, d2, sig_chars;
	int a;

	*out = NULL;
	if (split(tok, len, &d1, &d2) < 0)
		return gw_error_set(err, GW_EBADTOKEN, "not a compact JWS"), -1;
	if ((j = calloc(1, sizeof(*j))) == NULL)
		return gw_error_set(err, GW_EINTERNAL, "out of memory"), -1;
	if ((j->header = part_object(tok, d1)) == NULL) {
		gw_error_set(err, GW_EBADTOKEN, "JWS header is not a JSON object");
		goto fail;
	}
	a = alg_index(json_string_value(json_object_get(j->header, "alg")));
	if (a < 0 || !(allowed & algs[a].bit)) {
		gw_error_set(err, GW_EBADTOKEN, "JWS algorithm not accepted");
		goto fail;
	}
	j->alg = algs[a].bit;
	if (json_object_get(j->header, "crit")) {
		gw_error_set(err, GW_EBADTOKEN, "JWS header has critical extensions");
		goto fail;
	}
	sig_chars = len - d2 - 1;
	if (!b64url_ok_n(tok + d2 + 1, sig_chars)) {
		gw_error_set(err, GW_EBADTOKEN, "JWS signature is not base64url");
		goto fail;
	}
	if (algs[a].sig_len && sig_chars != (algs[a].sig_len * 4 + 2) / 3) {
		gw_error_set(err, GW_EBADTOKEN, "JWS signature of the wrong length");
		goto fail;
	}
	if ((j->payload = part_object(tok + d1 + 1, d2 - d1 - 1)) == NULL) {
		gw_error_set(err, GW_EBADTOKEN, "JWS payload is not a JSON object");
		goto fail;
	}
	if ((j->compact = malloc(len + 1)) == NULL) {
		gw_error_set(err, GW_EINTERNAL, "out of memory");
		goto fail;
	}
	memcpy(j->compact, tok, len);
	j->compact[len] = '\0';
	j->len = len;
	*out = j;
	return 0;
fail:
	jws_free(j);
	return -1;
}

void
jws_free(struct jws *j)
{
	if (j == NULL)
		return;
	json_decref(j->header);
	json_decref(j->payload);
	if (j->compact) {
		secret_wipe(j->compact, j->len);
		free(j->compact);
	}
	free(j);
}

json_t *
jws_header(const struct jws *j)
{
	return j->header;
}

json_t *
jws_payload(const struct jws *j)
{
	return j->payload;
}

const char *
jws_kid(const struct jws *j)
{
	return json_string_value(json_object_get(j->header, "kid"));
}

const char *
jws_typ(const struct jws *j)
{
	return json_string_value(json_object_get(j->header, "typ"));
}

/* --- keys ------------------------------------------------------------------------ */

/* The algorithms a public JWK may verify (0: none: not a usable signing key). */
static unsigned
key_algs(json_t *k, cjose_jwk_t *jwk)
{
	const char *use = json_string_value(json_object_get(k, "use"));
	json_t *alg = json_object_get(k, "alg"), *ops = json_object_get(k, "key_ops"), *v;
	unsigned bits = 0;
	cjose_err err;
	size_t i;
	int crv = 0, verify = 0;

	if (json_object_get(k, "use") && (use == NULL || strcmp(use, "sig") != 0))
		return 0;
	if (ops) {
		json_array_foreach(ops, i, v)
			verify |= json_is_string(v) && strcmp(json_string_value(v), "verify") == 0;
		if (!verify)
			return 0;
	}
	switch (cjose_jwk_get_kty(jwk, &err)) {
	case CJOSE_JWK_KTY_RSA:
		if (cjose_jwk_get_keysize(jwk, &err) < RSA_MIN_BITS)
			return 0;
		break;
	case CJOSE_JWK_KTY_EC:
		crv = (int)cjose_jwk_EC_get_curve(jwk, &err);
		break;
	default:
		return 0;	/* symmetric: never a verification key here */
	}
	for (i = 0; i < NALGS; i++)
		if (algs[i].kty == cjose_jwk_get_kty(jwk, &err) && algs[i].crv == crv)
			bits |= algs[i].bit;
	if (alg) {	/* the key says which algorithm it is for */
		int a = alg_index(json_string_value(alg));

		bits = a < 0 ? 0 : bits & algs[a].bit;
	}
	return bits;
}

/* 1 when s is a string of strict base64url. */
static int
b64url_ok(const char *s)
{
	return s != NULL && b64url_ok_n(s, strlen(s));
}

/* The members of a JWK object that make it unusable here (before cjose sees it): a
 * private member when public_only (a proof must carry a public key), or a member cjose
 * decodes that is not strict base64url (cjose's decoder aborts the process on some
 * malformed input: an '=' inside). 1 when it may be imported. */
static int
key_members_ok(json_t *k, int public_only)
{
	static const char *const private_members[] = { "d", "p", "q", "dp", "dq", "qi", "oth", "k" };
	static const char *const encoded[] = { "n", "e", "x", "y", "d", "p", "q", "dp", "dq", "qi", "k" };
	json_t *v;
	size_t i;

	if (!json_is_object(k))
		return 0;
	for (i = 0; public_only && i < sizeof(private_members) / sizeof(private_members[0]); i++)
		if (json_object_get(k, private_members[i]))
			return 0;
	for (i = 0; i < sizeof(encoded) / sizeof(encoded[0]); i++)
		if ((v = json_object_get(k, encoded[i])) != NULL && !b64url_ok(json_string_value(v)))
			return 0;
	return 1;
}

/* A public key of a JWK object: the cjose key and what it may verify, or NULL. */
static cjose_jwk_t *
key_import(json_t *k, int public_only, unsigned *bits)
{
	cjose_jwk_t *jwk = NULL;
	cjose_err err;
	struct buf text;

	if (!key_members_ok(k, public_only))
		return NULL;
	/* As JSON text: cjose has its own jansson (joseload.c) */
	buf_init(&text, JWS_SET_MAX);
	if (jsonw_dump(&text, k) == 0)
		jwk = cjose_jwk_import(text.data, text.len, &err);
	buf_free(&text);
	if (jwk == NULL)
		return NULL;
	if ((*bits = key_algs(k, jwk)) == 0) {
		cjose_jwk_release(jwk);
		return NULL;
	}
	return jwk;
}

struct jws_keys *
jws_keys_parse(const char *doc, size_t len, struct gw_error *err)
{
	struct jws_keys *ks = NULL;
	json_error_t jerr;
	json_t *set, *keys, *k;
	size_t i;

	set = json_loadb(doc, len, JSON_REJECT_DUPLICATES, &jerr);
	keys = json_object_get(set, "keys");
	if (!json_is_array(keys)) {
		gw_error_set(err, GW_EAUTHSERVER, "not a JWK set (%s)", set ? "no \"keys\" array" : jerr.text);
		goto out;
	}
	if ((ks = calloc(1, sizeof(*ks))) == NULL) {
		gw_error_set(err, GW_EINTERNAL, "out of memory");
		goto out;
	}
	json_array_foreach(keys, i, k) {
		struct jws_key *key = &ks->k[ks->n];
		const char *kid = json_string_value(json_object_get(k, "kid"));

		if (ks->n == JWS_KEYS_MAX)
			break;
		if ((key->jwk = key_import(k, 0, &key->algs)) == NULL)
			continue;
		if (kid && (key->kid = strdup(kid)) == NULL) {
			cjose_jwk_release(key->jwk);
			continue;
		}
		ks->n++;
	}
	if (ks->n == 0)
		gw_error_set(err, GW_EAUTHSERVER, "no usable signing key in the JWK set (%zu keys)",
		    json_array_size(keys));
out:
	json_decref(set);
	return ks;
}

void
jws_keys_free(struct jws_keys *ks)
{
	size_t i;

	if (ks == NULL)
		return;
	for (i = 0; i < ks->n; i++) {
		cjose_jwk_release(ks->k[i].jwk);
		free(ks->k[i].kid);
	}
	free(ks);
}

size_t
jws_keys_count(const struct jws_keys *ks)
{
	return ks ? ks->n : 0;
}

/* 1 when jwk verifies j's signature. */
static int
verify_with(const struct jws *j, const cjose_jwk_t *jwk)
{
	cjose_jws_t *cj;
	cjose_err err;
	int ok;

	if ((cj = cjose_jws_import(j->compact, j->len, &err)) == NULL)
		return 0;
	ok = cjose_jws_verify(cj, jwk, &err);
	cjose_jws_release(cj);
	return ok;
}

enum jws_verdict
jws_verify(const struct jws *j, const struct jws_keys *ks)
{
	const char *kid = jws_kid(j);
	int fitting = 0;
	size_t i;

	if (json_object_get(j->header, "kid") && kid == NULL)
		return JWS_NOKEY;	/* a kid that is not a string names no key */
	for (i = 0; ks && i < ks->n; i++) {
		const struct jws_key *k = &ks->k[i];

		if (kid && (k->kid == NULL || strcmp(k->kid, kid) != 0))
			continue;
		if (!(k->algs & j->alg))
			continue;
		fitting = 1;
		if (verify_with(j, k->jwk))
			return JWS_OK;
	}
	return fitting ? JWS_BADSIG : JWS_NOKEY;
}

#define KEYCACHE_N	8

struct jws_keycache {
	struct {
		char thumb[JWS_B64_SHA256];
		cjose_jwk_t *jwk;	/* NULL: free */
	} e[KEYCACHE_N];
	unsigned next;		/* the one to give way next */
};

struct jws_keycache *
jws_keycache_new(void)
{
	return calloc(1, sizeof(struct jws_keycache));
}

void
jws_keycache_free(struct jws_keycache *kc)
{
	size_t i;

	if (kc == NULL)
		return;
	for (i = 0; i < KEYCACHE_N; i++)
		if (kc->e[i].jwk)
			cjose_jwk_release(kc->e[i].jwk);
	free(kc);
}

enum jws_verdict
jws_verify_embedded(const struct jws *j, struct jws_keycache *kc, char thumb[JWS_B64_SHA256])
{
	json_t *k = json_object_get(j->header, "jwk");
	cjose_jwk_t *jwk = NULL;
	unsigned bits = 0, slot;
	size_t i;
	int ok;

	/* The thumbprint names the key (its required members); the other members are this
	 * header's own and are checked as a new key's would be. */
	if (!key_members_ok(k, 1) || jws_thumbprint(k, thumb) < 0)
		return JWS_NOKEY;
	for (i = 0; kc && i < KEYCACHE_N; i++)
		if (kc->e[i].jwk && strcmp(kc->e[i].thumb, thumb) == 0) {
			jwk = cjose_jwk_retain(kc->e[i].jwk, NULL);
			bits = key_algs(k, jwk);
			break;
		}
	if (jwk == NULL) {
		if ((jwk = key_import(k, 1, &bits)) == NULL)
			return JWS_NOKEY;
		if (kc) {
			slot = kc->next++ % KEYCACHE_N;
			if (kc->e[slot].jwk)
				cjose_jwk_release(kc->e[slot].jwk);
			kc->e[slot].jwk = cjose_jwk_retain(jwk, NULL);
			memcpy(kc->e[slot].thumb, thumb, JWS_B64_SHA256);
		}
	}
	ok = (bits & j->alg) && verify_with(j, jwk);
	cjose_jwk_release(jwk);
	if (!(bits & j->alg))
		return JWS_NOKEY;
	return ok ? JWS_OK : JWS_BADSIG;
}

int
jws_thumbprint(json_t *jwk, char out[JWS_B64_SHA256])
{
	/* RFC 7638 §3.2: the required members only, in lexicographic order, no blanks. */
	static const char *const rsa[] = { "e", "kty", "n", NULL };
	static const char *const ec[] = { "crv", "kty", "x", "y", NULL };
	static const char *const okp[] = { "crv", "kty", "x", NULL };
	const char *kty = json_string_value(json_object_get(jwk, "kty"));
	const char *const *members;
	json_t *canon;
	char *text;
	size_t i;

	if (kty == NULL)
		return -1;
	members = strcmp(kty, "RSA") == 0 ? rsa : strcmp(kty, "EC") == 0 ? ec : strcmp(kty, "OKP") == 0 ? okp : NULL;
	if (members == NULL || (canon = json_object()) == NULL)
		return -1;
	for (i = 0; members[i]; i++) {
		json_t *v = json_object_get(jwk, members[i]);

		if (!json_is_string(v) || json_object_set(canon, members[i], v) < 0) {
			json_decref(canon);
			return -1;
		}
	}
	text = json_dumps(canon, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(canon);
	if (text == NULL)
		return -1;
	jws_sha256_b64(text, strlen(text), out);
	free(text);
	return 0;
}

void
jws_sha256_b64(const void *p, size_t n, char out[JWS_B64_SHA256])
{
	unsigned char digest[32];

	secret_sha256(p, n, digest);
	secret_b64url(digest, sizeof(digest), out, JWS_B64_SHA256);
}
