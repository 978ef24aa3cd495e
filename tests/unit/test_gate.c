/* Unit tests: list and call never drift, through the whole POST /mcp exchange
 * (mcp_exchange), over seeded random configurations and callers.
 *
 * One catalog of two upstreams (tools, a prompt and a resource each, and a resource
 * both offer: listed when the caller may reach either, read from one it may reach) stays put while
 * the configuration is replaced again and again, as a reload that changes the policy
 * and keeps the catalog does. For every configuration and caller: each tool of the
 * catalog is callable (tools/call reaches for its upstream, which is down here: -32603)
 * if and only if tools/list lists it; the same for prompts (prompts/list,
 * prompts/get) and resources (resources/list, resources/read). A refusal is whatever
 * the policy answers: 403, -32003 in a batch, or, under deny-style hide, exactly the
 * answer for what does not exist. And initialize announces prompts and resources to a
 * caller exactly when their lists answer it (some upstream it may reach offers them). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog_store.h"
#include "log.h"
#include "mcp.h"
#include "chunk.h"
#include "fixture.h"
#include "tap.h"

#define CONFIGS	120
#define CALLERS	4

static const unsigned char session_key[32] = { 9 };
static struct catalog_view view;
static struct mcp_env env = { .session_key = session_key, .view = &view };

static const char *const tools[] = { "a_one", "a_two", "a_get_x", "a_del", "b_one", "b_two", "b_get", "b_del" };
#define NTOOLS	(sizeof(tools) / sizeof(tools[0]))
static const char *const globs[] = { "a_*", "b_*", "*_one", "*get*", "*", "b_two", "a_del", "z_*" };
#define NGLOBS	(sizeof(globs) / sizeof(globs[0]))
static const char *const group_names[] = { "g0", "g1", "g2", "g3", "a", "b" };


/* One POST /mcp of body by a caller with these claims under cfg: the status, and in
 * *out the JSON answer (a new reference, or NULL). */
static int
post(const struct config *cfg, const struct claims *claims, const char *body, json_t **out)
{
	struct chunk ck = { body, strlen(body) };
	struct response resp;
	struct request req;
	struct caller caller;
	struct sink sk;
	struct buf raw;
	const char *at;
	int status;

	memset(&req, 0, sizeof(req));
	memset(&caller, 0, sizeof(caller));
	caller.claims = *claims;
	req.content_type = "application/json";
	req.accept = "application/json";
	req.content_length = (long long)strlen(body);
	req.body.ctx = &ck;
	req.body.read = chunk_read;
	req.now = 1000;
	response_init(&resp, "rid");
	{
		struct req_ctx rc = { .cfg = cfg, .req = &req, .resp = &resp, .caller = &caller,
			.slot[REQ_SLOT_MCP] = &env };

		mcp_exchange(&rc);
	}
	status = resp.status;
	/* a list page from the cache is held apart from resp.body: the body as written */
	buf_init(&raw, 16u << 20);
	sink_mem_init(&sk, &raw);
	*out = resp.json ? json_incref(resp.json) : response_body_len(&resp) && !resp.streamed &&
	    response_send(&resp, &sk) == 0 && (at = strstr(buf_str(&raw), "\r\n\r\n")) != NULL ?
	    json_loads(at + 4, 0, NULL) : NULL;
	buf_free(&raw);
	response_free(&resp);
	return status;
}

static unsigned
rbits(int n)
{
	return (unsigned)rand() & ((1u << n) - 1);
}

static void
words(char *out, size_t n, size_t *len, const char *key, unsigned set, const char *const *w, size_t nw)
{
	size_t i;

	*len += (size_t)snprintf(out + *len, n - *len, "%s =", key);
	for (i = 0; i < nw; i++)
		if (set & (1u << i))
			*len += (size_t)snprintf(out + *len, n - *len, " %s", w[i]);
	*len += (size_t)snprintf(out + *len, n - *len, "\n");
}

static const char *const scopes[] = { "s1", "s2" };
static const char *const members[] = { "m1", "m2" };
static const char *const features[] = { "f1", "f2" };

/* A random configuration: the two upstreams (their group, read-only marks, hints),
 * four groups, up to three tenants, a deny-style. */
