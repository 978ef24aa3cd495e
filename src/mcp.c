/* mcp — POST /mcp: the checks in the order of docs/ARCHITECTURE.md §6, the two eras
 * (the revisions negotiated by initialize, and 2026-07-28 with its per-request _meta),
 * one method table, and one way out (JSON, or an event stream). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "federate.h"
#include "fragcache.h"
#include "jsonrpc.h"
#include "log.h"
#include "policy.h"
#include "mcp.h"
#include "negotiate.h"
#include "secret.h"

#define META_VERSION	"io.modelcontextprotocol/protocolVersion"
#define META_CAPS	"io.modelcontextprotocol/clientCapabilities"
#define META_SERVER	"io.modelcontextprotocol/serverInfo"
#define DISCOVER_TTL_MS	300000	/* how long a client may keep server/discover */
#define MCP_FORBIDDEN	(-32003)	/* a batch element the policy refused (the HTTP answer is 403) */

/* Newest first. The first is the stateless revision; the others go through initialize. */
static const char *const versions[] = {
	MCP_MODERN_VERSION, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
};
#define legacy_versions	(versions + 1)

struct mcp_method;

struct mcp_call {
	const struct mcp_env *env;
	const struct mcp_method *mm;	/* the method being answered */
	json_t *id;			/* its request id (borrowed) */
	struct session *sess;		/* the caller's session; NULL = stateless */
	json_t *doc;			/* the catalog: our reference, see catalog() */
	int session_gone;		/* an upstream forgot the caller's session: 404 it */
	struct policy_caller pc;	/* who sees which tool (policy.c) */
	unsigned char profile[16];	/* what that depends on: list pages are cached per profile */
	uint32_t *vis;			/* the records of kind vis_kind this caller sees; NULL = all */
	size_t n_vis;
	int vis_kind;			/* -1: none decided yet */
	enum gw_err denied;		/* a request the policy refused: the answer of a single request */
	char denied_scopes[512];	/* for insufficient_scope */
	const struct config *cfg;
	const struct caller *caller;
	const struct request *req;
	struct response *resp;
	int64_t until_ms;	/* the request's deadline (request-timeout-ms), monotonic */
	int in_batch;
	int modern;		/* 2026-07-28: JSON-RPC error bodies on 4xx, results with resultType */
	int stream_ok;		/* the client takes an event stream */
	int splice_ok;		/* one answer, as a JSON body: a list page may come from the cache */
	const char *splice;	/* that page's serialized array (borrowed from the cache) */
	size_t splice_len;
	char why[256];		/* a method's error message, when it is not a constant */
};

/* A method returns its result, or NULL with *code and *msg set. */
typedef json_t *mcp_fn(struct mcp_call *c, json_t *params, int *code, const char **msg);

enum {
	MF_LEGACY = 1 << 0,	/* offered to the revisions of initialize */
	MF_MODERN = 1 << 1,	/* offered to 2026-07-28 */
	MF_NO_BATCH = 1 << 2,
	MF_PRIVATE = 1 << 3,	/* the answer is per caller: Cache-Control private, Vary Authorization */
	MF_UPSTREAM = 1 << 4,	/* offered only when an upstream offers it (fed_offers) */
};

struct mcp_method {
	const char *name;
	mcp_fn *fn;
	unsigned flags;
	const char *name_param;	/* the params member the Mcp-Name header repeats */
	int kind;		/* a list method: the catalog_kind it pages through */
};

static int
in_list(const char *const *list, const char *v)
{
	for (; *list; list++)
		if (strcmp(*list, v) == 0)
			return 1;
	return 0;
}

int
mcp_version_supported(const char *v)
{
	return in_list(versions, v);
}

/* The catalog, taken once per request (a reference, released at the end of the
 * exchange), so that everything a request holds of it comes from this one document
 * even when the worker's view moves on to a newer one. */
static json_t *
catalog(struct mcp_call *c)
{
	if (c->doc == NULL)
		c->doc = catalog_get(c->env->catalog, c->env->view, c->env->pool, c->cfg, c->req->start_us / 1000);
	return c->doc;
}

/* May the caller reach this upstream's prompts, resources, completions, log level? */
static int
reaches(const struct mcp_call *c, const char *name)
{
	const struct cfg_upstream *u;

	if (c->pc.off)
		return 1;
	return (u = config_upstream(c->cfg, name)) != NULL && policy_decide_upstream(&c->pc, u, NULL) == POLICY_VISIBLE;
}

/* federate.c's admit (fed_offers, fed_capabilities): reaches(). */
static int
admit_upstream(void *ctx, const char *name)
{
	return reaches(ctx, name);
}

/* What this caller is offered: only what the upstreams it may reach offer. */
static json_t *
capabilities(struct mcp_call *c)
{
	struct fed_admit a = { admit_upstream, c };

	return fed_capabilities(catalog(c), &a);
}

static json_t *
server_info(const struct config *cfg)
{
	json_t *info = json_pack("{s:s, s:s}", "name", cfg->name, "version", cfg->version);

	if (info && cfg->title)
		json_object_set_new(info, "title", json_string(cfg->title));
	return info;
}

static json_t *
m_initialize(struct mcp_call *c, json_t *params, int *code, const char **msg)
{
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	json_t *result;

	if (!json_is_object(params) || want == NULL) {
		*code = JSONRPC_INVALID_PARAMS;
		*msg = "initialize needs params.protocolVersion";
		return NULL;
	}
	result = json_pack("{s:s, s:o, s:o}",
	    "protocolVersion", in_list(legacy_versions, want) ? want : MCP_LATEST_VERSION,
	    "capabilities", capabilities(c),
	    "serverInfo", server_info(c->cfg));
	if (result && c->cfg->instructions)
		json_object_set_new(result, "instructions", json_string(c->cfg->instructions));
	return result;
}

