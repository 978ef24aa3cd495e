/* Unit tests: the pins' verdict on the records a catalog is built from (pinning.h):
 * pinned, new and changed records, hygiene, pin = off | warn | hold and new-tools, what
 * the catalog serves, holds back and keeps as pending, what a held record's caller is
 * told, and a held record kept for the next build. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "fixture.h"
#include "pinning.h"
#include "tap.h"
#include "tooldef.h"

static struct config *cfg;
static json_t *lists[5];	/* a (hold), b (warn), c (off), d (new-tools = hold), e (prefix a_ too) */
static const char *why[5];

static json_t *
tool(const char *name, const char *description)
{
	return json_pack("{s:s, s:s, s:{s:s}}", "name", name, "description", description, "inputSchema", "type", "object");
}

/* Pins upstream's record (kind) as it is now, into p. */
static void
pin(struct pins *p, const char *upstream, enum catalog_kind kind, json_t *record)
{
	char digest[CANON_DIGEST_LEN];
	struct gw_error err;
	struct pin x = { upstream, (enum pins_kind)pinning_kind(kind), NULL, digest, 1796000000, "ops", NULL };

	x.name = json_string_value(json_object_get(record, kind == CATALOG_TEMPLATES ? "uriTemplate" : "name"));
	if (tooldef_digest(kind, record, digest) < 0 || pins_set(p, &x, &err) < 0)
		printf("Bail out! cannot pin %s\n", x.name);
}

static json_t *
served(json_t *doc, const char *name)
{
	long ix = catalog_find(doc, name);

	return ix < 0 ? NULL : json_array_get(json_object_get(doc, "tools"), (size_t)ix);
}

static const char *
pend_str(json_t *doc, enum catalog_kind kind, const char *key, const char *member)
{
	return json_string_value(json_object_get(catalog_pending(doc, kind, key), member));
}

static void
test_verdicts(json_t *doc)
{
	const char *h;

	ok(served(doc, "a_same") && catalog_pending(doc, CATALOG_TOOLS, "a_same") == NULL,
	    "pinned, the same definition: served, nothing pending");
	ok(!served(doc, "a_moved"), "pin = hold, definition changed: not served");
	is_str(catalog_held(doc, CATALOG_TOOLS, "a_moved"), "a", "… held for its upstream");
	is_str(pend_str(doc, CATALOG_TOOLS, "a_moved", "state"), "changed", "… pending: changed");
	ok(pend_str(doc, CATALOG_TOOLS, "a_moved", "pinned") && pend_str(doc, CATALOG_TOOLS, "a_moved", "digest") &&
	    strcmp(pend_str(doc, CATALOG_TOOLS, "a_moved", "pinned"), pend_str(doc, CATALOG_TOOLS, "a_moved", "digest")),
	    "… with both digests, which differ");
	is_str(pend_str(doc, CATALOG_TOOLS, "a_moved", "name"), "moved", "… its name at the upstream");
	ok(pinning_held(doc, CATALOG_TOOLS, "a_moved") != NULL, "… pinning_held finds it");
	ok(pend_str(doc, CATALOG_TOOLS, "a_moved", "record") && strstr(pend_str(doc, CATALOG_TOOLS, "a_moved", "record"),
	    "\"name\":\"moved\""), "… its upstream's own record kept, as text");
	ok(served(doc, "a_fresh") && !pinning_held(doc, CATALOG_TOOLS, "a_fresh"), "new, clean, new-tools = allow: served");
	is_str(pend_str(doc, CATALOG_TOOLS, "a_fresh", "state"), "new", "… pending as new");
	ok(pend_str(doc, CATALOG_TOOLS, "a_fresh", "record") == NULL, "… without its record (it is served)");
	ok(!served(doc, "a_sneaky") && pinning_held(doc, CATALOG_TOOLS, "a_sneaky"), "new with a bidi control, pin = hold: held");
	h = pend_str(doc, CATALOG_TOOLS, "a_sneaky", "hygiene");
	ok(h && strncmp(h, "bidi control: U+202E ", 21) == 0 && strlen(h) > 16 &&
	    strcmp(h + strlen(h) - 16, " at /description") == 0 && !strstr(h, "elif"),
	    "… hygiene says what and where, never the text: %s", h ? h : "(none)");
	ok(served(doc, "b_moved") && !pinning_held(doc, CATALOG_TOOLS, "b_moved"), "pin = warn, changed: served");
	is_str(pend_str(doc, CATALOG_TOOLS, "b_moved", "state"), "changed", "… flagged as changed");
	ok(served(doc, "b_sneaky") && pend_str(doc, CATALOG_TOOLS, "b_sneaky", "hygiene"), "pin = warn, hidden text: served, flagged");
	ok(served(doc, "c_anything") && catalog_pending(doc, CATALOG_TOOLS, "c_anything") == NULL,
	    "pin = off: served, nothing pending");
	ok(!served(doc, "d_fresh") && pinning_held(doc, CATALOG_TOOLS, "d_fresh"), "new-tools = hold, pin = warn: a new tool held");
	ok(served(doc, "d_known"), "… a pinned one of it served");
	ok(served(doc, "a_other") && served(doc, "a_same"), "upstream e, also prefix a_: its a_other served");
	ok(!pinning_held(doc, CATALOG_PROMPTS, "a_hello") && pinning_held(doc, CATALOG_PROMPTS, "a_greet"),
	    "prompts: the pinned one served, the changed one held");
	ok(pinning_held(doc, CATALOG_TEMPLATES, "file:///{path}") != NULL, "a new template with hidden text, pin = hold: held");
	ok(pinning_held(doc, CATALOG_RESOURCES, "file:///motd") != NULL, "… a URI it matches: held with it");
	ok(pinning_held(doc, CATALOG_RESOURCES, "mem://x") == NULL, "… another URI: not");
}

