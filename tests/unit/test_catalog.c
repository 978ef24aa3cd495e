/* Unit tests: building the federated catalog (prefixes, descriptions, schemas, order,
 * names two upstreams share, invalid names, upstreams left out), finding a tool, list
 * pages cut from the record texts, and the catalog as the state file keeps it. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog_caller.h"
#include "catalog_store.h"
#include "fixture.h"
#include "tap.h"
#include "tooldef.h"

static const char *
name_at(json_t *doc, size_t i)
{
	return json_string_value(json_object_get(json_array_get(json_object_get(doc, "tools"), i), "name"));
}

static struct config *cfg;	/* upstreams github (prefix gh_), files and down */
static json_t *lists[3];	/* what each upstream lists; NULL = it did not answer */
static const char *reasons[3] = { NULL, NULL, "upstream down: connection refused" };

/* The valid tools of the upstreams that answered, once each, sorted by exposed name. */
static void
test_order(json_t *doc)
{
	is_int(json_array_size(json_object_get(doc, "tools")), 3, "valid tools of the upstreams that answered, once each");
	is_str(name_at(doc, 0), "gh_create_issue", "sorted by exposed name");
	is_str(name_at(doc, 1), "gh_search", "… prefixed");
	is_str(name_at(doc, 2), "read_file", "… an empty prefix keeps the name");
}

/* A tool is found by its exposed name, routed to its upstream, and its record passes
 * through; the index keeps only what decisions read. */
static void
test_find(json_t *doc)
{
	json_t *t, *route;
	long ix;

	ix = catalog_find(doc, "gh_search");
	t = catalog_record(doc, CATALOG_TOOLS, (size_t)ix);
	route = json_array_get(json_object_get(doc, "routes"), (size_t)ix);
	is_int(ix, 1, "found by binary search");
	is_str(json_string_value(json_array_get(route, 0)), "github", "… routed to its upstream");
	is_str(json_string_value(json_array_get(route, 1)), "search", "… under its own name");
	ok(json_is_true(json_object_get(json_object_get(t, "annotations"), "readOnlyHint")) &&
	    strcmp(json_string_value(json_object_get(t, "description")), "Search code") == 0 &&
	    strcmp(json_string_value(json_object_get(t, "name")), "gh_search") == 0,
	    "the record passes through (description, annotations), under its exposed name");
	json_decref(t);
	t = json_array_get(json_object_get(doc, "tools"), (size_t)ix);
	ok(json_object_size(t) == 3 && json_is_true(json_object_get(json_object_get(t, "annotations"), "readOnlyHint")) &&
	    json_is_string(json_object_get(t, "digest")),
	    "its index record: the name, readOnlyHint and the digest");
	t = json_array_get(json_object_get(doc, "tools"), (size_t)catalog_find(doc, "read_file"));
	ok(json_object_size(t) == 2 && json_is_string(json_object_get(t, "name")), "… the name and digest without one");
}

/* A list page is the records' texts: the JSON array of the whole records, in the order asked. */
static void
test_page(json_t *doc)
{
	uint32_t ix[] = { 0, 2 };
	struct buf b;
	json_t *page = NULL;

	buf_init(&b, 1 << 20);
	ok(catalog_page_text(doc, CATALOG_TOOLS, NULL, 0, 3, &b) == 0 && (page = json_loads(buf_str(&b), 0, NULL)) != NULL &&
	    json_array_size(page) == 3 && strcmp(json_string_value(json_object_get(json_array_get(page, 1), "description")),
	    "Search code") == 0, "a page of every tool: the whole records");
	json_decref(page);
	page = NULL;
	buf_reset(&b);
	ok(catalog_page_text(doc, CATALOG_TOOLS, ix, 0, 2, &b) == 0 && (page = json_loads(buf_str(&b), 0, NULL)) != NULL &&
	    json_array_size(page) == 2 && strcmp(json_string_value(json_object_get(json_array_get(page, 1), "name")),
	    "read_file") == 0, "a page of some: those, in order");
	json_decref(page);
	buf_reset(&b);
	ok(catalog_page_text(doc, CATALOG_TOOLS, NULL, 1, 1, &b) == 0 && strcmp(buf_str(&b), "[]") == 0, "an empty page");
	buf_reset(&b);
	ok(catalog_page_text(doc, CATALOG_TOOLS, NULL, 2, 4, &b) < 0, "a record past the last: -1");
	buf_reset(&b);
	ok(catalog_page_text(doc, CATALOG_PROMPTS, NULL, 0, 0, &b) == 0 && strcmp(buf_str(&b), "[]") == 0,
	    "a kind without records: an empty page");
	ok(catalog_record(doc, CATALOG_TOOLS, 3) == NULL, "no record 3");
	buf_free(&b);
}