/* 2026-07-28 discovery: versions, capabilities, and who we are in _meta. */
static json_t *
m_discover(struct mcp_call *c, json_t *params, int *code, const char **msg)
{
	json_t *result, *all = json_array();
	size_t i;

	for (i = 0; versions[i]; i++)
		json_array_append_new(all, json_string(versions[i]));
	result = json_pack("{s:o, s:o, s:s, s:i, s:{s:o}}",
	    "supportedVersions", all,
	    "capabilities", capabilities(c),
	    "cacheScope", "private",
	    "ttlMs", DISCOVER_TTL_MS,
	    "_meta", META_SERVER, server_info(c->cfg));
	if (result && c->cfg->instructions)
		json_object_set_new(result, "instructions", json_string(c->cfg->instructions));
	return result;
}

static json_t *
m_ping(struct mcp_call *c, json_t *params, int *code, const char **msg)
{
	return json_object();
}

#define CURSOR_AD	"mcpgate cursor v1 "

/* Gateway-owned cursors: the offset sealed under the session key, bound to the caller
 * and to the list. */
static void
cursor_ad(const char *list, const char *who, char *ad, size_t n)
{
	snprintf(ad, n, "%s%s %s", CURSOR_AD, list, who);
}

int
mcp_cursor_seal(const unsigned char *key, const char *list, const char *who, size_t off,
    char *out, size_t outlen)
{
	char ad[96], plain[32];

	cursor_ad(list, who, ad, sizeof(ad));
	snprintf(plain, sizeof(plain), "%zu", off);
	return secret_seal(key, plain, strlen(plain), ad, out, outlen);
}

int
mcp_cursor_open(const unsigned char *key, const char *list, const char *who, const char *cursor,
    size_t *off)
{
	char ad[96], plain[32], *end;

	cursor_ad(list, who, ad, sizeof(ad));
	if (secret_open(key, cursor, ad, plain, sizeof(plain)) < 0)
		return -1;
	*off = strtoul(plain, &end, 10);
	return *end != '\0' || *off == 0 ? -1 : 0;
}

/* Does the caller see record i of kind? A tool by policy_decide, anything else by what
 * the policy says of the upstreams that offer it (one it may reach is enough: its
 * request goes there, federate.c's pick_owner). */
static int
record_visible(const struct mcp_call *c, json_t *doc, enum catalog_kind kind, size_t i)
{
	struct policy_tool t;
	const char *up, *orig;
	size_t alt;

	if (kind == CATALOG_TOOLS) {
		catalog_policy_tool(c->cfg, doc, i, &t, NULL, NULL);
		return t.name && policy_decide(&c->pc, &t, NULL) == POLICY_VISIBLE;
	}
	for (alt = 0; catalog_route_alt(doc, kind, (long)i, alt, &up, &orig) == 0; alt++)
		if (reaches(c, up))
			return 1;
	return 0;
}

/* c->vis: the indexes of the catalog's records of kind the caller sees (NULL with the
 * policy off), from the worker's cache for its profile and catalog copy, else decided
 * record by record and stored there. 0, or -1 without memory. */
static int
visible(struct mcp_call *c, json_t *doc, enum catalog_kind kind)
{
	struct {
		uint64_t marker, cfg;
		unsigned char profile[16];
	} key;
	const char *cached;
	size_t i, n = json_array_size(json_object_get(doc, catalog_kinds[kind].array)), len;
	uint64_t epoch = c->env->view->serial;

	if (c->pc.off || c->vis_kind == (int)kind)
		return 0;
	memset(&key, 0, sizeof(key));
	key.marker = UINT64_MAX - (uint64_t)kind;	/* not a list page's kind: a visible set */
	key.cfg = c->cfg->serial;	/* a reload may change the policy and keep the catalog */
	memcpy(key.profile, c->profile, sizeof(key.profile));
	free(c->vis);
	c->vis_kind = -1;
	if ((c->vis = malloc((n ? n : 1) * sizeof(*c->vis))) == NULL)
		return -1;
	c->n_vis = 0;
	if ((cached = fragcache_get(c->env->pages, epoch, &key, sizeof(key), &len)) != NULL) {
		memcpy(c->vis, cached, len);	/* a copy: the cache may evict it */
		c->n_vis = len / sizeof(*c->vis);
	} else {
		for (i = 0; i < n; i++)
			if (record_visible(c, doc, kind, i))
				c->vis[c->n_vis++] = (uint32_t)i;
		fragcache_put(c->env->pages, epoch, &key, sizeof(key), (const char *)c->vis,
		    c->n_vis * sizeof(*c->vis));
	}
	c->vis_kind = (int)kind;
	return 0;
}

/* The serialized page [off, off + size) of items (of their vis subset when not NULL; n
 * items in all), from the worker's cache or made and stored there: 1 with c->splice
 * set, or 0 (then the page goes out as JSON). */
static int
cached_page(struct mcp_call *c, size_t off, size_t size, json_t *items, const uint32_t *vis, size_t n)
{
	struct {
		uint64_t kind, off, size, cfg;
		unsigned char profile[16];
	} key;
	struct fragcache *pages = c->env->pages;
	uint64_t epoch = c->env->view->serial;
	json_t *page;
	char *text;
	size_t i;

	memset(&key, 0, sizeof(key));
	key.kind = (uint64_t)c->mm->kind;
	key.off = off;
	key.size = size;
	key.cfg = c->cfg->serial;
	memcpy(key.profile, c->profile, sizeof(key.profile));
	if (pages == NULL)
		return 0;
	if ((c->splice = fragcache_get(pages, epoch, &key, sizeof(key), &c->splice_len)) != NULL)
		return 1;
	page = json_array();
	for (i = off; i < n && i < off + size; i++)
		json_array_append(page, json_array_get(items, vis ? vis[i] : i));
	text = json_dumps(page, JSON_COMPACT);
	json_decref(page);
	if (text && fragcache_put(pages, epoch, &key, sizeof(key), text, strlen(text)) == 0)
		c->splice = fragcache_get(pages, epoch, &key, sizeof(key), &c->splice_len);
	free(text);
	return c->splice != NULL;
}

