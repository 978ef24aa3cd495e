/* secret — the only user of libsodium: random ids, digests, constant-time compare, wipe. */
#ifndef GW_SECRET_H
#define GW_SECRET_H

#include <stddef.h>

int secret_init(void);				/* 0, or -1 when libsodium fails */
void secret_random_bytes(void *out, size_t n);
/* nbytes random bytes as lowercase hex into out (2*nbytes+1 bytes). */
void secret_random_hex(char *out, size_t nbytes);
/* 8 bytes as 16 lowercase hex digits (and a NUL) unlike any other of this process or
 * any other, and not to be guessed from them: a keyed hash of a count (request ids). */
void secret_unique_hex(char out[17]);
/* n bytes of p as lowercase hex into out (2*n+1 bytes), in constant time (a key's
 * digest may name a secret's place). */
void secret_hex(const void *p, size_t n, char *out);
/* Unkeyed BLAKE2b digest of p, truncated to nbytes, as hex into out (2*nbytes+1). */
void secret_digest_hex(const void *p, size_t n, char *out, size_t nbytes);
/* Unkeyed BLAKE2b digest of p, nbytes (16..64) raw bytes into out. */
void secret_digest(const void *p, size_t n, unsigned char *out, size_t nbytes);
/* Keyed BLAKE2b-256 of p; key is 32 bytes. */
void secret_keyed_digest(const unsigned char *key, const void *p, size_t n, unsigned char out[32]);
/* Keyed BLAKE2b-256 of the concatenation of n parts (the token-cache key: the
 * acceptance context, then the token). */
struct secret_part {
	const void *p;
	size_t n;
};
void secret_keyed_digest_parts(const unsigned char *key, const struct secret_part *parts, size_t n,
    unsigned char out[32]);
/* Unkeyed BLAKE2b of the concatenation of n parts, nbytes (16..64) into out. */
void secret_digest_parts(const struct secret_part *parts, size_t n, unsigned char *out, size_t nbytes);
/* Standard base64 of p into out (outlen >= 4 * ceil(n / 3) + 1); -1 when too small. */
int secret_base64(const void *p, size_t n, char *out, size_t outlen);
/* Decodes standard, padded base64 (no blanks) into out: the length, or -1 when the
 * input is not exactly that (bad character or padding) or out is too small. */
long secret_unbase64(const char *in, size_t n, void *out, size_t outlen);
/* Authenticated encryption (XChaCha20-Poly1305, random nonce) of p (at most
 * SECRET_SEAL_MAX bytes) under a 32-byte key, as unpadded base64url into out (visible
 * ASCII). 0, or -1 when out is too small or p too long. */
#define SECRET_SEAL_MAX	12288	/* the largest sealed: a vault entry's tokens (vault.h) */
int secret_seal(const unsigned char *key, const void *p, size_t n, const char *ad,
    char *out, size_t outlen);
/* Opens what secret_seal made: plaintext into out (NUL-terminated), its length, or -1
 * when forged, altered, sealed under another key, or too large. */
long secret_open(const unsigned char *key, const char *sealed, const char *ad,
    char *out, size_t outlen);
/* Unpadded base64url of p into out (outlen >= 4 * n / 3 + 3): its length, or -1 when
 * out is too small. */
long secret_b64url(const void *p, size_t n, char *out, size_t outlen);
/* Decodes unpadded base64url strictly (the alphabet only, the unused bits of the last
 * character zero): the length, or -1 when in is not that or out is too small. */
long secret_unb64url(const char *in, size_t n, void *out, size_t outlen);
/* SHA-256 of p. */
void secret_sha256(const void *p, size_t n, unsigned char out[32]);
int secret_equal(const void *a, const void *b, size_t n);	/* constant time; 1 if equal */
void secret_wipe(void *p, size_t n);

#endif
