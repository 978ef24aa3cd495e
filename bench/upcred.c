/* bench/upcred.c — what a cache hit of an upstream's obtained token costs
 * (credentials = exchange, client-credentials, id-jag), with the gateway's own code: the
 * pieces upcred_bearer runs on a hit, in its order (src/access/upcred.c,
 * src/state/credcache.c, src/base/secret.c: libsodium's BLAKE2b and XChaCha20-Poly1305):
 *
 *   bind   the two keys derived from the session key, once a request (upcred_bind)
 *   name   the entry's name: a keyed digest of what is asked and the caller's token
 *   get    the host's cache: the set's robust mutex, the entry found, its value copied
 *          (credcache_get on a hit, in a private mapping of the region)
 *   open   the value unsealed (secret_open of a TOKEN-byte token, its name as the
 *          associated data)
 *   hit    all of it, and the copy handed to the upstream client (strdup, wipe, free)
 *
 * Built on demand, never by "make" or "make check":
 *     make bench/upcred_bench && bench/upcred_bench [-n N] [-r REPS] [-t TOKEN_BYTES]
 * Each measurement is N operations in a row, repeated REPS times; the median and the
 * best of this thread's CPU time per operation are printed in ns (CLOCK_THREAD_CPUTIME_ID:
 * time preempted by other processes does not count). The last line, "BENCH key=value",
 * holds the medians. */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "credcache.h"
#include "secret.h"
#include "state.h"

#define MAX_REPS 101
enum { R_BIND, R_NAME, R_GET, R_OPEN, R_HIT, R_N };
static const char *const rows[R_N] = { "bind", "name", "get", "open", "hit" };

int
main(int argc, char **argv)
{
	long n = 20000, i;
	int reps = 7, tlen = 1024, opt, r, k;
	double v[R_N][MAX_REPS], med[R_N];
	unsigned char session_key[32], seal_key[32], name_key[32], key[CREDCACHE_KEY_BYTES];
	char *token, *sealed, *value, *plain, *copy, ad[2 * CREDCACHE_KEY_BYTES + 1];
	const int64_t now = 1700000000000LL;
	volatile unsigned long sink = 0;
	struct credcache *cc;
	void *mem;
	int64_t c0;

	while ((opt = getopt(argc, argv, "n:r:t:")) != -1) {
		switch (opt) {
		case 'n': n = atol(optarg); break;
		case 'r': reps = atoi(optarg); break;
		case 't': tlen = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: upcred_bench [-n N] [-r REPS] [-t TOKEN_BYTES]\n");
			return 2;
		}
	}
	if (n < 1 || reps < 1 || reps > MAX_REPS || tlen < 16 || tlen > 4096 || secret_init() < 0)
		return 2;
	token = malloc((size_t)tlen + 1);
	sealed = malloc(CREDCACHE_VALUE_MAX);
	value = malloc(CREDCACHE_VALUE_MAX);
	plain = malloc(4097);
	mem = calloc(1, credcache_region_def.size);
	if (!token || !sealed || !value || !plain || !mem)
		return 1;
	state_region_make(&credcache_region_def, mem, credcache_region_def.size, 0);
	cc = mem;
	memset(token, 'a', (size_t)tlen);	/* a token of that size (visible ASCII, as the parser wants) */
	token[tlen] = '\0';
	secret_random_bytes(session_key, sizeof(session_key));

	/* the entry as a first call leaves it */
	secret_keyed_digest(session_key, "mcpgate upstream credential seal v1", 35, seal_key);
	secret_keyed_digest(session_key, "mcpgate upstream credential name v1", 35, name_key);
	{
		struct secret_part parts[] = { { "exchange", 9 }, { "https://idp.example.com", 24 }, { "up", 3 },
		    { "https://up.example.com/mcp", 27 }, { "", 1 }, { "", 1 }, { "", 1 }, { "gateway", 8 },
		    { "caller-token-of-about-fifty-bytes-0123456789abcdef", 50 } };

		for (r = 0; r < reps; r++) {
			c0 = bench_cpu_ns();
			for (i = 0; i < n; i++) {
				secret_keyed_digest(session_key, "mcpgate upstream credential seal v1", 35, seal_key);
				secret_keyed_digest(session_key, "mcpgate upstream credential name v1", 35, name_key);
			}
			v[R_BIND][r] = (double)(bench_cpu_ns() - c0) / (double)n;
			c0 = bench_cpu_ns();
			for (i = 0; i < n; i++)
				secret_keyed_digest_parts(name_key, parts, sizeof(parts) / sizeof(parts[0]), key);
			v[R_NAME][r] = (double)(bench_cpu_ns() - c0) / (double)n;
		}
	}
	for (k = 0; k < CREDCACHE_KEY_BYTES; k++)
		snprintf(ad + 2 * k, 3, "%02x", key[k]);
	if (secret_seal(seal_key, token, (size_t)tlen, ad, sealed, CREDCACHE_VALUE_MAX) < 0 ||
	    credcache_put(cc, key, now, now + 3600000, sealed) < 0)
		return 1;
	for (r = 0; r < reps; r++) {
		c0 = bench_cpu_ns();
		for (i = 0; i < n; i++)
			sink += credcache_get(cc, key, now, 2000, value, CREDCACHE_VALUE_MAX) == CC_HIT;
		v[R_GET][r] = (double)(bench_cpu_ns() - c0) / (double)n;
		c0 = bench_cpu_ns();
		for (i = 0; i < n; i++)
			sink += (unsigned long)secret_open(seal_key, value, ad, plain, 4097);
		v[R_OPEN][r] = (double)(bench_cpu_ns() - c0) / (double)n;
		c0 = bench_cpu_ns();
		for (i = 0; i < n; i++) {
			struct secret_part parts[] = { { "exchange", 9 }, { "caller-token", 12 } };
			unsigned char kk[CREDCACHE_KEY_BYTES];
			long got;

			secret_keyed_digest(session_key, "mcpgate upstream credential seal v1", 35, seal_key);
			secret_keyed_digest(session_key, "mcpgate upstream credential name v1", 35, name_key);
			secret_keyed_digest_parts(name_key, parts, 2, kk);
			sink += kk[0];
			if (credcache_get(cc, key, now, 2000, value, CREDCACHE_VALUE_MAX) != CC_HIT ||
			    (got = secret_open(seal_key, value, ad, plain, 4097)) != tlen ||
			    (copy = strdup(plain)) == NULL)
				return 1;
			secret_wipe(plain, (size_t)got);
			secret_wipe(copy, (size_t)got);
			free(copy);
		}
		v[R_HIT][r] = (double)(bench_cpu_ns() - c0) / (double)n;
	}
	printf("upcred_bench: %ld operations x %d repetitions, a %d-byte token; ns of CPU per operation\n", n, reps, tlen);
	printf("%-8s %10s %10s\n", "", "median", "best");
	for (k = 0; k < R_N; k++) {
		med[k] = bench_median(v[k], reps);
		printf("%-8s %10.0f %10.0f\n", rows[k], med[k], v[k][0]);
	}
	printf("BENCH bind_ns=%.0f name_ns=%.0f get_ns=%.0f open_ns=%.0f hit_ns=%.0f sink=%lu\n", med[R_BIND],
	    med[R_NAME], med[R_GET], med[R_OPEN], med[R_HIT], sink & 1);
	free(mem);
	free(plain);
	free(value);
	free(sealed);
	free(token);
	return 0;
}