/* tools/list, prompts/list, resources/list, resources/templates/list: a page of the
 * catalog. */
static json_t *
m_list(struct mcp_call *c, json_t *params, int *code, const char **msg)
{
	const char *array = catalog_kinds[c->mm->kind].array;
	const uint32_t *vis = NULL;
	json_t *tools, *page, *result, *cur;
	char who[33], sealed[MCP_CURSOR_MAX];
	size_t off = 0, i, n, size = (size_t)c->cfg->page_size;

	*code = JSONRPC_INVALID_PARAMS;
	if (params && !json_is_object(params))
		return *msg = "a list takes an object", NULL;
	session_who(c->caller->claims.subject, c->caller->claims.client_id, c->caller->claims.tenant, who);
	if ((cur = json_object_get(params, "cursor")) != NULL &&
	    (!json_is_string(cur) || c->env->session_key == NULL ||
	    mcp_cursor_open(c->env->session_key, array, who, json_string_value(cur), &off) < 0))
		return *msg = "Invalid cursor", NULL;
	tools = json_object_get(catalog(c), array);
	n = json_array_size(tools);
	if (visible(c, catalog(c), (enum catalog_kind)c->mm->kind) < 0)	/* what this caller may see */
		return *code = JSONRPC_INTERNAL_ERROR, *msg = "out of memory", NULL;
	if ((vis = c->vis) != NULL)
		n = c->n_vis;
	if (c->splice_ok && cached_page(c, off, size, tools, vis, n))
		page = json_null();	/* the placeholder answer_spliced() replaces */
	else {
		page = json_array();
		for (i = off; i < n && i < off + size; i++)
			json_array_append(page, json_array_get(tools, vis ? vis[i] : i));
	}
	result = json_pack("{s:o}", array, page);
	if (result && off + size < n && c->env->session_key &&
	    mcp_cursor_seal(c->env->session_key, array, who, off + size, sealed, sizeof(sealed)) == 0)
		json_object_set_new(result, "nextCursor", json_string(sealed));
	if (result && c->modern) {
		json_object_set_new(result, "cacheScope", json_string("private"));
		json_object_set_new(result, "ttlMs", json_integer(0));
	}
	return result;
}

/* Messages an upstream sends before its answer, to a client that takes an event
 * stream, as they come: progress and log notifications, and the requests it makes of
 * the client (federate.c gives them an id that leads the client's answer back);
 * other notifications are dropped, and requests declined when there is no stream. */
static int
relay(void *ctx, json_t *msg)
{
	struct mcp_call *c = ctx;
	const char *m = json_string_value(json_object_get(msg, "method"));
	int request = json_object_get(msg, "id") != NULL;

	if (m == NULL || (!request && strcmp(m, "notifications/progress") != 0 &&
	    strcmp(m, "notifications/message") != 0))
		return 0;
	if (!c->stream_ok || c->in_batch)
		return request ? UPSTREAM_DECLINE : 0;
	if (response_stream_open(c->resp) < 0 || response_stream_message(c->resp, msg) < 0) {
		if (c->resp->sink && c->resp->sink->failed)
			return -1;	/* the client went away: the call is abandoned */
		return request ? UPSTREAM_DECLINE : 0;
	}
	return 0;
}

/* tools/call, prompts/get, resources/read, completion/complete, logging/setLevel: to
 * the upstream they belong to (federate.c). */
/* The HttpError of each denial reason under deny-style forbidden. */
static const struct {
	const char *reason;
	enum gw_err e;
} denials[] = {
	{ "tenant_forbidden", GW_ETENANT }, { "group_forbidden", GW_EGROUP },
	{ "feature_disabled", GW_EFEATURE }, { "tool_denied", GW_EDENIED },
	{ "read_only_mode", GW_EREADONLY }, { "insufficient_scope", GW_EGROUP },
};

/* One audit line per decision of the policy on a request: who, what (the tool, or the
 * upstream whose prompt or resource it is: what names it), the verdict and why; never
 * the arguments. */
static void
audit(const struct mcp_call *c, const char *method, const char *what, const char *name, const struct policy_why *why)
{
	char who[33];

	session_who(c->caller->claims.subject, "", "", who);
	log_json(GW_LOG_INFO, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:s?, s:i}",
	    "request_id", c->req->id, "audit", method, "tenant", c->pc.tenant ? c->pc.tenant->s.name : "",
	    "subject", who, "client_id", c->caller->claims.client_id, what, name,
	    "allowed", why->step == POLICY_VISIBLE, "reason", why->reason, "step", (int)why->step));
}

/* A refusal of the policy as the caller gets it: 403 insufficient_scope with the scopes
 * to step up to, hidden (deny-style hide: 1, the caller answers as for what does not
 * exist), or 403 with the reason; a batch element gets a JSON-RPC error instead of the
 * 403. -1 with *code and c->why (and c->denied for a single request), or 1. */
