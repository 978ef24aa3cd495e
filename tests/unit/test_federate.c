/* Unit tests: RFC 6570 template matching, the capabilities the gateway announces, and
 * the routing answers that need no upstream (unknown names and URIs, bad params). The
 * relay itself runs against real upstreams in tests/fed/. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "federate.h"
#include "uritemplate.h"
#include "url.h"
#include "jsonrpc.h"
#include "fixture.h"
#include "tap.h"

static const struct {
	const char *tmpl, *uri;
	int want;
} uris[] = {
	{ "test://template/{id}/data", "test://template/123/data", 1 },
	{ "test://template/{id}/data", "test://template/abc-9/data", 1 },
	{ "test://template/{id}/data", "test://template//data", 0 },		/* a simple value is not empty */
	{ "test://template/{id}/data", "test://template/1/2/data", 0 },		/* nor holds a / */
	{ "test://template/{id}/data", "test://template/1/data/x", 0 },
	{ "test://template/{id}/data", "test://template/1/dat", 0 },
	{ "file:///{+path}", "file:///etc/hosts", 1 },				/* reserved: / allowed */
	{ "file:///{+path}", "file:///", 1 },
	{ "repo://{owner}/{name}", "repo://octo/hello", 1 },
	{ "repo://{owner}/{name}", "repo://octo", 0 },
	{ "x://{a}-{b}", "x://1-2-3", 1 },					/* backtracking */
	{ "x://{a}-{b}-z", "x://1-2-3", 0 },
	{ "search://q{?q,lang}", "search://q?q=cat&lang=en", 1 },
	{ "search://q{?q,lang}", "search://q", 1 },				/* undefined: nothing */
	{ "search://q{?q,lang}", "search://qq", 0 },
	{ "doc://{name}{#section}", "doc://readme#install", 1 },
	{ "img://{name}{.ext}", "img://logo.png", 1 },
	{ "p://{/segs}", "p:///a/b", 1 },
	{ "p://x{/segs}", "p://x/a/b", 1 },
	{ "p://x{/segs}", "p://xa", 0 },
	{ "plain://no-vars", "plain://no-vars", 1 },
	{ "plain://no-vars", "plain://no-vars2", 0 },
	{ "broken://{id", "broken://{id", 0 },					/* no closing brace */
};

/* URIs an upstream could resolve to another resource than the string the policy
 * matched (NULL: none), and some it could not. */
static const struct {
	const char *uri, *why;
} ambiguous[] = {
	{ "file:///docs/readme.txt", NULL },
	{ "file:///docs/a.b/..c/...", NULL },			/* dots in a name, three dots */
	{ "test://template/{id}/data", NULL },			/* a template */
	{ "file:///docs/caf%C3%A9%20menu.txt", NULL },		/* escapes of UTF-8 and a blank */
	{ "file:///docs/caf\xc3\xa9", NULL },
	{ "search://q?q=a.b&x=..y", NULL },
	{ "file:///docs/../etc/passwd", "a dot segment" },
	{ "file:///docs/./x", "a dot segment" },
	{ "file:///docs/..", "a dot segment" },
	{ "file:///docs/x/../../secret/key.txt", "a dot segment" },
	{ "file:///docs//../etc/passwd", "a dot segment" },
	{ "file:///docs/%2e%2e/etc/passwd", "a dot segment" },
	{ "file:///docs/%2E./etc/passwd", "a dot segment" },
	{ "file:///docs/.%2e", "a dot segment" },
	{ "file:///docs/..;/etc/passwd", "a dot segment" },	/* a path parameter */
	{ "file:///docs/..?x", "a dot segment" },
	{ "file:///docs/..#x", "a dot segment" },
	{ "http://h/docs/x?/../../etc", "a dot segment" },	/* a naive resolver takes the query as path */
	{ "file:///docs/..%2fsecret/key.txt", "an encoded '/'" },
	{ "file:///docs/x%2Fy", "an encoded '/'" },
	{ "file:///docs/..%3fx", "a dot segment" },		/* an encoded '?' ends a segment too */
	{ "file:///docs/..\\etc\\passwd", "a backslash" },
	{ "file:///docs/..%5cetc", "a backslash" },
	{ "file:///docs/x%00.txt", "a control character" },
	{ "file:///docs/x\t", "a control character" },
	{ "file:///docs/%c0%ae%c0%ae/etc", "an escape that does not decode to UTF-8" },	/* overlong '.' */
	{ "file:///docs/%e0%80%ae", "an escape that does not decode to UTF-8" },
	{ "file:///docs/%c3", "an escape that does not decode to UTF-8" },
	{ "file:///docs/%ff", "an escape that does not decode to UTF-8" },
};

