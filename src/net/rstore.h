/* rstore — the scale-out store: what hosts share through one Redis ([limits] store =
 * redis://… over TCP, or unix://… over a unix socket when Redis runs on the same host),
 * spoken with hiredis. Only this file includes <hiredis/hiredis.h>.
 *
 * Records (keys named mcpgate:<kind>:<32 hex digits> of a keyed digest the caller
 * makes with the configuration's shared key: never a token, an address or a session id):
 *   rl  a rate-limit bucket: its theoretical arrival time in microseconds of the Redis
 *       server's clock (TIME), so host clocks never matter, as 8 bytes (a little-endian
 *       double; any other value is a full bucket); expires when idle
 *   ts  a tombstone: the session it names was ended (DELETE); expires with the session
 *   tc  with [auth] shared-cache: a token's claims, sealed under the shared key (auth.c)
 *       with their own end, which the reader checks; expires with the token or cache-ttl
 *   dp  a DPoP proof seen (its key and jti, dpop.c): expires when the proof would be
 *       stale anyway
 *   uc  with [auth] shared-cache: a token the gateway obtained for an upstream (for a
 *       caller's token, or its own), sealed under the shared key with its own end
 *       (upcred.c); expires with it
 *   va  a person's connection at a user-oauth upstream: the vault's entry, sealed as in
 *       the state file (vault_seal.c); expires with its refresh token (connected.c)
 *   vc  a host refreshes that connection: expires when the refresh would have ended
 *   co  a connect page's ticket or state was used: expires with it
 *   ma  a client's answer to a question the gateway asked it during a call (an
 *       upstream's input_required, asked of an older client), sealed under the session
 *       key; taken once by the call that waits for it; expires with the call's time
 * A decision over several buckets is one server-side script (one round trip, atomic):
 * one write and one read on the connection.
 *
 * One connection per worker thread, opened on first use. Every operation is bounded
 * by redis-timeout-ms (connect, then each exchange). A failure closes the connection
 * and starts an outage: for a second nothing is tried (the operation fails at once),
 * then the next operation connects again; once one worker of the process finds Redis
 * back, the others try at once. The first failure of an outage is logged
 * once per process (outage is shared by its workers), and so is the recovery. */
#ifndef GW_RSTORE_H
#define GW_RSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "metrics.h"
#include "ratelimit.h"

#define RSTORE_KEY_BYTES	16
#define RSTORE_RETRY_MS		1000	/* after a failure, nothing is tried for this long */

struct rstore;

/* outage: a process-wide word the workers share (0 = up), for logging once. */
struct rstore *rstore_new(int *outage);
void rstore_free(struct rstore *rs);
/* Where the operations of the request under way tell whether Redis answered
 * (metrics_observe, for /mcp/health); NULL: nowhere. */
void rstore_observe(struct rstore *rs, struct metrics *m);

/* A tombstone looked for in the round trip of a rate-limit decision: its key (the
 * digest of an RS_TOMB record), and whether it exists (1, 0; -1 when not answered). */
struct rs_probe {
	const unsigned char *key;	/* RSTORE_KEY_BYTES */
	int seen;			/* out */
};

/* The rate-limit decision of t[0..n) (n <= 8) in order, in one script: each bucket
 * charged until one refuses. The index of the refusal, n when all passed, -1 when
 * Redis cannot answer now. Verdicts are filled as ratelimit_take_all's. probe (may be
 * NULL): a tombstone the same round trip looks for (n == 0 asks nothing: its seen is
 * -1). now_ms is the local monotonic clock (for the outage's pause only). */
int rstore_take_all(struct rstore *rs, const struct config *cfg, struct rl_take *t, size_t n,
    struct rs_probe *probe, int64_t now_ms);

/* Records other than buckets: a value (visible ASCII) under a key of a kind. */
enum rs_kind {
	RS_TOMB = 1,	/* ts: an ended session (value "1") */
	RS_TOKEN,	/* tc: an accepted token's claims, sealed (auth.c) */
	RS_DPOP,	/* dp: a DPoP proof seen (value "1") */
	RS_UPCRED,	/* uc: a token obtained for an upstream, sealed (upcred.c) */
	RS_VAULT,	/* va: a person's connection at an upstream, sealed (connected.c) */
	RS_VAULT_CLAIM,	/* vc: a host refreshes that connection (value "1") */
	RS_ONCE,	/* co: a connect ticket or state used (value "1"; connect_page.c) */
	RS_ANSWER,	/* ma: a client's answer to the gateway's question, sealed (mcp_ask.c) */
	RS_LOGLEVEL,	/* ll: the log level a session set (mcp_level.c) */
	RS_SUBS,	/* su: the resources a session subscribed to, a set (mcp_subs.c) */
};
/* Such a record's key: its kind and the caller's keyed digest (mcpgate:<kind>:<hex>). */
struct rs_key {
	enum rs_kind kind;
	const unsigned char *digest;	/* RSTORE_KEY_BYTES */
};
/* Sets k to value until ttl_ms from now: 0, or -1. */
int rstore_put(struct rstore *rs, const struct config *cfg, const struct rs_key *k, const char *value,
    int64_t ttl_ms, int64_t now_ms);
/* 1 with the value in out (NUL-terminated), 0 when there is none (or none that fits,
 * or one with a NUL), -1 when Redis cannot answer now. */
int rstore_get(struct rstore *rs, const struct config *cfg, const struct rs_key *k, char *out, size_t outlen,
    int64_t now_ms);
/* Sets k until ttl_ms from now unless it exists (SET NX): 1 when it was set, 0 when
 * it existed, -1 when Redis cannot answer now. */
int rstore_once(struct rstore *rs, const struct config *cfg, const struct rs_key *k, int64_t ttl_ms,
    int64_t now_ms);
/* Removes k: 0 (whether it was there or not), or -1. */
int rstore_del(struct rstore *rs, const struct config *cfg, const struct rs_key *k, int64_t now_ms);
/* A member of a set record, added or removed. */
struct rs_member {
	const char *value;
	int on;			/* added (1) or removed (0) */
	int64_t ttl_ms;		/* the set's life from then on */
};
/* m->value added to the set k or removed from it: 0, or -1. */
int rstore_member(struct rstore *rs, const struct config *cfg, const struct rs_key *k, const struct rs_member *m,
    int64_t now_ms);
/* The members of the set k, sorted, one a line, into out (NUL-terminated; "" when
 * none): 0, or -1 when they do not fit (or one holds a newline or a NUL) or Redis
 * cannot answer now. */
int rstore_members(struct rstore *rs, const struct config *cfg, const struct rs_key *k, char *out, size_t outlen,
    int64_t now_ms);
/* 1 when k exists, 0 when not, -1 when Redis cannot answer now. */
int rstore_has(struct rstore *rs, const struct config *cfg, const struct rs_key *k, int64_t now_ms);

/* Round trips this connection made (benchmarks, tests). */
uint64_t rstore_round_trips(const struct rstore *rs);

#endif