/* As the state file keeps it: packed, then unpacked by a reader, which counts and cuts
 * pages without parsing the index, and parses it when something reads it: then the same
 * document. An index that does not match the record texts reads as the empty catalog. */
static void
test_pack(json_t *doc)
{
	uint32_t lens[CATALOG_PARTS];
	json_t *back;
	struct buf b, page;

	buf_init(&b, 1 << 20);
	buf_init(&page, 1 << 20);
	ok(catalog_pack(doc, &b, lens) == 0 && lens[0] + lens[1] + lens[2] + lens[3] + lens[4] == b.len,
	    "packed: the parts fill the buffer");
	back = catalog_unpack(b.data, lens);
	ok(back && catalog_count(back, CATALOG_TOOLS) == 3 && catalog_page_text(back, CATALOG_TOOLS, NULL, 0, 3, &page) == 0 &&
	    json_object_get(back, "tools") == NULL, "unpacked: counted and a page cut, the index not parsed");
	buf_reset(&b);
	ok(catalog_page_text(doc, CATALOG_TOOLS, NULL, 0, 3, &b) == 0 && strcmp(buf_str(&b), buf_str(&page)) == 0,
	    "… the page the built document gives");
	ok(back && catalog_upstreams(back) && json_equal(back, doc), "… then, once read, the same document");
	json_decref(back);
	buf_reset(&b);
	catalog_pack(doc, &b, lens);
	lens[1] = 0;	/* no tool texts, and every other part shifted */
	back = catalog_unpack(b.data, lens);
	ok(back && catalog_find(back, "gh_search") < 0 && catalog_count(back, CATALOG_TOOLS) == 0 &&
	    catalog_count(back, CATALOG_RESOURCES) == 0 && json_object_size(catalog_upstreams(back)) == 0,
	    "an index that does not match its record texts: read as the empty catalog");
	json_decref(back);
	buf_free(&page);
	buf_free(&b);
}

/* Each record's digest, in its index record only: the upstream's own record's (the
 * prefix and the description the gateway gave it do not count), kept when packed. */
static void
test_digest(json_t *doc)
{
	char want[CANON_DIGEST_LEN];
	const char *got;
	json_t *rec, *back;
	uint32_t lens[CATALOG_PARTS];
	struct buf b;
	long ix = catalog_find(doc, "gh_search");

	tooldef_digest(CATALOG_TOOLS, json_array_get(lists[0], 0), want);
	got = catalog_digest(doc, CATALOG_TOOLS, (size_t)ix);
	is_str(got, want, "a prefixed tool's digest: that of the upstream's record, under its own name");
	rec = json_deep_copy(json_array_get(lists[0], 1));
	tooldef_digest(CATALOG_TOOLS, rec, want);
	got = catalog_digest(doc, CATALOG_TOOLS, (size_t)catalog_find(doc, "gh_create_issue"));
	is_str(got, want, "… of one without a description: without the description the gateway gave it");
	json_object_set_new(rec, "description", json_string("create_issue"));
	tooldef_digest(CATALOG_TOOLS, rec, want);
	ok(got && strcmp(got, want) != 0, "… which is another digest");
	json_decref(rec);
	rec = catalog_record(doc, CATALOG_TOOLS, (size_t)ix);
	ok(rec && json_object_get(rec, "digest") == NULL, "the record sent has no digest");
	json_decref(rec);
	ok(catalog_digest(doc, CATALOG_TOOLS, 99) == NULL, "no record: no digest");
	buf_init(&b, 1 << 20);
	back = catalog_pack(doc, &b, lens) == 0 ? catalog_unpack(b.data, lens) : NULL;
	ok(back && catalog_digest(back, CATALOG_TOOLS, (size_t)ix) && strcmp(catalog_digest(back, CATALOG_TOOLS, (size_t)ix),
	    catalog_digest(doc, CATALOG_TOOLS, (size_t)ix)) == 0, "… kept in the state file's copy");
	json_decref(back);
	buf_free(&b);
}

