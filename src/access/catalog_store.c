/* catalog_store — the catalog kept in the host's state file and each worker's view of
 * it (catalog_store.h). */
#include "autoconf.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "catalog_fetch.h"
#include "catalog_store.h"
#include "log.h"
#include "secret.h"
#include "state.h"

#define CATALOG_MAGIC	0x43415433u	/* "CAT3" */

struct catalog_region {
	pthread_mutex_t lock;
	uint32_t magic;
	uint64_t generation;		/* bumped on every store */
	int64_t fresh_until_ms;		/* monotonic; 0 = never built */
	int64_t claim_until_ms;		/* a worker is fetching until then */
	unsigned char key[16];		/* digest of the upstream configuration it was built for */
	int degraded;			/* an upstream was left out */
	char note[CATALOG_NOTE_MAX];	/* the upstreams cut to their share, for /mcp/health ("" = none) */
	uint32_t lens[CATALOG_PARTS];	/* catalog_pack's parts, one after the other in data */
	char data[CATALOG_MAX_BYTES];
};

/* Only the head is zeroed: the 4 MiB of data are read through lens, never past them. */
const struct state_region catalog_region_def = {
	"catalog", sizeof(struct catalog_region), CATALOG_MAGIC, offsetof(struct catalog_region, magic),
	offsetof(struct catalog_region, lock), offsetof(struct catalog_region, data), NULL, NULL, NULL,
	offsetof(struct catalog_region, generation),
};

/* Takes the region's lock: 0, or -1 when it cannot be had or the region is no longer
 * ours (a broken mapping reads as zeros): not locked then. */
static int
region_lock(struct catalog_region *c)
{
	return state_region_lock(&c->lock, &c->magic, CATALOG_MAGIC) < 0 ? -1 : 0;
}

void
catalog_view_free(struct catalog_view *v)
{
	uint64_t serial = v->serial;

	json_decref(v->doc);
	memset(v, 0, sizeof(*v));
	v->serial = serial + 1;
}

/* What the catalog depends on in the configuration: upstream names, URLs, prefixes and
 * what the pins make of their records (pinning.h: the modes, and the pins themselves),
 * digested one upstream after the other (each digest takes the one before). */
static void
config_key(const struct config *cfg, unsigned char key[16])
{
	unsigned char acc[32];
	size_t i;

	memcpy(acc, cfg->pins_digest, sizeof(acc));
	for (i = 0; i < cfg->n_upstreams; i++) {
		const struct cfg_upstream *u = &cfg->upstreams[i];
		const char *url = u->url ? u->url : "", *prefix = u->prefix ? u->prefix : "";
		const long pinning[4] = { u->pin, u->new_tools, u->hygiene, u->max_description };
		const struct secret_part parts[5] = { { acc, sizeof(acc) }, { u->s.name, strlen(u->s.name) + 1 },
		    { url, strlen(url) + 1 }, { prefix, strlen(prefix) + 1 },	/* each with its NUL */
		    { pinning, sizeof(pinning) } };

		secret_digest_parts(parts, 5, acc, sizeof(acc));
	}
	memcpy(key, acc, 16);
}

int
catalog_region_note(struct catalog_region *c, char *out, size_t len)
{
	out[0] = '\0';
	if (c == NULL || region_lock(c) < 0)
		return 0;
	if (c->fresh_until_ms > 0) {
		memcpy(out, c->note, len < sizeof(c->note) ? len : sizeof(c->note));	/* shared: bounded */
		out[len - 1] = '\0';
	}
	state_unlock(&c->lock);
	return out[0] != '\0';
}

void
catalog_region_expire(struct catalog_region *c, struct catalog_view *v)
{
	if (c && region_lock(c) == 0) {
		if (c->fresh_until_ms > 1)
			c->fresh_until_ms = 1;	/* stale, still usable while another worker fetches */
		state_unlock(&c->lock);
	}
	if (v && v->local_until_ms > 0)
		v->local_until_ms = 1;
}

