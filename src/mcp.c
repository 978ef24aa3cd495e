/* mcp — checks in the order of issue #4, then one dispatch per message. */
#include "autoconf.h"

#include <string.h>
#include <strings.h>

#include <stdio.h>

#include "jsonrpc.h"
#include "log.h"
#include "mcp.h"

static const char *const versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
};

struct mcp_call {
	const struct mcp_env *env;
	const struct config *cfg;
	const struct caller *caller;
	const struct request *req;
	int in_batch;
};

/* A method returns its result, or NULL with *code and *msg set. */
typedef json_t *mcp_fn(struct mcp_call *c, json_t *params, int *code, const char **msg);

enum { MF_NO_BATCH = 1 << 0 };

struct mcp_method {
	const char *name;
	mcp_fn *fn;
	unsigned flags;
};

int
mcp_version_supported(const char *v)
{
	size_t i;

	for (i = 0; versions[i]; i++)
		if (strcmp(versions[i], v) == 0)
			return 1;
	return 0;
}

static json_t *
m_initialize(struct mcp_call *c, json_t *params, int *code, const char **msg)
{
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	json_t *result, *info;

	if (!json_is_object(params) || want == NULL) {
		*code = JSONRPC_INVALID_PARAMS;
		*msg = "initialize needs params.protocolVersion";
		return NULL;
	}
	info = json_pack("{s:s, s:s}", "name", c->cfg->name, "version", c->cfg->version);
	if (c->cfg->title)
		json_object_set_new(info, "title", json_string(c->cfg->title));
	/* Only what the gateway delivers: no listChanged while there is no GET stream. */
	result = json_pack("{s:s, s:{s:{}}, s:o}",
	    "protocolVersion", mcp_version_supported(want) ? want : MCP_LATEST_VERSION,
	    "capabilities", "tools",
	    "serverInfo", info);
	if (c->cfg->instructions)
		json_object_set_new(result, "instructions", json_string(c->cfg->instructions));
	return result;
}

static json_t *
m_ping(struct mcp_call *c, json_t *params, int *code, const char **msg)
{
	return json_object();
}

/* Until federation (issue #5) there is no upstream: the catalog is empty. */
static json_t *
m_tools_list(struct mcp_call *c, json_t *params, int *code, const char **msg)
{
	if (params && !json_is_object(params)) {
		*code = JSONRPC_INVALID_PARAMS;
		*msg = "tools/list takes an object";
		return NULL;
	}
	return json_pack("{s:[]}", "tools");
}

static json_t *
m_tools_call(struct mcp_call *c, json_t *params, int *code, const char **msg)
{
	*code = JSONRPC_INVALID_PARAMS;
	*msg = json_is_string(json_object_get(params, "name")) ? "Unknown tool" : "tools/call needs params.name";
	return NULL;
}