/* A changed description changes the digest; a resource has none, a prompt and a template
 * have theirs. */
static void
test_digest_changes(void)
{
	const char *why[3] = { NULL, "down", "down" };
	json_t *l[3] = { NULL }, *a, *b;
	char d1[CANON_DIGEST_LEN];

	l[0] = json_pack("{s:[{s:s, s:s}], s:[{s:s}], s:[{s:s}], s:[{s:s}]}", "tools", "name", "t", "description", "one",
	    "prompts", "name", "p", "resources", "uri", "file:///r", "resourceTemplates", "uriTemplate", "file:///{x}");
	a = catalog_build(cfg, l, why);
	snprintf(d1, sizeof(d1), "%s", catalog_digest(a, CATALOG_TOOLS, 0) ? catalog_digest(a, CATALOG_TOOLS, 0) : "");
	json_object_set_new(json_array_get(json_object_get(l[0], "tools"), 0), "description", json_string("two"));
	json_object_set_new(json_array_get(json_object_get(l[0], "tools"), 0), "_meta", json_pack("{s:i}", "x", 1));
	b = catalog_build(cfg, l, why);
	ok(d1[0] && catalog_digest(b, CATALOG_TOOLS, 0) && strcmp(d1, catalog_digest(b, CATALOG_TOOLS, 0)) != 0,
	    "a changed description: another digest");
	ok(catalog_digest(a, CATALOG_PROMPTS, 0) != NULL && catalog_digest(a, CATALOG_TEMPLATES, 0) != NULL &&
	    catalog_digest(a, CATALOG_RESOURCES, 0) == NULL, "a prompt and a template have one, a resource none");
	json_decref(a);
	json_decref(b);
	json_decref(l[0]);
}

/* A name two upstreams expose goes to the first in the file, the second's route after it. */
static void
test_shared_name(json_t *doc)
{
	json_t *route;
	long ix;

	ix = catalog_find(doc, "gh_create_issue");
	route = json_array_get(json_object_get(doc, "routes"), (size_t)ix);
	is_str(json_string_value(json_array_get(route, 0)), "github",
	    "a name two upstreams expose goes to the first in the file");
	{
		const char *up, *orig;

		ok(catalog_route_alt(doc, CATALOG_TOOLS, ix, 1, &up, &orig) == 0 && strcmp(up, "files") == 0 &&
		    strcmp(orig, "gh_create_issue") == 0, "… and the second's route follows, for callers who may not reach it");
		ok(catalog_route_alt(doc, CATALOG_TOOLS, ix, 2, &up, &orig) < 0, "… and no third");
	}
}

/* A record without a description or an inputSchema gets one; its title is kept. */
static void
test_defaults(json_t *doc)
{
	json_t *t;
	long ix;

	ix = catalog_find(doc, "gh_create_issue");
	t = catalog_record(doc, CATALOG_TOOLS, (size_t)ix);
	is_str(json_string_value(json_object_get(t, "description")), "create_issue", "no description: the name");
	ok(json_is_object(json_object_get(t, "inputSchema")), "no inputSchema: an object schema");
	json_decref(t);
	t = catalog_record(doc, CATALOG_TOOLS, (size_t)catalog_find(doc, "read_file"));
	ok(json_is_object(json_object_get(t, "inputSchema")), "a null inputSchema: an object schema");
	is_str(json_string_value(json_object_get(t, "title")), "Read a file", "title kept");
	json_decref(t);
}