int
catalog_region_degraded(const struct catalog_region *c)
{

	return c && c->magic == CATALOG_MAGIC && c->fresh_until_ms > 0 && c->degraded;
}

static int64_t
longest_timeout(const struct config *cfg)
{
	int64_t t = 0;
	size_t i;

	for (i = 0; i < cfg->n_upstreams; i++)
		if (cfg->upstreams[i].timeout_ms > t)
			t = cfg->upstreams[i].timeout_ms;
	return t * CATALOG_MAX_PAGES * CATALOG_NKINDS;
}

static void
view_set(struct catalog_view *v, json_t *doc, uint64_t generation)
{
	json_decref(v->doc);
	v->doc = doc;
	v->generation = generation;
	v->serial++;
}

/* A freshly fetched doc for v: a doc equal to the one v holds is dropped, so that what
 * was derived from v (its serial: the cached list pages) stays, and nothing is parsed
 * or allocated again for a refresh that found no change. */
static void
view_refresh(struct catalog_view *v, json_t *doc, uint64_t generation)
{
	if (v->doc != NULL && doc != NULL && catalog_same(v->doc, doc)) {
		json_decref(doc);
		v->generation = generation;
	} else {
		view_set(v, doc, generation);
	}
}

/* The length of the stored parts lens (read from shared memory: checked before use),
 * or CATALOG_MAX_BYTES + 1 when they do not fit. */
static size_t
parts_len(const uint32_t lens[CATALOG_PARTS])
{
	size_t len = 0;
	int i;

	for (i = 0; i < CATALOG_PARTS; i++) {
		if (lens[i] > CATALOG_MAX_BYTES - len)
			return CATALOG_MAX_BYTES + 1;
		len += lens[i];
	}
	return len;
}

static void
store(struct catalog_region *c, const unsigned char key[16], json_t *doc, int64_t now_ms,
    int64_t ttl_ms, struct catalog_view *v)
{
	uint32_t lens[CATALOG_PARTS];
	struct buf b;
	int packed, locked;
	int64_t until = now_ms + (catalog_degraded(doc) && ttl_ms > CATALOG_RETRY_MS ? CATALOG_RETRY_MS : ttl_ms);

	buf_init(&b, CATALOG_MAX_BYTES);
	packed = catalog_pack(doc, &b, lens) == 0;
	locked = region_lock(c) == 0;
	if (locked)
		c->claim_until_ms = 0;
	if (locked && packed) {
		/* The same catalog again: fresh for longer, the same generation, so that no
		 * worker parses it again. */
		if (c->fresh_until_ms == 0 || memcmp(c->lens, lens, sizeof(lens)) != 0 ||
		    memcmp(c->key, key, 16) != 0 || memcmp(c->data, b.data, b.len) != 0) {
			/* Unusable while it changes: a process that dies in the middle (the
			 * robust lock lets the next one in) leaves it to be fetched again,
			 * never texts that do not match their lengths. */
			c->fresh_until_ms = 0;
			memcpy(c->data, b.data, b.len);
			memcpy(c->lens, lens, sizeof(lens));
			memcpy(c->key, key, 16);
			c->degraded = catalog_degraded(doc);
			catalog_note(doc, c->note, sizeof(c->note));
			c->generation++;
		}
		c->fresh_until_ms = until;
		view_refresh(v, doc, c->generation);
		v->local_until_ms = 0;
	} else {
		if (locked)
			log_err(NULL, "catalog: over the %u bytes of the state file; kept per worker",
			    CATALOG_MAX_BYTES);
		else	/* the state file's region cannot be used now: ours for a moment */
			until = now_ms + (ttl_ms > CATALOG_RETRY_MS ? CATALOG_RETRY_MS : ttl_ms);
		view_refresh(v, doc, 0);
		v->local_until_ms = until;
	}
	if (locked)
		state_unlock(&c->lock);
	buf_free(&b);
}