static int
refuse(struct mcp_call *c, const struct policy_why *why, int *code)
{
	size_t i;

	if (why->only_scope) {
		c->denied = GW_ESCOPE;
		snprintf(c->denied_scopes, sizeof(c->denied_scopes), "%s", why->scopes);
		snprintf(c->why, sizeof(c->why), "Forbidden: insufficient_scope (needs %.200s)", why->scopes);
	} else if (c->cfg->deny_style == DENY_HIDE) {
		return 1;
	} else {
		for (i = 0; i < sizeof(denials) / sizeof(denials[0]); i++)
			if (strcmp(denials[i].reason, why->reason) == 0)
				c->denied = denials[i].e;
		snprintf(c->why, sizeof(c->why), "Forbidden: %s", why->reason);
	}
	*code = MCP_FORBIDDEN;
	if (c->in_batch)
		c->denied = GW_OK;	/* a batch element gets its JSON-RPC error; the others proceed */
	return -1;
}

/* The policy's word on a tools/call (the same decision tools/list made), written to the
 * audit log. 0 to go on; -1 with *code and *msg, and c->denied for a single request. */
static int
gate_call(struct mcp_call *c, json_t *params, int *code, const char **msg)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	struct policy_tool t;
	struct policy_why why;
	json_t *doc = catalog(c);
	long ix;

	if (c->pc.off || name == NULL || (ix = catalog_find(doc, name)) < 0)
		return 0;	/* no policy, or nothing to decide: federate.c answers */
	catalog_policy_tool(c->cfg, doc, (size_t)ix, &t, NULL, NULL);
	policy_decide(&c->pc, &t, &why);
	audit(c, "tools/call", "tool", name, &why);
	if (why.step == POLICY_VISIBLE)
		return 0;
	*msg = c->why;
	if (refuse(c, &why, code) < 0)
		return -1;
	*code = JSONRPC_INVALID_PARAMS;
	snprintf(c->why, sizeof(c->why), "Unknown tool");	/* exactly as for a tool that does not exist */
	return -1;
}

/* federate.c's gate for what an upstream offers besides tools: the policy's word on the
 * upstream (policy_decide_upstream), the same one that filters its prompts and
 * resources out of the lists. Tools were decided one by one (gate_call). */
static int
gate_upstream(struct fed_call *f, const char *method, const struct cfg_upstream *up, int alone)
{
	struct mcp_call *c = f->ctx;
	struct policy_why why;
	int code;

	if (c->pc.off || strcmp(method, "tools/call") == 0)
		return FED_PASS;
	if (!alone)
		return reaches(c, up->s.name) ? FED_PASS : FED_HIDDEN;
	policy_decide_upstream(&c->pc, up, &why);
	audit(c, method, "upstream", up->s.name, &why);
	if (why.step == POLICY_VISIBLE)
		return FED_PASS;
	if (refuse(c, &why, &code) > 0)
		return FED_HIDDEN;
	f->code = code;
	snprintf(f->why, sizeof(f->why), "%s", c->why);
	return FED_DENIED;
}

static json_t *
m_forward(struct mcp_call *c, json_t *params, int *code, const char **msg)
{
	struct fed_call f = { .cfg = c->cfg, .pool = c->env->pool, .doc = catalog(c),
	    .on_msg = relay, .ctx = c, .now_ms = clock_mono_us() / 1000, .until_ms = c->until_ms,
	    .client = c->resp->sink, .sessions = c->sess ? c->sess->upstreams : NULL, .id = c->id,
	    .gate = gate_upstream };
	json_t *result;

	if (strcmp(c->mm->name, "tools/call") == 0 && json_is_object(params) && gate_call(c, params, code, msg) < 0)
		return NULL;
	result = fed_request(&f, c->mm->name, params);

	c->session_gone |= f.session_gone;
	if (result == NULL) {
		*code = f.code;
		memcpy(c->why, f.why, sizeof(c->why));
		*msg = c->why;
	}
	return result;
}

static const struct mcp_method methods[] = {
	{ "initialize", m_initialize, MF_LEGACY | MF_NO_BATCH, NULL, 0 },
	{ "ping", m_ping, MF_LEGACY, NULL, 0 },
	{ "server/discover", m_discover, MF_MODERN, NULL, 0 },
	{ "tools/list", m_list, MF_LEGACY | MF_MODERN | MF_PRIVATE, NULL, CATALOG_TOOLS },
	{ "prompts/list", m_list, MF_LEGACY | MF_MODERN | MF_PRIVATE | MF_UPSTREAM, NULL, CATALOG_PROMPTS },
	{ "resources/list", m_list, MF_LEGACY | MF_MODERN | MF_PRIVATE | MF_UPSTREAM, NULL, CATALOG_RESOURCES },
	{ "resources/templates/list", m_list, MF_LEGACY | MF_MODERN | MF_PRIVATE | MF_UPSTREAM, NULL, CATALOG_TEMPLATES },
	{ "tools/call", m_forward, MF_LEGACY | MF_MODERN, "name", 0 },
	{ "prompts/get", m_forward, MF_LEGACY | MF_MODERN | MF_UPSTREAM, "name", 0 },
	{ "resources/read", m_forward, MF_LEGACY | MF_MODERN | MF_UPSTREAM, "uri", 0 },
	{ "completion/complete", m_forward, MF_LEGACY | MF_MODERN | MF_UPSTREAM, NULL, 0 },
	/* 2026-07-28 has subscriptions/listen instead (not offered yet). */
	{ "resources/subscribe", m_forward, MF_LEGACY | MF_UPSTREAM, NULL, 0 },
	{ "resources/unsubscribe", m_forward, MF_LEGACY | MF_UPSTREAM, NULL, 0 },
	{ "logging/setLevel", m_forward, MF_LEGACY | MF_UPSTREAM, NULL, 0 },	/* 2026-07-28 removed it */
};

static const struct mcp_method *
method_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (strcmp(methods[i].name, name) == 0)
			return &methods[i];
	return NULL;
}

/* In this request's era, and, for what upstreams serve, offered by one of them the
 * caller may reach (its capabilities said so at initialize). */
