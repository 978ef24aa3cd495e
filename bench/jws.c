/* bench/jws.c — the cost of verifying a JWT access token at the gateway, with the
 * gateway's own code (src/base/jws.c over cjose and OpenSSL, src/access/jwt.c).
 *
 * Built on demand, never by "make" or "make check":
 *     make bench/jws_bench && bench/jws_bench [-n N] [-r REPS]
 * bench/jwt.sh builds and runs it too.
 *
 * What is timed, per token, for RS256 (RSA-2048), PS256 and ES256 (P-256) tokens made
 * here with cjose (claims as tests/idp issues them):
 *   sig   jws_parse + jws_verify: the signature check of a token never seen (a cache miss)
 *   jwt   jwt_verify: the same and the checks of the header and the claims, the keys
 *         taken from a worker's view of a JWK set held in memory (no fetch)
 * and the parse alone (jws_parse + jws_free), to split the costs; and per DPoP proof
 * (ES256 and PS256, the key in its header), dpop_check: the parse, the key imported
 * from the header, its thumbprint, the signature, the claims (src/access/dpop.c).
 *
 * Each measurement is N operations in a row, repeated REPS times; the median and the
 * best of the repetitions are printed, as this thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID: time spent preempted by other processes does not count).
 * The last line, "BENCH key=value ...", is for bench/jwt.sh (medians, in ns). */
#include "autoconf.h"

#include <cjose/cjose.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "dpop.h"
#include "jwks.h"
#include "jws.h"
#include "jwt.h"
#include "secret.h"

#define MAX_REPS 101
#define ISS "https://idp.example.com"
#define AUD "https://gw.example.com/mcp"

enum { K_RS256, K_PS256, K_ES256, K_N };
static const char *const names[K_N] = { "RS256", "PS256", "ES256" };

/* A JWS of payload signed with k, header h (stolen); NULL when cjose fails. */
static char *
sign_export(cjose_jwk_t *k, json_t *h, const char *payload)
{
	cjose_err err;
	cjose_jws_t *jws = cjose_jws_sign(k, (cjose_header_t *)h, (const uint8_t *)payload, strlen(payload), &err);
	const char *ser;
	char *out = NULL;

	json_decref(h);
	if (jws && cjose_jws_export(jws, &ser, &err))
		out = strdup(ser);
	cjose_jws_release(jws);
	return out;
}

/* A token of alg signed with k under kid. */
static char *
token(cjose_jwk_t *k, const char *alg, const char *kid)
{
	char payload[512];
	long now = (long)time(NULL);

	snprintf(payload, sizeof(payload), "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"sub\":\"machine-acme\","
	    "\"client_id\":\"machine-acme\",\"scope\":\"mcp:tools\",\"groups\":[\"engineering\",\"ops\"],"
	    "\"tenant\":\"acme\",\"jti\":\"bench-token-0123456789\",\"iat\":%ld,\"exp\":%ld}", now, now + 86400);
	return sign_export(k, json_pack("{s:s, s:s, s:s}", "alg", alg, "typ", "at+jwt", "kid", kid), payload);
}

/* A DPoP proof of alg signed with k, its public key in the header, for POST AUD. */
static char *
proof(cjose_jwk_t *k, const char *alg, const char *token_)
{
	char payload[512], ath[JWS_B64_SHA256];
	cjose_err err;
	char *text = cjose_jwk_to_json(k, false, &err);
	json_t *h = json_pack("{s:s, s:s, s:o}", "alg", alg, "typ", "dpop+jwt", "jwk", json_loads(text, 0, NULL));

	free(text);
	jws_sha256_b64(token_, strlen(token_), ath);
	snprintf(payload, sizeof(payload), "{\"htm\":\"POST\",\"htu\":\"" AUD "\",\"iat\":%ld,"
	    "\"jti\":\"bench-proof-0123456789\",\"ath\":\"%s\"}", (long)time(NULL), ath);
	return sign_export(k, h, payload);
}

/* "{...public JWK of k, kid...}" */
static char *
pub(cjose_jwk_t *k, const char *kid)
{
	cjose_err err;
	char *text = cjose_jwk_to_json(k, false, &err), *out;
	json_t *j = json_loads(text, 0, NULL);

	free(text);
	json_object_set_new(j, "kid", json_string(kid));
	json_object_set_new(j, "use", json_string("sig"));
	out = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	return out;
}

