/* The catalog builder (catalog_build, src/model/catalog.c) from what three upstreams answered
 * (a fixed configuration: prefixes "a_", none, "c_"). The input is a JSON array whose
 * elements stand for the upstreams in order: an object {"caps", "tools", "prompts",
 * "resources", "resourceTemplates"}, a bare array of tools, or null for one that
 * failed. Properties: every kind's records are sorted by key without repeats, each
 * found by catalog_find_in at its place with a route to an upstream of the
 * configuration, and its whole record (catalog_record) under the same key; every tool
 * has a string description and an object inputSchema; a page of all the records is a
 * JSON array of them; every upstream has a status; the capabilities and offers derived
 * from the document can be computed; and the document packed as the state file keeps
 * it unpacks to one that counts its records alike before its index is read, and is the
 * same once it is. Pinning (no pins: every record new; "a" holds what hygiene flags,
 * "c" holds every new record): every pending entry names its upstream; a held one's
 * key is held for that upstream and never served, with the upstream's record kept as
 * JSON text; built again from what the document says each upstream offered
 * (catalog_lists), the same keys are held. */
#include "autoconf.h"

#include <jansson.h>

#include "catalog.h"
#include "federate.h"
#include "fuzz.h"

#define UPSTREAMS	3

static struct config *cfg;

void
fuzz_setup(void)
{
	cfg = fuzz_config("[gateway]\nresource = https://gw.example.com/mcp\n"
	    "[auth]\nissuer = https://idp.example.com\n"
	    "[upstream \"a\"]\nurl = http://127.0.0.1:9/mcp\nprefix = a_\npin = hold\nmax-description = 64\n"
	    "[upstream \"b\"]\nurl = http://127.0.0.1:9/mcp\n"
	    "[upstream \"c\"]\nurl = http://127.0.0.1:9/mcp\nprefix = c_\nnew-tools = hold\n");
	FUZZ_CHECK(cfg->n_upstreams == UPSTREAMS);
}

static void
check_kind(json_t *doc, enum catalog_kind k)
{
	const struct catalog_kind_info *kd = &catalog_kinds[k];
	json_t *items = json_object_get(doc, kd->array), *rec, *whole, *page;
	const char *key, *prev = NULL, *up, *orig;
	struct buf b;
	size_t i, alt;

	FUZZ_CHECK(json_is_array(items));
	FUZZ_CHECK(json_array_size(json_object_get(doc, kd->routes)) == json_array_size(items));
	json_array_foreach(items, i, rec) {
		key = json_string_value(json_object_get(rec, kd->key));
		FUZZ_CHECK(key != NULL);
		FUZZ_CHECK(prev == NULL || strcmp(prev, key) < 0);
		FUZZ_CHECK(catalog_find_in(doc, k, key) == (long)i);
		FUZZ_CHECK(catalog_route(doc, k, (long)i, &up, &orig) == 0);
		for (alt = 0; catalog_route_alt(doc, k, (long)i, alt, &up, &orig) == 0; alt++)
			FUZZ_CHECK(config_upstream(cfg, up) != NULL);
		FUZZ_CHECK(alt >= 1 && alt <= UPSTREAMS);
		FUZZ_CHECK((whole = catalog_record(doc, k, i)) != NULL);
		FUZZ_CHECK(json_equal(json_object_get(whole, kd->key), json_object_get(rec, kd->key)));
		if (k == CATALOG_TOOLS) {
			FUZZ_CHECK(json_is_string(json_object_get(whole, "description")));
			FUZZ_CHECK(json_is_object(json_object_get(whole, "inputSchema")));
		}
		json_decref(whole);
		prev = key;
	}
	buf_init(&b, 64u << 20);
	FUZZ_CHECK(catalog_page_text(doc, k, NULL, 0, json_array_size(items), &b) == 0);
	FUZZ_CHECK((page = json_loadb(b.data, b.len, 0, NULL)) != NULL);
	FUZZ_CHECK(json_array_size(page) == json_array_size(items));
	json_decref(page);
	buf_free(&b);
}