static struct config *
random_config(int k)
{
	static char text[8192];
	struct config *cfg;
	size_t len = 0;
	const char *u;
	unsigned usable = 0x3f;	/* the group names a tenant may list */
	int i;

	len += (size_t)snprintf(text + len, sizeof(text) - len,
	    "[gateway]\nresource = https://gw.example.com/mcp\nname = gw\nversion = 1\npage-size = 100\n"
	    "deny-style = %s\n[auth]\nissuer = https://idp.example.com\nrequired-scopes = mcp:tools\n",
	    rand() % 3 ? "forbidden" : "hide");
	for (i = 0; i < 2; i++) {
		u = i ? "b" : "a";
		len += (size_t)snprintf(text + len, sizeof(text) - len,
		    "[upstream \"%s\"]\nurl = http://127.0.0.1:9/mcp\nprefix = %s_\ntimeout-ms = 500\n", u, u);
		if (rand() % 2) {	/* then no group is named after the upstream */
			len += (size_t)snprintf(text + len, sizeof(text) - len, "group = %s\n", group_names[rand() % 4]);
			usable &= ~(1u << (4 + i));
		}
		if (rand() % 2)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "read-only-tools = %s\n",
			    globs[rand() % NGLOBS]);
		if (rand() % 2)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "trust-hints = yes\n");
	}
	for (i = 0; i < 4; i++) {
		len += (size_t)snprintf(text + len, sizeof(text) - len, "[group \"g%d\"]\n", i);
		if (rand() % 4)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "tools = %s\n", globs[rand() % NGLOBS]);
		if (rand() % 2)
			words(text, sizeof(text), &len, "scopes", rbits(2), scopes, 2);
		if (rand() % 2)
			words(text, sizeof(text), &len, "members", rbits(2), members, 2);
		if (rand() % 3 == 0)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "feature = %s\n", features[rand() % 2]);
	}
	for (i = 0; i < 3; i++) {
		if (rand() % 5 == 0)
			continue;
		len += (size_t)snprintf(text + len, sizeof(text) - len, "[tenant \"%s\"]\n", i == 2 ? "*" : i ? "t1" : "t0");
		words(text, sizeof(text), &len, "groups", rbits(6) & usable, group_names, 6);
		if (rand() % 2)
			words(text, sizeof(text), &len, "features", rbits(2), features, 2);
		if (rand() % 3 == 0)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "deny = %s\n", globs[rand() % NGLOBS]);
		if (rand() % 3 == 0)
			words(text, sizeof(text), &len, "allow", rbits((int)NGLOBS), globs, NGLOBS);
		if (rand() % 3 == 0)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "access-mode = read-only\n");
	}
	if ((cfg = fixture_config(text)) == NULL)
		printf("# (configuration %d)\n", k);
	return cfg;
}

/* The catalog the configurations share: what each upstream offers. */
static json_t *
upstream_offer(const char *u)
{
	json_t *o = json_pack("{s:{s:{}, s:{}, s:{}}, s:[], s:[{s:s}], s:[{s:s, s:s}, {s:s, s:s}]}",
	    "caps", "tools", "prompts", "resources",
	    "tools", "prompts", "name", u[0] == 'a' ? "pa" : "pb",
	    "resources", "uri", u[0] == 'a' ? "res://a/1" : "res://b/1", "name", "r",
	    "uri", "res://shared", "name", "offered by both");
	json_t *t = json_object_get(o, "tools");
	size_t i;

	for (i = 0; i < NTOOLS; i++)
		if (tools[i][0] == u[0])
			json_array_append_new(t, json_pack("{s:s, s:{s:s}, s:{s:b}}", "name", tools[i] + 2,
			    "inputSchema", "type", "object", "annotations", "readOnlyHint", i % 2));
	return o;
}

/* Does the caller's initialize announce capability? */
static int
announced(const struct config *cfg, const struct claims *cl, const char *capability)
{
	json_t *o;
	int yes;

	post(cfg, cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
	    "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}", &o);
	yes = json_object_get(json_object_get(json_object_get(o, "result"), "capabilities"), capability) != NULL;
	json_decref(o);
	return yes;
}

/* Does method answer with a result (rather than an error)? */
static int
answers(const struct config *cfg, const struct claims *cl, const char *method)
{
	char body[160];
	json_t *o;
	int yes;

	snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":{}}", method);
	post(cfg, cl, body, &o);
	yes = json_object_get(o, "result") != NULL;
	json_decref(o);
	return yes;
}

