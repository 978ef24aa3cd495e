/* catalog — the federated catalog as a document: built from what the upstreams
 * offer, packed for the state file and back, and looked up. Pure: the store
 * (catalog_store.c) and the fetch (catalog_fetch.c) are elsewhere. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "catalog.h"
#include "log.h"
#include "pinning.h"
#include "policy.h"
#include "tooldef.h"

#define TOOL_NAME_MAX	128

static int
name_ok(const char *name)
{
	size_t n = strlen(name);

	return n >= 1 && n <= TOOL_NAME_MAX && strspn(name,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

const struct catalog_kind_info catalog_kinds[CATALOG_NKINDS] = {
	[CATALOG_TOOLS] = { "tools", "name", "routes", 1 },
	[CATALOG_PROMPTS] = { "prompts", "name", "promptRoutes", 1 },
	[CATALOG_RESOURCES] = { "resources", "uri", "resourceRoutes", 0 },
	[CATALOG_TEMPLATES] = { "resourceTemplates", "uriTemplate", "templateRoutes", 0 },
};

/* A URI or URI template: printable ASCII without spaces, and not too long. */
static int
uri_ok(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if ((unsigned char)s[n] <= 0x20 || (unsigned char)s[n] >= 0x7f)
			return 0;
	return n >= 1 && n <= CATALOG_URI_MAX;
}

/* Pairs [record, [upstream, original key], sequence, exposed key, record text, upstream
 * index, cost, digest or null, pending entry or null], sorted by key, then file order. A
 * record's cost is what it takes of the state file: its text and, at most, its index
 * record, route and pending entry. The digest is tooldef.h's, of the upstream's own
 * record (a resource has none); the pending entry, catalog_pending's. */
#define PAIR_TEXT	4
#define PAIR_UPSTREAM	5
#define PAIR_COST	6
#define PAIR_DIGEST	7
#define PAIR_PENDING	8
/* What a digest adds to an index record: ,"digest":"sha256:..." */
#define DIGEST_COST	(CANON_DIGEST_LEN + 12)

/* One kind's pairs, in a growing array. */
struct pairs {
	json_t **v;
	size_t n, cap;
};

static const char *
pair_key(json_t *p)
{
	return json_string_value(json_array_get(p, 3));
}

static int
by_key(const void *a, const void *b)
{
	json_t *const *x = a, *const *y = b;
	int c = strcmp(pair_key(*x), pair_key(*y));
	json_int_t i = json_integer_value(json_array_get(*x, 2)), j = json_integer_value(json_array_get(*y, 2));

	return c ? c : (i > j) - (i < j);
}

/* Room for one more pair: 0, or -1 without memory. */
static int
pairs_room(struct pairs *p)
{
	json_t **more;

	if (p->n < p->cap)
		return 0;
	if ((more = realloc(p->v, (p->cap ? 2 * p->cap : 64) * sizeof(*p->v))) == NULL)
		return -1;
	p->v = more;
	p->cap = p->cap ? 2 * p->cap : 64;
	return 0;
}

/* The pending entry (catalog_pending) of record t, key orig at u, as v judged it: with
 * the record's own text when it is held, to build the catalog again without asking
 * (catalog_lists). A new reference, or NULL without memory. */
static json_t *
pending_entry(const struct cfg_upstream *u, const char *orig, const char *digest, json_t *t,
    const struct pinning_verdict *v)
{
	json_t *e = json_pack("{s:s, s:s, s:s}", "upstream", u->s.name, "name", orig, "state",
	    pinning_state_word(v->state));
	char *text;

	if (e == NULL)
		return NULL;
	if (digest)
		json_object_set_new(e, "digest", json_string(digest));
	if (v->pinned)
		json_object_set_new(e, "pinned", json_string(v->pinned));
	if (v->hygiene.found)
		json_object_set_new(e, "hygiene", json_string(v->hygiene.reason));
	if (v->held) {
		json_object_set_new(e, "held", json_true());
		if ((text = json_dumps(t, JSON_COMPACT)) == NULL) {
			json_decref(e);
			return NULL;
		}
		json_object_set_new(e, "record", json_string_nocheck(text));
		free(text);
	}
	return e;
}

/* What the pins of u make of record t (key orig, its digest or NULL): its pending entry,
 * a new reference, with what it costs in *cost; NULL when it is simply pinned. */
static json_t *
pinned_or_not(const struct config *cfg, const struct cfg_upstream *u, const struct catalog_kind_info *k,
    json_t *t, const char *digest, size_t *cost)
{
	const char *orig = json_string_value(json_object_get(t, k->key));
	const struct pinning_record r = { (enum catalog_kind)(k - catalog_kinds), orig, digest, t };
	struct pinning_verdict v;
	json_t *e;
	char *text;

	*cost = 0;
	if (!pinning_judge(u, cfg->pins, &r, &v) || (e = pending_entry(u, orig, digest, t, &v)) == NULL)
		return NULL;
	if ((text = json_dumps(e, JSON_COMPACT)) != NULL)
		*cost = strlen(text) + 2 * strlen(orig) + strlen(u->prefix ? u->prefix : "") + 16;
	free(text);
	return e;
}

/* One upstream's records of a kind, mapped (prefix, description, schema), onto p: what
 * they cost. A record over CATALOG_RECORD_MAX is left out (counted in *over). Each
 * record's digest is taken before it is mapped: what the upstream itself defined; and
 * what the pins make of it (pinned_or_not). */
static size_t
add_records(const struct config *cfg, size_t u_ix, const struct catalog_kind_info *k, json_t *list,
    struct pairs *p, size_t *over)
{
	const struct cfg_upstream *u = &cfg->upstreams[u_ix];
	char name[2 * TOOL_NAME_MAX + 2], *text, digest[CANON_DIGEST_LEN];
	const char *orig;
	json_t *t, *rec, *pend;
	size_t j, len, cost, pend_cost, need = 0;
	int has_digest;