static int
method_offered(struct mcp_call *c, const struct mcp_method *mm)
{
	struct fed_admit a = { admit_upstream, c };

	return mm && mm->fn && (mm->flags & (c->modern ? MF_MODERN : MF_LEGACY)) &&
	    (!(mm->flags & MF_UPSTREAM) || fed_offers(catalog(c), mm->name, &a));
}

/* One valid request to its response object. */
static json_t *
dispatch(struct mcp_call *c, const struct jr_msg *m)
{
	const struct mcp_method *mm = method_find(m->method);
	const char *msg = NULL;
	json_t *result;
	int code = JSONRPC_INTERNAL_ERROR;

	if (!method_offered(c, mm))
		return jsonrpc_error(m->id, JSONRPC_METHOD_NOT_FOUND, "Method not found", NULL);
	if ((mm->flags & MF_NO_BATCH) && c->in_batch)
		return jsonrpc_error(m->id, JSONRPC_INVALID_REQUEST, "initialize cannot be batched", NULL);
	c->mm = mm;
	c->id = m->id;
	if ((result = mm->fn(c, m->params, &code, &msg)) == NULL)
		return jsonrpc_error(m->id, code, msg ? msg : "Internal error", NULL);
	if (c->modern)
		json_object_set_new(result, "resultType", json_string("complete"));
	return jsonrpc_result(m->id, result);
}

/* A failure of the exchange: an HttpError for the revisions of initialize, the JSON-RPC
 * error body 2026-07-28 requires (echoing the id) for the stateless one. Steals data. */
static void
fail(const struct mcp_call *c, struct response *resp, enum gw_err e, json_t *id,
    const char *why, json_t *data)
{
	const struct gw_err_info *info = err_info(e);

	if (c->modern && info->jsonrpc_code) {
		response_set_json(resp, info->status,
		    jsonrpc_error(id, info->jsonrpc_code, why ? why : info->message, data));
		return;
	}
	json_decref(data);
	response_set_error(resp, e, why);
}

static void
caller_who(const struct caller *caller, char who[33])
{
	session_who(caller->claims.subject, caller->claims.client_id, caller->claims.tenant, who);
}

/* A fresh session for an initialize that succeeded: the Mcp-Session-Id header, with a
 * session of the caller's own at every upstream (its client capabilities passed on). */
static void
issue_session(struct mcp_call *c, json_t *params, json_t *answer)
{
	const char *pv = json_string_value(json_object_get(json_object_get(answer, "result"), "protocolVersion"));
	struct fed_call f = { .cfg = c->cfg, .pool = c->env->pool, .doc = catalog(c),
	    .now_ms = clock_mono_us() / 1000, .until_ms = c->until_ms };
	struct session s;
	char id[SESSION_ID_MAX];

	if (pv == NULL || c->env->session_key == NULL)
		return;
	memset(&s, 0, sizeof(s));
	snprintf(s.version, sizeof(s.version), "%s", pv);
	caller_who(c->caller, s.who);
	s.exp = c->req->now + c->cfg->session_ttl;
	s.upstreams = fed_open_sessions(&f, json_object_get(params, "capabilities"));
	if (session_seal(c->env->session_key, &s, id) < 0) {
		log_warn(c->req->id, "session: the caller's upstream sessions do not fit an Mcp-Session-Id; "
		    "its calls use the gateway's own");
		f.sessions = s.upstreams;
		fed_close_sessions(&f);
		json_object_clear(s.upstreams);
		if (session_seal(c->env->session_key, &s, id) < 0) {
			session_clear(&s);
			return;
		}
	}
	response_set_header(c->resp, "Mcp-Session-Id", "%s", id);
	session_clear(&s);
}

/* A presented Mcp-Session-Id must open for this caller; none means stateless. 0, -1
 * (not a session: 404), or -2 when its tombstones cannot be read (404 too: fail closed). */
static int
check_session(const struct mcp_env *env, const struct caller *caller, const struct request *req,
    struct session *s)
{
	char who[33];

	memset(s, 0, sizeof(*s));
	if (req->session_id == NULL)
		return 0;
	caller_who(caller, who);
	if (env->session_key == NULL)
		return -1;
	return session_open(env->session_key, env->tombstones, req->session_id, who, req->now, s);
}

/* Step 2 of docs/ARCHITECTURE.md §4 (the caller's tenant exists) holds for every /mcp
 * request: 0, or -1 with the 403. */
static int
tenant_check(const struct config *cfg, const struct caller *caller, struct response *resp)
{
	struct policy_caller pc;

	policy_caller_init(&pc, cfg, &caller->claims);
	if (pc.off || pc.tenant)
		return 0;
	response_set_error(resp, GW_ETENANT, NULL);
	return -1;
}

void
mcp_end_session(const struct mcp_env *env, const struct config *cfg,
    const struct caller *caller, struct request *req, struct response *resp)
{
	struct session s;
	int rc;

	response_set_header(resp, "Cache-Control", "no-store");
	if (tenant_check(cfg, caller, resp) < 0)
		return;
	if (req->session_id == NULL) {
		response_set_error(resp, GW_EBADREQUEST, "DELETE needs the Mcp-Session-Id to end");
		return;
	}
	if ((rc = check_session(env, caller, req, &s)) < 0 || env->tombstones == NULL) {
		/* A DELETE whose end could not be recorded is not answered as done. */
		if (rc == -2)
			response_set_error(resp, GW_EINTERNAL, "the session's end cannot be recorded now");
		else
			response_set_error(resp, GW_ESESSION, NULL);
		session_clear(&s);
		return;
	}
	if (session_end(env->tombstones, req->session_id, s.exp, req->now) < 0) {
		response_set_error(resp, GW_EINTERNAL, "the session's end cannot be recorded now");
		session_clear(&s);
		return;
	}
	{
		struct fed_call f = { .cfg = cfg, .pool = env->pool, .now_ms = clock_mono_us() / 1000,
		    .sessions = s.upstreams };

		fed_close_sessions(&f);
	}
	session_clear(&s);
	response_set_empty(resp, 204);
}