/* The names (or URIs) a list answers, as a JSON array; an empty one for a refusal. */
static json_t *
listed(const struct config *cfg, const struct claims *cl, const char *method, const char *array, const char *key)
{
	char body[160];
	json_t *o, *names = json_array(), *r;
	size_t i;

	snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":{}}", method);
	post(cfg, cl, body, &o);
	json_array_foreach(json_object_get(json_object_get(o, "result"), array), i, r)
		json_array_append(names, json_object_get(r, key));
	json_decref(o);
	return names;
}

static int
in(json_t *names, const char *name)
{
	size_t i;
	json_t *v;

	json_array_foreach(names, i, v)
		if (strcmp(json_string_value(v), name) == 0)
			return 1;
	return 0;
}

/* 1 when the request went on to the upstream (which is down: -32603); 0 when the
 * gateway refused it as the policy does (403, -32003 in a batch) or as a name the
 * catalog lacks (unknown, unknown_code: what deny-style hide answers too); -1 for
 * any other answer. */
static int
reached(int status, json_t *o, const char *unknown, int unknown_code)
{
	json_t *e = json_object_get(o, "error");
	int code = (int)json_integer_value(json_object_get(e, "code"));
	const char *msg = json_string_value(json_object_get(e, "message"));

	if (status == 200 && code == -32603)
		return 1;
	if (status == 403 || (status == 200 && code == -32003))
		return 0;
	if (status == 200 && code == unknown_code && msg && strcmp(msg, unknown) == 0)
		return 0;
	if (status == 200 && code == -32601)	/* no upstream it may reach offers the capability */
		return 0;
	return -1;
}

struct tally {
	long agree, drift, visible, hidden, odd;
};

static void
check(struct tally *t, int listed_it, int callable, const char *what, const char *name, int k, int caller)
{
	if (callable < 0) {
		if (t->odd++ < 5)
			printf("# configuration %d, caller %d: %s %s: an answer neither refused nor passed on\n", k, caller,
			    what, name);
		return;
	}
	if (listed_it == callable)
		t->agree++;
	else if (t->drift++ < 5)
		printf("# drift: configuration %d, caller %d: %s %s is %s but %s\n", k, caller, what, name,
		    listed_it ? "listed" : "not listed", callable ? "callable" : "refused");
	if (listed_it)
		t->visible++;
	else
		t->hidden++;
}

/* What the callers met, over all configurations: tools, prompts, resources, capabilities. */
static struct tally tt, tp, tr, tc;

/* Each tool of the catalog: callable by the caller if and only if tools/list lists it. */
static void
caller_tools(const struct config *cfg, const struct claims *cl, int k, int c)
{
	json_t *names, *o;
	char body[256];
	size_t i;
	int st;

	names = listed(cfg, cl, "tools/list", "tools", "name");
	for (i = 0; i < NTOOLS; i++) {
		snprintf(body, sizeof(body),
		    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"%s\",\"arguments\":{}}}", tools[i]);
		st = post(cfg, cl, body, &o);
		check(&tt, in(names, tools[i]), reached(st, o, "Unknown tool", -32602), "tool",
		    tools[i], k, c);
		json_decref(o);
	}
	json_decref(names);
}

/* Prompts and resources: announced at initialize if and only if their lists answer. */
static void
caller_capabilities(const struct config *cfg, const struct claims *cl, int k, int c)
{
	check(&tc, announced(cfg, cl, "prompts"), answers(cfg, cl, "prompts/list"), "capability",
	    "prompts", k, c);
	check(&tc, announced(cfg, cl, "resources"), answers(cfg, cl, "resources/list"),
	    "capability", "resources", k, c);
}