	json_array_foreach(list, j, t) {
		orig = json_string_value(json_object_get(t, k->key));
		if (k->prefixed)
			snprintf(name, sizeof(name), "%s%s", u->prefix ? u->prefix : "", orig ? orig : "");
		if (!json_is_object(t) || orig == NULL || !(k->prefixed ? name_ok(name) : uri_ok(orig))) {
			log_warn(NULL, "catalog: upstream %s: one of its %s without a valid %s was left out",
			    u->s.name, k->array, k->key);
			continue;
		}
		has_digest = tooldef_digest((enum catalog_kind)(k - catalog_kinds), t, digest) == 0;
		rec = json_copy(t);	/* shallow: only its own members change */
		if (k->prefixed)
			json_object_set_new(rec, k->key, json_string(name));
		if (k == &catalog_kinds[CATALOG_TOOLS]) {
			if (!json_is_string(json_object_get(rec, "description")))
				json_object_set_new(rec, "description", json_string(orig));
			if (!json_is_object(json_object_get(rec, "inputSchema")))
				json_object_set_new(rec, "inputSchema", json_pack("{s:s}", "type", "object"));
		}
		if ((text = json_dumps(rec, JSON_COMPACT)) == NULL || (len = strlen(text)) > CATALOG_RECORD_MAX) {
			(*over)++;
			free(text);
			json_decref(rec);
			continue;
		}
		pend = pinned_or_not(cfg, u, k, t, has_digest ? digest : NULL, &pend_cost);
		cost = len + 2 * strlen(k->prefixed ? name : orig) + strlen(u->s.name) + strlen(orig) + 64 +
		    (has_digest ? DIGEST_COST : 0) + pend_cost;
		if (pairs_room(p) < 0) {
			free(text);
			json_decref(rec);
			json_decref(pend);
			return need;
		}
		p->v[p->n] = json_pack("[o, [s, s], I, s, s%, I, I, s?, o?]", rec, u->s.name, orig, (json_int_t)p->n,
		    k->prefixed ? name : orig, text, len, (json_int_t)u_ix, (json_int_t)cost, has_digest ? digest : NULL,
		    pend);
		free(text);
		if (p->v[p->n] == NULL)
			continue;
		p->n++;
		need += cost;
	}
	return need;
}

/* Each upstream's share of the catalog, of total bytes: what it needs, while the needs
 * fit; else the smaller needs in full and the rest split evenly among the larger
 * (max-min fairness), so that one upstream listing more than its share never takes
 * anything from the others. share[i] for need[i], n upstreams. */
static void
shares(const size_t *need, size_t *share, size_t n, size_t total)
{
	size_t i, j, left = n, least;
	unsigned char *done = calloc(n ? n : 1, 1);

	if (done == NULL) {	/* an even split, then */
		for (i = 0; i < n; i++)
			share[i] = total / n;
		return;
	}
	while (left > 0) {
		for (i = 0, j = n; i < n; i++)	/* the least need not yet served */
			if (!done[i] && (j == n || need[i] < need[j]))
				j = i;
		least = total / left;
		if (need[j] <= least) {
			share[j] = need[j];
			total -= need[j];
			done[j] = 1;
			left--;
			continue;
		}
		for (i = 0; i < n; i++)	/* every need left is over an even split */
			if (!done[i])
				share[i] = least;
		break;
	}
	free(done);
}

/* 1 when route ([upstream, key, upstream, key, ...]) goes to upstream already. */
static int
route_names(json_t *route, const char *upstream)
{
	size_t i;

	for (i = 0; i < json_array_size(route); i += 2)
		if (strcmp(json_string_value(json_array_get(route, i)), upstream) == 0)
			return 1;
	return 0;
}

/* What decisions read of a pair's record (the document's index record): its key, a
 * tool's readOnlyHint when true, and the digest of the upstream's own record (never
 * sent: a list page is cut from the record texts). */
static json_t *
index_record(const struct catalog_kind_info *k, json_t *pair)
{
	json_t *rec = json_array_get(pair, 0), *digest = json_array_get(pair, PAIR_DIGEST);
	json_t *ix = json_pack("{s:O}", k->key, json_object_get(rec, k->key));

	if (ix && k == &catalog_kinds[CATALOG_TOOLS] &&
	    json_is_true(json_object_get(json_object_get(rec, "annotations"), "readOnlyHint")))
		json_object_set_new(ix, "annotations", json_pack("{s:b}", "readOnlyHint", 1));
	if (ix && json_is_string(digest))
		json_object_set(ix, "digest", digest);
	return ix;
}

/* Sorted records and their routes. A key several upstreams expose is listed once, with
 * the record of the first in the file; the others' routes follow the first's in its
 * route ([up, name, up2, name2, ...]: catalog_route_alt), so that a resource reaches a
 * caller who may not reach the first (a tool or a prompt is always the first's). A key
 * one upstream lists twice keeps its first record and one route. Each listed record
 * goes into doc as its index record, and into records (under the kind's array) as
 * compact JSON text. Frees the pairs. */
