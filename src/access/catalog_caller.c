/* catalog_caller — a worker's catalogs of callers (catalog_caller.h). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "catalog_caller.h"
#include "catalog_store.h"

struct caller_doc {
	char who[33];		/* "": a free slot */
	uint64_t base;		/* the view serial of the shared document it was made from */
	uint64_t cfg;		/* the configuration's serial */
	int64_t until_ms;	/* monotonic */
	uint64_t used;		/* the tick of its last use */
	size_t bytes;		/* its record texts (catalog_bytes) */
	json_t *doc;
};

struct catalog_callers {
	uint64_t tick;
	size_t bytes;		/* of every slot's doc */
	struct caller_doc slot[CATALOG_CALLERS];
};

static void
slot_clear(struct catalog_callers *cc, struct caller_doc *s)
{
	json_decref(s->doc);
	cc->bytes -= s->bytes;
	memset(s, 0, sizeof(*s));
}

struct catalog_callers *
catalog_callers_new(void)
{
	return calloc(1, sizeof(struct catalog_callers));
}

void
catalog_callers_free(struct catalog_callers *cc)
{
	size_t i;

	if (cc == NULL)
		return;
	for (i = 0; i < CATALOG_CALLERS; i++)
		slot_clear(cc, &cc->slot[i]);
	free(cc);
}

/* Room for bytes more within CATALOG_CALLERS_BYTES: the least recently used go, but
 * keep; 0, or -1 when there is none (bytes alone are over it). */
static int
make_room(struct catalog_callers *cc, const struct caller_doc *keep, size_t bytes)
{
	struct caller_doc *lru;
	size_t i;

	if (bytes > CATALOG_CALLERS_BYTES)
		return -1;
	while (cc->bytes + bytes > CATALOG_CALLERS_BYTES) {
		for (i = 0, lru = NULL; i < CATALOG_CALLERS; i++)
			if (&cc->slot[i] != keep && cc->slot[i].who[0] && (lru == NULL || cc->slot[i].used < lru->used))
				lru = &cc->slot[i];
		if (lru == NULL)
			return -1;
		slot_clear(cc, lru);
	}
	return 0;
}

/* who's slot, else the one to take for it: a free one, else the least recently used. */
static struct caller_doc *
slot_for(struct catalog_callers *cc, const char *who)
{
	struct caller_doc *s, *take = &cc->slot[0];
	size_t i;

	for (i = 0; i < CATALOG_CALLERS; i++) {
		s = &cc->slot[i];
		if (s->who[0] && strcmp(s->who, who) == 0)
			return s;
		if (take->who[0] && (!s->who[0] || s->used < take->used))
			take = s;
	}
	return take;
}

json_t *
catalog_caller_get(struct catalog_callers *cc, const struct catalog_fetcher *by, const struct config *cfg,
    json_t *shared, uint64_t base, int64_t now_ms)
{
	struct caller_doc *s;
	json_t *doc;
	size_t bytes;
	int64_t ttl_ms = cfg->catalog_ttl * 1000;

	if (cc == NULL || by->who == NULL || by->who[0] == '\0' || strlen(by->who) >= sizeof(s->who))
		return catalog_fetch_caller(by, cfg, now_ms, shared);
	s = slot_for(cc, by->who);
	if (s->who[0] && strcmp(s->who, by->who) == 0 && s->base == base && s->cfg == cfg->serial &&
	    cfg->serial != 0 && s->until_ms > now_ms && s->doc) {
		s->used = ++cc->tick;
		return json_incref(s->doc);
	}
	doc = catalog_fetch_caller(by, cfg, now_ms, shared);
	bytes = catalog_bytes(doc);
	slot_clear(cc, s);
	if (make_room(cc, s, bytes) < 0)
		return doc;	/* served, not kept */
	snprintf(s->who, sizeof(s->who), "%s", by->who);
	s->bytes = bytes;
	cc->bytes += s->bytes;
	s->base = base;
	s->cfg = cfg->serial;
	s->until_ms = now_ms + (catalog_degraded(doc) && ttl_ms > CATALOG_RETRY_MS ? CATALOG_RETRY_MS : ttl_ms);
	s->used = ++cc->tick;
	s->doc = json_incref(doc);
	return doc;
}