/* Names not exposed: an upstream's own name under a prefix, an invalid name, an unknown one. */
static void
test_not_exposed(json_t *doc)
{
	is_int(catalog_find(doc, "search"), -1, "the upstream's own name is not exposed under a prefix");
	is_int(catalog_find(doc, "bad name!"), -1, "an invalid name is left out");
	is_int(catalog_find(doc, "zzz"), -1, "unknown: -1");
}

/* An upstream left out makes the catalog degraded, with its reason. */
static void
test_left_out(json_t *doc)
{
	ok(catalog_degraded(doc), "an upstream left out: degraded");
	is_str(json_string_value(json_object_get(json_object_get(json_object_get(doc, "upstreams"), "down"), "reason")),
	    "upstream down: connection refused", "… with its reason");
}

/* When every upstream answered, the catalog is not degraded. */
static void
test_all_answered(void)
{
	json_t *doc;

	lists[2] = json_array();
	doc = catalog_build(cfg, lists, reasons);
	ok(!catalog_degraded(doc), "every upstream answered: not degraded");
	json_decref(doc);
}

/* A key one upstream lists twice: its first record, one route to it. */
static void
test_listed_twice(void)
{
	json_t *doc, *rec;
	long ix;

	json_decref(lists[0]);
	json_decref(lists[1]);
	lists[0] = json_pack("{s:{s:{}}, s:[{s:s, s:s}, {s:s, s:s}], s:[{s:s}, {s:s, s:s}]}", "caps", "resources",
	    "resources", "uri", "mem://x", "name", "first", "uri", "mem://x", "name", "second",
	    "tools", "name", "search", "name", "search", "description", "again");
	lists[1] = json_pack("{s:{s:{}}, s:[{s:s}]}", "caps", "resources", "resources", "uri", "mem://x");
	doc = catalog_build(cfg, lists, reasons);
	ix = catalog_find_in(doc, CATALOG_RESOURCES, "mem://x");
	{
		const char *up, *orig;

		rec = catalog_record(doc, CATALOG_RESOURCES, (size_t)ix);
		is_str(json_string_value(json_object_get(rec, "name")), "first", "a URI an upstream lists twice: its first record");
		json_decref(rec);
		ok(catalog_route_alt(doc, CATALOG_RESOURCES, ix, 0, &up, &orig) == 0 && strcmp(up, "github") == 0 &&
		    catalog_route_alt(doc, CATALOG_RESOURCES, ix, 1, &up, &orig) == 0 && strcmp(up, "files") == 0 &&
		    catalog_route_alt(doc, CATALOG_RESOURCES, ix, 2, &up, &orig) < 0,
		    "… one route to it, then the other upstream's");
		ix = catalog_find(doc, "gh_search");
		rec = ix >= 0 ? catalog_record(doc, CATALOG_TOOLS, (size_t)ix) : NULL;
		ok(ix >= 0 && catalog_route_alt(doc, CATALOG_TOOLS, ix, 1, &up, &orig) < 0 &&
		    strcmp(json_string_value(json_object_get(rec, "description")), "search") == 0,
		    "a tool an upstream lists twice: its first record, one route");
		json_decref(rec);
	}
	json_decref(doc);
}

/* Lets go of the n upstream lists in l. */
static void
lists_free(json_t **l, size_t n)
{
	while (n > 0)
		json_decref(l[--n]);
}

/* n verbose tools named PREFIX0000…, each about size bytes of description. */
static json_t *
verbose_tools(const char *prefix, size_t n, size_t size)
{
	json_t *a = json_array();
	char name[64], *desc = malloc(size + 1);
	size_t i;

	memset(desc, 'x', size);
	desc[size] = '\0';
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%04zu", prefix, i);
		json_array_append_new(a, json_pack("{s:s, s:s, s:{s:s}}", "name", name, "description", desc,
		    "inputSchema", "type", "object"));
	}
	free(desc);
	return a;
}

/* One upstream listing more than the catalog holds takes nothing from the others: it is
 * cut to its share (its own first records kept), named in its status and the note; an
 * honest one keeps every tool; two large ones split what is left evenly; a record over
 * CATALOG_RECORD_MAX is left out alone; capabilities are kept to what the gateway reads. */
