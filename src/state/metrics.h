/* metrics — what the requests of a host observed, in a region of the state file that
 * every process of the host writes (docs/ARCHITECTURE.md §7, §9): the counters and
 * histograms that /metrics shows ([metrics]), and the last state of each dependency
 * that /mcp/health shows (the introspection endpoint, the issuer's JWK set, Redis, each
 * upstream). So one
 * scrape or one health request of any process, FastCGI or CGI, answers for the host.
 *
 * Counting is one relaxed atomic add per count: no lock is ever held, so a process
 * that dies while counting blocks nobody and loses at most that count. Names
 * (tools, upstreams) have fixed slots, claimed once per name under a robust mutex and
 * published with a release store: a process killed while claiming leaves an
 * unpublished slot the next claimer takes. The slots are few (METRICS_TOOLS,
 * METRICS_UPSTREAMS): names beyond them, or that are not plain printable ASCII, are
 * counted under "other", so the label space is bounded whatever the catalog holds.
 *
 * Nothing read from the region is trusted: the magic is checked on every operation (a
 * region written over counts against the mapping, state_failed, and counts nothing),
 * names are rendered only when they are printable ASCII within their slot, a
 * dependency's state outside its values is unknown and a time ahead of now is not
 * shown, details are cut to printable ASCII.
 *
 * Routes, methods and rate-limit classes are counted by the caller's index, with the
 * label value that index stands for: the first count of an index writes its label
 * (once, like a name slot), so a scrape needs no table of the callers'.
 *
 * Whether counting is on is the caller's to decide ([metrics] in the configuration);
 * dependencies are always observed. `now` is passed in (seconds, wall clock). */
#ifndef GW_METRICS_H
#define GW_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "state.h"

#define METRICS_ROUTES		16	/* routes, by the router's index */
#define METRICS_METHODS		32	/* JSON-RPC methods, by the method table's index */
#define METRICS_CLASSES		8	/* rate-limit classes, by the limiter's index */
#define METRICS_TOOLS		256	/* tools with a slot of their own; more are "other" */
#define METRICS_UPSTREAMS	64	/* upstreams with a slot of their own; more are "other" */
#define METRICS_NAME_MAX	128	/* a slot's name, its NUL included */
#define METRICS_DETAIL_MAX	128	/* a dependency's last failure, its NUL included */
#define METRICS_RENDER_MAX	(1u << 20)	/* the text of one scrape */

/* A tools/call's outcome: passed on, refused by the policy or a limit, failed, or
 * refused for arguments that do not satisfy the tool's inputSchema. */
enum metrics_outcome { METRICS_ALLOWED, METRICS_DENIED, METRICS_ERROR, METRICS_INVALID, METRICS_HELD, METRICS_OUTCOMES };

/* How an upstream whose token the gateway obtains (credentials = exchange,
 * client-credentials, id-jag) got it: from the host's cache, obtained at the token
 * endpoint (refreshed: in place of one that lapsed in the cache), refused there, or not
 * at all (the token endpoint failed). */
enum metrics_cred { METRICS_CRED_CACHED, METRICS_CRED_OBTAINED, METRICS_CRED_REFRESHED, METRICS_CRED_REFUSED,
	METRICS_CRED_FAILED, METRICS_CRED_CONNECTED, METRICS_CRED_DISCONNECTED, METRICS_CRED_DROPPED,
	METRICS_CRED_OUTCOMES };

/* Dependencies with one record each (upstreams have theirs by name). */
enum metrics_dep { METRICS_DEP_INTROSPECTION, METRICS_DEP_REDIS, METRICS_DEP_JWKS, METRICS_DEP_EXCHANGE, METRICS_DEPS };

/* What a JWT access token's verification here came to: accepted, refused (its
 * signature, its claims, a key the issuer does not publish), or error (no keys to verify
 * it with: the JWK set could not be had). */
enum metrics_jwt { METRICS_JWT_ACCEPTED, METRICS_JWT_REFUSED, METRICS_JWT_ERROR, METRICS_JWT_OUTCOMES };

enum metrics_state { METRICS_UNKNOWN = 0, METRICS_UP = 1, METRICS_DOWN = 2 };

struct metrics;

extern const struct state_region metrics_region_def;
/* NULL when region is not of metrics_region_def.size. */
struct metrics *metrics_attach(void *region, size_t size);
void metrics_detach(struct metrics *m);

/* Counts; m NULL counts nothing. route < METRICS_ROUTES, method < METRICS_METHODS,
 * cls < METRICS_CLASSES (others are dropped), each with its label value (printable
 * ASCII; the first count of an index writes it); status an HTTP status (one the table
 * lacks counts as "other"). tool NULL, or a name without a slot to be had: "other". */
void metrics_request(struct metrics *m, unsigned route, const char *label, int status);
void metrics_rpc(struct metrics *m, unsigned method, const char *label);
void metrics_tool(struct metrics *m, const char *tool, enum metrics_outcome o);
void metrics_token_cache(struct metrics *m, int hit);
void metrics_introspection(struct metrics *m, int64_t us, int ok);
void metrics_jwt(struct metrics *m, enum metrics_jwt o);
void metrics_upstream(struct metrics *m, const char *upstream, int64_t us, int ok);
void metrics_credential(struct metrics *m, const char *upstream, enum metrics_cred o);
void metrics_limited(struct metrics *m, unsigned cls, const char *label);

/* What a request observed of a dependency: up (ok) or down, with why (may be NULL;
 * a short text fit for a public page: what happened, not where). Only a change of
 * state is written (one load otherwise), with now as its start. */
void metrics_observe(struct metrics *m, enum metrics_dep dep, int ok, int64_t now_s, const char *detail);
void metrics_observe_upstream(struct metrics *m, const char *upstream, int ok, int64_t now_s,
    const char *detail);
/* The last state observed (enum metrics_state), since when (*since_s; 0 when not to be
 * shown) and why when down (detail, n bytes, "" when none). Reads only: an upstream
 * never observed is unknown. now_s bounds what is believed of since. */
int metrics_dep_state(struct metrics *m, enum metrics_dep dep, int64_t now_s, int64_t *since_s,
    char *detail, size_t n);
int metrics_upstream_state(struct metrics *m, const char *upstream, int64_t now_s, int64_t *since_s,
    char *detail, size_t n);

/* The counters as Prometheus text (exposition format 0.0.4) appended to out, now_s
 * for the dependencies' gauges. 0, or -1 when out is full. */
int metrics_render(struct metrics *m, int64_t now_s, struct buf *out);

#endif