static void
put_kind(json_t *doc, json_t *records, const struct catalog_kind_info *k, json_t **pairs, size_t n)
{
	json_t *items = json_array(), *routes = json_array(), *route, *ix;
	struct buf text;
	const char *rec;
	size_t i, shared = 0;

	buf_init(&text, CATALOG_MAX_BYTES);

	if (n > 1)
		qsort(pairs, n, sizeof(*pairs), by_key);
	for (i = 0; i < n; i++) {
		if (i > 0 && strcmp(pair_key(pairs[i - 1]), pair_key(pairs[i])) == 0) {
			route = json_array_get(routes, json_array_size(routes) - 1);
			if (route_names(route, json_string_value(json_array_get(json_array_get(pairs[i], 1), 0)))) {
				log_info(NULL, "catalog: an upstream lists %s %s more than once: the first record kept",
				    k->key, pair_key(pairs[i]));
				continue;
			}
			json_array_extend(route, json_array_get(pairs[i], 1));
			if (shared++ == 0)
				log_warn(NULL, "catalog: %s %s is offered by more than one upstream: listed with the first's "
				    "record, %s (give one a prefix)", k->key, pair_key(pairs[i]),
				    k->prefixed ? "called at the first alone, and refused while it is down" :
				    "reached at the first the caller may reach, never at another while one is down");
		} else {
			rec = json_string_value(json_array_get(pairs[i], PAIR_TEXT));
			ix = index_record(k, pairs[i]);
			if (rec == NULL || ix == NULL || text.len + (text.len > 0) + strlen(rec) > text.max ||
			    (text.len > 0 && buf_putc(&text, '\n') < 0) || buf_puts(&text, rec) < 0) {
				log_err(NULL, "catalog: the %s from %s %s on are left out: out of memory, or over %u bytes",
				    k->array, k->key, pair_key(pairs[i]), CATALOG_MAX_BYTES);
				json_decref(ix);
				break;
			}
			json_array_append_new(items, ix);
			json_array_append_new(routes, json_copy(json_array_get(pairs[i], 1)));
		}
	}
	if (shared > 1)
		log_warn(NULL, "catalog: %zu %s in all are offered by more than one upstream", shared, k->array);
	for (i = 0; i < n; i++)
		json_decref(pairs[i]);
	json_object_set_new(doc, k->array, items);
	json_object_set_new(doc, k->routes, routes);
	json_object_set_new(records, k->array, json_stringn_nocheck(text.data ? text.data : "", text.len));
	buf_free(&text);
}

/* The capabilities an upstream answered, as far as the gateway reads them: the kinds it
 * offers, each with its true flags (subscribe, listChanged). An upstream cannot fill the
 * catalog with capabilities. A new reference. */
static json_t *
caps_kept(json_t *caps)
{
	static const char *const kinds[] = { "tools", "prompts", "resources", "completions", "logging" };
	static const char *const flags[] = { "subscribe", "listChanged" };
	json_t *out = json_object(), *c, *o;
	size_t i, j;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!json_is_object(c = json_object_get(caps, kinds[i])))
			continue;
		o = json_object();
		for (j = 0; j < sizeof(flags) / sizeof(flags[0]); j++)
			if (json_is_true(json_object_get(c, flags[j])))
				json_object_set_new(o, flags[j], json_true());
		json_object_set_new(out, kinds[i], o);
	}
	return out;
}

static json_t *idx(json_t *doc);

/* Holds for upstream i (in cfg) the key it exposes for orig, unless one holds it already. */
static void
hold(const struct config *cfg, size_t i, const struct catalog_kind_info *k, const char *orig, json_t *held)
{
	const struct cfg_upstream *u = &cfg->upstreams[i];
	char name[2 * TOOL_NAME_MAX + 2];

	snprintf(name, sizeof(name), "%s%s", k->prefixed && u->prefix ? u->prefix : "", orig);
	if (json_object_get(held, name) == NULL)
		json_object_set_new(held, name, json_integer((json_int_t)i));
}

/* The keys of kind an upstream that is down (lists[i] NULL) offered in prev, the catalog
 * before (its routes, and what prev held for it), as they are exposed now (its prefix may
 * have changed): into held, key → the upstream's index. The first upstream in the file
 * that holds a key keeps it. */
static void
hold_kind(const struct config *cfg, json_t *const *lists, json_t *prev, enum catalog_kind kind, json_t *held)
{
	const struct catalog_kind_info *k = &catalog_kinds[kind];
	json_t *routes = json_object_get(idx(prev), k->routes), *route, *v;
	json_t *before = json_object_get(json_object_get(idx(prev), "held"), k->array);
	const char *up, *orig, *key;
	size_t i, r, a;

	for (i = 0; i < cfg->n_upstreams; i++) {
		if (lists[i] != NULL)
			continue;
		json_array_foreach(routes, r, route)
			for (a = 0; a + 1 < json_array_size(route); a += 2) {
				up = json_string_value(json_array_get(route, a));
				orig = json_string_value(json_array_get(route, a + 1));
				if (up && orig && strcmp(up, cfg->upstreams[i].s.name) == 0)
					hold(cfg, i, k, orig, held);
			}
		/* Held before, and still down: held still (the original key is kept there). */
		json_object_foreach(before, key, v) {
			up = json_string_value(json_array_get(v, 0));
			orig = json_string_value(json_array_get(v, 1));
			if (up && orig && strcmp(up, cfg->upstreams[i].s.name) == 0)
				hold(cfg, i, k, orig, held);
		}
	}
}

/* Binds each key to the upstream that owned it: a record of an upstream later in the file
 * than one that is down and offered the same key before is dropped (the call would go to
 * another upstream than the one the name meant). What stays held (no upstream before its
 * holder lists it) goes into out: key → [holder's name, its original key]. */