static void
test_shares(void)
{
	json_t *l[3], *doc, *st;
	uint32_t lens[CATALOG_PARTS];
	struct buf b;
	char note[CATALOG_NOTE_MAX];
	long a_first, a_last, big;

	/* github: 1,800 tools of 4 KiB named a…, files: search_docs (sorted after every a…). */
	l[0] = verbose_tools("a", 1800, 4096);
	l[1] = json_pack("{s:{s:{}, s:{s:b, s:s}}, s:[{s:s}]}", "caps", "tools", "x-huge",
	    "listChanged", 1, "junk", "zzz", "tools", "name", "search_docs");
	l[2] = NULL;
	doc = catalog_build(cfg, l, reasons);
	ok(catalog_find(doc, "search_docs") >= 0, "the honest upstream's search_docs is there, after 1,800 verbose a… tools");
	st = json_object_get(catalog_upstreams(doc), "github");
	a_first = catalog_find(doc, "gh_a0000");
	a_last = catalog_find(doc, "gh_a1799");
	ok(a_first >= 0 && a_last < 0 && json_integer_value(json_object_get(st, "cut")) > 0,
	    "the offender keeps its first tools and loses the rest (%lld cut)", (long long)json_integer_value(json_object_get(st, "cut")));
	ok(json_integer_value(json_object_get(st, "tools")) + json_integer_value(json_object_get(st, "cut")) == 1800,
	    "… its status counts what is kept and what is cut");
	ok(json_object_get(json_object_get(catalog_upstreams(doc), "files"), "cut") == NULL, "… the honest one has nothing cut");
	ok(catalog_note(doc, note, sizeof(note)) && strstr(note, "upstream github: ") && !strstr(note, "files"),
	    "the note names the offender alone: %s", note);
	ok(json_object_size(json_object_get(json_object_get(json_object_get(catalog_upstreams(doc), "files"), "caps"), "tools")) == 0 &&
	    json_object_get(json_object_get(json_object_get(catalog_upstreams(doc), "files"), "caps"), "tools") != NULL && json_object_get(json_object_get(json_object_get(catalog_upstreams(doc), "files"), "caps"), "x-huge") == NULL,
	    "capabilities: only what the gateway reads is kept");
	buf_init(&b, CATALOG_MAX_BYTES);
	ok(catalog_pack(doc, &b, lens) == 0, "the catalog fits the state file (%zu bytes)", b.len);
	buf_free(&b);
	json_decref(doc);
	json_decref(l[0]);
	json_decref(l[1]);

	/* Two large ones: each about half. */
	l[0] = verbose_tools("a", 1800, 4096);
	l[1] = verbose_tools("b", 1800, 4096);
	doc = catalog_build(cfg, l, reasons);
	big = (long)json_integer_value(json_object_get(json_object_get(catalog_upstreams(doc), "github"), "tools"));
	ok(labs(big - (long)json_integer_value(json_object_get(json_object_get(catalog_upstreams(doc), "files"), "tools"))) <= 1 &&
	    big > 400, "two upstreams over their shares: an even split (%ld and %lld tools)", big,
	    (long long)json_integer_value(json_object_get(json_object_get(catalog_upstreams(doc), "files"), "tools")));
	json_decref(doc);
	json_decref(l[0]);
	json_decref(l[1]);

	/* A name the offender lost to its share is still its: a later upstream's record of
	 * that name is not served (it would take calls meant for the offender's). */
	l[0] = NULL;
	l[1] = verbose_tools("a", 1800, 4096);
	l[2] = json_pack("[{s:s}, {s:s}]", "name", "a1799", "name", "search_docs");
	doc = catalog_build(cfg, l, reasons);
	ok(catalog_find(doc, "a1799") < 0 && catalog_find(doc, "search_docs") >= 0,
	    "a name the offender lost to its share is not served by a later upstream (its other tools are)");
	is_str(catalog_held(doc, CATALOG_TOOLS, "a1799"), "files", "… it is held for the offender");
	json_decref(doc);
	json_decref(l[1]);
	json_decref(l[2]);

	/* One record over CATALOG_RECORD_MAX: it alone is left out. */
	l[0] = verbose_tools("a", 3, 1024);
	l[2] = verbose_tools("huge", 1, CATALOG_RECORD_MAX + 1);
	json_array_extend(l[0], l[2]);
	json_decref(l[2]);
	l[2] = NULL;
	l[1] = json_pack("[{s:s}]", "name", "search_docs");
	doc = catalog_build(cfg, l, reasons);
	ok(catalog_find(doc, "gh_huge0000") < 0 && catalog_find(doc, "gh_a0002") >= 0 &&
	    json_integer_value(json_object_get(json_object_get(catalog_upstreams(doc), "github"), "cut")) == 1,
	    "a record over %u bytes is left out alone", CATALOG_RECORD_MAX);
	json_decref(doc);
	json_decref(l[0]);
	json_decref(l[1]);
}

