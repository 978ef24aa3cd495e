/* bench/session.c — the cost of an Mcp-Session-Id: sealing one, as
 * initialize does, and opening one, as every later request of the session does,
 * with the gateway's own code (src/state/session.c, src/base/secret.c: libsodium's
 * XChaCha20-Poly1305 and BLAKE2b, jansson).
 *
 * Built on demand, never by "make" or "make check":
 *     make bench/session_bench && bench/session_bench [-n N] [-r REPS] [-u UPSTREAMS] [-t TOMBS]
 * bench/mcp.sh builds and runs it too.
 *
 * What is timed, per operation, exactly as src/mcp/mcp_session.c does it:
 *   seal  session_who + session_seal            (mcp_issue_session: the initialize answer;
 *         session_who as auth.c makes it, with the gateway's binding)
 *   open  session_who + session_open + clear    (mcp_check_session: a request carrying
 *         Mcp-Session-Id), with the tombstones of a real state file: the gateway's
 *         state_open() on a temporary file (a MAP_SHARED mapping, a robust
 *         process-shared mutex), in which TOMBS sessions have been ended (DELETE)
 *         beforehand, so that the buckets the open looks into are not empty.
 * and, to split the costs, the pieces: session_who alone, and session_open without
 * the tombstones (NULL: the blob alone; the API allows it).
 *
 * Each measurement is N operations in a row, repeated REPS times; the median and the
 * best of the repetitions are printed, as wall time (CLOCK_MONOTONIC) and as this
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID, which time spent preempted by other
 * processes does not inflate). The last line, "BENCH key=value ...", is for bench/mcp.sh
 * (medians of CPU time, in ns). */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "gateway.h"
#include "secret.h"
#include "session.h"
#include "state.h"

#define MAX_REPS 101
/* src/state/session.c's associated data (private there); only the secret_* rows use it */
#define SESSION_AD "mcpgate session v1"
/* A gateway's binding (struct config's bind: 16 bytes of a digest of its resource and
 * issuer), which every caller digest starts with */
static const unsigned char gw[SESSION_BIND_BYTES] = "https://gw/mcp\0";

enum { R_SEAL, R_OPEN, R_WHO, R_OPEN_NOTOMBS, R_SECRET_SEAL, R_SECRET_OPEN, R_RANDOM, R_N };

struct stat2 {
	double wall_med, wall_min, cpu_med, cpu_min;	/* ns per operation */
};

static struct stat2
summarize(double *wall, double *cpu, int reps)
{
	struct stat2 s;

	s.wall_med = bench_median(wall, reps);
	s.wall_min = wall[0];
	s.cpu_med = bench_median(cpu, reps);
	s.cpu_min = cpu[0];
	return s;
}

static void
print_row(const char *what, const struct stat2 *s)
{
	printf("%-44s %9.0f %9.0f %9.0f %9.0f\n", what, s->cpu_med, s->cpu_min, s->wall_med, s->wall_min);
}

static void
usage(void)
{
	fprintf(stderr, "usage: session_bench [-n N] [-r REPS] [-u UPSTREAMS] [-t TOMBS]\n"
	    "  -n  operations per repetition (default 20000)\n"
	    "  -r  repetitions (default 7, at most %d)\n"
	    "  -u  upstream session ids held in each session (default 0: what initialize seals today)\n"
	    "  -t  sessions ended (tombstoned) before measuring (default 1000)\n", MAX_REPS);
	exit(2);
}

