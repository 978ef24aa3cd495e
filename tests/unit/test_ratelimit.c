/* Unit tests: GCRA rate-limit buckets — time is passed in (ns) and moved by addition. */
#include "autoconf.h"

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ratelimit.h"
#include "secret.h"
#include "state.h"
#include "tap.h"

#define S	1000000000LL

static struct rate
rate(long n, long per, long burst)
{
	struct rate r = { n, per, burst };

	return r;
}

/* How many of `tries` requests at one instant pass a fresh bucket. */
static long
passes_at_once(const struct rate *r, long tries, int64_t now, int64_t *tat)
{
	struct rl_verdict v;
	long i, n = 0;

	for (i = 0; i < tries; i++) {
		*tat = ratelimit_gcra(*tat, r, now, &v);
		n += !v.limited;
	}
	return n;
}

static void
test_window(void)
{
	struct rate r = rate(10, 60, 0);
	struct rl_verdict v;
	int64_t tat = 0, now = 1000 * S;

	is_int(passes_at_once(&r, 40, now, &tat), 10, "10/60: 10 of 40 at once pass");
	tat = ratelimit_gcra(tat, &r, now, &v);
	ok(v.limited && v.retry_s == 6, "the 11th: refused, retry after 6 s (one interval), got %lld",
	    (long long)v.retry_s);
	is_int(v.remaining, 0, "nothing remains");
	is_int(v.reset_s, 60, "the bucket is idle in 60 s");
	tat = ratelimit_gcra(tat, &r, now + 6 * S - 1, &v);
	ok(v.limited && v.retry_s == 1, "1 ns early: still refused, retry after 1 s (rounded up, >= 1)");
	tat = ratelimit_gcra(tat, &r, now + 6 * S, &v);
	ok(!v.limited && v.remaining == 0, "after one interval: one more passes, none remain");
	tat = ratelimit_gcra(tat, &r, now + 6 * S, &v);
	ok(v.limited, "and the next is refused again");
	tat = ratelimit_gcra(tat, &r, now + 200 * S, &v);
	ok(!v.limited && v.remaining == 9, "idle for a window: full again (9 remain after this one), got %lld",
	    (long long)v.remaining);
}

static void
test_first_remaining(void)
{
	struct rate r = rate(120, 60, 0);
	struct rl_verdict v;

	ratelimit_gcra(0, &r, 5 * S, &v);
	ok(!v.limited && v.remaining == 119 && v.reset_s == 1, "120/60 from idle: 119 remain, idle again in 1 s "
	    "(got %lld, %lld)", (long long)v.remaining, (long long)v.reset_s);
}

static void
test_burst(void)
{
	struct rate r = rate(10, 60, 5);
	int64_t tat = 0;

	is_int(passes_at_once(&r, 40, 7 * S, &tat), 15, "10/60 burst 5: 15 of 40 at once pass");
	is_int(passes_at_once(&r, 40, 7 * S + 60 * S, &tat), 10, "a window later: 10 more");
}

static void
test_steady_rate(void)
{
	struct rate r = rate(3, 1, 0);
	struct rl_verdict v;
	int64_t tat = 0, now = 50 * S, t;
	long n = 0;

	for (t = 0; t < 10 * S; t += S / 100) {	/* 100 requests a second for 10 s */
		tat = ratelimit_gcra(tat, &r, now + t, &v);
		n += !v.limited;
	}
	ok(n >= 30 && n <= 33, "3/1 under 100/s for 10 s: about 30 pass (3 at once, then 3 a second), got %ld", n);
}

static void
test_clock_back(void)
{
	struct rate r = rate(2, 10, 0);
	struct rl_verdict v;
	int64_t tat = 0;

	passes_at_once(&r, 2, 9000 * S, &tat);
	/* The clock goes back an hour: the debt is at most one full bucket's worth. */
	tat = ratelimit_gcra(tat, &r, 9000 * S - 3600 * S, &v);
	ok(v.limited && v.retry_s <= 10, "clock back an hour: refused for at most one window, got %lld s",
	    (long long)v.retry_s);
	tat = ratelimit_gcra(tat, &r, 9000 * S - 3600 * S + 10 * S, &v);
	ok(!v.limited, "one window later (on the new clock) it passes");
	tat = ratelimit_gcra(INT64_MAX, &r, 5 * S, &v);
	ok(v.limited && v.retry_s <= 10, "a garbage TAT (INT64_MAX) refuses for at most one window");
	tat = ratelimit_gcra(-5, &r, 5 * S, &v);
	ok(!v.limited, "a negative TAT reads as idle");
}