/* A name stays with the upstream that offered it first: while that one is down, another
 * upstream's record of the same name is not served, and the name is held for it; once it
 * is back, it is its again. Held names carry over rebuilds while it stays down. */
static void
test_bound(void)
{
	const char *why[3] = { NULL, "upstream files: connection refused", NULL };
	json_t *l[3], *prev, *doc, *again;

	l[0] = json_pack("[{s:s}]", "name", "search");
	l[1] = json_pack("{s:[{s:s}, {s:s}], s:[{s:s}]}", "tools", "name", "transfer", "name", "balance",
	    "resources", "uri", "bank://ledger");
	l[2] = json_pack("{s:[{s:s}, {s:s}], s:[{s:s}]}", "tools", "name", "transfer", "name", "other",
	    "resources", "uri", "bank://ledger");
	prev = catalog_build(cfg, l, reasons);
	json_decref(l[1]);
	l[1] = NULL;	/* files down */
	doc = catalog_build_bound(cfg, l, why, prev);
	ok(catalog_find(doc, "transfer") < 0 && catalog_find(doc, "other") >= 0,
	    "files down: its transfer is not served by down's transfer (down's other is)");
	is_str(catalog_held(doc, CATALOG_TOOLS, "transfer"), "files", "… transfer is held for files");
	ok(catalog_held(doc, CATALOG_TOOLS, "balance") && catalog_held(doc, CATALOG_RESOURCES, "bank://ledger") &&
	    catalog_find_in(doc, CATALOG_RESOURCES, "bank://ledger") < 0, "… and balance and bank://ledger too");
	ok(catalog_held(doc, CATALOG_TOOLS, "other") == NULL && catalog_held(doc, CATALOG_TOOLS, "search") == NULL,
	    "… nothing else is held");
	again = catalog_build_bound(cfg, l, why, doc);	/* rebuilt while it is still down */
	is_str(catalog_held(again, CATALOG_TOOLS, "transfer"), "files", "rebuilt while files stays down: still held");
	ok(catalog_find(again, "transfer") < 0, "… and not served by another");
	json_decref(doc);
	l[1] = json_pack("[{s:s}]", "name", "transfer");
	doc = catalog_build_bound(cfg, l, why, again);
	ok(catalog_find(doc, "transfer") >= 0 && catalog_held(doc, CATALOG_TOOLS, "transfer") == NULL,
	    "files back: transfer is listed, and its");
	json_decref(doc);
	json_decref(again);
	json_decref(prev);
	lists_free(l, 3);
}

/* What each upstream offered, taken back from a catalog (catalog_lists: a caller's
 * catalog is made from the host's and that caller's own lists), builds the same catalog
 * again: the same index, routes, held names and record texts; also from the copy the
 * state file keeps. An upstream left out stays out, with its reason; one listed per
 * caller keeps its mark. */
