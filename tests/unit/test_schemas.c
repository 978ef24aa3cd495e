/* Unit tests: a thread's compiled tool schemas (src/model/schemas.c) — compiled on the
 * first need and kept by catalog document and tool, a document's reference held while
 * kept and given back when it goes, schemas that do not compile kept with their reason,
 * other options compiled again. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "fixture.h"
#include "schemas.h"
#include "tap.h"

static struct config *cfg;

/* A catalog of one upstream's tools (a JSON array of records). */
static json_t *
doc_of(const char *tools)
{
	json_t *list = json_loads(tools, 0, NULL), *doc;
	json_t *lists[1] = { list };
	const char *reasons[1] = { NULL };

	doc = catalog_build(cfg, lists, reasons);
	json_decref(list);
	return doc;
}

static const char *const TOOLS =
    "[{\"name\": \"add\", \"inputSchema\": {\"type\": \"object\", \"required\": [\"a\"],"
    "   \"properties\": {\"a\": {\"type\": \"integer\"}}},"
    "  \"outputSchema\": {\"type\": \"object\", \"required\": [\"sum\"]}},"
    " {\"name\": \"bad\", \"inputSchema\": {\"type\": \"object\", \"properties\":"
    "   {\"u\": {\"type\": \"string\", \"pattern\": \"^(?!admin)\"}}}},"
    " {\"name\": \"none\", \"description\": \"no schema at all\"},"
    " {\"name\": \"tuple\", \"inputSchema\": {\"type\": \"object\", \"properties\":"
    "   {\"p\": {\"items\": [{\"type\": \"string\"}], \"additionalItems\": false}}}}]";

static void
test_compiled_once(struct schemas *c, json_t *doc)
{
	const struct schemas_opts o = { JSCHEMA_DRAFT_2020_12, 0 };
	const struct tool_schemas *ts = NULL, *again = NULL;
	const struct jschema *first;
	json_t *good = json_pack("{s:i}", "a", 1), *wrong = json_pack("{s:s}", "a", "x");
	long ix = catalog_find(doc, "add");

	ok(schemas_of(c, doc, (size_t)ix, &o, &ts) == 0 && ts->in && ts->out && !ts->in_failed && !ts->out_failed,
	    "a tool's inputSchema and outputSchema, compiled");
	ok(jschema_validate(ts->in, good, NULL) == 1 && jschema_validate(ts->in, wrong, NULL) == 0,
	    "… the inputSchema's: {a: 1} valid, {a: \"x\"} not");
	first = ts->in;
	ok(schemas_of(c, doc, (size_t)ix, &o, &again) == 0 && again->in == first, "asked again: the same, not compiled again");
	ok(schemas_of(c, doc, (size_t)catalog_find(doc, "none"), &o, &ts) == 0 && ts->in != NULL && ts->out == NULL &&
	    !ts->in_failed && !ts->out_failed, "a tool without schemas: the catalog's inputSchema {type: object}, no output one");
	ok(schemas_of(c, doc, 99, &o, &ts) < 0, "no such tool: -1");
	json_decref(good);
	json_decref(wrong);
}

static void
test_failed(struct schemas *c, json_t *doc)
{
	const struct schemas_opts o = { JSCHEMA_DRAFT_2020_12, 0 }, d7 = { JSCHEMA_DRAFT_07, 0 };
	const struct tool_schemas *ts = NULL;
	json_t *three = json_pack("{s:[s,s]}", "p", "x", "y");
	long tuple = catalog_find(doc, "tuple");

	int rc = schemas_of(c, doc, (size_t)catalog_find(doc, "bad"), &o, &ts);

	ok(rc == 0 && ts->in == NULL && ts->in_failed && strstr(ts->in_reason, "pattern") != NULL,
	    "a lookahead pattern: failed, with the reason (%s)", rc == 0 ? ts->in_reason : "-");
	ok(schemas_of(c, doc, (size_t)tuple, &d7, &ts) == 0 && ts->in && jschema_validate(ts->in, three, NULL) == 0,
	    "read as draft-07: a tuple items with additionalItems false refuses a second item");
	ok(schemas_of(c, doc, (size_t)tuple, &o, &ts) == 0 && (ts->in_failed || jschema_validate(ts->in, three, NULL) == 1),
	    "other options: compiled again, as 2020-12 (where items is no tuple)");
	json_decref(three);
}

/* The documents used last are kept, each with a reference of its own; the one used
 * longest ago goes (its reference given back) when another comes. */
static void
test_documents(struct schemas *c)
{
	const struct schemas_opts o = { JSCHEMA_DRAFT_2020_12, 0 };
	const struct tool_schemas *ts;
	json_t *docs[SCHEMAS_DOCS + 1];
	size_t i, refs_before;

	for (i = 0; i <= SCHEMAS_DOCS; i++)
		docs[i] = doc_of(TOOLS);
	refs_before = docs[0]->refcount;
	for (i = 0; i < SCHEMAS_DOCS; i++)
		schemas_of(c, docs[i], 0, &o, &ts);
	is_int((long)docs[0]->refcount, (long)refs_before + 1, "a document kept: a reference of its own");
	schemas_of(c, docs[SCHEMAS_DOCS], 0, &o, &ts);
	is_int((long)docs[0]->refcount, (long)refs_before, "one more than it keeps: the one used longest ago given back");
	is_int((long)docs[1]->refcount, (long)refs_before + 1, "… the others kept");
	for (i = 0; i <= SCHEMAS_DOCS; i++)
		json_decref(docs[i]);
}

int
main(int argc, char **argv)
{
	struct schemas *c = schemas_new();
	json_t *doc;

	tap_args(argc, argv);
	cfg = fixture_config("[gateway]\nresource = https://gw.example.com/mcp\n"
	    "[auth]\nissuer = https://idp.example.com\nintrospection-endpoint = https://idp.example.com/i\n"
	    "client-id = gw\n[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\n");
	if (cfg == NULL || c == NULL)
		return 1;
	doc = doc_of(TOOLS);
	run_case(test_compiled_once, c, doc);
	run_case(test_failed, c, doc);
	run_case(test_documents, c);
	schemas_free(c);
	json_decref(doc);
	config_unref(cfg);
	return done_testing();
}
