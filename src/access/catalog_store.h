/* catalog_store — the catalog kept in the host's state file: built by one worker of
 * the host at a time and kept for catalog-ttl, so that neither FastCGI workers nor CGI
 * runs fetch per request; each worker keeps the parsed copy of the generation it last
 * saw. An upstream that is down or slow is left out (its tools disappear, the others
 * stay) and the catalog fetched again sooner. */
#ifndef GW_CATALOG_STORE_H
#define GW_CATALOG_STORE_H

#include <jansson.h>
#include <stdint.h>

#include "catalog.h"
#include "catalog_fetch.h"
#include "config.h"
#include "metrics.h"
#include "state.h"
#include "upstream.h"

#define CATALOG_RETRY_MS	5000		/* refetch sooner while an upstream is left out */

/* The catalog's region of the state file (opaque; its init is a state_layout's). */
struct catalog_region;
extern const struct state_region catalog_region_def;

/* A worker's parsed copy. */
struct catalog_view {
	uint64_t generation;
	json_t *doc;
	int64_t local_until_ms;	/* a catalog too large for the state file: this worker's own */
	uint64_t serial;	/* bumped whenever doc changes: what was derived from it is stale */
	uint64_t key_of;	/* the serial of the configuration key was made for; 0: none */
	unsigned char key[16];	/* what the catalog depends on in that configuration */
};

void catalog_view_free(struct catalog_view *v);	/* keeps serial counting */

/* The catalog for cfg at now_ms (monotonic): from the state file while fresh, else
 * fetched from every upstream by this caller (or, while another worker fetches, the
 * previous one). A new reference, the caller's to release (json_decref): the view may
 * move on to a newer document while the caller still reads this one. Never NULL. A
 * fetch is by's (catalog_fetch_all). */
json_t *catalog_get(struct catalog_region *region, struct catalog_view *v, const struct catalog_fetcher *by,
    const struct config *cfg, int64_t now_ms);

/* The catalog a copy of the region holds (state_peek_region: a file read, not mapped),
 * when it was built for cfg's upstreams: a new document, or NULL with err (GW_ECONFIG:
 * none for cfg; GW_EINTERNAL: the copy is not a catalog region or does not parse). */
json_t *catalog_region_read(const void *copy, size_t size, const struct config *cfg, struct gw_error *err);

/* Which upstreams of the stored catalog were cut to their share (catalog_note; no
 * fetch, no parse), into out (CATALOG_NOTE_MAX). */
int catalog_region_note(struct catalog_region *region, char *out, size_t len);

/* An upstream said its lists changed: the stored catalog (and v's own, when it keeps
 * one) is fetched again by the next catalog_get, served as it is meanwhile. */
void catalog_region_expire(struct catalog_region *region, struct catalog_view *v);

/* 1 when an upstream was left out of the stored catalog (no fetch, no parse). */
int catalog_region_degraded(const struct catalog_region *region);

#endif
