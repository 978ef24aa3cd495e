/* vault_seal — what the vault (vault.h) holds for a person's connection to an
 * upstream, and how: the tokens, their ends and granted scopes, with the person's
 * digest and the upstream's name (so that a value handed back by an eviction says
 * whose connection went), written as compact JSON and sealed (XChaCha20-Poly1305)
 * under a key derived from the session key, bound to the entry's name (its hex is the
 * associated data: a value copied under another name does not open). The name is a
 * keyed digest, under another derived key, of the organisation's issuer, the person's
 * subject there and the upstream's section name: the state file holds neither.
 *
 * Tokens are visible ASCII without '"' or '\' (an access token goes into an
 * Authorization header, where RFC 6750's b64token has neither; a token holding one is
 * refused, not stored), so the JSON needs no escapes: it is written and read here in
 * one fixed shape, with no copy of a token left unwiped in a library's memory. */
#ifndef GW_VAULT_SEAL_H
#define GW_VAULT_SEAL_H

#include <stddef.h>
#include <stdint.h>

#include "state.h"
#include "vault.h"

#define VAULT_TOKEN_MAX		4096	/* an access or refresh token, in bytes */
#define VAULT_SCOPE_MAX		1024	/* the granted scopes, blank-separated */
#define VAULT_UPSTREAM_MAX	128	/* the upstream's section name, with its NUL */
#define VAULT_WHO_LEN		32	/* the person's digest: lowercase hex */

/* A person's connection to an upstream. Strings are malloc'd (vault_open's) or the
 * caller's (to seal); NULL refresh_token or scope: none. */
struct vault_tokens {
	char *access_token;
	char *refresh_token;
	char *scope;
	int64_t access_until_ms;	/* the access token's end (wall clock); 0: not said */
	int64_t refresh_until_ms;	/* the refresh token's; 0: not said */
	int64_t obtained_ms;		/* when the person connected, or the last refresh */
	char who[VAULT_WHO_LEN + 1];	/* the audit log's digest of the person */
	char upstream[VAULT_UPSTREAM_MAX];
};

/* The keys a gateway's session key gives the vault: one seals, one names. */
struct vault_keys {
	unsigned char seal[32];
	unsigned char name[32];
};

void vault_keys_derive(struct vault_keys *k, const unsigned char session_key[STATE_KEY_BYTES]);
void vault_keys_clear(struct vault_keys *k);

/* The entry's name for subject at issuer (the organisation's) connected at upstream
 * (its section name). */
void vault_name(const struct vault_keys *k, const char *issuer, const char *subject, const char *upstream,
    unsigned char name[VAULT_NAME_BYTES]);
/* The entry's until_ms for vault_put: the refresh token's end, else (no refresh token)
 * the access token's; 0 when the one that counts has no end said. */
int64_t vault_tokens_until(const struct vault_tokens *t);

/* t sealed for name into out (NUL-terminated; VAULT_VALUE_MAX holds any). 0, or -1
 * when t is not storable (a token empty, too long or holding a character not allowed,
 * who not a digest, no upstream) or out is too small; nothing of t left in memory of
 * ours. */
int vault_seal(const struct vault_keys *k, const unsigned char name[VAULT_NAME_BYTES],
    const struct vault_tokens *t, char *out, size_t outlen);
/* Opens what vault_seal made for name into t (free it with vault_tokens_free): 0, or
 * -1 with t empty when it was sealed under another key or name, altered, or is not
 * in the shape vault_seal writes. The plaintext is wiped. */
int vault_open(const struct vault_keys *k, const unsigned char name[VAULT_NAME_BYTES], const char *sealed,
    struct vault_tokens *t);
/* The opened plaintext (n bytes) into t, as vault_open reads it: 0, or -1 with t empty. */
int vault_tokens_parse(const char *plain, size_t n, struct vault_tokens *t);
/* Wipes and frees what vault_open filled in; t is left empty. */
void vault_tokens_free(struct vault_tokens *t);

#endif
