/* catalog — the tools of every upstream as the gateway exposes them: names mapped with
 * the upstream's prefix, a description on every tool, sorted by name. Built by one
 * worker of the host at a time and kept in the host's state file for catalog-ttl, so
 * that neither FastCGI workers nor CGI runs fetch per request; each worker keeps the
 * parsed copy of the generation it last saw. An upstream that is down or slow is left
 * out (its tools disappear, the others stay) and retried sooner. */
#ifndef GW_CATALOG_H
#define GW_CATALOG_H

#include <jansson.h>
#include <stdint.h>

#include "config.h"
#include "upstream.h"

#define CATALOG_MAX_BYTES	(4u << 20)	/* the serialized catalog in the state file */
#define CATALOG_MAX_PAGES	64		/* tools/list pages followed per upstream */
#define CATALOG_RETRY_MS	5000		/* refetch sooner while an upstream is left out */

/* The catalog document:
 *   {"tools":  [exposed tool records, sorted by name],
 *    "routes": [[upstream section name, the tool's name upstream], ...]  (same order),
 *    "upstreams": {name: {"ok": true|false, "tools": n, "reason": "..."}}} */

size_t catalog_region_size(void);
void catalog_region_init(void *region, size_t size, int shared);

/* A worker's parsed copy. */
struct catalog_view {
	uint64_t generation;
	json_t *doc;
	int64_t local_until_ms;	/* a catalog too large for the state file: this worker's own */
};

void catalog_view_free(struct catalog_view *v);

/* The catalog for cfg at now_ms (monotonic): from the state file while fresh, else
 * fetched from every upstream by this caller (or, while another worker fetches, the
 * previous one). Borrowed; valid until the next call with v. Never NULL. */
json_t *catalog_get(void *region, struct catalog_view *v, struct upstream_pool *pool,
    const struct config *cfg, int64_t now_ms);

/* Builds the document from each upstream's tools/list results: lists[i] is the array
 * of tools of cfg->upstreams[i], or NULL with reasons[i] when it failed. Pure. */
json_t *catalog_build(const struct config *cfg, json_t *const *lists, const char *const *reasons);

/* The index of the exposed tool name in doc's sorted tools, or -1. */
long catalog_find(json_t *doc, const char *name);

/* 1 when an upstream was left out of doc; of the stored catalog (no fetch, no parse). */
int catalog_degraded(json_t *doc);
int catalog_region_degraded(void *region);

#endif
