/* ratelimit — rate-limit buckets shared by every process of a host, in a region of the
 * state file, decided by GCRA (the generic cell rate algorithm) in integer nanoseconds.
 *
 * A bucket is one number, its theoretical arrival time (TAT): a limit of n per `per`
 * seconds spaces requests T = per/n apart and tolerates tau = (n + burst - 1) * T of
 * them ahead of schedule, so n + burst pass at once from idle, then one every T. A
 * request at `now` passes when TAT <= now + tau, and moves TAT to max(TAT, now) + T.
 * A bucket whose TAT has passed holds nothing (it reads as a fresh one): such buckets
 * are recycled freely, so the region has a fixed size with no expiry sweep. When every
 * way of a set is in use, the bucket nearest to idle gives way (its key is then
 * limited as if fresh: a loss of at most one window's debt for that key).
 *
 * Keys are keyed digests (RL_KEY_BYTES) made by the caller: never a token, address or
 * name. `now` is the host's monotonic clock in ns, passed in; a TAT further ahead than
 * one tolerance (a clock that went back, a file from before a reboot, garbage) is
 * clamped, so nothing read from the file can refuse a key for longer than one window.
 * A process dying while it holds a stripe leaves its robust mutex to the next one,
 * which clears that stripe's buckets (suspect, and at worst a window's debt). */
#ifndef GW_RATELIMIT_H
#define GW_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "state.h"

#define RL_KEY_BYTES	16
#define RL_BUCKETS	8192	/* keys tracked at once per host (about 200 KiB) */

struct rl_verdict {
	int limited;		/* 1: refused */
	int64_t retry_s;	/* when limited: whole seconds (>= 1) until one more passes */
	int64_t remaining;	/* requests that would pass at once now, after this decision */
	int64_t reset_s;	/* whole seconds until the bucket is idle (full) again */
};

/* A rate in a clock's units (unit: ticks per second; ns here, us in Redis): the
 * interval T between requests and the tolerance tau, saturated at max. */
struct rl_params {
	int64_t t, tau;
};
void ratelimit_params(const struct rate *r, int64_t unit, int64_t max, struct rl_params *p);
/* The verdict of a decision from how far ahead of now the bucket's TAT was before it
 * (clamped, >= 0) and whether it refused: what a store that decided elsewhere (Redis)
 * reports. */
void ratelimit_verdict(int64_t ahead, const struct rl_params *p, int64_t unit, int limited,
    struct rl_verdict *v);

/* The decision, pure: tat is the bucket's TAT (0 for a fresh one), r an enabled rate
 * (config_rate_on). Fills v; returns the bucket's new TAT (tat unchanged when limited,
 * save for the clamp). */
int64_t ratelimit_gcra(int64_t tat, const struct rate *r, int64_t now_ns, struct rl_verdict *v);

/* One bucket of a decision over several: its key and rate in, its verdict out. */
struct rl_take {
	unsigned char key[RL_KEY_BYTES];
	struct rate r;
	struct rl_verdict v;
};

struct ratelimit;

extern const struct state_region ratelimit_region_def;
/* The region's geometry comes from size, checked once. NULL when it is not ours. */
struct ratelimit *ratelimit_attach(void *region, size_t size);
void ratelimit_detach(struct ratelimit *rl);

/* One request against key's bucket under rate r: 0 with v (passed or limited), or -1
 * when the region cannot be used now (a lock not had, a region written over). */
int ratelimit_take(struct ratelimit *rl, const unsigned char key[RL_KEY_BYTES], const struct rate *r,
    int64_t now_ns, struct rl_verdict *v);
/* t[0..n) in order until one refuses (the earlier ones stay charged): the index of
 * the refusal, n when all passed, or -1 when the region cannot be used now. */
int ratelimit_take_all(struct ratelimit *rl, struct rl_take *t, size_t n, int64_t now_ns);
/* Buckets not idle at now (tests, stats). */
size_t ratelimit_count(struct ratelimit *rl, int64_t now_ns);

#endif