static void
keep_bound(const struct config *cfg, json_t *held, enum catalog_kind kind, struct pairs *p, json_t *out)
{
	json_t **pairs = p->v;
	const struct catalog_kind_info *k = &catalog_kinds[kind];
	const char *key, *pfx;
	json_t *h, *v;
	size_t i, j, u, hu, lp, dropped = 0;

	for (i = j = 0; i < p->n; i++) {
		key = pair_key(pairs[i]);
		u = (size_t)json_integer_value(json_array_get(pairs[i], PAIR_UPSTREAM));
		if ((h = json_object_get(held, key)) != NULL && (hu = (size_t)json_integer_value(h)) < u) {
			if (dropped++ == 0)
				log_warn(NULL, "catalog: %s %s of upstream %s is not served: upstream %s offered it first "
				    "and is down, or over its share of the catalog", k->key, key, cfg->upstreams[u].s.name,
				    cfg->upstreams[hu].s.name);
			json_decref(pairs[i]);
			continue;
		}
		if (h != NULL)	/* an upstream before the holder lists it: it is that one's */
			json_object_del(held, key);
		pairs[j++] = pairs[i];
	}
	p->n = j;
	if (dropped > 1)
		log_warn(NULL, "catalog: %zu %s in all are not served for upstreams that offered them first and are down",
		    dropped, k->array);
	json_object_foreach(held, key, v) {
		hu = (size_t)json_integer_value(v);
		pfx = k->prefixed && cfg->upstreams[hu].prefix ? cfg->upstreams[hu].prefix : "";
		lp = strlen(pfx);
		json_object_set_new(out, key, json_pack("[s, s]", cfg->upstreams[hu].s.name,
		    strncmp(key, pfx, lp) == 0 ? key + lp : key));
	}
}

/* 1 when pending entries a and b say the same (state, digests, holding, hygiene). */
static int
same_verdict(json_t *a, json_t *b)
{
	static const char *const what[] = { "state", "digest", "pinned", "held", "hygiene" };
	size_t i;

	if (a == NULL || b == NULL)
		return 0;
	for (i = 0; i < sizeof(what) / sizeof(what[0]); i++) {
		json_t *x = json_object_get(a, what[i]), *y = json_object_get(b, what[i]);

		if ((x == NULL) != (y == NULL) || (x && !json_equal(x, y)))
			return 0;
	}
	return 1;
}

/* The audit line of a pending entry e of kind: a change, warned; a new record, noted. */
static void
audit_pin(enum catalog_kind kind, json_t *e)
{
	int changed = strcmp(json_string_value(json_object_get(e, "state")), "changed") == 0;
	int held = json_is_true(json_object_get(e, "held"));

	log_json(changed || json_object_get(e, "hygiene") ? GW_LOG_WARN : GW_LOG_INFO,
	    json_pack("{s:s, s:s, s:O, s:O, s:O, s:O*, s:O*, s:O*, s:s}", "audit", "pin",
	    "kind", pins_kind_word((enum pins_kind)pinning_kind(kind)), "upstream", json_object_get(e, "upstream"),
	    "name", json_object_get(e, "name"), "event", json_object_get(e, "state"),
	    "digest", json_object_get(e, "digest"), "pinned", json_object_get(e, "pinned"),
	    "hygiene", json_object_get(e, "hygiene"), "action", held ? "held until approved" : "served"));
}

/* The pending entries of kind's records into out (key → the entry of the record served
 * under it: the first upstream's), each logged when prev (the catalog before) did not
 * say the same of it. A held record's key goes into held (key → [its upstream, its key
 * there]) and no record of that key is served: another upstream's record of the same
 * name would take calls meant for the one held. */
static void
pend_kind(json_t *prev, enum catalog_kind kind, struct pairs *p, json_t *out, json_t *held)
{
	json_t **pairs = p->v, *seen = json_object(), *e;
	const char *key;
	size_t i, j;

	for (i = 0; i < p->n && seen; i++) {
		key = pair_key(pairs[i]);
		if (json_object_get(seen, key))
			continue;
		json_object_set_new(seen, key, json_true());
		if (!json_is_object(e = json_array_get(pairs[i], PAIR_PENDING)))
			continue;
		json_object_set(out, key, e);
		if (!same_verdict(catalog_pending(prev, kind, key), e))
			audit_pin(kind, e);
		if (json_is_true(json_object_get(e, "held")))
			json_object_set_new(held, key, json_pack("[O, O]", json_object_get(e, "upstream"),
			    json_object_get(e, "name")));
	}
	json_decref(seen);
	for (i = j = 0; i < p->n; i++) {	/* keep_bound left no other key held */
		e = json_object_get(held, pair_key(pairs[i]));
		if (e == NULL)
			pairs[j++] = pairs[i];
		else
			json_decref(pairs[i]);
	}
	p->n = j;
}

/* Cuts each upstream to its share: its records in order (tools, prompts, resources,
 * templates; each kind as it listed them) while their costs fit, none after the first
 * that does not. Counts what each lost in cut[]; the keys it lost stay its in held[kind]
 * (key → its index), so that no upstream after it in the file takes them. */
static void
cut_to_shares(struct pairs ps[CATALOG_NKINDS], const size_t *share, size_t *cut, size_t nup,
    json_t *held[CATALOG_NKINDS])
{
	size_t *spent = calloc(nup ? nup : 1, sizeof(*spent)), i, j, u, cost;
	unsigned char *full = calloc(nup ? nup : 1, 1);
	int k;

	for (k = 0; k < CATALOG_NKINDS && spent && full; k++) {
		json_t **pairs = ps[k].v;

		for (i = j = 0; i < ps[k].n; i++) {
			u = (size_t)json_integer_value(json_array_get(pairs[i], PAIR_UPSTREAM));
			cost = (size_t)json_integer_value(json_array_get(pairs[i], PAIR_COST));
			if (u < nup && !full[u] && cost <= share[u] - spent[u]) {
				spent[u] += cost;
				pairs[j++] = pairs[i];
				continue;
			}
			if (u < nup) {
				full[u] = 1;
				cut[u]++;
				if (json_object_get(held[k], pair_key(pairs[i])) == NULL)
					json_object_set_new(held[k], pair_key(pairs[i]), json_integer((json_int_t)u));
			}
			json_decref(pairs[i]);
		}
		ps[k].n = j;
	}
	free(spent);
	free(full);
}