/* A name two upstreams expose: the first's record is held, the second's is not served
 * in its place (a call meant for the first would reach it). */
static void
test_same_name(json_t *doc)
{
	const char *up = NULL, *orig = NULL;

	ok(!served(doc, "a_moved"), "e lists moved under a_ too: a_moved still not served");
	is_str(catalog_held(doc, CATALOG_TOOLS, "a_moved"), "a", "… held for a, not e's");
	ok(catalog_route(doc, CATALOG_TOOLS, catalog_find(doc, "a_other"), &up, &orig) == 0 && strcmp(up, "e") == 0,
	    "e's own tool routed to e");
}

static void
test_refusal(json_t *doc)
{
	static const char sneaky[] = "a_sneaky is held back until an operator approves it: it is new; in its definition: "
	    "bidi control: U+202E";
	struct gw_error err;

	pinning_refusal(pinning_held(doc, CATALOG_TOOLS, "a_moved"), "a_moved", &err);
	is_int(err.code, GW_EPARAMS, "a held tool's refusal: invalid params, as an unknown tool");
	is_str(err.detail, "a_moved is held back until an operator approves it: its definition changed since it was approved",
	    "… saying why");
	pinning_refusal(pinning_held(doc, CATALOG_TOOLS, "a_sneaky"), "a_sneaky", &err);
	ok(strncmp(err.detail, sneaky, strlen(sneaky)) == 0, "… a new one with hidden text: %s", err.detail);
}

/* The next build from what the document holds (catalog_lists): the held records come
 * back with their upstreams' lists, and the verdicts are the same. */
static void
test_again(json_t *doc)
{
	json_t *l[5], *again, *moved = NULL, *t;
	const char *r[5];
	size_t i;

	catalog_lists(doc, cfg, l, r);
	json_array_foreach(json_object_get(l[0], "tools"), i, t)
		if (strcmp(json_string_value(json_object_get(t, "name")), "moved") == 0)
			moved = t;
	ok(moved && strcmp(json_string_value(json_object_get(moved, "description")), "Moves files, and mails them") == 0,
	    "catalog_lists: a held record back in its upstream's list, under its own name");
	again = catalog_build_bound(cfg, l, r, doc);
	ok(json_equal(catalog_pending_all(again, CATALOG_TOOLS), catalog_pending_all(doc, CATALOG_TOOLS)) &&
	    json_equal(catalog_held_all(again, CATALOG_TOOLS), catalog_held_all(doc, CATALOG_TOOLS)),
	    "built again from it: the same pending and held tools");
	ok(json_equal(json_object_get(again, "tools"), json_object_get(doc, "tools")) &&
	    json_equal(json_object_get(again, "prompts"), json_object_get(doc, "prompts")),
	    "… the same tools and prompts served");
	json_decref(again);
	for (i = 0; i < 5; i++)
		json_decref(l[i]);
}