/* --- the standalone stream --------------------------------------------------------- */

static int
listen_msg(void *ctx, json_t *msg)
{
	struct response *resp = ctx;

	return response_stream_message(resp, msg) < 0 ? -1 : 0;
}

static int
listen_tick(void *ctx)
{
	return response_stream_comment(ctx, "keep-alive");
}

void
mcp_listen(const struct mcp_env *env, const struct config *cfg, const struct caller *caller,
    struct request *req, struct response *resp)
{
	struct session s;
	struct fed_call f;
	int64_t now_ms = clock_mono_us() / 1000;

	response_set_header(resp, "Cache-Control", "no-store");
	if (tenant_check(cfg, caller, resp) < 0)
		return;
	if (!(negotiate_accept(req->accept) & NEGOTIATE_SSE)) {
		response_set_error(resp, GW_EBADREQUEST, "GET /mcp needs Accept: text/event-stream");
		return;
	}
	if (check_session(env, caller, req, &s) < 0) {
		response_set_error(resp, GW_ESESSION, NULL);
		return;
	}
	if (json_object_size(s.upstreams) == 0) {
		response_set_error(resp, GW_EMETHOD, "no stream for this session: no upstream session to listen on");
		response_set_header(resp, "Allow", "POST, DELETE, OPTIONS");
		goto out;
	}
	if (env->listeners == NULL || __atomic_add_fetch(env->listeners, 1, __ATOMIC_ACQ_REL) > env->listen_max) {
		if (env->listeners)
			__atomic_sub_fetch(env->listeners, 1, __ATOMIC_ACQ_REL);
		log_info(req->id, "stream: every slot of this process is taken (%ld)", env->listen_max);
		response_set_error(resp, GW_EMETHOD, "no stream slot free; calls still stream their own messages");
		response_set_header(resp, "Allow", "POST, DELETE, OPTIONS");
		goto out;
	}
	/* A first comment right away: a front (nginx) may hold headers back until the
	 * body begins, and a client waits for them before it sends anything else. */
	if (response_stream_open(resp) == 0 && response_stream_comment(resp, "stream") == 0) {
		memset(&f, 0, sizeof(f));
		f.cfg = cfg;
		f.pool = env->pool;
		f.on_msg = listen_msg;
		f.ctx = resp;
		f.now_ms = now_ms;
		f.sessions = s.upstreams;
		fed_listen(&f, listen_tick, resp, MCP_LISTEN_TICK_MS, now_ms + MCP_LISTEN_MAX_MS);
	}
	__atomic_sub_fetch(env->listeners, 1, __ATOMIC_ACQ_REL);
out:
	session_clear(&s);
}

/* --- 2026-07-28 ------------------------------------------------------------------ */

static const char *
meta_version(json_t *msg)
{
	json_t *meta = json_object_get(json_object_get(msg, "params"), "_meta");

	return json_string_value(json_object_get(meta, META_VERSION));
}

/* The era of a payload: 2026-07-28 when the header says so, or when a message's _meta
 * names a revision that initialize does not negotiate. */
static int
payload_is_modern(json_t *payload, const struct request *req)
{
	const char *v;
	json_t *el;
	size_t i;

	if (req->protocol_version && strcmp(req->protocol_version, MCP_MODERN_VERSION) == 0)
		return 1;
	if (json_is_object(payload))
		return (v = meta_version(payload)) != NULL && !in_list(legacy_versions, v);
	json_array_foreach(payload, i, el)
		if ((v = meta_version(el)) != NULL && !in_list(legacy_versions, v))
			return 1;
	return 0;
}

/* The checks 2026-07-28 adds to a request, in the conformance suite's order: _meta
 * (-32602), then headers against the body (-32020), then the version (-32022). */
static int
modern_checks(struct mcp_call *c, const struct jr_msg *m, struct response *resp)
{
	const struct mcp_method *mm = method_find(m->method);
	json_t *meta = json_object_get(m->params, "_meta"), *data;
	const char *v = json_string_value(json_object_get(meta, META_VERSION)), *name;
	size_t i;

	if (!json_is_object(m->params) || v == NULL || !json_is_object(json_object_get(meta, META_CAPS))) {
		fail(c, resp, GW_EMETA, m->id, "params._meta must carry " META_VERSION
		    " and " META_CAPS, NULL);
		return -1;
	}
	if (!negotiate_header_matches(c->req->protocol_version, v)) {
		fail(c, resp, GW_EHEADER, m->id, "MCP-Protocol-Version must equal _meta's protocol version", NULL);
		return -1;
	}
	if (!negotiate_header_matches(c->req->mcp_method, m->method)) {
		fail(c, resp, GW_EHEADER, m->id, "Mcp-Method must equal the method", NULL);
		return -1;
	}
	if (mm && mm->name_param) {
		name = json_string_value(json_object_get(m->params, mm->name_param));
		if ((name || c->req->mcp_name) && !negotiate_header_matches(c->req->mcp_name, name)) {
			fail(c, resp, GW_EHEADER, m->id, "Mcp-Name must equal the name the body calls", NULL);
			return -1;
		}
	}
	if (strcmp(v, MCP_MODERN_VERSION) != 0) {
		data = json_pack("{s:[], s:s}", "supported", "requested", v);
		for (i = 0; versions[i]; i++)
			json_array_append_new(json_object_get(data, "supported"), json_string(versions[i]));
		fail(c, resp, GW_EVERSION, m->id, "Unsupported protocol version", data);
		return -1;
	}
	if (!method_offered(c, mm)) {
		fail(c, resp, GW_ENOMETHOD, m->id, "Method not found", NULL);
		return -1;
	}
	return 0;
}