json_t *
catalog_build(const struct config *cfg, json_t *const *lists, const char *const *reasons)
{
	return catalog_build_bound(cfg, lists, reasons, NULL);
}

/* Long: the build's steps over every kind (what each upstream needs, the shares, the
 * records kept or cut, the names held, the document), whose arrays are freed at one
 * exit. */
json_t *
catalog_build_bound(const struct config *cfg, json_t *const *lists, const char *const *reasons, json_t *prev)
{
	json_t *doc = json_object(), *status = json_object(), *records = json_object(), *list, *st;
	json_t *held = json_object(), *pending = json_object(), *hk, *pk, *bykey[CATALOG_NKINDS] = { NULL };
	struct pairs ps[CATALOG_NKINDS] = { { NULL, 0, 0 } };
	size_t nup = cfg->n_upstreams, i, j, tools;
	size_t *need = calloc(nup + 1, sizeof(*need)), *share = calloc(nup + 1, sizeof(*share));
	size_t *cut = calloc(nup + 1, sizeof(*cut)), *over = calloc(nup + 1, sizeof(*over));
	size_t reserve = CATALOG_RESERVE + nup * CATALOG_RESERVE_UPSTREAM;
	int k;

	if (need == NULL || share == NULL || cut == NULL || over == NULL)
		goto out;
	for (k = 0; k < CATALOG_NKINDS; k++)
		for (i = 0; i < nup; i++) {
			list = json_is_array(lists[i]) ? (k == CATALOG_TOOLS ? lists[i] : NULL) :
			    json_object_get(lists[i], catalog_kinds[k].array);
			if (json_is_array(list))
				need[i] += add_records(cfg, i, &catalog_kinds[k], list, &ps[k], &over[i]);
		}
	shares(need, share, nup, reserve < CATALOG_MAX_BYTES ? CATALOG_MAX_BYTES - reserve : 0);
	for (k = 0; k < CATALOG_NKINDS; k++)
		bykey[k] = json_object();
	cut_to_shares(ps, share, cut, nup, bykey);
	for (i = 0; i < nup; i++) {
		const char *name = cfg->upstreams[i].s.name;

		if (lists[i] == NULL) {
			json_object_set_new(status, name, json_pack("{s:b, s:i, s:s}",
			    "ok", 0, "tools", 0, "reason", reasons[i] ? reasons[i] : "unavailable"));
			continue;
		}
		for (j = 0, tools = 0; j < ps[CATALOG_TOOLS].n; j++)
			tools += (size_t)json_integer_value(json_array_get(ps[CATALOG_TOOLS].v[j], PAIR_UPSTREAM)) == i;
		st = json_pack("{s:b, s:I, s:o}", "ok", 1, "tools", (json_int_t)tools, "caps",
		    json_is_array(lists[i]) ? json_pack("{s:{}}", "tools") : caps_kept(json_object_get(lists[i], "caps")));
		if (json_is_true(json_object_get(lists[i], "perCaller")))
			json_object_set_new(st, "perCaller", json_true());
		if (json_string_length(json_object_get(lists[i], "version")) > 0)
			json_object_set(st, "version", json_object_get(lists[i], "version"));
		if (json_is_object(json_object_get(lists[i], "legacyCaps")))
			json_object_set_new(st, "legacyCaps", caps_kept(json_object_get(lists[i], "legacyCaps")));
		if (cut[i] || over[i]) {
			json_object_set_new(st, "cut", json_integer((json_int_t)(cut[i] + over[i])));
			json_object_set_new(st, "share", json_integer((json_int_t)share[i]));
			log_warn(NULL, "catalog: upstream %s: %zu of its records left out: %s%s%s (its share: %zu of "
			    "the %zu bytes it needs)", name, cut[i] + over[i],
			    cut[i] ? "over its share of the catalog" : "", cut[i] && over[i] ? ", and " : "",
			    over[i] ? "records over " CATALOG_RECORD_MAX_TEXT : "", share[i], need[i]);
		}
		json_object_set_new(status, name, st);
	}
	for (k = 0; k < CATALOG_NKINDS; k++) {
		hk = json_object();
		if (prev)
			hold_kind(cfg, lists, prev, (enum catalog_kind)k, bykey[k]);
		keep_bound(cfg, bykey[k], (enum catalog_kind)k, &ps[k], hk);
		pk = json_object();
		pend_kind(prev, (enum catalog_kind)k, &ps[k], pk, hk);
		if (json_object_size(hk))
			json_object_set(held, catalog_kinds[k].array, hk);
		if (json_object_size(pk))
			json_object_set(pending, catalog_kinds[k].array, pk);
		json_decref(hk);
		json_decref(pk);
		put_kind(doc, records, &catalog_kinds[k], ps[k].v, ps[k].n);
	}
out:
	for (k = 0; k < CATALOG_NKINDS; k++) {
		free(ps[k].v);
		json_decref(bykey[k]);
	}
	free(need);
	free(share);
	free(cut);
	free(over);
	json_object_set_new(doc, "upstreams", status);
	if (json_object_size(held))
		json_object_set(doc, "held", held);
	if (json_object_size(pending))
		json_object_set(doc, "pending", pending);
	json_decref(held);
	json_decref(pending);
	json_object_set_new(doc, "records", records);
	return doc;
}

json_t *
catalog_pending_all(json_t *doc, enum catalog_kind kind)
{
	return json_object_get(json_object_get(idx(doc), "pending"), catalog_kinds[kind].array);
}