static void
test_lists(void)
{
	const char *why[3] = { NULL, NULL, "upstream down: connection refused" }, *back_why[3];
	json_t *l[3], *back[3], *doc, *again, *copy;
	struct buf a, b;
	uint32_t lens[CATALOG_PARTS];
	int k, same_text = 1;

	l[0] = json_pack("{s:{s:{}, s:{}}, s:[{s:s, s:s}, {s:s}], s:[{s:s}], s:b}", "caps", "tools", "prompts",
	    "tools", "name", "search", "description", "Search code", "name", "create_issue",
	    "prompts", "name", "triage", "perCaller", 1);
	l[1] = json_pack("{s:{s:{}, s:{}}, s:[{s:s}, {s:s}], s:[{s:s, s:s}], s:[{s:s}]}", "caps", "tools", "resources",
	    "tools", "name", "read_file", "name", "gh_search",
	    "resources", "uri", "file:///a", "name", "a", "resourceTemplates", "uriTemplate", "file:///{p}");
	l[2] = NULL;
	doc = catalog_build(cfg, l, why);
	catalog_lists(doc, cfg, back, back_why);
	again = catalog_build_bound(cfg, back, back_why, doc);
	ok(catalog_same(doc, again), "the lists taken back build the same index, routes and statuses");
	buf_init(&a, CATALOG_MAX_BYTES);
	buf_init(&b, CATALOG_MAX_BYTES);
	for (k = 0; k < CATALOG_NKINDS; k++) {
		buf_reset(&a);
		buf_reset(&b);
		catalog_page_text(doc, (enum catalog_kind)k, NULL, 0, catalog_count(doc, (enum catalog_kind)k), &a);
		catalog_page_text(again, (enum catalog_kind)k, NULL, 0, catalog_count(again, (enum catalog_kind)k), &b);
		same_text &= a.len == b.len && memcmp(buf_str(&a), buf_str(&b), a.len) == 0;
	}
	ok(same_text, "… and the same record texts, kind by kind");
	ok(back[2] == NULL && back_why[2] && strcmp(back_why[2], why[2]) == 0, "the upstream left out: out, with its reason");
	ok(json_is_true(json_object_get(json_object_get(catalog_upstreams(again), "github"), "perCaller")),
	    "an upstream listed per caller keeps its mark");
	ok(strcmp(json_string_value(json_object_get(json_array_get(json_object_get(back[0], "tools"), 1), "name")),
	    "search") == 0 && json_array_size(json_object_get(back[1], "tools")) == 2,
	    "each record under its key upstream (its prefix taken off), also where two expose one name");
	lists_free(back, 3);
	json_decref(again);
	buf_reset(&a);
	copy = catalog_pack(doc, &a, lens) == 0 ? catalog_unpack(a.data, lens) : NULL;
	catalog_lists(copy, cfg, back, back_why);
	again = catalog_build_bound(cfg, back, back_why, copy);
	ok(copy && catalog_same(doc, again), "… from the copy the state file keeps, the same catalog");
	lists_free(back, 3);
	json_decref(again);
	json_decref(copy);
	json_decref(doc);
	buf_free(&a);
	buf_free(&b);
	lists_free(l, 3);
}

/* A worker's catalogs of callers: each caller's own, kept while the host's catalog, the
 * configuration and catalog-ttl hold, never another's; at most CATALOG_CALLERS_BYTES of
 * records in all. (No upstream is listed per caller here: a caller's catalog is the
 * host's, made again, and nothing is fetched.) */