static void
test_pack(json_t *doc)
{
	struct buf b;
	uint32_t lens[CATALOG_PARTS];
	json_t *back = NULL;

	buf_init(&b, CATALOG_MAX_BYTES + 4096);
	ok(catalog_pack(doc, &b, lens) == 0 && (back = catalog_unpack(b.data, lens)) != NULL, "packed and unpacked");
	ok(pinning_held(back, CATALOG_TOOLS, "a_moved") && catalog_held(back, CATALOG_TOOLS, "a_moved"),
	    "… what is held and pending survives the state file");
	json_decref(back);
	buf_free(&b);
}

int
main(int argc, char **argv)
{
	struct pins *p = pins_new();
	struct gw_error err;
	json_t *doc, *old_moved, *old_greet;
	char text[2048];
	size_t i;

	tap_args(argc, argv);
	for (i = 0; i < 5; i++)
		lists[i] = json_object();
	json_object_set_new(lists[0], "tools", json_pack("[o, o, o, o]", tool("same", "Stays the same"),
	    tool("moved", "Moves files, and mails them"), tool("fresh", "Brand new"),
	    tool("sneaky", "Reads \xe2\x80\xae" "elif")));
	json_object_set_new(lists[0], "prompts", json_pack("[{s:s}, {s:s, s:s}]", "name", "hello", "name", "greet",
	    "description", "Greets, and more"));
	json_object_set_new(lists[0], "resourceTemplates", json_pack("[{s:s, s:s, s:s}]", "uriTemplate", "file:///{path}",
	    "name", "files", "description", "Any file\xe2\x80\x8b"));
	json_object_set_new(lists[1], "tools", json_pack("[o, o]", tool("moved", "Moves, and mails"),
	    tool("sneaky", "Reads \xe2\x80\xae" "elif")));
	json_object_set_new(lists[2], "tools", json_pack("[o]", tool("anything", "Whatever \xe2\x80\xae")));
	json_object_set_new(lists[3], "tools", json_pack("[o, o]", tool("fresh", "New here"), tool("known", "Known")));
	json_object_set_new(lists[4], "tools", json_pack("[o, o]", tool("moved", "e's own moved"), tool("other", "e's")));
	/* Approved before: same as now; moved and greet as they were; d's known. */
	old_moved = tool("moved", "Moves files");
	old_greet = json_pack("{s:s, s:s}", "name", "greet", "description", "Greets");
	pin(p, "a", CATALOG_TOOLS, json_array_get(json_object_get(lists[0], "tools"), 0));
	pin(p, "a", CATALOG_TOOLS, old_moved);
	pin(p, "a", CATALOG_PROMPTS, json_array_get(json_object_get(lists[0], "prompts"), 0));
	pin(p, "a", CATALOG_PROMPTS, old_greet);
	pin(p, "b", CATALOG_TOOLS, old_moved);
	pin(p, "d", CATALOG_TOOLS, json_array_get(json_object_get(lists[3], "tools"), 1));
	pin(p, "e", CATALOG_TOOLS, json_array_get(json_object_get(lists[4], "tools"), 0));
	pin(p, "e", CATALOG_TOOLS, json_array_get(json_object_get(lists[4], "tools"), 1));
	snprintf(text, sizeof(text), "%s/p.pins", fixture_dir());
	if (pins_save(p, text, &err) < 0) {
		printf("Bail out! %s\n", err.detail);
		return 1;
	}
	json_decref(old_moved);
	json_decref(old_greet);
	pins_free(p);
	snprintf(text, sizeof(text), "[gateway]\nresource = https://gw.example.com/mcp\npins-file = %s/p.pins\n"
	    "[auth]\nissuer = https://idp.example.com\n"
	    "[upstream \"a\"]\nurl = http://127.0.0.1:9001/mcp\nprefix = a_\npin = hold\n"
	    "[upstream \"b\"]\nurl = http://127.0.0.1:9002/mcp\nprefix = b_\n"
	    "[upstream \"c\"]\nurl = http://127.0.0.1:9003/mcp\nprefix = c_\npin = off\n"
	    "[upstream \"d\"]\nurl = http://127.0.0.1:9004/mcp\nprefix = d_\nnew-tools = hold\n"
	    "[upstream \"e\"]\nurl = http://127.0.0.1:9005/mcp\nprefix = a_\n", fixture_dir());
	if ((cfg = fixture_config(text)) == NULL)
		return 1;
	doc = catalog_build(cfg, lists, why);
	run_case(test_verdicts, doc);
	run_case(test_same_name, doc);
	run_case(test_refusal, doc);
	run_case(test_again, doc);
	run_case(test_pack, doc);
	json_decref(doc);
	for (i = 0; i < 5; i++)
		json_decref(lists[i]);
	config_unref(cfg);
	return done_testing();
}