json_t *
catalog_pending(json_t *doc, enum catalog_kind kind, const char *key)
{
	return json_object_get(catalog_pending_all(doc, kind), key);
}

json_t *
catalog_held_all(json_t *doc, enum catalog_kind kind)
{
	return json_object_get(json_object_get(idx(doc), "held"), catalog_kinds[kind].array);
}

const char *
catalog_held(json_t *doc, enum catalog_kind kind, const char *key)
{
	return json_string_value(json_array_get(json_object_get(catalog_held_all(doc, kind), key), 0));
}

int
catalog_note(json_t *doc, char *out, size_t len)
{
	const char *name;
	json_t *st;
	size_t at = 0;
	int w;

	out[0] = '\0';
	json_object_foreach(catalog_upstreams(doc), name, st) {
		if (json_integer_value(json_object_get(st, "cut")) <= 0)
			continue;
		w = snprintf(out + at, len - at, "%supstream %s: %lld records left out (over its share of the "
		    "catalog, %lld bytes)", at ? "; " : "", name, (long long)json_integer_value(json_object_get(st, "cut")),
		    (long long)json_integer_value(json_object_get(st, "share")));
		if (w < 0 || (size_t)w >= len - at) {
			out[at] = '\0';	/* the names that fit */
			break;
		}
		at += (size_t)w;
	}
	return at > 0;
}

/* Kind's record texts in doc: 0 with *text and *len, or -1. */
static int
kind_text(json_t *doc, enum catalog_kind kind, const char **text, size_t *len)
{
	json_t *t = json_object_get(json_object_get(doc, "records"), catalog_kinds[kind].array);

	*text = json_string_value(t);
	*len = json_string_length(t);
	return *text ? 0 : -1;
}

/* Record texts one after another (newline-separated): the current one's start and length. */
struct rec_walk {
	const char *text;
	size_t len, at, n;
};

/* Starts w on kind's texts in doc, at its first record: 0, or -1 when it has none. */
static int
rec_first(struct rec_walk *w, json_t *doc, enum catalog_kind kind)
{
	json_t *t = json_object_get(json_object_get(doc, "records"), catalog_kinds[kind].array);
	const char *nl;

	memset(w, 0, sizeof(*w));
	if ((w->text = json_string_value(t)) == NULL || (w->len = json_string_length(t)) == 0)
		return -1;
	nl = memchr(w->text, '\n', w->len);
	w->n = nl ? (size_t)(nl - w->text) : w->len;
	return 0;
}

/* Moves w to the next record: 0, or -1 when there is none. */
static int
rec_next(struct rec_walk *w)
{
	const char *nl;

	if (w->at + w->n >= w->len)
		return -1;
	w->at += w->n + 1;	/* past the newline */
	nl = memchr(w->text + w->at, '\n', w->len - w->at);
	w->n = nl ? (size_t)(nl - (w->text + w->at)) : w->len - w->at;
	return 0;
}

int
catalog_page_text(json_t *doc, enum catalog_kind kind, const uint32_t *ix, size_t from, size_t to,
    struct buf *out)
{
	struct rec_walk w;
	size_t cur = 0, want, i;

	if (buf_putc(out, '[') < 0 || (from < to && rec_first(&w, doc, kind) < 0))
		return -1;
	for (i = from; i < to; i++) {
		if ((want = ix ? ix[i] : i) < cur)
			return -1;	/* not ascending */
		for (; cur < want; cur++)
			if (rec_next(&w) < 0)
				return -1;
		if ((i > from && buf_putc(out, ',') < 0) || buf_append(out, w.text + w.at, w.n) < 0)
			return -1;
	}
	return buf_putc(out, ']');
}

json_t *
catalog_record(json_t *doc, enum catalog_kind kind, size_t ix)
{
	struct rec_walk w;
	size_t i;

	if (rec_first(&w, doc, kind) < 0)
		return NULL;
	for (i = 0; i < ix; i++)
		if (rec_next(&w) < 0)
			return NULL;
	return json_loadb(w.text + w.at, w.n, 0, NULL);
}

/* The index in cfg of the upstream named name, or cfg->n_upstreams. */
static size_t
upstream_ix(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; name && i < cfg->n_upstreams; i++)
		if (strcmp(cfg->upstreams[i].s.name, name) == 0)
			return i;
	return cfg->n_upstreams;
}

/* A tool as its upstream listed it, again (rec: under its name there): the description
 * and input schema add_records gave it when it had none are taken out, those of them
 * whose absence gives the digest the index keeps (the upstream's own record's). */
static void
undo_defaults(json_t *rec, const char *digest)
{
	static const char *const added[2] = { "description", "inputSchema" };
	json_t *schema = json_pack("{s:s}", "type", "object"), *c;
	char d[CANON_DIGEST_LEN];
	int can[2], m, i;

	can[0] = json_equal(json_object_get(rec, "description"), json_object_get(rec, "name"));
	can[1] = json_equal(json_object_get(rec, "inputSchema"), schema);
	json_decref(schema);
	if (digest == NULL || (!can[0] && !can[1]) || (tooldef_digest(CATALOG_TOOLS, rec, d) == 0 && strcmp(d, digest) == 0))
		return;
	for (m = 1; m < 4; m++) {	/* the description, the schema, both */
		if (((m & 1) && !can[0]) || ((m & 2) && !can[1]) || (c = json_copy(rec)) == NULL)
			continue;
		for (i = 0; i < 2; i++)
			if (m >> i & 1)
				json_object_del(c, added[i]);
		if (tooldef_digest(CATALOG_TOOLS, c, d) == 0 && strcmp(d, digest) == 0) {
			for (i = 0; i < 2; i++)
				if (m >> i & 1)
					json_object_del(rec, added[i]);
			m = 4;
		}
		json_decref(c);
	}
}

