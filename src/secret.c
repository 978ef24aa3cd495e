/* secret — libsodium wrappers. */
#include "autoconf.h"

#include <sodium.h>
#include <string.h>

#include "secret.h"

int
secret_init(void)
{
	return sodium_init() < 0 ? -1 : 0;
}

void
secret_random_bytes(void *out, size_t n)
{
	randombytes_buf(out, n);
}

void
secret_random_hex(char *out, size_t nbytes)
{
	unsigned char raw[64];

	if (nbytes > sizeof(raw))
		nbytes = sizeof(raw);
	randombytes_buf(raw, nbytes);
	sodium_bin2hex(out, nbytes * 2 + 1, raw, nbytes);
	sodium_memzero(raw, sizeof(raw));
}

void
secret_digest_hex(const void *p, size_t n, char *out, size_t nbytes)
{
	unsigned char h[crypto_generichash_BYTES_MAX];

	if (nbytes < crypto_generichash_BYTES_MIN)
		nbytes = crypto_generichash_BYTES_MIN;
	if (nbytes > sizeof(h))
		nbytes = sizeof(h);
	crypto_generichash(h, nbytes, p, n, NULL, 0);
	sodium_bin2hex(out, nbytes * 2 + 1, h, nbytes);
}

int
secret_equal(const void *a, const void *b, size_t n)
{
	return sodium_memcmp(a, b, n) == 0;
}

void
secret_wipe(void *p, size_t n)
{
	sodium_memzero(p, n);
}

void
secret_keyed_digest(const unsigned char *key, const void *p, size_t n, unsigned char out[32])
{
	crypto_generichash(out, 32, p, n, key, 32);
}

int
secret_base64(const void *p, size_t n, char *out, size_t outlen)
{
	if (outlen < sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL))
		return -1;
	sodium_bin2base64(out, outlen, p, n, sodium_base64_VARIANT_ORIGINAL);
	return 0;
}

long
secret_unbase64(const char *in, size_t n, void *out, size_t outlen)
{
	const char *end;
	size_t len;

	if (n % 4 != 0)
		return -1;
	if (sodium_base642bin(out, outlen, in, n, NULL, &len, &end,
	    sodium_base64_VARIANT_ORIGINAL) != 0 || end != in + n)
		return -1;
	return (long)len;
}

#define SEAL_MAX	4096

int
secret_seal(const unsigned char *key, const void *p, size_t n, const char *ad,
    char *out, size_t outlen)
{
	unsigned char box[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES + SEAL_MAX +
	    crypto_aead_xchacha20poly1305_ietf_ABYTES];
	unsigned long long clen;
	size_t total;

	if (n > SEAL_MAX)
		return -1;
	randombytes_buf(box, crypto_aead_xchacha20poly1305_ietf_NPUBBYTES);
	crypto_aead_xchacha20poly1305_ietf_encrypt(box + crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
	    &clen, p, n, (const unsigned char *)ad, strlen(ad), NULL, box, key);
	total = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES + (size_t)clen;
	if (outlen < sodium_base64_ENCODED_LEN(total, sodium_base64_VARIANT_URLSAFE_NO_PADDING))
		return -1;
	sodium_bin2base64(out, outlen, box, total, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	return 0;
}

long
secret_open(const unsigned char *key, const char *sealed, const char *ad, char *out, size_t outlen)
{
	unsigned char box[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES + SEAL_MAX +
	    crypto_aead_xchacha20poly1305_ietf_ABYTES];
	unsigned long long mlen;
	size_t blen;

	if (sodium_base642bin(box, sizeof(box), sealed, strlen(sealed), NULL, &blen, NULL,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
	    blen < crypto_aead_xchacha20poly1305_ietf_NPUBBYTES + crypto_aead_xchacha20poly1305_ietf_ABYTES ||
	    blen - crypto_aead_xchacha20poly1305_ietf_NPUBBYTES - crypto_aead_xchacha20poly1305_ietf_ABYTES >= outlen)
		return -1;
	if (crypto_aead_xchacha20poly1305_ietf_decrypt((unsigned char *)out, &mlen, NULL,
	    box + crypto_aead_xchacha20poly1305_ietf_NPUBBYTES, blen - crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
	    (const unsigned char *)ad, strlen(ad), box, key) != 0)
		return -1;
	out[mlen] = '\0';
	return (long)mlen;
}
