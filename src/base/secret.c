/* secret — libsodium wrappers. */
#include "autoconf.h"

#include <pthread.h>
#include <sodium.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

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
secret_hex(const void *p, size_t n, char *out)
{
	sodium_bin2hex(out, n * 2 + 1, p, n);
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

static unsigned char unique_key[crypto_shorthash_KEYBYTES];
static pthread_once_t unique_once = PTHREAD_ONCE_INIT;
static uint64_t unique_n;

static void
unique_init(void)
{
	randombytes_buf(unique_key, sizeof(unique_key));
}

/* SipHash of (process id, a process-wide count) under a key drawn once: no two calls of
 * a process give the same input, no other process has the key or its count, and no
 * system call is made (a request id a request, where getrandom(2) was one). */
void
secret_unique_hex(char out[17])
{
	unsigned char in[16], h[crypto_shorthash_BYTES];
	uint64_t n = __atomic_add_fetch(&unique_n, 1, __ATOMIC_RELAXED);
	uint64_t pid = (uint64_t)getpid();

	pthread_once(&unique_once, unique_init);
	memcpy(in, &pid, 8);
	memcpy(in + 8, &n, 8);
	crypto_shorthash(h, in, sizeof(in), unique_key);
	sodium_bin2hex(out, 17, h, sizeof(h));
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
	/* In 32- and 16-byte steps: libsodium's fixed-size compares are vectorised, where
	 * sodium_memcmp is a byte loop through volatile pointers (about 22 instructions a
	 * byte), for the tail. Every step is constant-time; which steps run depends on n
	 * alone. */
	const unsigned char *x = a, *y = b;
	int d = 0;

	for (; n >= crypto_verify_32_BYTES; n -= crypto_verify_32_BYTES, x += 32, y += 32)
		d |= crypto_verify_32(x, y);
	for (; n >= crypto_verify_16_BYTES; n -= crypto_verify_16_BYTES, x += 16, y += 16)
		d |= crypto_verify_16(x, y);
	if (n)
		d |= sodium_memcmp(x, y, n);
	return d == 0;
}

void
secret_wipe(void *p, size_t n)
{
	sodium_memzero(p, n);
}

void
secret_digest(const void *p, size_t n, unsigned char *out, size_t nbytes)
{
	crypto_generichash(out, nbytes, p, n, NULL, 0);
}

void
secret_keyed_digest(const unsigned char *key, const void *p, size_t n, unsigned char out[32])
{
	crypto_generichash(out, 32, p, n, key, 32);
}

void
secret_keyed_digest_parts(const unsigned char *key, const struct secret_part *parts, size_t n,
    unsigned char out[32])
{
	crypto_generichash_state st;
	size_t i;

	crypto_generichash_init(&st, key, 32, 32);
	for (i = 0; i < n; i++)
		crypto_generichash_update(&st, parts[i].p, parts[i].n);
	crypto_generichash_final(&st, out, 32);
	sodium_memzero(&st, sizeof(st));
}

void
secret_digest_parts(const struct secret_part *parts, size_t n, unsigned char *out, size_t nbytes)
{
	crypto_generichash_state st;
	size_t i;

	crypto_generichash_init(&st, NULL, 0, nbytes);
	for (i = 0; i < n; i++)
		crypto_generichash_update(&st, parts[i].p, parts[i].n);
	crypto_generichash_final(&st, out, nbytes);
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

#define SEAL_MAX	SECRET_SEAL_MAX
#define NPUB		crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define ABYTES		crypto_aead_xchacha20poly1305_ietf_ABYTES

/* Unpadded base64url of a sealed box. The box is ciphertext, so libsodium's
 * constant-time codec buys nothing here and costs several times a table lookup. */
static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static size_t
b64url_encode(const unsigned char *p, size_t n, char *out)
{
	size_t i, o = 0;
	uint32_t v;

	for (i = 0; i + 2 < n; i += 3) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		out[o++] = b64url[v >> 18];
		out[o++] = b64url[v >> 12 & 63];
		out[o++] = b64url[v >> 6 & 63];
		out[o++] = b64url[v & 63];
	}
	if (n - i == 1) {
		v = (uint32_t)p[i] << 16;
		out[o++] = b64url[v >> 18];
		out[o++] = b64url[v >> 12 & 63];
	} else if (n - i == 2) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
		out[o++] = b64url[v >> 18];
		out[o++] = b64url[v >> 12 & 63];
		out[o++] = b64url[v >> 6 & 63];
	}
	out[o] = '\0';
	return o;
}

static int
b64url_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '-' ? 62 : c == '_' ? 63 : -1;
}

/* Strict decoding: only the alphabet, and the unused bits of the last character zero,
 * so that one box has exactly one spelling (tombstones are keyed by the spelling). */
static long
b64url_decode(const char *in, size_t n, unsigned char *out, size_t outlen)
{
	uint32_t acc = 0;
	size_t i, o = 0;
	int bits = 0, v;

	if (n % 4 == 1 || n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0) > outlen)
		return -1;
	for (i = 0; i < n; i++) {
		if ((v = b64url_value((unsigned char)in[i])) < 0)
			return -1;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	return acc != 0 ? -1 : (long)o;
}

long
secret_b64url(const void *p, size_t n, char *out, size_t outlen)
{
	if (outlen < (n * 4 + 2) / 3 + 1)
		return -1;
	return (long)b64url_encode(p, n, out);
}

long
secret_unb64url(const char *in, size_t n, void *out, size_t outlen)
{
	return b64url_decode(in, n, out, outlen);
}

void
secret_sha256(const void *p, size_t n, unsigned char out[32])
{
	crypto_hash_sha256(out, p, n);
}

int
secret_seal(const unsigned char *key, const void *p, size_t n, const char *ad,
    char *out, size_t outlen)
{
	unsigned char box[NPUB + SEAL_MAX + ABYTES];
	unsigned long long clen;
	size_t total;

	if (n > SEAL_MAX)
		return -1;
	randombytes_buf(box, NPUB);
	crypto_aead_xchacha20poly1305_ietf_encrypt(box + NPUB, &clen, p, n,
	    (const unsigned char *)ad, strlen(ad), NULL, box, key);
	total = NPUB + (size_t)clen;
	if (outlen < (total * 4 + 2) / 3 + 1)
		return -1;
	b64url_encode(box, total, out);
	return 0;
}

long
secret_open(const unsigned char *key, const char *sealed, const char *ad, char *out, size_t outlen)
{
	unsigned char box[NPUB + SEAL_MAX + ABYTES];
	unsigned long long mlen;
	long blen;

	blen = b64url_decode(sealed, strlen(sealed), box, sizeof(box));
	if (blen < (long)(NPUB + ABYTES) || (size_t)blen - NPUB - ABYTES >= outlen)
		return -1;
	if (crypto_aead_xchacha20poly1305_ietf_decrypt((unsigned char *)out, &mlen, NULL,
	    box + NPUB, (size_t)blen - NPUB, (const unsigned char *)ad, strlen(ad), box, key) != 0)
		return -1;
	out[mlen] = '\0';
	return (long)mlen;
}
