/* jws — JSON Web Signatures and keys (RFC 7515, 7517, 7518, 7638) over cjose, the only
 * file that includes <cjose/cjose.h>: compact JWS parsing, JWK sets, signature checks
 * with a key of a set or with the key a JWS carries in its header (DPoP proofs), and
 * JWK thumbprints. Pure: no I/O, no clock.
 *
 * Only asymmetric algorithms exist here (RS256/384/512, PS256/384/512, ES256/384/512):
 * "none" and the HMAC algorithms are never accepted, so a token signed with a public key
 * used as an HMAC secret, or not signed at all, is refused before any key is looked at.
 * EdDSA is not among them: cjose 0.6 has no OKP keys. A header must be a JSON object
 * without duplicate members, name an allowed "alg", and carry no "crit"; a key must fit
 * the algorithm (RSA of at least 2048 bits; EC on the algorithm's curve), and when it
 * names its own "alg" or "use" they must agree. */
#ifndef GW_JWS_H
#define GW_JWS_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

/* Algorithms, as bits of an allow-list. */
enum jws_alg {
	JWS_RS256 = 1 << 0,
	JWS_RS384 = 1 << 1,
	JWS_RS512 = 1 << 2,
	JWS_PS256 = 1 << 3,
	JWS_PS384 = 1 << 4,
	JWS_PS512 = 1 << 5,
	JWS_ES256 = 1 << 6,
	JWS_ES384 = 1 << 7,
	JWS_ES512 = 1 << 8,
};
#define JWS_ALGS_ALL	0x1ffu

/* The longest compact JWS parsed (a token or a proof), and the longest JWK set. */
#define JWS_COMPACT_MAX	16384
#define JWS_KEYS_MAX	64	/* keys kept of a set; the others are ignored */
#define JWS_SET_MAX	(128 * 1024)	/* bytes of a JWK set document */
/* A base64url SHA-256 (a thumbprint, a token hash) and its NUL. */
#define JWS_B64_SHA256	44

/* The bit of an algorithm name: 0, or -1 with err (GW_ECONFIG, saying why) for a name
 * never accepted ("none", HS256, EdDSA, anything unknown). */
int jws_alg_parse(const char *name, unsigned *bit, struct gw_error *err);
/* The names of the bits set, blank-separated, into out. */
void jws_alg_names(unsigned algs, char *out, size_t n);

/* A compact JWS, parsed but not verified. */
struct jws;
/* 1 when tok is shaped like a compact JWS (three non-empty base64url parts, the first
 * beginning "eyJ": a JSON object's '{"'), without decoding it: how verify = auto tells a
 * JWT from an opaque token. */
int jws_looks_like(const char *tok, size_t len);
/* Parses tok: the header (an allowed alg, no crit) and the payload (a JSON object).
 * 0 with *out, or -1 with err: GW_EBADTOKEN saying what is wrong with it, or
 * GW_EINTERNAL (out of memory). */
int jws_parse(const char *tok, size_t len, unsigned algs, struct jws **out, struct gw_error *err);
void jws_free(struct jws *j);
json_t *jws_header(const struct jws *j);	/* borrowed */
json_t *jws_payload(const struct jws *j);	/* borrowed */
const char *jws_kid(const struct jws *j);	/* NULL: none */
const char *jws_typ(const struct jws *j);	/* NULL: none */

/* A JWK set: its usable signing keys. */
struct jws_keys;
/* Parses a JWK set document; keys that are not for signatures, symmetric, of an unknown
 * type, too weak or malformed are left out. NULL with err when it is not a JWK set
 * (GW_EAUTHSERVER) or out of memory (GW_EINTERNAL). A set that holds no usable key
 * (none at all: the issuer withdrew them) is one still: empty (jws_keys_count 0, every
 * JWS is JWS_NOKEY), with err (GW_EAUTHSERVER) saying so. */
struct jws_keys *jws_keys_parse(const char *doc, size_t len, struct gw_error *err);
void jws_keys_free(struct jws_keys *k);
size_t jws_keys_count(const struct jws_keys *k);

enum jws_verdict {
	JWS_OK = 0,
	JWS_NOKEY,	/* no key of the set has the JWS's kid (or, without a kid, fits its alg) */
	JWS_BADSIG,	/* a key fits, the signature does not verify */
};
/* Verifies j with the key of keys named by its kid; without a kid, with each key that
 * fits its alg. */
enum jws_verdict jws_verify(const struct jws *j, const struct jws_keys *keys);
/* Keys taken from headers, imported once (a DPoP client signs every proof with the same
 * key): a few, by thumbprint, the oldest giving way. One per thread. */
struct jws_keycache;
struct jws_keycache *jws_keycache_new(void);
void jws_keycache_free(struct jws_keycache *kc);
/* Verifies j with the public key its header carries as "jwk" (RFC 9449 §4.2): JWS_OK
 * with that key's RFC 7638 thumbprint in thumb, JWS_NOKEY when there is no usable
 * public key (absent, private, symmetric, not fitting alg), or JWS_BADSIG. kc (may be
 * NULL) keeps the keys imported: a key seen before is not imported again, and its
 * header's members are checked every time as a new key's are. */
enum jws_verdict jws_verify_embedded(const struct jws *j, struct jws_keycache *kc, char thumb[JWS_B64_SHA256]);
/* RFC 7638 thumbprint (SHA-256, base64url) of a public JWK: 0, or -1 when it lacks a
 * required member. */
int jws_thumbprint(json_t *jwk, char out[JWS_B64_SHA256]);
/* base64url (unpadded) SHA-256 of p: RFC 9449's "ath" of an access token. */
void jws_sha256_b64(const void *p, size_t n, char out[JWS_B64_SHA256]);

#endif
