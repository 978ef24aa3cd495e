/* mcp_methods — each method's handler (by the method table's id, method.h), whether a
 * method is offered to a request, and the methods the gateway answers itself
 * (initialize, ping, server/discover); lists are in mcp_list.c, and everything an
 * upstream serves goes to it through federate.c. */
#include "autoconf.h"

#include <string.h>

#include "clock.h"
#include "log.h"
#include "mcp_call.h"
#include "negotiate.h"

#define META_SERVER	"io.modelcontextprotocol/serverInfo"
#define DISCOVER_TTL_MS	300000	/* how long a client may keep server/discover */

/* Newest first. The first is the stateless revision; the others go through initialize. */
static const char *const versions[] = {
	MCP_MODERN_VERSION, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
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

int
mcp_version_legacy(const char *v)
{
	return in_list(versions + 1, v);
}

json_t *
mcp_versions_json(void)
{
	json_t *all = json_array();
	size_t i;

	for (i = 0; versions[i]; i++)
		json_array_append_new(all, json_string(versions[i]));
	return all;
}

/* The catalog, taken once per request (a reference, released at the end of the
 * exchange), so that everything a request holds of it comes from this one document
 * even when the worker's view moves on to a newer one. With upstreams listed per
 * caller, the caller's own (x->doc_mine: nothing derived from it is kept for others). */
json_t *
mcp_catalog(struct exchange *x)
{
	char who[33] = "";
	struct catalog_fetcher by = { x->env->pool, x->env->cred, x->env->own_cred, who, x->env->metrics };
	int64_t now_ms = x->req->start_us / 1000;
	json_t *shared;

	if (x->doc == NULL) {
		if (x->caller)
			mcp_caller_who(x->cfg, x->caller, who);
		x->doc = catalog_get(x->env->catalog, x->env->view, &by, x->cfg, now_ms);
		if (x->cfg->per_caller && who[0]) {
			shared = x->doc;
			x->doc = catalog_caller_get(x->env->callers, &by, x->cfg, shared, x->env->view->serial, now_ms);
			x->doc_mine = 1;
			json_decref(shared);
		}
	}
	return x->doc;
}

/* federate.c's admit (fed_offers, fed_capabilities): mcp_reaches() for the records a
 * capability is about (ctx: the exchange): prompts its prompts; resources its
 * resources and templates; completions both; its log level any of them. */
static int
admit_upstream(void *ctx, const char *name, const char *capability)
{
	static const struct {
		const char *capability;
		unsigned kinds;
	} about[] = {
		{ "prompts", 1u << CATALOG_PROMPTS },
		{ "resources", 1u << CATALOG_RESOURCES | 1u << CATALOG_TEMPLATES },
	};
	unsigned kinds = 1u << CATALOG_PROMPTS | 1u << CATALOG_RESOURCES | 1u << CATALOG_TEMPLATES;
	size_t i;

	for (i = 0; i < sizeof(about) / sizeof(about[0]); i++)
		if (strcmp(capability, about[i].capability) == 0)
			kinds = about[i].kinds;
	return mcp_reaches(ctx, name, kinds);
}

/* What this caller is offered: only what the upstreams it may reach offer. */
static json_t *
capabilities(struct exchange *x)
{
	struct fed_admit a = { admit_upstream, x, !x->modern };

	return fed_capabilities(mcp_catalog(x), &a);
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
m_initialize(struct element *el, json_t *params, struct gw_error *err)
{
	struct exchange *x = el->x;
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	json_t *result;

	if (!json_is_object(params) || want == NULL) {
		gw_error_set(err, GW_EPARAMS, "initialize needs params.protocolVersion");
		return NULL;
	}
	result = json_pack("{s:s, s:o, s:o}",
	    "protocolVersion", mcp_version_legacy(want) ? want : MCP_LATEST_VERSION,
	    "capabilities", capabilities(x),
	    "serverInfo", server_info(x->cfg));
	if (result && x->cfg->instructions)
		json_object_set_new(result, "instructions", json_string(x->cfg->instructions));
	return result;
}

/* 2026-07-28 discovery: versions, capabilities, and who we are in _meta. */
static json_t *
m_discover(struct element *el, json_t *params, struct gw_error *err)
{
	struct exchange *x = el->x;
	json_t *result = json_pack("{s:o, s:o, s:s, s:i, s:{s:o}}",
	    "supportedVersions", mcp_versions_json(),
	    "capabilities", capabilities(x),
	    "cacheScope", "private",
	    "ttlMs", DISCOVER_TTL_MS,
	    "_meta", META_SERVER, server_info(x->cfg));
	if (result && x->cfg->instructions)
		json_object_set_new(result, "instructions", json_string(x->cfg->instructions));
	return result;
}

static json_t *
m_ping(struct element *el, json_t *params, struct gw_error *err)
{
	return json_object();
}

/* Messages an upstream sends before its answer, to a client that takes an event
 * stream, as they come: progress and log notifications, and the requests it makes of
 * the client (federate.c gives them an id that leads the client's answer back);
 * other notifications are dropped, and requests declined when there is no stream.
 * ctx: the element. */
static int
relay(void *ctx, json_t *msg)
{
	const struct element *el = ctx;
	struct exchange *x = el->x;
	const char *m = json_string_value(json_object_get(msg, "method"));
	int request = json_object_get(msg, "id") != NULL;

	if (m == NULL || (!request && strcmp(m, "notifications/progress") != 0 &&
	    strcmp(m, "notifications/message") != 0))
		return 0;
	if (!x->stream_ok || x->in_batch)
		return request ? UPSTREAM_DECLINE : 0;
	if (response_stream_open(x->resp) < 0 || response_stream_message(x->resp, msg) < 0) {
		if (x->resp->sink && x->resp->sink->failed)
			return -1;	/* the client went away: the call is abandoned */
		return request ? UPSTREAM_DECLINE : 0;
	}
	return 0;
}

/* A federated call of this request: its configuration, the worker's upstreams, its
 * deadline, the caller's upstream sessions, and whom the pool's sessions must be for
 * where it has none: the caller's digest, which binds the gateway's resource and issuer
 * too (the catalog and the rest are the caller's to add). */
void
mcp_fed_init(const struct exchange *x, struct fed_call *f)
{
	memset(f, 0, sizeof(*f));
	f->cfg = x->cfg;
	f->pool = x->env->pool;
	f->now_ms = clock_mono_us() / 1000;
	f->until_ms = x->until_ms;
	f->sessions = x->sess ? x->sess->upstreams : NULL;
	f->metrics = x->env->metrics;
	f->cred = x->env->cred;
	if (x->caller)
		mcp_caller_who(x->cfg, x->caller, f->who);
}

/* A tools/call counted by its tool and outcome ([metrics]); a name the catalog neither
 * serves nor holds is "other", so callers cannot make label values up. */
static void
count_tool(struct exchange *x, json_t *params, enum metrics_outcome o)
{
	const char *name = json_string_value(json_object_get(params, "name"));

	if (!x->cfg->metrics_on)
		return;
	if (name && catalog_find(mcp_catalog(x), name) < 0 && catalog_held(mcp_catalog(x), CATALOG_TOOLS, name) == NULL)
		name = NULL;
	metrics_tool(x->env->metrics, name, o);
}

/* An upstream's result (stolen) for the caller's revision: an input_required relayed
 * (mcp_input.c) or asked of an older caller (mcp_ask.c, params the call's), a stateless
 * upstream's resultType dropped for an older caller, and a cache scope private. NULL
 * with err. */
static json_t *
relayed(struct element *el, struct fed_call *f, json_t *params, json_t *result, struct gw_error *err)
{
	const char *rt = json_string_value(json_object_get(result, "resultType"));

	if (rt && strcmp(rt, "input_required") == 0 && !el->x->modern)
		result = mcp_ask(el, f, params, result, err);
	else if (rt && strcmp(rt, "input_required") == 0)
		return mcp_input_relay(el, f, result, err);
	rt = json_string_value(json_object_get(result, "resultType"));
	if (rt && !el->x->modern)
		json_object_del(result, "resultType");
	/* What the upstream may call the same for everyone is, through the gateway, the
	 * answer to this caller, whom the policy let have it: never for a shared cache. */
	if (el->x->modern && json_object_get(result, "cacheScope"))
		json_object_set_new(result, "cacheScope", json_string("private"));
	return result;
}

/* f for el's forwarding: the caller's, with what the revisions differ in (what a
 * stateless upstream may ask, an older session's log level and subscriptions). */
static void
forward_init(struct element *el, json_t *params, struct fed_call *f)
{
	struct exchange *x = el->x;

	mcp_fed_init(x, f);
	f->doc = mcp_catalog(x);
	f->on_msg = relay;
	f->ctx = el;	/* relay's and mcp_gate_upstream's */
	f->client = x->resp->sink;
	f->id = el->id;
	f->gate = mcp_gate_upstream;
	f->keep = x->modern ? NULL : mcp_stream_keep;
	f->log_level = x->modern ? NULL : mcp_level_of;
	/* What a stateless upstream may ask this caller for: a 2026-07-28 caller's own
	 * declaration; an older caller's at initialize, when the gateway can ask it. */
	f->client_caps = x->modern ? json_incref(json_object_get(json_object_get(params, "_meta"), MCP_META_CAPS)) :
	    mcp_ask_caps(x);
}

/* tools/call, prompts/get, resources/read, completion/complete, logging/setLevel: to
 * the upstream they belong to (federate.c). */
static json_t *
m_forward(struct element *el, json_t *params, struct gw_error *err)
{
	struct exchange *x = el->x;
	struct fed_call f;
	json_t *result = NULL, *retried = NULL, *unwrapped = NULL, *sent;
	char bound[INPUT_UPSTREAM_MAX];

	forward_init(el, params, &f);
	/* An older caller's log level: kept for the stateless upstreams, asked of them. */
	if (el->mm->id == METHOD_SET_LEVEL && mcp_level_set(x, params, err) < 0)
		goto out;
	if (el->mm->id == METHOD_TOOLS_CALL && json_is_object(params) && mcp_gate_call(el, params, err) < 0) {
		count_tool(x, params, el->pin_held ? METRICS_HELD : METRICS_DENIED);
		goto out;
	}
	if (el->mm->id == METHOD_TOOLS_CALL && json_is_object(params) && mcp_check_args(el, params, err) < 0) {
		count_tool(x, params, METRICS_INVALID);
		goto out;
	}
	/* A retry after our input_required: relayed without our input's answer and state;
	 * after an upstream's: with the upstream's own state, to that upstream alone. */
	if (mcp_connect_retry(el, params, &retried, err) < 0 ||
	    mcp_input_retry(el, retried ? retried : params, &f, bound, &unwrapped, err) < 0)
		goto out;
	sent = unwrapped ? unwrapped : retried ? retried : params;
	result = fed_request(&f, el->mm->name, sent);
	if (el->mm->id == METHOD_TOOLS_CALL)
		count_tool(x, params, result ? METRICS_ALLOWED : METRICS_ERROR);
	el->session_gone |= f.session_gone;
	if (result) {
		result = relayed(el, &f, sent, result, err);
		if (result && el->mm->id == METHOD_TOOLS_CALL)
			result = mcp_check_result(el, params, result);
	} else if (f.err.code == GW_ESCOPE) {
		/* The upstream's credential needs scopes the caller's token lacks: a step-up,
		 * as for the policy's (a batch element gets its JSON-RPC error alone). */
		if (!x->in_batch) {
			el->denied = GW_ESCOPE;
			snprintf(el->denied_scopes, sizeof(el->denied_scopes), "%s", f.err.detail);
		}
		gw_error_set(err, GW_EREFUSED, "Forbidden: insufficient_scope (needs %.200s)", f.err.detail);
	} else if (f.err.code == GW_ECONNECT) {
		result = mcp_connect_required(el, params, f.err.detail, err);	/* the person's account, not connected */
	} else {
		*err = f.err;
		el->err_data = f.err_data;	/* the upstream's, relayed */
		f.err_data = NULL;
		if (f.err.code == GW_ENORESOURCE && el->err_data == NULL && json_is_string(json_object_get(params, "uri")))
			el->err_data = json_pack("{s:O}", "uri", json_object_get(params, "uri"));
	}
out:
	json_decref(retried);
	json_decref(unwrapped);
	json_decref(f.err_data);
	json_decref(f.client_caps);
	return result;
}

/* Each method's handler, by the method table's id: the last column of methods.def. */
static mcp_fn *const handlers[METHOD_N] = {
#define METHOD(id, name, flags, name_param, kind, route, capability, feature, unknown, handler) \
	[METHOD_##id] = handler,
#include "methods.def"
#undef METHOD
};

/* In this request's era, and, for what upstreams serve, offered by one of them the
 * caller may reach (its capabilities said so at initialize). */
int
mcp_method_offered(struct exchange *x, const struct method *mm)
{
	struct fed_admit a = { admit_upstream, x, !x->modern };

	return mm && (mm->flags & (x->modern ? MF_MODERN : MF_LEGACY)) &&
	    (!(mm->flags & MF_UPSTREAM) || fed_offers(mcp_catalog(x), mm->name, &a));
}

json_t *
mcp_error(json_t *id, enum gw_err e, const char *why)
{
	const struct gw_err_info *info = err_info(e);

	return jsonrpc_error(id, info->jsonrpc_code, why ? why : info->message, NULL);
}

/* One valid request to its response object. The error data a handler left goes with its
 * error (with a result, it is dropped): el holds nothing once this returns. */
json_t *
mcp_dispatch(struct element *el, const struct jr_msg *m)
{
	const struct method *mm = method_find(m->method);
	struct gw_error err = { GW_EINTERNAL, 0, "" };
	json_t *result, *data;

	if (!mcp_method_offered(el->x, mm))
		return mcp_error(m->id, GW_ENOMETHOD, NULL);
	if ((mm->flags & MF_NO_BATCH) && el->x->in_batch)
		return mcp_error(m->id, GW_EINVALID, "initialize cannot be batched");
	el->mm = mm;
	el->id = m->id;
	result = handlers[mm->id](el, m->params, &err);
	data = el->err_data;
	el->err_data = NULL;
	if (result == NULL)
		return jsonrpc_error(m->id, gw_error_rpc(&err), err.detail[0] ? err.detail : "Internal error", data);
	json_decref(data);
	if (el->x->modern && !json_is_string(json_object_get(result, "resultType")))	/* (input_required kept) */
		json_object_set_new(result, "resultType", json_string("complete"));
	return jsonrpc_result(m->id, result);
}

/* A caller's notifications/cancelled: to each of its upstream sessions, where its
 * request ran under its own id (upstreams ignore an id they do not know). */
void
mcp_forward_cancel(const struct exchange *x, json_t *params)
{
	struct fed_call f;

	mcp_fed_init(x, &f);
	if (json_object_size(f.sessions) > 0 && json_object_get(params, "requestId"))
		fed_notify_sessions(&f, "notifications/cancelled", params);
}

/* The client's answer to a request an upstream made of it during a call. */
void
mcp_forward_answer(const struct exchange *x, json_t *msg)
{
	struct fed_call f;

	if (mcp_ask_answer(x, msg))
		return;	/* to a question of the gateway's own */
	mcp_fed_init(x, &f);
	if (json_object_size(f.sessions) > 0 && fed_answer(&f, msg) < 0)
		log_info(x->req->id, "an answer for no request the gateway relayed was dropped");
}
