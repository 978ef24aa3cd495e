/* catalog_caller — the catalogs of callers, for the upstreams whose lists vary by person
 * ([upstream] catalog = per-caller): the host's catalog with what those upstreams list
 * for one caller (catalog_fetch_caller), kept by a worker for catalog-ttl per caller
 * digest, never given to another. A worker keeps CATALOG_CALLERS of them, of
 * CATALOG_CALLERS_BYTES of records in all, the least recently used going first; a CGI
 * run, none (each request fetches its caller's). */
#ifndef GW_CATALOG_CALLER_H
#define GW_CATALOG_CALLER_H

#include <jansson.h>
#include <stdint.h>

#include "catalog_fetch.h"
#include "config.h"

#define CATALOG_CALLERS	32		/* the callers' catalogs a worker keeps */
#define CATALOG_CALLERS_BYTES	(16u << 20)	/* … and their record texts, at most */

struct catalog_callers;

struct catalog_callers *catalog_callers_new(void);
void catalog_callers_free(struct catalog_callers *cc);

/* The catalog as by->who sees it (a caller digest, session_who's): from cc while it was
 * made from the same shared document (the worker's view serial base) and configuration
 * within catalog-ttl (CATALOG_RETRY_MS when an upstream was left out), else made now and
 * kept. cc NULL: made now, kept nowhere. A new reference, never NULL. */
json_t *catalog_caller_get(struct catalog_callers *cc, const struct catalog_fetcher *by, const struct config *cfg,
    json_t *shared, uint64_t base, int64_t now_ms);

#endif