static void
test_ambiguous(void)
{
	const char *why;
	size_t i;

	for (i = 0; i < sizeof(ambiguous) / sizeof(ambiguous[0]); i++) {
		why = url_resource_ambiguous(ambiguous[i].uri);
		ok(ambiguous[i].why ? why && strcmp(why, ambiguous[i].why) == 0 : why == NULL,
		    "%s: %s (%s)", ambiguous[i].uri, ambiguous[i].why ? ambiguous[i].why : "taken as it is",
		    why ? why : "none");
	}
}

static json_t *
call(struct fed_call *f, const char *method, const char *params)
{
	json_t *p = json_loads(params, 0, NULL), *r;

	r = fed_request(f, method, p);
	json_decref(p);
	return r;
}

static struct config *cfg;	/* upstreams a (prefix a_) and b */
static const char *reasons[2] = { NULL, "upstream b: down" };

/* Each template of the table expands to its URIs and to no others. */
static void
test_templates(void)
{
	size_t i;

	for (i = 0; i < sizeof(uris) / sizeof(uris[0]); i++)
		is_int(uritemplate_matches(uris[i].tmpl, uris[i].uri), uris[i].want, "%s %s %s",
		    uris[i].uri, uris[i].want ? "expands" : "does not expand", uris[i].tmpl);
}