int
main(int argc, char **argv)
{
	long n = 2000, reps = 11;
	cjose_jwk_t *rsa, *ec;
	char *tok[K_N], *set, *rp, *ep, path[] = "/tmp/mcpgate-jws-bench-XXXXXX";
	double sig[K_N][MAX_REPS], full[K_N][MAX_REPS], parse[K_N][MAX_REPS], med[3][K_N];
	double dp[2][MAX_REPS], dmed[2];
	char *proofs[2];
	unsigned char dkey[32] = { 0 };
	struct dpop_proof pr;
	struct jws_keycache *kc = jws_keycache_new();	/* a worker's: the key imported once */
	struct jws_keys *keys;
	struct config *cfg = NULL;
	struct cfg_errors errs;
	struct jwks_view view = { 0 };
	struct jwks_env env = { NULL, NULL, NULL, NULL };
	struct gw_error gerr = { GW_OK, 0, "" };
	struct claims c;
	int opt, fd, k;
	long i, r;
	FILE *f;

	while ((opt = getopt(argc, argv, "n:r:")) != -1) {
		if (opt == 'n')
			n = strtol(optarg, NULL, 10);
		else if (opt == 'r')
			reps = strtol(optarg, NULL, 10);
		else {
			fprintf(stderr, "usage: %s [-n N] [-r REPS]\n", argv[0]);
			return 2;
		}
	}
	if (n < 1 || reps < 1 || reps > MAX_REPS) {
		fprintf(stderr, "N >= 1, 1 <= REPS <= %d\n", MAX_REPS);
		return 2;
	}
	secret_init();
	rsa = cjose_jwk_create_RSA_random(2048, NULL, 0, NULL);
	ec = cjose_jwk_create_EC_random(CJOSE_JWK_EC_P_256, NULL);
	tok[K_RS256] = token(rsa, "RS256", "r1");
	tok[K_PS256] = token(rsa, "PS256", "r1");
	tok[K_ES256] = token(ec, "ES256", "e1");
	rp = pub(rsa, "r1");
	ep = pub(ec, "e1");
	if (!tok[0] || !tok[1] || !tok[2] || !rp || !ep)
		return 1;
	{
		size_t len = strlen(rp) + strlen(ep) + 32;

		if ((set = malloc(len)) == NULL)
			return 1;
		snprintf(set, len, "{\"keys\":[%s,%s]}", rp, ep);
	}
	keys = jws_keys_parse(set, strlen(set), &gerr);
	/* jwt_verify's configuration: the keys from a file (read once into the view) */
	if (keys == NULL || (fd = mkstemp(path)) < 0 || (f = fdopen(fd, "w")) == NULL)
		return 1;
	fputs(set, f);
	fclose(f);
	{
		char conf[] = "/tmp/mcpgate-jws-bench-conf-XXXXXX", text[1024];

		if ((fd = mkstemp(conf)) < 0 || (f = fdopen(fd, "w")) == NULL)
			return 1;
		snprintf(text, sizeof(text), "[gateway]\nresource = " AUD "\n[auth]\nissuer = " ISS "\nverify = jwt\n"
		    "jwks-uri = %s\n", path);
		fputs(text, f);
		fclose(f);
		if (config_load(conf, &cfg, &errs) < 0) {
			fprintf(stderr, "config: %s\n", errs.n ? errs.err[0].detail : "?");
			return 1;
		}
		unlink(conf);
	}
	for (k = 0; k < K_N; k++) {
		const struct jwt_token t = { tok[k], strlen(tok[k]), "bench", (int64_t)time(NULL) * 1000 };
		struct jws *j;

		if (jws_parse(tok[k], strlen(tok[k]), JWS_ALGS_ALL, &j, &gerr) < 0 || jws_verify(j, keys) != JWS_OK ||
		    jwt_verify(&view, &env, cfg, &t, &c, &gerr) != 0) {
			fprintf(stderr, "%s: not verified (%s)\n", names[k], gerr.detail);
			return 1;
		}
		jws_free(j);
	}
	for (r = 0; r < reps; r++)
		for (k = 0; k < K_N; k++) {
			size_t len = strlen(tok[k]);
			int64_t t0, now_ms = (int64_t)time(NULL) * 1000;
			const struct jwt_token t = { tok[k], len, "bench", now_ms };
			struct jws *j;

			t0 = bench_cpu_ns();
			for (i = 0; i < n; i++) {
				jws_parse(tok[k], len, JWS_ALGS_ALL, &j, &gerr);
				jws_free(j);
			}
			parse[k][r] = (double)(bench_cpu_ns() - t0) / (double)n;
			t0 = bench_cpu_ns();
			for (i = 0; i < n; i++) {
				jws_parse(tok[k], len, JWS_ALGS_ALL, &j, &gerr);
				if (jws_verify(j, keys) != JWS_OK)
					abort();
				jws_free(j);
			}
			sig[k][r] = (double)(bench_cpu_ns() - t0) / (double)n;
			t0 = bench_cpu_ns();
			for (i = 0; i < n; i++)
				if (jwt_verify(&view, &env, cfg, &t, &c, &gerr) != 0)
					abort();
			full[k][r] = (double)(bench_cpu_ns() - t0) / (double)n;
		}
	proofs[0] = proof(ec, "ES256", tok[K_RS256]);
	proofs[1] = proof(rsa, "PS256", tok[K_RS256]);
	for (k = 0; k < 2; k++) {
		const struct dpop_req q = { proofs[k], "POST", tok[K_RS256], strlen(tok[K_RS256]),
		    (int64_t)time(NULL) * 1000 };

		if (proofs[k] == NULL || dpop_check(cfg, dkey, kc, &q, &pr, &gerr) < 0) {
			fprintf(stderr, "proof %d: not accepted (%s)\n", k, proofs[k] ? gerr.detail : "not made");
			return 1;
		}
	}
	for (r = 0; r < reps; r++)
		for (k = 0; k < 2; k++) {
			int64_t t0 = bench_cpu_ns(), now_ms = (int64_t)time(NULL) * 1000;
			const struct dpop_req q = { proofs[k], "POST", tok[K_RS256], strlen(tok[K_RS256]), now_ms };

			for (i = 0; i < n; i++)
				if (dpop_check(cfg, dkey, kc, &q, &pr, &gerr) != 0)
					abort();
			dp[k][r] = (double)(bench_cpu_ns() - t0) / (double)n;
		}
	for (k = 0; k < 2; k++) {
		qsort(dp[k], (size_t)reps, sizeof(double), bench_cmp_double);
		dmed[k] = dp[k][reps / 2];
	}
	printf("per token, CPU time, median (best) of %ld repetitions of %ld:\n", reps, n);
	for (k = 0; k < K_N; k++) {
		qsort(parse[k], (size_t)reps, sizeof(double), bench_cmp_double);
		qsort(sig[k], (size_t)reps, sizeof(double), bench_cmp_double);
		qsort(full[k], (size_t)reps, sizeof(double), bench_cmp_double);
		med[0][k] = parse[k][reps / 2];
		med[1][k] = sig[k][reps / 2];
		med[2][k] = full[k][reps / 2];
		printf("  %s  parse %6.1f µs (%.1f)  parse + signature %6.1f µs (%.1f)  jwt_verify %6.1f µs (%.1f)\n",
		    names[k], med[0][k] / 1000, parse[k][0] / 1000, med[1][k] / 1000, sig[k][0] / 1000,
		    med[2][k] / 1000, full[k][0] / 1000);
	}
	printf("per DPoP proof (dpop_check): ES256 %.1f µs (%.1f), PS256 %.1f µs (%.1f)\n", dmed[0] / 1000,
	    dp[0][0] / 1000, dmed[1] / 1000, dp[1][0] / 1000);
	printf("BENCH");
	for (k = 0; k < K_N; k++)
		printf(" parse_%s=%.0f sig_%s=%.0f jwt_%s=%.0f", names[k], med[0][k], names[k], med[1][k], names[k],
		    med[2][k]);
	printf(" proof_ES256=%.0f proof_PS256=%.0f\n", dmed[0], dmed[1]);
	free(proofs[0]);
	free(proofs[1]);
	jws_keycache_free(kc);
	unlink(path);
	jwks_view_free(&view);
	jws_keys_free(keys);
	config_unref(cfg);
	return 0;
}