static void
test_callers(void)
{
	const char *why[3] = { NULL, NULL, NULL };
	struct catalog_callers *cc = catalog_callers_new();
	struct catalog_fetcher alice = { NULL, NULL, NULL, "a11ce", NULL }, bob = { NULL, NULL, NULL, "b0b", NULL };
	struct catalog_fetcher who[5];
	char names[5][8];
	json_t *l[3], *shared, *a1, *a2, *b1, *a3, *big, *docs[5];
	size_t i, kept;

	l[0] = json_pack("[{s:s}]", "name", "search");
	l[1] = json_pack("[{s:s}]", "name", "read_file");
	l[2] = NULL;
	shared = catalog_build(cfg, l, why);
	a1 = catalog_caller_get(cc, &alice, cfg, shared, 7, 1000);
	b1 = catalog_caller_get(cc, &bob, cfg, shared, 7, 1000);
	a2 = catalog_caller_get(cc, &alice, cfg, shared, 7, 2000);
	ok(a1 != shared && catalog_same(a1, shared), "a caller's catalog: made from the host's (the same records here)");
	ok(a2 == a1 && b1 != a1, "… kept for that caller, never given to another");
	a3 = catalog_caller_get(cc, &alice, cfg, shared, 8, 2000);
	ok(a3 != a1, "the host's catalog changed (another view serial): made again");
	json_decref(a1);
	json_decref(a2);
	json_decref(a3);
	a1 = catalog_caller_get(cc, &alice, cfg, shared, 8, 2000 + cfg->catalog_ttl * 1000);
	ok(a1 != a3, "catalog-ttl passed: made again");
	json_decref(a1);
	json_decref(b1);
	lists_free(l, 3);
	/* Catalogs of nearly 4 MiB each: CATALOG_CALLERS_BYTES keeps what fits. */
	l[0] = verbose_tools("a", 1800, 2000);
	l[1] = NULL;
	big = catalog_build(cfg, l, why);
	for (i = 0; i < 5; i++) {
		snprintf(names[i], sizeof(names[i]), "c%zu", i);
		who[i] = (struct catalog_fetcher){ NULL, NULL, NULL, names[i], NULL };
		docs[i] = catalog_caller_get(cc, &who[i], cfg, big, 9, 3000);
	}
	for (i = 5, kept = 0; i-- > 0;) {	/* the latest first: a miss makes room by the least recent */
		a1 = catalog_caller_get(cc, &who[i], cfg, big, 9, 3001);
		kept += a1 == docs[i];
		json_decref(a1);
	}
	ok(kept == CATALOG_CALLERS_BYTES / catalog_bytes(big) && kept < 5,
	    "catalogs of %zu bytes each: %zu kept, within %u bytes", catalog_bytes(big), kept, CATALOG_CALLERS_BYTES);
	for (i = 0; i < 5; i++)
		json_decref(docs[i]);
	json_decref(big);
	json_decref(shared);
	lists_free(l, 3);
	catalog_callers_free(cc);
}

int
main(int argc, char **argv)
{
	json_t *doc;

	tap_args(argc, argv);
	if ((cfg = fixture_config("[gateway]\nresource = https://gw.example.com/mcp\nname = gw\nversion = 1\n"
	    "[auth]\nissuer = https://idp.example.com\n"
	    "[upstream \"github\"]\nurl = http://127.0.0.1:9001/mcp\nprefix = gh_\n"
	    "[upstream \"files\"]\nurl = http://127.0.0.1:9002/mcp\n"
	    "[upstream \"down\"]\nurl = http://127.0.0.1:9003/mcp\n")) == NULL)
		return 1;

	/* The catalog of the next six tests: upstream down did not answer. */
	lists[0] = json_pack("[{s:s, s:s, s:{s:s}, s:{s:b}}, {s:s}, {s:s}, {s:i}]",
	    "name", "search", "description", "Search code", "inputSchema", "type", "object",
	    "annotations", "readOnlyHint", 1,
	    "name", "create_issue",
	    "name", "bad name!",
	    "name", 7);
	lists[1] = json_pack("[{s:s, s:s, s:n}, {s:s}, {s:s}]",
	    "name", "read_file", "title", "Read a file", "inputSchema",
	    "name", "gh_search",
	    "name", "gh_create_issue");
	lists[2] = NULL;
	doc = catalog_build(cfg, lists, reasons);
	run_case(test_order, doc);
	run_case(test_find, doc);
	run_case(test_page, doc);
	run_case(test_pack, doc);
	run_case(test_digest, doc);
	run_case(test_shared_name, doc);
	run_case(test_defaults, doc);
	run_case(test_not_exposed, doc);
	run_case(test_left_out, doc);
	json_decref(doc);

	run_case(test_all_answered);
	run_case(test_digest_changes);
	run_case(test_listed_twice);
	run_case(test_shares);
	run_case(test_bound);
	run_case(test_lists);
	run_case(test_callers);
	lists_free(lists, 3);
	config_unref(cfg);
	return done_testing();
}