/* --- the exchange ------------------------------------------------------------------ */

/* One answer out: a JSON body, or an event on the stream. Steals msg. */
static void
answer(struct response *resp, int stream, json_t *msg)
{
	/* (once a relayed notification opened the stream, the answer follows it there) */
	if (resp->streamed || (stream && response_stream_open(resp) == 0)) {
		response_stream_message(resp, msg);
		json_decref(msg);
		return;
	}
	response_set_json(resp, 200, msg);
}

/* The answer to a list whose page came from the cache: out with the page's text in
 * place of the null placeholder of the list's member. Steals out. */
static void
answer_spliced(const struct mcp_call *c, struct response *resp, json_t *out)
{
	char needle[64];
	char *head = json_dumps(out, JSON_COMPACT), *at;
	struct buf b;

	json_decref(out);
	/* Every quote inside a JSON string is escaped, so the member's name followed by
	 * :null occurs once, at the placeholder. */
	snprintf(needle, sizeof(needle), "\"%s\":null", catalog_kinds[c->mm->kind].array);
	buf_init(&b, RESPONSE_BODY_MAX);
	if (head == NULL || (at = strstr(head, needle)) == NULL ||
	    buf_append(&b, head, (size_t)(at - head) + strlen(needle) - 4) < 0 ||
	    buf_append(&b, c->splice, c->splice_len) < 0 ||
	    buf_append(&b, at + strlen(needle), strlen(at + strlen(needle))) < 0 ||
	    response_set_body(resp, 200, "application/json", b.data, b.len) < 0)
		response_set_error(resp, GW_EINTERNAL, "the answer could not be written");
	buf_free(&b);
	free(head);
}

/* One batch element's line in the log: each is logged on its own. */
static void
log_element(const struct request *req, size_t i, const struct jr_msg *m, json_t *out)
{
	json_t *err = json_object_get(out, "error");

	log_json(GW_LOG_INFO, json_pack("{s:s, s:I, s:o, s:o}",
	    "request_id", req->id, "batch_index", (json_int_t)i,
	    "rpc_method", m && m->method ? log_string(m->method) : json_null(),
	    "rpc_error", err ? json_incref(json_object_get(err, "code")) : json_null()));
}

/* The elements run one after another under the request's one deadline: those not
 * started by then get an error, the answers already made are kept. A client that went
 * away ends the batch (its call in progress is abandoned by upstream.c). */
static void
exchange_batch(struct mcp_call *c, json_t *payload, int stream, struct response *resp)
{
	json_t *out = stream ? NULL : json_array(), *id, *el, *r;
	const char *why = NULL;
	struct jr_msg m;
	size_t i, n = 0;
	int64_t now_us;

	c->in_batch = 1;
	c->stream_ok = stream;	/* a batch answered as one JSON array streams nothing */
	json_array_foreach(payload, i, el) {
		now_us = clock_mono_us();
		if (resp->sink && sink_gone(resp->sink, now_us)) {
			log_info(c->req->id, "the client went away: %zu of %zu batch elements not run",
			    json_array_size(payload) - i, json_array_size(payload));
			break;
		}
		r = NULL;
		if (jsonrpc_validate(el, &m, &why, &id) < 0)
			r = jsonrpc_error(id, JSONRPC_INVALID_REQUEST, why, NULL);
		else if (m.kind == JR_REQUEST && now_us / 1000 >= c->until_ms)
			r = jsonrpc_error(m.id, JSONRPC_INTERNAL_ERROR, "Request timeout: the request's time "
			    "(request-timeout-ms) ran out before this element was started", NULL);
		else if (m.kind == JR_REQUEST)
			r = dispatch(c, &m);
		log_element(c->req, i, &m, r);
		if (r == NULL)
			continue;
		n++;
		if (out)
			json_array_append_new(out, r);
		else
			answer(resp, 1, r);	/* each response as soon as it is made */
	}
	if (n == 0)
		response_set_empty(resp, 202);
	else if (out)
		response_set_json(resp, 200, out);
	if (n == 0)
		json_decref(out);
}

/* A caller's notifications/cancelled: to each of its upstream sessions, where its
 * request ran under its own id (upstreams ignore an id they do not know). */
static void
forward_cancel(struct mcp_call *c, json_t *params)
{
	struct fed_call f = { .cfg = c->cfg, .pool = c->env->pool, .now_ms = clock_mono_us() / 1000,
	    .until_ms = c->until_ms, .sessions = c->sess ? c->sess->upstreams : NULL };

	if (json_object_size(f.sessions) > 0 && json_object_get(params, "requestId"))
		fed_notify_sessions(&f, "notifications/cancelled", params);
}

/* The client's answer to a request an upstream made of it during a call. */
static void
forward_answer(struct mcp_call *c, json_t *msg)
{
	struct fed_call f = { .cfg = c->cfg, .pool = c->env->pool, .now_ms = clock_mono_us() / 1000,
	    .until_ms = c->until_ms, .sessions = c->sess ? c->sess->upstreams : NULL };

	if (json_object_size(f.sessions) > 0 && fed_answer(&f, msg) < 0)
		log_info(c->req->id, "an answer for no request the gateway relayed was dropped");
}

/* The HTTP side of the exchange, before any JSON: the caller's tenant, the media type,
 * Accept (*stream: the answer goes as an event stream; c->stream_ok: it may), and the
 * body, read into body. 0, or -1 with the response set. */
