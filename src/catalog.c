/* catalog — build, share and look up the federated tool catalog. */
#include "autoconf.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "catalog.h"
#include "clock.h"
#include "log.h"
#include "secret.h"
#include "state.h"

#define CATALOG_MAGIC	0x43415431u	/* "CAT1" */
#define TOOL_NAME_MAX	128

struct catalog_region {
	pthread_mutex_t lock;
	uint32_t magic;
	uint64_t generation;		/* bumped on every store */
	int64_t fresh_until_ms;		/* monotonic; 0 = never built */
	int64_t claim_until_ms;		/* a worker is fetching until then */
	unsigned char key[16];		/* digest of the upstream configuration it was built for */
	int degraded;			/* an upstream was left out */
	uint32_t len;
	char data[CATALOG_MAX_BYTES];
};

size_t
catalog_region_size(void)
{
	return sizeof(struct catalog_region);
}

void
catalog_region_init(void *region, size_t size, int shared)
{
	struct catalog_region *c = region;

	memset(c, 0, offsetof(struct catalog_region, data));
	state_mutex_init(&c->lock, shared);
	c->magic = CATALOG_MAGIC;
}

void
catalog_view_free(struct catalog_view *v)
{
	json_decref(v->doc);
	memset(v, 0, sizeof(*v));
}

/* What the catalog depends on in the configuration: upstream names, URLs, prefixes. */
static void
config_key(const struct config *cfg, unsigned char key[16])
{
	struct buf b;
	size_t i;

	buf_init(&b, 1 << 20);
	for (i = 0; i < cfg->n_upstreams; i++) {
		const struct cfg_upstream *u = &cfg->upstreams[i];

		const char *parts[3] = { u->s.name, u->url ? u->url : "", u->prefix ? u->prefix : "" };
		size_t k;

		for (k = 0; k < 3; k++)
			buf_append(&b, parts[k], strlen(parts[k]) + 1);	/* with its NUL */
	}
	secret_digest(b.data ? b.data : "", b.len, key, 16);
	buf_free(&b);
}

