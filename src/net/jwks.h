/* jwks — the issuer's signing keys as a host keeps them (docs/ARCHITECTURE.md §5): a
 * JWK set fetched from [auth] jwks-uri, or from the jwks_uri of the issuer's metadata,
 * or read from the file jwks-uri names; mirrored in a region of the state file with a
 * generation number, so that one fetch serves every process of the host. The set is
 * fresh for jwks-ttl; a token naming a key the set lacks has it fetched again at once,
 * at most once per jwks-min-interval for the whole host (a flood of forged kids costs
 * the issuer nothing), and concurrent requests wait for that one fetch. Not fetched on
 * schedule within 10 s of a failure; served stale while the issuer fails, for at most
 * jwks-max-age since they were fetched (then no keys: a 500, never a 401). A document
 * that parses as a JWK set replaces the mirror, one without a usable key too (the
 * issuer withdrew its keys: every JWT is refused until it publishes one); anything
 * else (an HTTP error, not a JWK set) leaves the keys held as they are. Each worker keeps the set
 * parsed (struct jwks_view), looks at the mirror at most once a second (and at once for
 * an unknown kid), and parses again only when the generation changes: a token never
 * seen before costs no lock shared by the host. When the region cannot be used (a lock
 * not had, a broken mapping) the view keeps its own. */
#ifndef GW_JWKS_H
#define GW_JWKS_H

#include <stdint.h>

#include "config.h"
#include "err.h"
#include "introspect.h"
#include "jws.h"
#include "metrics.h"
#include "state.h"

#define JWKS_SOURCE_MAX		1100	/* "issuer " + an issuer, or jwks-uri */
#define JWKS_RETRY_MS		(10 * 1000)	/* after a failure, wait before the schedule tries again */
#define JWKS_LOOK_MS		1000	/* a worker's keys are taken as they are for this long */

struct jwks_region;	/* a state-file region (opaque) */
extern const struct state_region jwks_region_def;

/* A worker's parsed copy of the set. Zeroed to start; jwks_view_free when done. */
struct jwks_view {
	char source[JWKS_SOURCE_MAX];	/* where its keys come from ("": none yet) */
	uint64_t gen;			/* the mirror's generation it was parsed from */
	struct jws_keys *keys;		/* (a set without a usable key: the issuer publishes none) */
	int64_t keys_ms;		/* when they were fetched: past jwks-max-age they verify nothing */
	int64_t checked_ms;		/* when it last looked at the mirror */
	/* Without a usable region, the view's own schedule: */
	int64_t fetched_ms, failed_ms, forced_ms;
};
void jwks_view_free(struct jwks_view *v);

/* Where the keys are had: the worker's connection to the authorization server, the
 * state file's metadata mirror (for jwks_uri) and the keys' own region (NULL, or a
 * region that cannot be used: the view keeps its own); and where each fetch's outcome
 * is recorded for /mcp/health (METRICS_DEP_JWKS; may be NULL). */
struct jwks_env {
	struct introspect *ix;
	struct asmeta_region *asmeta;
	struct jwks_region *region;
	struct metrics *metrics;
};

/* A request for the keys: whose (the request's id, for the log), when (wall clock),
 * and whether its token names a key the set lacks. */
struct jwks_ask {
	const char *rid;
	int64_t now_ms;
	int unknown_kid;
};

/* The keys to verify a token with (*keys borrowed from v, valid until its next call;
 * possibly none usable). ask->unknown_kid: fetch again unless the host did within
 * jwks-min-interval (or a fetch is under way: wait for it). 0, or -1 with err when
 * there are no keys (never fetched, and the fetch fails; or fetched longer than
 * jwks-max-age ago, and none since). */
int jwks_keys(struct jwks_view *v, const struct jwks_env *env, const struct config *cfg,
    const struct jwks_ask *ask, const struct jws_keys **keys, struct gw_error *err);

#endif