/* Each record of kind in doc, as its upstreams listed it (its key there), onto their
 * lists (those not NULL): every upstream its route names, the first's record for each. */
static void
lists_kind(json_t *doc, const struct config *cfg, enum catalog_kind kind, json_t **lists)
{
	const struct catalog_kind_info *k = &catalog_kinds[kind];
	json_t *routes = json_object_get(idx(doc), k->routes), *route, *rec, *copy, *arr;
	struct rec_walk w;
	size_t ix = 0, a, i;

	if (rec_first(&w, doc, kind) < 0)
		return;
	do {
		route = json_array_get(routes, ix++);
		if ((rec = json_loadb(w.text + w.at, w.n, 0, NULL)) == NULL)
			continue;
		for (a = 0; a + 1 < json_array_size(route); a += 2) {
			i = upstream_ix(cfg, json_string_value(json_array_get(route, a)));
			if (i == cfg->n_upstreams || lists[i] == NULL || (copy = json_copy(rec)) == NULL)
				continue;
			json_object_set(copy, k->key, json_array_get(route, a + 1));
			if (kind == CATALOG_TOOLS && a == 0)
				undo_defaults(copy, catalog_digest(doc, kind, ix - 1));
			if ((arr = json_object_get(lists[i], k->array)) == NULL)
				json_object_set_new(lists[i], k->array, arr = json_array());
			json_array_append_new(arr, copy);
		}
		json_decref(rec);
	} while (rec_next(&w) == 0);
}

/* The records of kind the pins hold back in doc (pending entries with their record) onto
 * their upstreams' lists (those not NULL). */
static void
lists_held(json_t *doc, const struct config *cfg, enum catalog_kind kind, json_t **lists)
{
	const struct catalog_kind_info *k = &catalog_kinds[kind];
	json_t *e, *rec, *arr;
	const char *key, *text;
	size_t i;

	json_object_foreach(catalog_pending_all(doc, kind), key, e) {
		i = upstream_ix(cfg, json_string_value(json_object_get(e, "upstream")));
		if ((text = json_string_value(json_object_get(e, "record"))) == NULL || i == cfg->n_upstreams ||
		    lists[i] == NULL || (rec = json_loads(text, 0, NULL)) == NULL)
			continue;
		if ((arr = json_object_get(lists[i], k->array)) == NULL)
			json_object_set_new(lists[i], k->array, arr = json_array());
		json_array_append_new(arr, rec);
	}
}

void
catalog_lists(json_t *doc, const struct config *cfg, json_t **lists, const char **reasons)
{
	json_t *ups = catalog_upstreams(doc), *st;
	size_t i;
	int k;

	for (i = 0; i < cfg->n_upstreams; i++) {
		st = json_object_get(ups, cfg->upstreams[i].s.name);
		reasons[i] = json_string_value(json_object_get(st, "reason"));
		lists[i] = json_is_true(json_object_get(st, "ok")) ?
		    json_pack("{s:O}", "caps", json_object_get(st, "caps")) : NULL;
		if (lists[i] && json_is_true(json_object_get(st, "perCaller")))
			json_object_set_new(lists[i], "perCaller", json_true());
		if (lists[i] && json_is_string(json_object_get(st, "version")))
			json_object_set(lists[i], "version", json_object_get(st, "version"));
		if (lists[i] && json_is_object(json_object_get(st, "legacyCaps")))
			json_object_set(lists[i], "legacyCaps", json_object_get(st, "legacyCaps"));
	}
	for (k = 0; k < CATALOG_NKINDS; k++) {
		lists_kind(doc, cfg, (enum catalog_kind)k, lists);
		lists_held(doc, cfg, (enum catalog_kind)k, lists);
	}
}

/* The records in text (len bytes): 1 + its newlines, none when empty. */
static size_t
count_records(const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	size_t n = len > 0;

	while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		n++;
		p++;
	}
	return n;
}

/* The empty catalog's index members, into doc (and no records). */
static void
set_empty(json_t *doc)
{
	json_t *records = json_object();
	int k;

	for (k = 0; k < CATALOG_NKINDS; k++) {
		json_object_set_new(doc, catalog_kinds[k].array, json_array());
		json_object_set_new(doc, catalog_kinds[k].routes, json_array());
		json_object_set_new(records, catalog_kinds[k].array, json_string(""));
	}
	json_object_set_new(doc, "upstreams", json_object());
	json_object_set_new(doc, "records", records);
}

/* Parses the index an unpacked document keeps as text into it: 0 (also when there is
 * none to parse), or -1 when it does not parse or does not match the record texts (doc
 * unchanged then). */
static int
index_parse(json_t *doc)
{
	json_t *text = json_object_get(doc, "index"), *index;
	const char *rec;
	size_t len;
	int k, rc = -1;

	if (text == NULL)
		return 0;
	index = json_loadb(json_string_value(text), json_string_length(text), 0, NULL);
	if (!json_is_object(index))
		goto out;
	for (k = 0; k < CATALOG_NKINDS; k++)
		if (kind_text(doc, (enum catalog_kind)k, &rec, &len) < 0 ||
		    count_records(rec, len) != json_array_size(json_object_get(index, catalog_kinds[k].array)))
			goto out;
	if (json_object_update(doc, index) < 0)
		goto out;
	json_object_del(doc, "index");
	rc = 0;
out:
	json_decref(index);
	return rc;
}

/* doc with its index parsed: an unpacked document keeps its index as text until
 * something reads it (this, on the thread using the document: see catalog.h), and a
 * list page of a gateway without a policy never does. An index that does not parse, or
 * does not match the record texts, leaves the document empty (logged). */
static json_t *
idx(json_t *doc)
{
	if (index_parse(doc) < 0) {
		log_err(NULL, "catalog: the state file's copy does not read back; taken as empty");
		json_object_del(doc, "index");
		set_empty(doc);
	}
	return doc;
}