/* A template that would backtrack without end gives up; a long one that matches still does. */
static void
test_backtracking(void)
{
	char longuri[4096];

	memset(longuri, 'a', sizeof(longuri) - 1);
	longuri[sizeof(longuri) - 1] = '\0';
	is_int(uritemplate_matches("{a}{b}{c}{d}{e}{f}{g}{h}!", longuri), 0,
	    "a template that would backtrack forever gives up (no match)");
	/* Expressions that can take the same characters, then a literal they can take too:
	 * every way to cut the URI was tried, and the budget ran out before the match. */
	snprintf(longuri, sizeof(longuri), "doc://vwxyz%s", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz");
	is_int(uritemplate_matches("doc://{a}{b}{c}{d}{e}zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", longuri), 1,
	    "five adjacent expressions and a long literal: the expansion matches");
}

/* The catalog exposes prompts under the upstream's prefix and keeps resource URIs and templates. */
static void
test_names(json_t *doc)
{
	is_int(catalog_find_in(doc, CATALOG_PROMPTS, "a_greet"), 0, "prompts are exposed under the prefix");
	is_int(catalog_find_in(doc, CATALOG_RESOURCES, "test://static-text"), 0, "resource URIs are kept");
	is_int(catalog_find_in(doc, CATALOG_TEMPLATES, "test://template/{id}/data"), 0, "… and templates");
}

/* The capabilities announced are the union of the upstreams that answered. */
static void
test_capabilities(json_t *doc)
{
	json_t *caps;

	caps = fed_capabilities(doc, NULL);
	ok(json_object_get(caps, "tools") && json_object_get(caps, "prompts") &&
	    json_object_get(caps, "resources") && !json_object_get(caps, "completions") &&
	    !json_object_get(caps, "logging"), "capabilities: the union of the upstreams that answered");
	ok(json_object_size(json_object_get(caps, "resources")) == 1 &&
	    json_is_true(json_object_get(json_object_get(caps, "resources"), "listChanged")) &&
	    json_is_true(json_object_get(json_object_get(caps, "tools"), "listChanged")),
	    "… with listChanged of the gateway's lists (its standalone stream tells them), no subscribe (no "
	    "upstream offers it)");
	json_decref(caps);
}

/* Unknown names, bad params and methods not passed on are answered without an upstream. */
static void
test_refusals(json_t *doc)
{
	struct fed_call f = { .cfg = cfg };

	f.doc = doc;
	ok(call(&f, "tools/call", "{\"name\":\"t\"}") == NULL && gw_error_rpc(&f.err) == JSONRPC_INVALID_PARAMS &&
	    strcmp(f.err.detail, "Unknown tool") == 0, "a tool under its upstream name: unknown tool, -32602");
	ok(call(&f, "tools/call", "{}") == NULL && gw_error_rpc(&f.err) == JSONRPC_INVALID_PARAMS,
	    "tools/call without a name: -32602 (%s)", f.err.detail);
	ok(call(&f, "prompts/get", "{\"name\":\"greet\"}") == NULL && gw_error_rpc(&f.err) == JSONRPC_INVALID_PARAMS &&
	    strcmp(f.err.detail, "Unknown prompt") == 0, "an unknown prompt: -32602");
	ok(call(&f, "resources/read", "{}") == NULL && gw_error_rpc(&f.err) == JSONRPC_INVALID_PARAMS,
	    "resources/read without a uri: -32602");
	ok(call(&f, "resources/read", "[]") == NULL && gw_error_rpc(&f.err) == JSONRPC_INVALID_PARAMS,
	    "params not an object: -32602");
	ok(call(&f, "resources/read", "{\"uri\":\"test://static-text/../template/1/data\"}") == NULL &&
	    gw_error_rpc(&f.err) == JSONRPC_INVALID_PARAMS && strstr(f.err.detail, "a dot segment"),
	    "resources/read of a URI with a dot segment: -32602 before any routing (%s)", f.err.detail);
	ok(call(&f, "resources/subscribe", "{\"uri\":\"test://template/%2e%2e/data\"}") == NULL &&
	    gw_error_rpc(&f.err) == JSONRPC_INVALID_PARAMS, "resources/subscribe of one: -32602");
	ok(call(&f, "completion/complete", "{\"ref\":{\"type\":\"ref/resource\",\"uri\":\"test://template/{id}/..\"},"
	    "\"argument\":{\"name\":\"id\",\"value\":\"1\"}}") == NULL && gw_error_rpc(&f.err) == JSONRPC_INVALID_PARAMS,
	    "a completion reference of one: -32602");
	ok(call(&f, "completion/complete", "{\"ref\":{\"type\":\"ref/tool\",\"name\":\"x\"}}") == NULL &&
	    gw_error_rpc(&f.err) == JSONRPC_INVALID_PARAMS, "a completion reference of another type: -32602");
	ok(call(&f, "completion/complete", "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"nope\"}}") == NULL &&
	    gw_error_rpc(&f.err) == JSONRPC_INVALID_PARAMS, "a completion of an unknown prompt: -32602");
	ok(call(&f, "logging/setLevel", "{\"level\":\"info\"}") == NULL && gw_error_rpc(&f.err) == JSONRPC_METHOD_NOT_FOUND,
	    "logging/setLevel with no upstream offering logging: -32601");
	ok(call(&f, "sampling/createMessage", "{}") == NULL &&
	    gw_error_rpc(&f.err) == JSONRPC_METHOD_NOT_FOUND, "a method the gateway does not pass on: -32601");
	ok(fed_relays("tools/call") && fed_relays("resources/read") && !fed_relays("tools/list"),
	    "fed_relays: what is passed on, not what the gateway answers itself");
}

/* With two resource upstreams, a URI none lists or expands is nobody's (with one: that one's). */
static void
test_unowned_uri(void)
{
	struct fed_call f = { .cfg = cfg };
	json_t *lists[2], *doc;

	lists[0] = json_pack("{s:{s:{}}, s:[]}", "caps", "resources", "resources");
	lists[1] = json_pack("{s:{s:{}}, s:[]}", "caps", "resources", "resources");
	doc = catalog_build(cfg, lists, reasons);
	f.doc = doc;
	ok(call(&f, "resources/read", "{\"uri\":\"test://nobody\"}") == NULL && gw_error_rpc(&f.err) == -32002,
	    "a URI no upstream owns: -32002 Resource not found");
	json_decref(doc);
	json_decref(lists[0]);
	json_decref(lists[1]);
}

/* Subscriptions: announced when an upstream offers them, and only for a caller with a session. */
static void
test_subscriptions(void)
{
	struct fed_call f = { .cfg = cfg };
	json_t *lists[2], *doc, *caps;

	lists[0] = json_pack("{s:{s:{s:b}}, s:[{s:s}]}", "caps", "resources", "subscribe", 1,
	    "resources", "uri", "test://watched");
	lists[1] = NULL;
	doc = catalog_build(cfg, lists, reasons);
	caps = fed_capabilities(doc, NULL);
	ok(json_is_true(json_object_get(json_object_get(caps, "resources"), "subscribe")),
	    "an upstream with resources.subscribe: the gateway announces subscribe");
	json_decref(caps);
	/* The caller needs a session of its own there: the updates come on its GET stream. */
	f.doc = doc;
	f.sessions = NULL;
	ok(fed_offers(doc, "resources/subscribe", NULL) && call(&f, "resources/subscribe", "{\"uri\":\"test://watched\"}") == NULL &&
	    gw_error_rpc(&f.err) == JSONRPC_INVALID_REQUEST, "resources/subscribe without a session of the caller's: -32600 (%s)", f.err.detail);
	json_decref(doc);
	json_decref(lists[0]);
	lists[0] = json_pack("{s:{s:{}}, s:[]}", "caps", "resources", "resources");
	doc = catalog_build(cfg, lists, reasons);
	ok(!fed_offers(doc, "resources/subscribe", NULL), "an upstream with resources but no subscribe: not offered");
	json_decref(doc);
	json_decref(lists[0]);
}

/* A gate that lets the caller have only what upstream b offers; it records whom it was
 * asked about, alone. */
static char gate_asked[64];

static int
only_b(struct fed_call *f, const char *method, const struct cfg_upstream *up, enum catalog_kind kind,
    const char *key, int alone)
{
	(void)method, (void)kind, (void)key;
	if (alone)
		snprintf(gate_asked, sizeof(gate_asked), "%s", up->s.name);
	if (strcmp(up->s.name, "b") == 0)
		return FED_PASS;
	if (alone)
		gw_error_set(&f->err, GW_EREFUSED, "Forbidden: group_forbidden");
	return alone ? FED_DENIED : FED_HIDDEN;
}

/* A prompt two upstreams list under one name is the first's alone: a caller refused
 * there is refused, not given the other's prompt of that name (whose record is not the
 * one listed). A URI both offer is read from the first that grants it. */
static void
test_prompt_owner(void)
{
	struct fed_call f = { .cfg = cfg, .gate = only_b };
	json_t *lists[2], *doc;

	f.pool = upstream_pool_new();	/* (b is nowhere: passed to it, the call would fail to connect) */
	lists[0] = json_pack("{s:{s:{}}, s:[{s:s}]}", "caps", "prompts", "prompts", "name", "greet");
	lists[1] = json_pack("{s:{s:{}}, s:[{s:s}]}", "caps", "prompts", "prompts", "name", "a_greet");
	doc = catalog_build(cfg, lists, reasons);
	f.doc = doc;
	gate_asked[0] = '\0';
	ok(call(&f, "prompts/get", "{\"name\":\"a_greet\"}") == NULL && f.err.code == GW_EREFUSED &&
	    strcmp(gate_asked, "a") == 0, "a prompt a and b both list, the caller refused at a (its owner): refused (%s), "
	    "never b's", f.err.detail);
	upstream_pool_free(f.pool);
	json_decref(doc);
	json_decref(lists[0]);
	json_decref(lists[1]);
}

int
main(int argc, char **argv)
{
	json_t *lists[2], *doc;

	tap_args(argc, argv);
	run_case(test_templates);
	run_case(test_backtracking);
	run_case(test_ambiguous);

	if ((cfg = fixture_config("[gateway]\nresource = https://gw.example.com/mcp\nname = gw\nversion = 1\n"
	    "[auth]\nissuer = https://idp.example.com\n"
	    "[upstream \"a\"]\nurl = http://127.0.0.1:9/mcp\nprefix = a_\n"
	    "[upstream \"b\"]\nurl = http://127.0.0.1:9/mcp\n")) == NULL)
		return 1;

	/* The catalog of the next three tests: upstream a's lists, with b down. */
	lists[0] = json_pack("{s:{s:{}, s:{}, s:{}}, s:[{s:s}], s:[{s:s}], s:[{s:s}], s:[{s:s}]}",
	    "caps", "tools", "prompts", "resources",
	    "tools", "name", "t",
	    "prompts", "name", "greet",
	    "resources", "uri", "test://static-text",
	    "resourceTemplates", "uriTemplate", "test://template/{id}/data");
	lists[1] = NULL;
	doc = catalog_build(cfg, lists, reasons);
	json_decref(lists[0]);
	run_case(test_names, doc);
	run_case(test_capabilities, doc);
	run_case(test_refusals, doc);
	json_decref(doc);

	run_case(test_unowned_uri);
	run_case(test_subscriptions);
	run_case(test_prompt_owner);

	config_unref(cfg);
	return done_testing();
}