static const struct mcp_method methods[] = {
	{ "initialize", m_initialize, MF_NO_BATCH },
	{ "ping", m_ping, 0 },
	{ "tools/list", m_tools_list, 0 },
	{ "tools/call", m_tools_call, 0 },
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

/* One valid request to its response object. */
static json_t *
dispatch(struct mcp_call *c, const struct jr_msg *m)
{
	const struct mcp_method *mm = method_find(m->method);
	const char *msg = NULL;
	json_t *result;
	int code = JSONRPC_INTERNAL_ERROR;

	if (mm == NULL)
		return jsonrpc_error(m->id, JSONRPC_METHOD_NOT_FOUND, "Method not found", NULL);
	if ((mm->flags & MF_NO_BATCH) && c->in_batch)
		return jsonrpc_error(m->id, JSONRPC_INVALID_REQUEST, "initialize cannot be batched", NULL);
	if ((result = mm->fn(c, m->params, &code, &msg)) == NULL)
		return jsonrpc_error(m->id, code, msg ? msg : "Internal error", NULL);
	return jsonrpc_result(m->id, result);
}

static int
media_type_is(const char *ct, const char *want)
{
	size_t n = strlen(want);

	return ct && strncasecmp(ct, want, n) == 0 && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* Accept must allow JSON (event streams come later): absent, or naming a usable type. */
static int
accept_ok(const char *accept)
{
	return accept == NULL || *accept == '\0' || strstr(accept, "application/json") ||
	    strstr(accept, "text/event-stream") || strstr(accept, "*/*") || strstr(accept, "application/*");
}

static void
caller_who(const struct caller *caller, char who[33])
{
	session_who(caller->claims.subject, caller->claims.client_id, caller->claims.tenant, who);
}

/* A fresh session for an initialize that succeeded: the Mcp-Session-Id header. */
static void
issue_session(const struct mcp_env *env, const struct config *cfg, const struct caller *caller,
    const struct request *req, json_t *answer, struct response *resp)
{
	const char *pv = json_string_value(json_object_get(json_object_get(answer, "result"), "protocolVersion"));
	struct session s;
	char id[SESSION_ID_MAX];

	if (pv == NULL || env->session_key == NULL)
		return;
	memset(&s, 0, sizeof(s));
	snprintf(s.version, sizeof(s.version), "%s", pv);
	caller_who(caller, s.who);
	s.exp = req->now + cfg->session_ttl;
	if (session_seal(env->session_key, &s, id) == 0)
		response_set_header(resp, "Mcp-Session-Id", "%s", id);
}

/* A presented Mcp-Session-Id must open for this caller; none means stateless. */
static int
check_session(const struct mcp_env *env, const struct caller *caller, const struct request *req,
    struct session *s)
{
	char who[33];

	memset(s, 0, sizeof(*s));
	if (req->session_id == NULL)
		return 0;
	caller_who(caller, who);
	if (env->session_key == NULL ||
	    session_open(env->session_key, env->tombstones, req->session_id, who, req->now, s) < 0)
		return -1;
	return 0;
}

void
mcp_end_session(const struct mcp_env *env, const struct config *cfg,
    const struct caller *caller, struct request *req, struct response *resp)
{
	struct session s;

	response_set_header(resp, "Cache-Control", "no-store");
	if (req->session_id == NULL) {
		response_set_error(resp, GW_EBADREQUEST, "DELETE needs the Mcp-Session-Id to end");
		return;
	}
	if (check_session(env, caller, req, &s) < 0 || env->tombstones == NULL) {
		response_set_error(resp, GW_ESESSION, NULL);
		return;
	}
	session_end(env->tombstones, req->session_id, s.exp, req->now);
	session_clear(&s);
	response_set_empty(resp, 204);
}

void
mcp_exchange(const struct mcp_env *env, const struct config *cfg, const struct caller *caller,
    struct request *req, struct response *resp)
{
	struct mcp_call c = { env, cfg, caller, req, 0 };
	struct session sess = { "", "", 0, NULL };
	const char *why = NULL;
	struct jr_msg m;
	struct buf body;
	json_t *payload = NULL, *out = NULL, *id, *el;
	enum gw_err e;
	size_t i;
	int code;

	buf_init(&body, (size_t)cfg->max_body);
	response_set_header(resp, "Cache-Control", "no-store");
	if (!media_type_is(req->content_type, "application/json")) {
		response_set_error(resp, GW_EMEDIATYPE, NULL);
		goto out;
	}
	if (!accept_ok(req->accept)) {
		response_set_error(resp, GW_EBADREQUEST, "Accept must allow application/json or text/event-stream");
		goto out;
	}
	if (req->protocol_version && !mcp_version_supported(req->protocol_version)) {
		response_set_error(resp, GW_EBADREQUEST, "unsupported MCP-Protocol-Version");
		goto out;
	}
	if (check_session(env, caller, req, &sess) < 0) {
		response_set_error(resp, GW_ESESSION, NULL);
		goto out;
	}
	if (request_read_body(req, (size_t)cfg->max_body, &body, &e) < 0) {
		response_set_error(resp, e, e == GW_ETOOLARGE ? "request body exceeds max-body" : "unreadable request body");
		goto out;
	}
	if ((payload = jsonrpc_parse(buf_str(&body), body.len, &code, &why)) == NULL) {
		response_set_error(resp, code == JSONRPC_PARSE_ERROR ? GW_EPARSE : GW_EINVALID, why);
		goto out;
	}
	if (json_is_object(payload)) {
		if (jsonrpc_validate(payload, &m, &why, &id) < 0) {
			response_set_error(resp, GW_EINVALID, why);
			goto out;
		}
		if (m.kind != JR_REQUEST) {
			response_set_empty(resp, 202);
			goto out;
		}
		out = dispatch(&c, &m);
		if (strcmp(m.method, "initialize") == 0 && json_object_get(out, "result"))
			issue_session(env, cfg, caller, req, out, resp);
		response_set_json(resp, 200, out);
		out = NULL;
		goto out;
	}
	if (json_array_size(payload) > (size_t)cfg->max_batch) {
		response_set_error(resp, GW_EINVALID, "batch larger than max-batch");
		goto out;
	}
	/* A batch: each element on its own; invalid ones get their own -32600. */
	c.in_batch = 1;
	out = json_array();
	json_array_foreach(payload, i, el) {
		if (jsonrpc_validate(el, &m, &why, &id) < 0)
			json_array_append_new(out, jsonrpc_error(id, JSONRPC_INVALID_REQUEST, why, NULL));
		else if (m.kind == JR_REQUEST)
			json_array_append_new(out, dispatch(&c, &m));
	}
	if (json_array_size(out) == 0)
		response_set_empty(resp, 202);
	else {
		response_set_json(resp, 200, out);
		out = NULL;
	}
out:
	session_clear(&sess);
	json_decref(out);
	json_decref(payload);
	buf_free(&body);
}