size_t
catalog_bytes(json_t *doc)
{
	const char *text;
	size_t len, n = 0;
	int k;

	for (k = 0; k < CATALOG_NKINDS; k++)
		if (kind_text(doc, (enum catalog_kind)k, &text, &len) == 0)
			n += len;
	return n;
}

size_t
catalog_count(json_t *doc, enum catalog_kind kind)
{
	const char *text;
	size_t len;

	if (json_object_get(doc, "index") == NULL)
		return json_array_size(json_object_get(doc, catalog_kinds[kind].array));
	return kind_text(doc, kind, &text, &len) == 0 ? count_records(text, len) : 0;
}

const char *
catalog_key(json_t *doc, enum catalog_kind kind, size_t ix)
{
	const struct catalog_kind_info *k = &catalog_kinds[kind];

	return json_string_value(json_object_get(json_array_get(json_object_get(idx(doc), k->array), ix), k->key));
}

const char *
catalog_digest(json_t *doc, enum catalog_kind kind, size_t ix)
{
	return json_string_value(json_object_get(json_array_get(json_object_get(idx(doc), catalog_kinds[kind].array), ix),
	    "digest"));
}

json_t *
catalog_upstreams(json_t *doc)
{
	return json_object_get(idx(doc), "upstreams");
}

int
catalog_pack(json_t *doc, struct buf *out, uint32_t lens[CATALOG_PARTS])
{
	json_t *index = json_copy(idx(doc));	/* shallow: "records" is only left out */
	const char *text;
	size_t len, before;
	char *s = NULL;
	int k, rc = -1;

	if (index == NULL || json_object_del(index, "records") < 0 || (s = json_dumps(index, JSON_COMPACT)) == NULL)
		goto out;
	before = out->len;
	if (buf_puts(out, s) < 0)
		goto out;
	lens[0] = (uint32_t)(out->len - before);
	for (k = 0; k < CATALOG_NKINDS; k++) {
		before = out->len;
		if (kind_text(doc, (enum catalog_kind)k, &text, &len) < 0 || buf_append(out, text, len) < 0)
			goto out;
		lens[1 + k] = (uint32_t)(out->len - before);
	}
	rc = 0;
out:
	free(s);
	json_decref(index);
	return rc;
}

json_t *
catalog_unpack(const char *data, const uint32_t lens[CATALOG_PARTS])
{
	json_t *doc = json_object(), *records = json_object();
	size_t off = lens[0];
	int k;

	if (doc == NULL || records == NULL ||
	    json_object_set_new(doc, "index", json_stringn_nocheck(data, lens[0])) < 0)
		goto bad;
	for (k = 0; k < CATALOG_NKINDS; k++) {
		if (json_object_set_new(records, catalog_kinds[k].array, json_stringn_nocheck(data + off, lens[1 + k])) < 0)
			goto bad;
		off += lens[1 + k];
	}
	if (json_object_set_new(doc, "records", records) < 0) {
		records = NULL;
		goto bad;
	}
	return doc;
bad:
	json_decref(records);
	json_decref(doc);
	return NULL;
}

long
catalog_find_in(json_t *doc, enum catalog_kind kind, const char *key)
{
	const struct catalog_kind_info *k = &catalog_kinds[kind];
	json_t *items = json_object_get(idx(doc), k->array);
	size_t lo = 0, hi = json_array_size(items), mid;
	const char *at;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((at = json_string_value(json_object_get(json_array_get(items, mid), k->key))) == NULL)
			return -1;
		if ((c = strcmp(key, at)) == 0)
			return (long)mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

long
catalog_find(json_t *doc, const char *name)
{
	return catalog_find_in(doc, CATALOG_TOOLS, name);
}

int
catalog_route_alt(json_t *doc, enum catalog_kind kind, long ix, size_t alt, const char **upstream, const char **orig)
{
	json_t *r = ix >= 0 ? json_array_get(json_object_get(idx(doc), catalog_kinds[kind].routes), (size_t)ix) : NULL;

	*upstream = json_string_value(json_array_get(r, 2 * alt));
	*orig = json_string_value(json_array_get(r, 2 * alt + 1));
	return *upstream && *orig ? 0 : -1;
}

int
catalog_route(json_t *doc, enum catalog_kind kind, long ix, const char **upstream, const char **orig)
{
	return catalog_route_alt(doc, kind, ix, 0, upstream, orig);
}

void
catalog_policy_tool(const struct config *cfg, json_t *doc, size_t ix, struct policy_tool *t,
    const char **upstream, const char **orig)
{
	json_t *rec = json_array_get(json_object_get(idx(doc), catalog_kinds[CATALOG_TOOLS].array), ix);
	const char *up = NULL, *o = NULL;

	memset(t, 0, sizeof(*t));
	t->name = json_string_value(json_object_get(rec, "name"));
	t->read_only_hint = json_is_true(json_object_get(json_object_get(rec, "annotations"), "readOnlyHint"));
	if (catalog_route(doc, CATALOG_TOOLS, (long)ix, &up, &o) == 0)
		t->upstream = config_upstream(cfg, up);
	if (upstream)
		*upstream = up;
	if (orig)
		*orig = o;
}

int
catalog_degraded(json_t *doc)
{
	const char *name;
	json_t *st;

	json_object_foreach(catalog_upstreams(doc), name, st)
		if (!json_is_true(json_object_get(st, "ok")))
			return 1;
	return 0;
}

int
catalog_index_ok(json_t *doc)
{
	return index_parse(doc) == 0;
}

int
catalog_same(json_t *a, json_t *b)
{
	return json_equal(idx(a), idx(b));
}