static int
exchange_begin(struct mcp_call *c, struct request *req, struct buf *body, int *stream)
{
	struct response *resp = c->resp;
	enum gw_err e;
	unsigned types;

	if (!c->pc.off && c->pc.tenant == NULL) {
		response_set_error(resp, GW_ETENANT, NULL);
		return -1;
	}
	if (!negotiate_media_type_is(req->content_type, "application/json")) {
		response_set_error(resp, GW_EMEDIATYPE, NULL);
		return -1;
	}
	if ((types = negotiate_accept(req->accept)) == 0) {
		response_set_error(resp, GW_EBADREQUEST, "Accept must allow application/json or text/event-stream");
		return -1;
	}
	/* An event stream when the client takes nothing else (and, with federation, when
	 * the answer streams and the client takes it). */
	*stream = !(types & NEGOTIATE_JSON);
	c->stream_ok = (types & NEGOTIATE_SSE) != 0;
	if (request_read_body(req, (size_t)c->cfg->max_body, body, &e) < 0) {
		response_set_error(resp, e, e == GW_ETOOLARGE ? "request body exceeds max-body" : "unreadable request body");
		return -1;
	}
	return 0;
}

/* A single request's answer, after the envelope checks: dispatched, then written as
 * JSON or an event stream (stream), spliced from cached pages when it can be; the
 * session issued at initialize, a 404 for a session an upstream ended, the policy's
 * 403. */
static void
exchange_one(struct mcp_call *c, const struct jr_msg *m, int stream)
{
	struct response *resp = c->resp;
	json_t *out;

	if (c->modern && modern_checks(c, m, resp) < 0)
		return;
	c->splice_ok = !stream;
	out = dispatch(c, m);
	if (!c->modern && strcmp(m->method, "initialize") == 0 && json_object_get(out, "result"))
		issue_session(c, m->params, out);
	if (c->session_gone) {	/* the client starts over with initialize */
		json_decref(out);
		response_set_error(resp, GW_ESESSION, "an upstream ended this session; initialize again");
		return;
	}
	if (c->denied != GW_OK && !resp->streamed) {	/* the policy's 403 */
		json_decref(out);
		if (c->denied == GW_ESCOPE)
			auth_scope_challenge(c->cfg, resp, c->denied_scopes);
		else
			response_set_error(resp, c->denied, NULL);
		return;
	}
	if (method_find(m->method) && (method_find(m->method)->flags & MF_PRIVATE) && !resp->streamed) {
		response_set_header(resp, "Cache-Control", "private");
		response_set_header(resp, "Vary", "Authorization");
	}
	if (c->splice && json_object_get(out, "result") && !resp->streamed)
		answer_spliced(c, resp, out);
	else
		answer(resp, stream, out);
}

void
mcp_exchange(const struct mcp_env *env, const struct config *cfg, const struct caller *caller,
    struct request *req, struct response *resp)
{
	struct mcp_call c = { .env = env, .cfg = cfg, .caller = caller, .req = req, .resp = resp, .vis_kind = -1 };
	struct session sess = { "", "", 0, NULL };
	const char *why = NULL;
	struct jr_msg m;
	struct buf body;
	json_t *payload = NULL, *id;
	int code, stream;

	buf_init(&body, (size_t)cfg->max_body);
	response_set_header(resp, "Cache-Control", "no-store");
	policy_caller_init(&c.pc, cfg, &caller->claims);
	policy_profile(&c.pc, c.profile);
	if (exchange_begin(&c, req, &body, &stream) < 0)
		goto out;
	/* The exchange begins: every upstream call of the request ends by this. */
	c.until_ms = clock_mono_us() / 1000 + cfg->request_timeout_ms;
	c.modern = req->protocol_version && strcmp(req->protocol_version, MCP_MODERN_VERSION) == 0;
	if ((payload = jsonrpc_parse(buf_str(&body), body.len, &code, &why)) == NULL) {
		fail(&c, resp, code == JSONRPC_PARSE_ERROR ? GW_EPARSE : GW_EINVALID, NULL, why, NULL);
		goto out;
	}
	c.modern = payload_is_modern(payload, req);
	if (c.modern && json_is_array(payload)) {
		fail(&c, resp, GW_EINVALID, NULL, "2026-07-28 has no batches", NULL);
		goto out;
	}
	if (json_is_object(payload) && jsonrpc_validate(payload, &m, &why, &id) < 0) {
		fail(&c, resp, GW_EINVALID, id, why, NULL);
		goto out;
	}
	if (!c.modern) {
		if (req->protocol_version && !mcp_version_supported(req->protocol_version)) {
			response_set_error(resp, GW_EBADREQUEST, "unsupported MCP-Protocol-Version");
			goto out;
		}
		if (check_session(env, caller, req, &sess) < 0) {
			response_set_error(resp, GW_ESESSION, NULL);
			goto out;
		}
		if (req->session_id)
			c.sess = &sess;
	}
	if (json_is_array(payload)) {
		if (json_array_size(payload) > (size_t)cfg->max_batch)
			response_set_error(resp, GW_EINVALID, "batch larger than max-batch");
		else
			exchange_batch(&c, payload, stream, resp);
		goto out;
	}
	if (m.kind != JR_REQUEST) {	/* a notification, or the answer to a request of ours */
		if (m.kind == JR_NOTIFICATION && strcmp(m.method, "notifications/cancelled") == 0)
			forward_cancel(&c, m.params);
		else if (m.kind == JR_RESPONSE)
			forward_answer(&c, payload);
		response_set_empty(resp, 202);
		goto out;
	}
	exchange_one(&c, &m, stream);
out:
	free(c.vis);
	json_decref(c.doc);
	session_clear(&sess);
	json_decref(payload);
	buf_free(&body);
}