/* Each prompt and resource: used by the caller if and only if its list lists it. */
static void
caller_things(const struct config *cfg, const struct claims *cl, int k, int c)
{
	/* What an upstream offers besides tools: listed by LIST, used by GET. */
	static const struct thing {
		const char *list, *array, *key, *get, *unknown;
		int unknown_code;
		const char *names[4];
		struct tally *tally;
	} things[] = {
		{ "prompts/list", "prompts", "name", "prompts/get", "Unknown prompt", -32602,
		    { "a_pa", "b_pb", NULL }, &tp },
		{ "resources/list", "resources", "uri", "resources/read", "Resource not found", -32002,
		    { "res://a/1", "res://b/1", "res://shared", NULL }, &tr },
	};
	json_t *names, *o;
	char body[256];
	size_t i, j;
	int st;

	for (j = 0; j < sizeof(things) / sizeof(things[0]); j++) {
		const struct thing *th = &things[j];

		names = listed(cfg, cl, th->list, th->array, th->key);
		for (i = 0; th->names[i]; i++) {
			snprintf(body, sizeof(body),
			    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"%s\","
			    "\"params\":{\"%s\":\"%s\"}}", th->get, th->key, th->names[i]);
			st = post(cfg, cl, body, &o);
			check(th->tally, in(names, th->names[i]),
			    reached(st, o, th->unknown, th->unknown_code), th->key, th->names[i],
			    k, c);
			json_decref(o);
		}
		json_decref(names);
	}
}

/* The random configurations load, one catalog kept across them, each tried by random callers. */
static void
test_configurations(void)
{
	static const char *const tenants[] = { "t0", "t1", "", "zz" };
	const char *ups[2] = { "a", "b" }, *reasons[2] = { NULL, NULL };
	json_t *lists[2];
	struct claims cl;
	struct config *cfg;
	size_t i;
	int k, c, configs = 0;

	for (k = 0; k < CONFIGS; k++) {
		if ((cfg = random_config(k)) == NULL)
			continue;
		configs++;
		if (view.doc == NULL) {	/* one catalog for all: reloads that keep it */
			for (i = 0; i < 2; i++)
				lists[i] = upstream_offer(ups[i]);
			view.doc = catalog_build(cfg, lists, reasons);
			view.local_until_ms = INT64_MAX;
			view.serial = 1;
			for (i = 0; i < 2; i++)
				json_decref(lists[i]);
		}
		for (c = 0; c < CALLERS; c++) {
			memset(&cl, 0, sizeof(cl));
			snprintf(cl.subject, sizeof(cl.subject), "u%d", c);
			snprintf(cl.tenant, sizeof(cl.tenant), "%s", tenants[rand() % 4]);
			snprintf(cl.scope, sizeof(cl.scope), "mcp:tools%s%s", rand() % 2 ? " s1" : "", rand() % 2 ? " s2" : "");
			snprintf(cl.groups, sizeof(cl.groups), "%s %s", rand() % 2 ? "m1" : "", rand() % 2 ? "m2" : "");

			caller_tools(cfg, &cl, k, c);
			caller_capabilities(cfg, &cl, k, c);
			caller_things(cfg, &cl, k, c);
		}
		config_unref(cfg);
	}
	ok(configs >= CONFIGS * 9 / 10, "%d random configurations load (one catalog kept across them)", configs);
}

/* List and call never drift, for each kind, and both outcomes were met often enough. */
static void
test_no_drift(void)
{
	const struct {
		const char *what;
		const struct tally *t;
		long min;	/* both outcomes this often at least: the property is not vacuous */
	} kinds[] = {
		{ "tools: callable if and only if listed", &tt, 50 },
		{ "prompts: prompts/get passes if and only if prompts/list lists it", &tp, 20 },
		{ "resources: resources/read passes if and only if resources/list lists it", &tr, 20 },
		{ "capabilities: prompts and resources announced at initialize if and only if their lists answer", &tc, 20 },
	};
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const struct tally *t = kinds[i].t;

		ok(t->drift == 0 && t->odd == 0 && t->visible > kinds[i].min && t->hidden > kinds[i].min,
		    "%s (%ld decisions: %ld listed, %ld not; %ld drifts, %ld other answers)", kinds[i].what,
		    t->agree + t->drift, t->visible, t->hidden, t->drift, t->odd);
	}
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	log_init(2, GW_LOG_ERR);	/* not the audit lines and upstream warnings of thousands of requests */
	srand(20261124);
	env.pages = fragcache_new(1 << 20, 16);
	env.pool = upstream_pool_new();
	run_case(test_configurations);
	run_case(test_no_drift);
	catalog_view_free(&view);
	fragcache_free(env.pages);
	upstream_pool_free(env.pool);
	return done_testing();
}