/* What the pins made of doc's records of kind (catalog_pending), as said above. */
static void
check_pending(json_t *doc, enum catalog_kind k)
{
	json_t *e, *rec;
	const char *key, *up;

	json_object_foreach(catalog_pending_all(doc, k), key, e) {
		FUZZ_CHECK(k != CATALOG_RESOURCES);
		FUZZ_CHECK((up = json_string_value(json_object_get(e, "upstream"))) != NULL);
		FUZZ_CHECK(config_upstream(cfg, up) != NULL);
		if (!json_is_true(json_object_get(e, "held")))
			continue;
		FUZZ_CHECK(catalog_find_in(doc, k, key) < 0);
		FUZZ_CHECK(catalog_held(doc, k, key) != NULL && strcmp(catalog_held(doc, k, key), up) == 0);
		FUZZ_CHECK((rec = json_loads(json_string_value(json_object_get(e, "record")), 0, NULL)) != NULL);
		json_decref(rec);
	}
}

/* Built again from what doc says each upstream offered: the same keys held. */
static void
check_again(json_t *doc)
{
	json_t *lists[UPSTREAMS], *again;
	const char *reasons[UPSTREAMS];
	size_t i;
	int k;

	catalog_lists(doc, cfg, lists, reasons);
	again = catalog_build_bound(cfg, lists, reasons, doc);
	for (k = 0; k < CATALOG_NKINDS; k++)
		FUZZ_CHECK(json_equal(catalog_held_all(again, (enum catalog_kind)k), catalog_held_all(doc, (enum catalog_kind)k)) ||
		    (catalog_held_all(again, (enum catalog_kind)k) == NULL && catalog_held_all(doc, (enum catalog_kind)k) == NULL));
	json_decref(again);
	for (i = 0; i < UPSTREAMS; i++)
		json_decref(lists[i]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *in = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL), *lists[UPSTREAMS];
	const char *reasons[UPSTREAMS] = { "down", NULL, "slow" };
	json_t *doc, *caps, *el, *back;
	uint32_t lens[CATALOG_PARTS];
	struct buf b;
	size_t i;
	int k;

	if (!json_is_array(in)) {
		json_decref(in);
		return 0;
	}
	for (i = 0; i < UPSTREAMS; i++) {
		el = json_array_get(in, i);
		lists[i] = json_is_null(el) ? NULL : el;
	}
	doc = catalog_build(cfg, lists, reasons);
	FUZZ_CHECK(doc != NULL);
	for (k = 0; k < CATALOG_NKINDS; k++) {
		check_kind(doc, (enum catalog_kind)k);
		check_pending(doc, (enum catalog_kind)k);
	}
	check_again(doc);
	FUZZ_CHECK(json_object_size(json_object_get(doc, "upstreams")) == UPSTREAMS);
	FUZZ_CHECK(catalog_degraded(doc) == (lists[0] == NULL || lists[1] == NULL || lists[2] == NULL));
	caps = fed_capabilities(doc, NULL);
	FUZZ_CHECK(json_is_object(caps));
	json_decref(caps);
	(void)fed_offers(doc, "resources/read", NULL);
	(void)fed_offers(doc, "prompts/get", NULL);
	/* As the state file keeps it: packed, and read back by every worker. */
	buf_init(&b, 64u << 20);
	FUZZ_CHECK(catalog_pack(doc, &b, lens) == 0);
	FUZZ_CHECK((back = catalog_unpack(b.data, lens)) != NULL);
	for (k = 0; k < CATALOG_NKINDS; k++)	/* counted from the texts, before the index is read */
		FUZZ_CHECK(catalog_count(back, (enum catalog_kind)k) == catalog_count(doc, (enum catalog_kind)k));
	FUZZ_CHECK(catalog_upstreams(back) != NULL);	/* the index read */
	FUZZ_CHECK(json_equal(back, doc));
	for (k = 0; k < CATALOG_NKINDS; k++)
		check_kind(back, (enum catalog_kind)k);
	buf_free(&b);
	json_decref(back);
	json_decref(doc);
	json_decref(in);
	return 0;
}
