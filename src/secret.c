/* secret — libsodium wrappers. */
#include "autoconf.h"

#include <sodium.h>

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
