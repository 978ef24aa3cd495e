/* catalog_fetch — the catalog made from what every upstream offers now: each is asked
 * for its capabilities and for the lists they announce (following their pages), one
 * after the other, and the document built from the answers (catalog_build_bound). */
#ifndef GW_CATALOG_FETCH_H
#define GW_CATALOG_FETCH_H

#include <jansson.h>
#include <stdint.h>

#include "catalog.h"
#include "config.h"
#include "metrics.h"
#include "upstream.h"

#define CATALOG_MAX_PAGES	64		/* list pages followed per upstream and kind */

/* Who fetches: the worker's upstream pool; for the upstreams whose tokens the gateway
 * obtains, the caller whose request needs the catalog (its credentials and the digest
 * its pool sessions go by; cred NULL: no caller, and such an upstream is left out), and
 * the gateway's own token for an upstream reached as the caller whose
 * catalog-credentials say so (own; NULL: none); where answers are observed (m, may be
 * NULL). */
struct catalog_fetcher {
	struct upstream_pool *pool;
	const struct upstream_cred *cred;
	const struct upstream_cred *own;
	const char *who;
	struct metrics *m;
};

/* The catalog of cfg's upstreams at now_ms (monotonic), prev the one before (may be
 * NULL: what a down upstream held stays its). An upstream that fails is left out, named
 * in the log and in its status; by->m is told whether each answered. Never NULL:
 * without memory, the empty catalog. */
json_t *catalog_fetch_all(const struct catalog_fetcher *by, const struct config *cfg, int64_t now_ms, json_t *prev);
/* An upstream with catalog = per-caller is in that catalog by name alone (its status
 * "perCaller", no records): its records are each caller's. The catalog as by's caller
 * sees it: shared (catalog_fetch_all's, borrowed) with the records every such upstream
 * lists for that caller, fetched now with its credentials. A new reference, never
 * NULL. */
json_t *catalog_fetch_caller(const struct catalog_fetcher *by, const struct config *cfg, int64_t now_ms,
    json_t *shared);

#endif