int
main(int argc, char **argv)
{
	long n = 20000, tombs_n = 1000;
	int reps = 7, ups = 0, opt, r;
	long i;
	char path[256], lock[300], (*ids)[SESSION_ID_MAX], who[33], name[32], up[64];
	double wall[R_N][MAX_REPS], cpu[R_N][MAX_REPS];
	struct stat2 st[R_N];
	char box[SESSION_ID_MAX], out[4096], *plain;
	unsigned char nonce[24];
	json_t *j;
	size_t plen;
	volatile unsigned long sink = 0;
	struct state_layout lay;
	struct state *state = NULL;
	struct gw_error err = { GW_OK, 0, "" };
	struct session s, got;
	const unsigned char *key;
	void *tombs;
	int64_t now = (int64_t)time(NULL), w0, c0;
	size_t idlen;
	int fd;

	while ((opt = getopt(argc, argv, "n:r:u:t:")) != -1) {
		switch (opt) {
		case 'n': n = atol(optarg); break;
		case 'r': reps = atoi(optarg); break;
		case 'u': ups = atoi(optarg); break;
		case 't': tombs_n = atol(optarg); break;
		default: usage();
		}
	}
	if (n < 1 || reps < 1 || reps > MAX_REPS || ups < 0 || tombs_n < 0)
		usage();
	if (secret_init() < 0) {
		fprintf(stderr, "session_bench: libsodium failed to initialise\n");
		return 1;
	}

	/* The real thing: a state file with the tombstone region, opened by state_open. */
	snprintf(path, sizeof(path), "%s/mcpgate-session-bench.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if ((fd = mkstemp(path)) < 0) {
		perror(path);
		return 1;
	}
	close(fd);
	unlink(path);	/* state_open creates it with its own mode and checks */
	snprintf(lock, sizeof(lock), "%s.lock", path);
	memset(&lay, 0, sizeof(lay));
	lay.region[GW_REGION_TOMBS].def = &session_tombstones_def;
	if (state_open(path, &lay, NULL, &state, &err) < 0) {
		fprintf(stderr, "session_bench: state_open %s: %s\n", path, err.detail);
		return 1;
	}
	tombs = state_region(state, GW_REGION_TOMBS, NULL);
	key = state_session_key(state);

	memset(&s, 0, sizeof(s));
	snprintf(s.version, sizeof(s.version), "2025-11-25");
	s.exp = now + 86400;	/* session-ttl's default */
	s.upstreams = json_object();
	for (i = 0; i < ups; i++) {
		/* an upstream's Mcp-Session-Id: typically a UUID */
		snprintf(name, sizeof(name), "upstream-%ld", i);
		secret_random_hex(up, 18);
		json_object_set_new(s.upstreams, name, json_string(up));
	}
	if ((ids = malloc((size_t)n * sizeof(*ids))) == NULL) {
		fprintf(stderr, "session_bench: out of memory\n");
		return 1;
	}

	/* Ended sessions: the tombstones the opens look through (a DELETE each). They expire
	 * before the sessions timed below: a bucket that fills up (1000 tombstones in 512
	 * buckets of 8, now and then) raises its floor to its oldest, which would end every
	 * session expiring by then, the timed ones too, were they all to expire together. */
	session_who(gw, "bench-ended", "machine-acme", "", s.who);
	s.exp = now + 3600;
	for (i = 0; i < tombs_n; i++) {
		char id[SESSION_ID_MAX];

		if (session_seal(key, &s, id) < 0)
			return 1;
		session_end(tombs, id, s.exp, now);
	}
	s.exp = now + 86400;

	/* The plaintext session_seal makes (for the rows that time the crypto alone). */
	session_who(gw, "machine-acme", "machine-acme", "", s.who);
	j = json_pack("{s:i, s:s, s:s, s:I, s:O}", "v", 1, "pv", s.version, "w", s.who,
	    "x", (json_int_t)s.exp, "u", s.upstreams);
	plain = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (plain == NULL)
		return 1;
	plen = strlen(plain);

	/* Each row: N operations in a row, timed as a whole; r = -1 is a warm-up. */
#define TIMED(row, body) do {						\
		w0 = bench_ns(CLOCK_MONOTONIC);				\
		c0 = bench_ns(CLOCK_THREAD_CPUTIME_ID);			\
		for (i = 0; i < n; i++) { body; }			\
		cpu[row][k] = (double)(bench_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / (double)n; \
		wall[row][k] = (double)(bench_ns(CLOCK_MONOTONIC) - w0) / (double)n; \
	} while (0)
	for (r = -1; r < reps; r++) {
		int k = r < 0 ? 0 : r;

		/* The caller of the measured sessions: a client_credentials token's
		 * identity (subject = client id, no tenant). */
		TIMED(R_SEAL, {	/* issue_session */
			session_who(gw, "machine-acme", "machine-acme", "", s.who);
			if (session_seal(key, &s, ids[i]) < 0)
				return 1;
		});
		TIMED(R_OPEN, {	/* check_session, with the state file's tombstones */
			session_who(gw, "machine-acme", "machine-acme", "", who);
			if (session_open(key, tombs, ids[i], who, now, &got) < 0) {
				fprintf(stderr, "session_bench: a sealed session did not open\n");
				return 1;
			}
			sink += got.version[0];
			session_clear(&got);
		});
		TIMED(R_WHO, {
			session_who(gw, "machine-acme", "machine-acme", "", who);
			sink += who[0];
		});
		TIMED(R_OPEN_NOTOMBS, {
			if (session_open(key, NULL, ids[i], who, now, &got) < 0)
				return 1;
			session_clear(&got);
		});
		TIMED(R_SECRET_SEAL, {
			if (secret_seal(key, plain, plen, SESSION_AD, box, sizeof(box)) < 0)
				return 1;
		});
		TIMED(R_SECRET_OPEN, {
			if (secret_open(key, box, SESSION_AD, out, sizeof(out)) < 0)
				return 1;
		});
		TIMED(R_RANDOM, {
			secret_random_bytes(nonce, sizeof(nonce));
			sink += nonce[0];
		});
	}
	for (i = 0; i < R_N; i++)
		st[i] = summarize(wall[i], cpu[i], reps);
	idlen = strlen(ids[0]);

	printf("session seal + open, src/state/session.c: %ld operations x %d repetitions (+1 warm-up), "
	    "%d upstream session ids, %ld tombstones\n", n, reps, ups, tombs_n);
	printf("Mcp-Session-Id: %zu characters; sealed plaintext: %zu bytes\n", idlen, plen);
	printf("%-44s %9s %9s %9s %9s\n", "ns per operation", "cpu med", "cpu best", "wall med", "wall best");
	print_row("seal (session_who + session_seal)", &st[R_SEAL]);
	print_row("open (session_who + session_open)", &st[R_OPEN]);
	{
		struct stat2 both = { st[R_SEAL].wall_med + st[R_OPEN].wall_med, st[R_SEAL].wall_min + st[R_OPEN].wall_min,
		    st[R_SEAL].cpu_med + st[R_OPEN].cpu_med, st[R_SEAL].cpu_min + st[R_OPEN].cpu_min };

		print_row("seal + open", &both);
	}
	printf("pieces:\n");
	print_row("  session_who", &st[R_WHO]);
	print_row("  session_open, tombstones NULL", &st[R_OPEN_NOTOMBS]);
	print_row("  secret_seal of the plaintext", &st[R_SECRET_SEAL]);
	print_row("  secret_open of it", &st[R_SECRET_OPEN]);
	print_row("  secret_random_bytes(24) (the nonce)", &st[R_RANDOM]);
	printf("BENCH n=%ld reps=%d upstreams=%d tombs=%ld id_chars=%zu plain_bytes=%zu "
	    "seal_ns=%.0f open_ns=%.0f seal_open_ns=%.0f seal_open_best_ns=%.0f "
	    "seal_wall_ns=%.0f open_wall_ns=%.0f who_ns=%.0f open_notombs_ns=%.0f "
	    "secret_seal_ns=%.0f secret_open_ns=%.0f random_ns=%.0f\n",
	    n, reps, ups, tombs_n, idlen, plen,
	    st[R_SEAL].cpu_med, st[R_OPEN].cpu_med, st[R_SEAL].cpu_med + st[R_OPEN].cpu_med,
	    st[R_SEAL].cpu_min + st[R_OPEN].cpu_min, st[R_SEAL].wall_med, st[R_OPEN].wall_med,
	    st[R_WHO].cpu_med, st[R_OPEN_NOTOMBS].cpu_med, st[R_SECRET_SEAL].cpu_med,
	    st[R_SECRET_OPEN].cpu_med, st[R_RANDOM].cpu_med);

	free(plain);
	json_decref(s.upstreams);
	free(ids);
	state_close(state);
	unlink(path);
	unlink(lock);
	return sink == 0xdeadbeef;	/* never: keeps the loops from being optimised away */
}