json_t *
catalog_region_read(const void *copy, size_t size, const struct config *cfg, struct gw_error *err)
{
	const struct catalog_region *c = copy;
	unsigned char key[16];
	json_t *doc;

	if (size != sizeof(*c) || c->magic != CATALOG_MAGIC) {
		gw_error_set(err, GW_EINTERNAL, "the state file's catalog region is not one");
		return NULL;
	}
	config_key(cfg, key);
	if (c->fresh_until_ms == 0 || c->lens[0] == 0 || parts_len(c->lens) > CATALOG_MAX_BYTES) {
		gw_error_set(err, GW_ECONFIG, "the state file holds no catalog yet");
		return NULL;
	}
	if (memcmp(c->key, key, sizeof(key)) != 0) {
		gw_error_set(err, GW_ECONFIG, "the state file's catalog was fetched for other upstreams (names, URLs or prefixes) or pins");
		return NULL;
	}
	if ((doc = catalog_unpack(c->data, c->lens)) == NULL || !catalog_index_ok(doc)) {
		json_decref(doc);
		gw_error_set(err, GW_EINTERNAL, "the state file's catalog does not parse");
		return NULL;
	}
	return doc;
}

json_t *
catalog_get(struct catalog_region *region, struct catalog_view *v, const struct catalog_fetcher *by,
    const struct config *cfg, int64_t now_ms)
{
	struct catalog_region *c = region;
	const unsigned char *key = v->key;
	uint32_t lens[CATALOG_PARTS];
	json_t *doc = NULL;
	size_t len = 0;
	uint64_t gen = 0;
	int ours, fresh, usable;

	if (v->local_until_ms > now_ms && v->doc)
		return json_incref(v->doc);
	if (v->key_of != cfg->serial || cfg->serial == 0) {	/* once a configuration, not a request */
		config_key(cfg, v->key);
		v->key_of = cfg->serial;
	}
	if (c == NULL) {	/* no shared state: this worker's own */
		if (v->doc == NULL || v->local_until_ms <= now_ms) {
			view_refresh(v, catalog_fetch_all(by, cfg, now_ms, v->doc), 0);
			v->local_until_ms = now_ms + cfg->catalog_ttl * 1000;
		}
		return json_incref(v->doc);
	}
	/* Decide and copy under one hold of the lock (catalog_unpack copies, it does not
	 * parse). A region that cannot be used now (see store) gives this worker its own
	 * for a moment. */
	if (region_lock(c) < 0) {
		if (v->doc == NULL)
			view_set(v, catalog_fetch_all(by, cfg, now_ms, v->doc), 0);
		v->local_until_ms = now_ms + CATALOG_RETRY_MS;
		return json_incref(v->doc);
	}
	memcpy(lens, c->lens, sizeof(lens));	/* from shared memory: checked before use */
	len = parts_len(lens);
	usable = c->fresh_until_ms > 0 && memcmp(c->key, key, 16) == 0 && len <= CATALOG_MAX_BYTES;
	fresh = usable && c->fresh_until_ms > now_ms;
	ours = !fresh && c->claim_until_ms <= now_ms;
	if (ours)
		c->claim_until_ms = now_ms + longest_timeout(cfg) + 1000;
	if (usable && v->generation != c->generation && (doc = catalog_unpack(c->data, lens)) != NULL)
		gen = c->generation;
	state_unlock(&c->lock);
	if (doc)
		view_set(v, doc, gen);
	if (v->doc && (fresh || (!ours && usable)))
		return json_incref(v->doc);
	/* Stale and ours to refresh, or nothing usable at all: fetch. */
	store(c, key, catalog_fetch_all(by, cfg, now_ms, v->doc), now_ms, cfg->catalog_ttl * 1000, v);
	return json_incref(v->doc);
}
