/* mcp_methods — each method's handler (by the method table's id, method.h), whether a
 * method is offered to a request, and the methods the gateway answers itself
 * (initialize, ping, server/discover); lists are in mcp_list.c, and everything an
 * upstream serves goes to it through federate.c. */
#include "autoconf.h"

#include <string.h>

#include "clock.h"
#include "log.h"
#include "mcp_call.h"

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
 * even when the worker's view moves on to a newer one. */
json_t *
mcp_catalog(struct mcp_call *c)
{
	if (c->doc == NULL)
		c->doc = catalog_get(c->env->catalog, c->env->view, c->env->pool, c->cfg, c->req->start_us / 1000);
	return c->doc;
}

/* federate.c's admit (fed_offers, fed_capabilities): mcp_reaches(). */
static int
admit_upstream(void *ctx, const char *name)
{
	return mcp_reaches(ctx, name);
}

/* What this caller is offered: only what the upstreams it may reach offer. */
static json_t *
capabilities(struct mcp_call *c)
{
	struct fed_admit a = { admit_upstream, c };

	return fed_capabilities(mcp_catalog(c), &a);
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
m_initialize(struct mcp_call *c, json_t *params, struct gw_error *err)
{
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	json_t *result;

	if (!json_is_object(params) || want == NULL) {
		gw_error_set(err, GW_EPARAMS, "initialize needs params.protocolVersion");
		return NULL;
	}
	result = json_pack("{s:s, s:o, s:o}",
	    "protocolVersion", mcp_version_legacy(want) ? want : MCP_LATEST_VERSION,
	    "capabilities", capabilities(c),
	    "serverInfo", server_info(c->cfg));
	if (result && c->cfg->instructions)
		json_object_set_new(result, "instructions", json_string(c->cfg->instructions));
	return result;
}

/* 2026-07-28 discovery: versions, capabilities, and who we are in _meta. */
static json_t *
m_discover(struct mcp_call *c, json_t *params, struct gw_error *err)
{
	json_t *result = json_pack("{s:o, s:o, s:s, s:i, s:{s:o}}",
	    "supportedVersions", mcp_versions_json(),
	    "capabilities", capabilities(c),
	    "cacheScope", "private",
	    "ttlMs", DISCOVER_TTL_MS,
	    "_meta", META_SERVER, server_info(c->cfg));
	if (result && c->cfg->instructions)
		json_object_set_new(result, "instructions", json_string(c->cfg->instructions));
	return result;
}

static json_t *
m_ping(struct mcp_call *c, json_t *params, struct gw_error *err)
{
	return json_object();
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

/* A federated call of this request: its configuration, the worker's upstreams, its
 * deadline and the caller's upstream sessions (the catalog and the rest are the
 * caller's to add). */
void
mcp_fed_init(struct mcp_call *c, struct fed_call *f)
{
	memset(f, 0, sizeof(*f));
	f->cfg = c->cfg;
	f->pool = c->env->pool;
	f->now_ms = clock_mono_us() / 1000;
	f->until_ms = c->until_ms;
	f->sessions = c->sess ? c->sess->upstreams : NULL;
}

/* tools/call, prompts/get, resources/read, completion/complete, logging/setLevel: to
 * the upstream they belong to (federate.c). */
static json_t *
m_forward(struct mcp_call *c, json_t *params, struct gw_error *err)
{
	struct fed_call f;
	json_t *result;

	mcp_fed_init(c, &f);
	f.doc = mcp_catalog(c);
	f.on_msg = relay;
	f.ctx = c;
	f.client = c->resp->sink;
	f.id = c->id;
	f.gate = mcp_gate_upstream;
	if (c->mm->id == METHOD_TOOLS_CALL && json_is_object(params) && mcp_gate_call(c, params, err) < 0)
		return NULL;
	result = fed_request(&f, c->mm->name, params);

	c->session_gone |= f.session_gone;
	if (result == NULL) {
		*err = f.err;
	}
	return result;
}

/* Each method's handler, by the method table's id (method.c). */
static mcp_fn *const handlers[METHOD_N] = {
	[METHOD_INITIALIZE] = m_initialize,
	[METHOD_PING] = m_ping,
	[METHOD_DISCOVER] = m_discover,
	[METHOD_TOOLS_LIST] = mcp_list,
	[METHOD_PROMPTS_LIST] = mcp_list,
	[METHOD_RESOURCES_LIST] = mcp_list,
	[METHOD_TEMPLATES_LIST] = mcp_list,
	[METHOD_TOOLS_CALL] = m_forward,
	[METHOD_PROMPTS_GET] = m_forward,
	[METHOD_RESOURCES_READ] = m_forward,
	[METHOD_COMPLETE] = m_forward,
	[METHOD_SUBSCRIBE] = m_forward,
	[METHOD_UNSUBSCRIBE] = m_forward,
	[METHOD_SET_LEVEL] = m_forward,
};

/* In this request's era, and, for what upstreams serve, offered by one of them the
 * caller may reach (its capabilities said so at initialize). */
int
mcp_method_offered(struct mcp_call *c, const struct method *mm)
{
	struct fed_admit a = { admit_upstream, c };

	return mm && handlers[mm->id] && (mm->flags & (c->modern ? MF_MODERN : MF_LEGACY)) &&
	    (!(mm->flags & MF_UPSTREAM) || fed_offers(mcp_catalog(c), mm->name, &a));
}

json_t *
mcp_error(json_t *id, enum gw_err e, const char *why)
{
	const struct gw_err_info *info = err_info(e);

	return jsonrpc_error(id, info->jsonrpc_code, why ? why : info->message, NULL);
}

/* One valid request to its response object. */
json_t *
mcp_dispatch(struct mcp_call *c, const struct jr_msg *m)
{
	const struct method *mm = method_find(m->method);
	struct gw_error err = { GW_EINTERNAL, 0, "" };
	json_t *result, *data;

	if (!mcp_method_offered(c, mm))
		return mcp_error(m->id, GW_ENOMETHOD, NULL);
	if ((mm->flags & MF_NO_BATCH) && c->in_batch)
		return mcp_error(m->id, GW_EINVALID, "initialize cannot be batched");
	c->mm = mm;
	c->id = m->id;
	if ((result = handlers[mm->id](c, m->params, &err)) == NULL) {
		data = c->err_data;
		c->err_data = NULL;
		return jsonrpc_error(m->id, gw_error_rpc(&err), err.detail[0] ? err.detail : "Internal error", data);
	}
	if (c->modern)
		json_object_set_new(result, "resultType", json_string("complete"));
	return jsonrpc_result(m->id, result);
}

/* A caller's notifications/cancelled: to each of its upstream sessions, where its
 * request ran under its own id (upstreams ignore an id they do not know). */
void
mcp_forward_cancel(struct mcp_call *c, json_t *params)
{
	struct fed_call f;

	mcp_fed_init(c, &f);
	if (json_object_size(f.sessions) > 0 && json_object_get(params, "requestId"))
		fed_notify_sessions(&f, "notifications/cancelled", params);
}

/* The client's answer to a request an upstream made of it during a call. */
void
mcp_forward_answer(struct mcp_call *c, json_t *msg)
{
	struct fed_call f;

	mcp_fed_init(c, &f);
	if (json_object_size(f.sessions) > 0 && fed_answer(&f, msg) < 0)
		log_info(c->req->id, "an answer for no request the gateway relayed was dropped");
}
