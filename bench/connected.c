/* bench/connected.c — what a call with a connected account costs the gateway on a hit
 * ([upstream] credentials = user-oauth: the person's tokens at the upstream's own
 * authorization server, kept in the host's vault), with its own code: the pieces
 * connected_bearer runs when the person's entry is there and its access token is not
 * near its end (src/access/connected.c, src/state/vault.c, src/access/vault_seal.c:
 * libsodium's BLAKE2b and XChaCha20-Poly1305), in its order:
 *
 *   bind    the keys derived from the session key, once a request (upcred_bind: the
 *           credential cache's two and the vault's two)
 *   name    the entry's name: a keyed digest of the issuer, the person's subject and
 *           the upstream's section name (connected_name)
 *   get     the vault: the set's robust mutex, the entry found and marked used, its
 *           sealed value copied out (vault_get, in a private mapping of the region)
 *   open    the value unsealed and read strictly (vault_open, then vault_tokens_free)
 *   bearer  connected_bearer as a call runs it (its value buffer allocated and wiped,
 *           the token's copy handed over), and the caller's wipe and free of that copy
 *   hit     bind + bearer: what a call costs besides a static header
 *
 * The entry is what a connection leaves: an access token of TOKEN bytes, a 43-byte
 * refresh token (oidc-provider's opaque size), the granted scope, ends an hour away.
 *
 * Built on demand, never by "make" or "make check":
 *     make bench/connected_bench && bench/connected_bench [-n N] [-r REPS] [-t TOKEN_BYTES]
 * Each measurement is N operations in a row, repeated REPS times; the median and the
 * best of this thread's CPU time per operation are printed in ns (CLOCK_THREAD_CPUTIME_ID:
 * time preempted by other processes does not count). The last line, "BENCH key=value",
 * holds the medians. */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "clock.h"
#include "config.h"
#include "connected.h"
#include "log.h"
#include "secret.h"
#include "state.h"
#include "upcred.h"
#include "vault.h"
#include "vault_seal.h"

#define MAX_REPS 101
enum { R_BIND, R_NAME, R_GET, R_OPEN, R_BEARER, R_HIT, R_N };
static const char *const rows[R_N] = { "bind", "name", "get", "open", "bearer", "hit" };
static const char subject[] = "alice";	/* the person's subject at the issuer */

/* A gateway with one user-oauth upstream, "tracker"; its session key from a file. */
static struct config *
load(void)
{
	char conf[] = "/tmp/connected-bench-conf-XXXXXX", key[] = "/tmp/connected-bench-key-XXXXXX";
	unsigned char raw[32];
	struct cfg_errors errs;
	struct config *cfg = NULL;
	int cfd = mkstemp(conf), kfd = mkstemp(key), k;
	FILE *f = NULL, *kf = NULL;

	if (cfd < 0 || kfd < 0 || (f = fdopen(cfd, "w")) == NULL || (kf = fdopen(kfd, "w")) == NULL)
		goto out;
	secret_random_bytes(raw, sizeof(raw));
	for (k = 0; k < 32; k++)
		fprintf(kf, "%02x", raw[k]);
	fputc('\n', kf);
	fclose(kf);
	kf = NULL;
	fprintf(f, "[gateway]\nresource = https://gw.example.com/mcp\nname = gw\nversion = 1\n"
	    "session-key-file = %s\n"
	    "[auth]\nissuer = https://idp.example.com\nclient-id = gw\n"
	    "[upstream \"tracker\"]\nurl = https://mcp.tracker.example.net/mcp\nprefix = tr_\n"
	    "credentials = user-oauth\nclient-id = gw-at-tracker\nuser-scopes = mcp:tools\n", key);
	fclose(f);
	f = NULL;
	if (config_load(conf, &cfg, &errs) < 0) {
		for (size_t i = 0; i < errs.n; i++)
			fprintf(stderr, "connected_bench: %s\n", errs.err[i].detail);
		config_unref(cfg);
		cfg = NULL;
	}
out:
	if (f)
		fclose(f);
	if (kf)
		fclose(kf);
	if (cfd >= 0)
		unlink(conf);
	if (kfd >= 0)
		unlink(key);
	return cfg;
}

/* A visible-ASCII token of n bytes (what the vault takes: no '"', no '\', no blank). */
static char *
token_of(int n, char c)
{
	char *t = malloc((size_t)n + 1);

	if (t) {
		memset(t, c, (size_t)n);
		t[n] = '\0';
	}
	return t;
}