static void
test_extremes(void)
{
	struct rate big = rate(RATE_N_MAX, 1, 0), slow = rate(1, RATE_PER_MAX, RATE_N_MAX);
	struct rl_verdict v;
	int64_t tat = 0;
	long n;

	is_int(passes_at_once(&big, 1000, 3 * S, &tat), 1000, "1e9/1: a thousand at once pass");
	tat = ratelimit_gcra(0, &slow, 3 * S, &v);
	ok(!v.limited && v.remaining > 0 && v.reset_s > 0, "1 per 366 days burst 1e9: no overflow (passes, "
	    "remaining %lld, reset %lld)", (long long)v.remaining, (long long)v.reset_s);
	tat = 0;
	n = passes_at_once(&slow, 100, 3 * S, &tat);
	ok(n > 50 && n < 100, "its tolerance saturates (at 73 years' worth) instead of overflowing: %ld pass", n);
}

/* --- the shared region ------------------------------------------------------------- */

static void *region;
static struct ratelimit *rl;

static void
key(const char *name, unsigned char k[RL_KEY_BYTES])
{
	static const unsigned char dk[32] = { 7 };
	unsigned char d[32];

	secret_keyed_digest(dk, name, strlen(name), d);
	memcpy(k, d, RL_KEY_BYTES);
}

static void
test_region(void)
{
	size_t size = ratelimit_region_def.size;
	struct rate r = rate(3, 60, 0);
	struct rl_verdict v;
	unsigned char a[RL_KEY_BYTES], b[RL_KEY_BYTES];
	int i, n = 0;

	region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	state_region_make(&ratelimit_region_def, region, size, 1);
	ok(ratelimit_attach(region, size - 1) == NULL, "a region of another size is refused");
	rl = ratelimit_attach(region, size);
	ok(rl != NULL, "attached");
	key("a", a);
	key("b", b);
	for (i = 0; i < 5; i++)
		n += ratelimit_take(rl, a, &r, 10 * S, &v) == 0 && !v.limited;
	is_int(n, 3, "key a: 3 of 5 pass");
	ok(ratelimit_take(rl, b, &r, 10 * S, &v) == 0 && !v.limited, "key b has its own bucket");
	is_int((long long)ratelimit_count(rl, 10 * S), 2, "two buckets in use");
	is_int((long long)ratelimit_count(rl, 100 * S), 0, "none after a window: idle buckets hold nothing");
}

/* Eight processes share the buckets: exactly the limit passes. */
static void
test_processes(void)
{
	struct rate r = rate(10, 60, 0);
	unsigned char k[RL_KEY_BYTES];
	int *passed = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pids[8];
	int i, ws;

	key("shared", k);
	for (i = 0; i < 8; i++)
		if ((pids[i] = fork()) == 0) {
			struct rl_verdict v;
			int j;

			for (j = 0; j < 5; j++)
				if (ratelimit_take(rl, k, &r, 500 * S, &v) == 0 && !v.limited)
					__atomic_add_fetch(passed, 1, __ATOMIC_RELAXED);
			_exit(0);
		}
	for (i = 0; i < 8; i++)
		waitpid(pids[i], &ws, 0);
	is_int(*passed, 10, "8 processes x 5 requests under 10/60: exactly 10 pass");
}

/* A process killed while it holds a stripe blocks nobody. */
static void
test_killed_holder(void)
{
	struct rate r = rate(1, 60, 0);
	struct rl_verdict v;
	unsigned char k[RL_KEY_BYTES];
	pid_t pid;
	int ws;

	key("held", k);
	ratelimit_take(rl, k, &r, 900 * S, &v);
	if ((pid = fork()) == 0) {
		/* every stripe's lock: the key's is among them */
		struct { uint32_t magic, n; } *h = region;
		char *s = (char *)region + 8;
		size_t stripe = (ratelimit_region_def.size - 8) / h->n;
		uint32_t i;

		for (i = 0; i < h->n; i++)
			state_lock((pthread_mutex_t *)(void *)(s + i * stripe));
		raise(SIGKILL);
	}
	waitpid(pid, &ws, 0);
	ok(ratelimit_take(rl, k, &r, 900 * S, &v) == 0, "after the holder died: decided");
	ok(!v.limited, "its stripe was cleared (suspect): the key starts afresh");
}

static void
test_overwritten(void)
{
	struct rate r = rate(1, 60, 0);
	struct rl_verdict v;
	unsigned char k[RL_KEY_BYTES];

	key("x", k);
	memset(region, 0xa5, 64);
	ok(ratelimit_take(rl, k, &r, S, &v) == -1, "a region written over: unusable (-1), no crash");
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	secret_init();
	run_case(test_window);
	run_case(test_first_remaining);
	run_case(test_burst);
	run_case(test_steady_rate);
	run_case(test_clock_back);
	run_case(test_extremes);
	run_case(test_region);
	run_case(test_processes);
	run_case(test_killed_holder);
	run_case(test_overwritten);
	ratelimit_detach(rl);
	return done_testing();
}