static int
name_ok(const char *name)
{
	size_t n = strlen(name);

	return n >= 1 && n <= TOOL_NAME_MAX && strspn(name,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

/* Pairs [record, [upstream, name], sequence]: by exposed name, then file order. */
static int
same_name(json_t *x, json_t *y)
{
	return strcmp(json_string_value(json_object_get(json_array_get(x, 0), "name")),
	    json_string_value(json_object_get(json_array_get(y, 0), "name"))) == 0;
}

static int
by_name(const void *a, const void *b)
{
	json_t *const *x = a, *const *y = b;
	int c = strcmp(json_string_value(json_object_get(json_array_get(*x, 0), "name")),
	    json_string_value(json_object_get(json_array_get(*y, 0), "name")));
	json_int_t i = json_integer_value(json_array_get(*x, 2)), j = json_integer_value(json_array_get(*y, 2));

	return c ? c : (i > j) - (i < j);
}

json_t *
catalog_build(const struct config *cfg, json_t *const *lists, const char *const *reasons)
{
	json_t *doc, *tools = json_array(), *routes = json_array(), *status = json_object();
	json_t **pairs = NULL, *t, *rec;
	size_t i, j, n = 0, cap = 0, k;
	char name[2 * TOOL_NAME_MAX + 2];

	for (i = 0; i < cfg->n_upstreams; i++) {
		const struct cfg_upstream *u = &cfg->upstreams[i];
		size_t kept = 0;

		if (lists[i] == NULL) {
			json_object_set_new(status, u->s.name, json_pack("{s:b, s:i, s:s}", "ok", 0,
			    "tools", 0, "reason", reasons[i] ? reasons[i] : "unavailable"));
			continue;
		}
		json_array_foreach(lists[i], j, t) {
			const char *orig = json_string_value(json_object_get(t, "name"));

			snprintf(name, sizeof(name), "%s%s", u->prefix ? u->prefix : "", orig ? orig : "");
			if (!json_is_object(t) || orig == NULL || !name_ok(name)) {
				log_warn(NULL, "catalog: upstream %s: a tool without a valid name was left out", u->s.name);
				continue;
			}
			rec = json_deep_copy(t);
			json_object_set_new(rec, "name", json_string(name));
			if (!json_is_string(json_object_get(rec, "description")))
				json_object_set_new(rec, "description", json_string(orig));
			if (!json_is_object(json_object_get(rec, "inputSchema")))
				json_object_set_new(rec, "inputSchema", json_pack("{s:s}", "type", "object"));
			if (n == cap) {
				json_t **more = realloc(pairs, (cap ? 2 * cap : 64) * sizeof(*pairs));

				if (more == NULL) {
					json_decref(rec);
					break;
				}
				pairs = more;
				cap = cap ? 2 * cap : 64;
			}
			pairs[n] = json_pack("[o, [s, s], I]", rec, u->s.name, orig, (json_int_t)n);
			n++;
			kept++;
		}
		json_object_set_new(status, u->s.name, json_pack("{s:b, s:I}", "ok", 1, "tools", (json_int_t)kept));
	}
	/* Deterministic order; a name two upstreams expose goes to the first in the file. */
	if (n > 1)
		qsort(pairs, n, sizeof(*pairs), by_name);
	for (k = 0; k < n; k++) {
		json_t *p = pairs[k];

		if (k > 0 && same_name(pairs[k - 1], p)) {
			log_warn(NULL, "catalog: tool %s exposed twice; the second upstream's was left out",
			    json_string_value(json_object_get(json_array_get(p, 0), "name")));
		} else {
			json_array_append(tools, json_array_get(p, 0));
			json_array_append(routes, json_array_get(p, 1));
		}
	}
	for (k = 0; k < n; k++)
		json_decref(pairs[k]);
	free(pairs);
	doc = json_pack("{s:o, s:o, s:o}", "tools", tools, "routes", routes, "upstreams", status);
	return doc;
}

long
catalog_find(json_t *doc, const char *name)
{
	json_t *tools = json_object_get(doc, "tools");
	size_t lo = 0, hi = json_array_size(tools), mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(name, json_string_value(json_object_get(json_array_get(tools, mid), "name")));
		if (c == 0)
			return (long)mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

int
catalog_region_degraded(void *region)
{
	struct catalog_region *c = region;

	return c && c->magic == CATALOG_MAGIC && c->fresh_until_ms > 0 && c->degraded;
}

int
catalog_degraded(json_t *doc)
{
	const char *name;
	json_t *st;

	json_object_foreach(json_object_get(doc, "upstreams"), name, st)
		if (!json_is_true(json_object_get(st, "ok")))
			return 1;
	return 0;
}

/* One upstream's tools, following its pages. NULL with *reason on failure. */
static json_t *
fetch_tools(struct upstream_pool *pool, const struct config *cfg, const struct cfg_upstream *u,
    int64_t now_ms, char *reason, size_t rlen)
{
	struct upstream_call call = { .cfg = cfg, .up = u, .method = "tools/list" };
	struct gw_error err = { GW_OK, "" };
	json_t *all = json_array(), *resp, *result, *params = NULL;
	const char *cursor;
	int page;

	for (page = 0; page < CATALOG_MAX_PAGES; page++) {
		call.params = params;
		call.now_ms = page == 0 ? now_ms : clock_mono_us() / 1000;	/* each page its own deadline */
		if (upstream_request(pool, &call, &resp, &err) < 0) {
			snprintf(reason, rlen, "%s", err.detail);
			goto fail;
		}
		result = json_object_get(resp, "result");
		if (!json_is_array(json_object_get(result, "tools"))) {
			snprintf(reason, rlen, "upstream %s: tools/list answered %s", u->s.name,
			    json_object_get(resp, "error") ? "an error" : "no tools array");
			json_decref(resp);
			goto fail;
		}
		json_array_extend(all, json_object_get(result, "tools"));
		cursor = json_string_value(json_object_get(result, "nextCursor"));
		json_decref(params);
		params = cursor && *cursor ? json_pack("{s:s}", "cursor", cursor) : NULL;
		json_decref(resp);
		if (params == NULL)
			return all;
	}
	snprintf(reason, rlen, "upstream %s: more than %d pages of tools", u->s.name, CATALOG_MAX_PAGES);
fail:
	json_decref(params);
	json_decref(all);
	return NULL;
}

static json_t *
fetch_all(struct upstream_pool *pool, const struct config *cfg, int64_t now_ms)
{
	json_t **lists = calloc(cfg->n_upstreams + 1, sizeof(*lists)), *doc;
	char (*reasons)[256] = calloc(cfg->n_upstreams + 1, sizeof(*reasons));
	const char **why = calloc(cfg->n_upstreams + 1, sizeof(*why));
	size_t i;

	if (lists == NULL || reasons == NULL || why == NULL) {
		free(lists);
		free(reasons);
		free(why);
		return json_pack("{s:[], s:[], s:{}}", "tools", "routes", "upstreams");
	}
	for (i = 0; i < cfg->n_upstreams; i++) {
		lists[i] = fetch_tools(pool, cfg, &cfg->upstreams[i], now_ms, reasons[i], sizeof(reasons[i]));
		why[i] = lists[i] ? NULL : reasons[i];
		if (lists[i] == NULL)
			log_warn(NULL, "catalog: %s; its tools are left out", reasons[i]);
	}
	doc = catalog_build(cfg, lists, why);
	for (i = 0; i < cfg->n_upstreams; i++)
		json_decref(lists[i]);
	free(lists);
	free(reasons);
	free(why);
	return doc;
}

static int64_t
longest_timeout(const struct config *cfg)
{
	int64_t t = 0;
	size_t i;

	for (i = 0; i < cfg->n_upstreams; i++)
		if (cfg->upstreams[i].timeout_ms > t)
			t = cfg->upstreams[i].timeout_ms;
	return t * CATALOG_MAX_PAGES;
}

static void
view_set(struct catalog_view *v, json_t *doc, uint64_t generation)
{
	json_decref(v->doc);
	v->doc = doc;
	v->generation = generation;
}

/* Parses a copy of the stored catalog (taken under the lock) into v. Frees copy. */
static void
view_parse(struct catalog_view *v, char *copy, size_t len, uint64_t gen)
{
	json_t *doc = json_loadb(copy, len, 0, NULL);

	free(copy);
	if (json_is_object(doc))
		view_set(v, doc, gen);
	else
		json_decref(doc);
}

static void
store(struct catalog_region *c, const unsigned char key[16], json_t *doc, int64_t now_ms,
    int64_t ttl_ms, struct catalog_view *v)
{
	char *s = json_dumps(doc, JSON_COMPACT);
	size_t len = s ? strlen(s) : 0;
	int64_t until = now_ms + (catalog_degraded(doc) && ttl_ms > CATALOG_RETRY_MS ? CATALOG_RETRY_MS : ttl_ms);

	state_lock(&c->lock);
	c->claim_until_ms = 0;
	if (s && len <= CATALOG_MAX_BYTES) {
		memcpy(c->data, s, len);
		c->len = (uint32_t)len;
		memcpy(c->key, key, 16);
		c->fresh_until_ms = until;
		c->degraded = catalog_degraded(doc);
		c->generation++;
		view_set(v, doc, c->generation);
		v->local_until_ms = 0;
	} else {
		log_err(NULL, "catalog: %zu bytes, over the %u of the state file; kept per worker",
		    len, CATALOG_MAX_BYTES);
		view_set(v, doc, 0);
		v->local_until_ms = until;
	}
	state_unlock(&c->lock);
	free(s);
}

json_t *
catalog_get(void *region, struct catalog_view *v, struct upstream_pool *pool,
    const struct config *cfg, int64_t now_ms)
{
	struct catalog_region *c = region;
	unsigned char key[16];
	char *copy = NULL;
	size_t len = 0;
	uint64_t gen = 0;
	int ours, fresh, usable;

	if (v->local_until_ms > now_ms && v->doc)
		return v->doc;
	config_key(cfg, key);
	if (c == NULL || c->magic != CATALOG_MAGIC) {	/* no shared state: this worker's own */
		if (v->doc == NULL || v->local_until_ms <= now_ms) {
			view_set(v, fetch_all(pool, cfg, now_ms), 0);
			v->local_until_ms = now_ms + cfg->catalog_ttl * 1000;
		}
		return v->doc;
	}
	/* Decide and copy under one hold of the lock; parse after letting it go. */
	state_lock(&c->lock);
	usable = c->fresh_until_ms > 0 && memcmp(c->key, key, 16) == 0;
	fresh = usable && c->fresh_until_ms > now_ms;
	ours = !fresh && c->claim_until_ms <= now_ms;
	if (ours)
		c->claim_until_ms = now_ms + longest_timeout(cfg) + 1000;
	if (usable && v->generation != c->generation && (copy = malloc(c->len ? c->len : 1)) != NULL) {
		memcpy(copy, c->data, c->len);
		len = c->len;
		gen = c->generation;
	}
	state_unlock(&c->lock);
	if (copy)
		view_parse(v, copy, len, gen);
	if (v->doc && (fresh || (!ours && usable)))
		return v->doc;
	/* Stale and ours to refresh, or nothing usable at all: fetch. */
	store(c, key, fetch_all(pool, cfg, now_ms), now_ms, cfg->catalog_ttl * 1000, v);
	return v->doc;
}