int
main(int argc, char **argv)
{
	long n = 20000, i;
	int reps = 7, tlen = 1024, opt, r, k;
	double v[R_N][MAX_REPS], med[R_N];
	unsigned char name[VAULT_NAME_BYTES];
	char *access, *refresh, *sealed, *out, *copy, *evicted;
	volatile unsigned long sink = 0;
	const struct cfg_upstream *up;
	struct vault_tokens t = { 0 }, got;
	struct gw_error err;
	struct config *cfg;
	struct upcred u;
	struct vault *vault;
	struct vault_value val;
	int64_t c0, now;
	size_t size;
	void *mem;

	while ((opt = getopt(argc, argv, "n:r:t:")) != -1) {
		switch (opt) {
		case 'n': n = atol(optarg); break;
		case 'r': reps = atoi(optarg); break;
		case 't': tlen = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: connected_bench [-n N] [-r REPS] [-t TOKEN_BYTES]\n");
			return 2;
		}
	}
	if (n < 1 || reps < 1 || reps > MAX_REPS || tlen < 16 || tlen > VAULT_TOKEN_MAX || secret_init() < 0)
		return 2;
	log_set_level(GW_LOG_ERR);
	if ((cfg = load()) == NULL || (up = config_upstream(cfg, "tracker")) == NULL) {
		fprintf(stderr, "connected_bench: the configuration does not load\n");
		return 1;
	}
	access = token_of(tlen, 'a');
	refresh = token_of(43, 'r');
	sealed = malloc(VAULT_VALUE_MAX);
	out = malloc(VAULT_VALUE_MAX);
	evicted = malloc(VAULT_VALUE_MAX);
	size = vault_region_size(1024);	/* the default vault-entries */
	mem = calloc(1, size);
	if (!access || !refresh || !sealed || !out || !evicted || !mem)
		return 1;
	state_region_make(&vault_region_def, mem, size, 0);
	if ((vault = vault_attach(mem, size)) == NULL)
		return 1;

	/* a request's caller, as h_mcp fills it in for an upstream reached as the caller */
	u = (struct upcred){ .cfg = cfg, .key = cfg->session_key, .vault = vault, .subject_sub = subject };
	upcred_bind(&u);

	/* the entry as the connect page leaves it (connected_keep) */
	now = clock_wall_ms();
	t.access_token = access;
	t.refresh_token = refresh;
	t.scope = "mcp:tools";
	t.access_until_ms = now + 3600 * 1000;
	t.obtained_ms = now;
	snprintf(t.who, sizeof(t.who), "%s", "0123456789abcdef0123456789abcdef");
	snprintf(t.upstream, sizeof(t.upstream), "%s", "tracker");
	connected_name(&u, subject, up, name);
	val = (struct vault_value){ sealed, vault_tokens_until(&t) };
	if (vault_seal(&u.vault_keys, name, &t, sealed, VAULT_VALUE_MAX) < 0 ||
	    vault_put(vault, name, now, &val, evicted, VAULT_VALUE_MAX) != 0) {
		fprintf(stderr, "connected_bench: the entry cannot be stored\n");
		return 1;
	}

	for (r = 0; r < reps; r++) {
		c0 = bench_cpu_ns();
		for (i = 0; i < n; i++) {
			upcred_bind(&u);
			sink += u.vault_keys.name[0];
		}
		v[R_BIND][r] = (double)(bench_cpu_ns() - c0) / (double)n;
		c0 = bench_cpu_ns();
		for (i = 0; i < n; i++) {
			connected_name(&u, subject, up, name);
			sink += name[0];
		}
		v[R_NAME][r] = (double)(bench_cpu_ns() - c0) / (double)n;
		c0 = bench_cpu_ns();
		for (i = 0; i < n; i++)
			sink += vault_get(vault, name, now, out, VAULT_VALUE_MAX) == VAULT_HIT;
		v[R_GET][r] = (double)(bench_cpu_ns() - c0) / (double)n;
		c0 = bench_cpu_ns();
		for (i = 0; i < n; i++) {
			if (vault_open(&u.vault_keys, name, out, &got) < 0)
				return 1;
			sink += (unsigned long)strlen(got.access_token);
			vault_tokens_free(&got);
		}
		v[R_OPEN][r] = (double)(bench_cpu_ns() - c0) / (double)n;
		c0 = bench_cpu_ns();
		for (i = 0; i < n; i++) {
			if (connected_bearer(&u, up, 0, &copy, &err) < 0)
				return 1;
			sink += (unsigned long)copy[0];
			secret_wipe(copy, strlen(copy));
			free(copy);
		}
		v[R_BEARER][r] = (double)(bench_cpu_ns() - c0) / (double)n;
		c0 = bench_cpu_ns();
		for (i = 0; i < n; i++) {
			upcred_bind(&u);
			if (connected_bearer(&u, up, 0, &copy, &err) < 0)
				return 1;
			sink += (unsigned long)copy[0];
			secret_wipe(copy, strlen(copy));
			free(copy);
		}
		v[R_HIT][r] = (double)(bench_cpu_ns() - c0) / (double)n;
	}
	if (connected_bearer(&u, up, 0, &copy, &err) < 0 || strcmp(copy, access) != 0) {
		fprintf(stderr, "connected_bench: connected_bearer did not hand over the stored token\n");
		return 1;
	}
	free(copy);
	printf("connected_bench: %ld operations x %d repetitions, a %d-byte access token (sealed: %zu "
	    "characters); ns of CPU per operation\n", n, reps, tlen, strlen(sealed));
	printf("%-8s %10s %10s\n", "", "median", "best");
	for (k = 0; k < R_N; k++) {
		med[k] = bench_median(v[k], reps);
		printf("%-8s %10.0f %10.0f\n", rows[k], med[k], v[k][0]);
	}
	printf("BENCH token_bytes=%d sealed_chars=%zu bind_ns=%.0f name_ns=%.0f get_ns=%.0f open_ns=%.0f "
	    "bearer_ns=%.0f hit_ns=%.0f sink=%lu\n", tlen, strlen(sealed), med[R_BIND], med[R_NAME], med[R_GET],
	    med[R_OPEN], med[R_BEARER], med[R_HIT], sink & 1);
	upcred_clear(&u);
	vault_detach(vault);
	config_unref(cfg);
	free(mem);
	free(evicted);
	free(out);
	free(sealed);
	free(refresh);
	free(access);
	return 0;
}
