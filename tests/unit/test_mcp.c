/* Unit tests: the POST /mcp exchange — checks in order, lifecycle, batches, sessions,
 * the 2026-07-28 revision (_meta, header checks, its error bodies) and the event-stream
 * framing (one event per message, each flushed). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp.h"
#include "chunk.h"
#include "fixture.h"
#include "tap.h"

static char conf[256];
static const unsigned char session_key[32] = { 7 };
static struct catalog_view view;	/* no upstream in the test config: an empty catalog */
static struct mcp_env env = { .session_key = session_key, .view = &view };	/* + pages, in main */

/* What a test request carries besides its body; NULL = absent. */
struct hdrs {
	const char *ctype;	/* NULL = application/json */
	const char *accept;
	const char *pv;		/* MCP-Protocol-Version */
	const char *method;	/* Mcp-Method */
	const char *name;	/* Mcp-Name */
	const char *session;	/* Mcp-Session-Id */
};

/* The last exchange: its raw output (event streams), flushes and session header. */
static struct buf raw;
static int flushes;
static char issued[SESSION_ID_MAX];

static int
raw_write(void *ctx, const void *p, size_t n)
{
	return buf_append(ctx, p, n);
}

static int
raw_flush(void *ctx)
{
	flushes++;
	return 0;
}

static char *
maybe_dup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Runs one POST /mcp exchange as a caller "alice"; returns the status; *out gets the
 * JSON body (NULL when none or streamed). */
static int
post(const struct hdrs *h, const char *body, json_t **out)
{
	struct sink sk = { raw_write, raw_flush, &raw, 0, -1, 0, 0 };
	struct chunk ck = { body, strlen(body) };
	struct cfg_errors errs;
	struct response resp;
	struct request req;
	struct caller caller;
	struct config *cfg;
	const char *sid, *at = NULL;
	int status;

	memset(&req, 0, sizeof(req));
	memset(&caller, 0, sizeof(caller));
	snprintf(caller.claims.subject, sizeof(caller.claims.subject), "alice");
	config_load(conf, &cfg, &errs);
	req.content_type = strdup(h->ctype ? h->ctype : "application/json");
	req.accept = maybe_dup(h->accept);
	req.protocol_version = maybe_dup(h->pv);
	req.mcp_method = maybe_dup(h->method);
	req.mcp_name = maybe_dup(h->name);
	req.session_id = maybe_dup(h->session);
	req.content_length = (long long)strlen(body);
	req.body.ctx = &ck;
	req.body.read = chunk_read;
	req.now = 1000;
	buf_reset(&raw);
	flushes = 0;
	response_init(&resp, "rid");
	resp.sink = &sk;
	{
		struct req_ctx rc = { .cfg = cfg, .req = &req, .resp = &resp, .caller = &caller,
			.slot[REQ_SLOT_MCP] = &env };

		mcp_exchange(&rc);
	}
	response_send(&resp, &sk);
	buf_str(&raw);
	status = resp.status;
	/* (a list page from the cache leaves a serialized body only, the page itself held
	 * apart from it: the body is read from what was written) */
	*out = resp.json ? json_incref(resp.json) : response_body_len(&resp) && !resp.streamed &&
	    (at = strstr(buf_str(&raw), "\r\n\r\n")) != NULL ? json_loads(at + 4, 0, NULL) : NULL;
	if (resp.splice && *out && raw.len - (size_t)(at + 4 - raw.data) != response_body_len(&resp)) {
		json_decref(*out);	/* the Content-Length said must be what went out */
		*out = NULL;
	}
	sid = response_get_header(&resp, "Mcp-Session-Id");
	snprintf(issued, sizeof(issued), "%s", sid ? sid : "");
	response_free(&resp);
	free(req.content_type);
	free(req.accept);
	free(req.protocol_version);
	free(req.mcp_method);
	free(req.mcp_name);
	free(req.session_id);
	config_unref(cfg);
	return status;
}

/* The value at a dotted path ("result.tools", "0.error.code"), or NULL. */
static json_t *
walk(json_t *j, const char *path)
{
	char b[128], *tok, *save;

	snprintf(b, sizeof(b), "%s", path);
	for (tok = strtok_r(b, ".", &save); tok && j; tok = strtok_r(NULL, ".", &save))
		j = json_is_array(j) ? json_array_get(j, strtoul(tok, NULL, 10)) : json_object_get(j, tok);
	return j;
}

static const char *
str(json_t *j, const char *path)
{
	json_t *v = walk(j, path);

	return json_is_string(v) ? json_string_value(v) : "";
}

static long long
num(json_t *j, const char *path)
{
	json_t *v = walk(j, path);

	return json_is_integer(v) ? json_integer_value(v) : -999999;
}

static int
count(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)) != NULL; hay += strlen(needle))
		n++;
	return n;
}

static const struct hdrs plain = { 0 };

#define META	"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"," \
		"\"io.modelcontextprotocol/clientCapabilities\":{}}"
#define MODERN(id, method, params) \
	"{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"" method "\",\"params\":{" params "}}"

static void
legacy(void)
{
	json_t *o;
	int i;

	is_int(post(&(struct hdrs){ .ctype = "text/plain" }, "{}", &o), 400, "wrong Content-Type: 400");
	json_decref(o);
	is_int(post(&(struct hdrs){ .ctype = "application/json; charset=utf-8", .pv = "1999-01-01" },
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &o), 400, "unsupported MCP-Protocol-Version: 400");
	ok(o && num(o, "jsonrpc_code") == -999999 && *str(o, "error"), "as an HttpError");
	json_decref(o);
	is_int(post(&plain, "{nope", &o), 400, "not JSON: 400");
	is_int(num(o, "jsonrpc_code"), -32700, "with jsonrpc_code -32700");
	json_decref(o);
	is_int(post(&plain, "{\"jsonrpc\":\"2.0\",\"id\":1}", &o), 400, "invalid envelope: 400");
	is_int(num(o, "jsonrpc_code"), -32600, "with jsonrpc_code -32600");
	json_decref(o);
	is_int(post(&plain,
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}", &o), 200,
	    "initialize: 200");
	is_str(str(o, "result.protocolVersion"), "2025-06-18", "a supported version is echoed");
	is_str(str(o, "result.serverInfo.name"), "gw", "serverInfo from config");
	is_str(str(o, "result.instructions"), "Use the tools.", "instructions from config");
	ok(json_object_get(walk(o, "result.capabilities"), "tools") != NULL, "tools capability");
	ok(walk(o, "result.resultType") == NULL, "no resultType before 2026-07-28");
	ok(*issued != '\0', "initialize issues an Mcp-Session-Id");
	json_decref(o);
	is_int(post(&(struct hdrs){ .session = issued, .pv = "2025-06-18" },
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}", &o), 200, "the session it issued is accepted");
	json_decref(o);
	is_int(post(&(struct hdrs){ .session = "garbage" }, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}", &o),
	    404, "a session id that does not open: 404");
	is_str(str(o, "error"), "session_not_found", "session_not_found");
	json_decref(o);
	is_int(post(&(struct hdrs){ .session = "garbage" }, "{nope", &o), 400,
	    "the body is checked before the session (the order of docs/ARCHITECTURE.md §6)");
	json_decref(o);
	post(&plain, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2099-01-01\"}}", &o);
	is_str(str(o, "result.protocolVersion"), MCP_LATEST_VERSION, "an unknown version gets the newest");
	json_decref(o);
	post(&plain, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2026-07-28\"}}", &o);
	is_str(str(o, "result.protocolVersion"), MCP_LATEST_VERSION, "initialize never negotiates 2026-07-28");
	json_decref(o);
	post(&plain, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\"}", &o);
	is_int(num(o, "error.code"), -32602, "initialize without params: -32602");
	json_decref(o);
	is_int(post(&plain, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &o), 202, "notification: 202");
	ok(o == NULL, "no body");
	is_int(post(&plain, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}", &o), 202, "a response from the client: 202");
	json_decref(o);
	is_int(post(&plain, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}", &o), 200, "ping: 200");
	ok(json_is_object(walk(o, "result")) && json_object_size(walk(o, "result")) == 0, "ping result {}");
	is_str(str(o, "id"), "p", "string id echoed");
	json_decref(o);
	post(&plain, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"no/such\"}", &o);
	is_int(num(o, "error.code"), -32601, "unknown method: -32601");
	is_int(num(o, "id"), 6, "error echoes the id");
	json_decref(o);
	is_int(post(&plain, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"server/discover\"}", &o), 200,
	    "server/discover before 2026-07-28: 200");
	is_int(num(o, "error.code"), -32601, "… -32601, it is not a method of those revisions");
	json_decref(o);
	post(&plain, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\",\"params\":[1]}", &o);
	is_int(num(o, "error.code"), -32602, "wrong params shape: -32602");
	json_decref(o);
	post(&plain, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\",\"params\":{\"cursor\":\"abc\"}}", &o);
	is_int(num(o, "error.code"), -32602, "a cursor the gateway never gave: -32602");
	json_decref(o);
	post(&plain, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}", &o);
	ok(json_is_array(walk(o, "result.tools")) && json_array_size(walk(o, "result.tools")) == 0,
	    "tools/list: [] without upstreams");
	json_decref(o);
	for (i = 0; i < 2; i++) {
		post(&plain, "{\"jsonrpc\":\"2.0\",\"id\":\"\\\"tools\\\":null\",\"method\":\"tools/list\"}", &o);
		ok(json_is_array(walk(o, "result.tools")) && strcmp(json_string_value(walk(o, "id")), "\"tools\":null") == 0 &&
		    strstr(raw.data, "\"result\":{\"tools\":[]}") != NULL,
		    "tools/list %s: the page spliced in at the placeholder, not into an id that spells it",
		    i ? "again (the worker's cached page)" : "(the page made and cached)");
		json_decref(o);
	}
	post(&plain, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\",\"params\":{\"_meta\":"
	    "{\"io.modelcontextprotocol/protocolVersion\":\"2025-11-25\"}}}", &o);
	ok(json_is_object(walk(o, "result")), "_meta naming a revision of initialize stays in that era");
	json_decref(o);
}

static void
batches(void)
{
	json_t *o;

	is_int(post(&plain,
	    "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":2},"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}]", &o), 200, "batch: 200");
	is_int(json_array_size(o), 2, "batch: one answer per request, invalid elements included");
	is_int(num(o, "0.id"), 1, "batch: in order");
	is_int(num(o, "1.error.code"), -32600, "batch: the invalid element gets -32600");
	is_int(num(o, "1.id"), 2, "batch: with its id");
	json_decref(o);
	is_int(post(&plain, "[{\"jsonrpc\":\"2.0\",\"method\":\"a\"},{\"jsonrpc\":\"2.0\",\"method\":\"b\"}]", &o), 202,
	    "batch of notifications: 202");
	json_decref(o);
	post(&plain, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-03-26\"}}]", &o);
	is_int(num(o, "0.error.code"), -32600, "initialize in a batch: -32600");
	json_decref(o);
	is_int(post(&plain, "[1,2,3,4,5]", &o), 400, "batch over max-batch: 400");
	json_decref(o);
	is_int(post(&plain, "[]", &o), 400, "empty batch: 400");
	is_int(num(o, "jsonrpc_code"), -32600, "empty batch: -32600");
	json_decref(o);
}

static const struct hdrs m_list = { .pv = "2026-07-28", .method = "tools/list" };
static const struct hdrs m_disc = { .pv = "2026-07-28", .method = "server/discover" };

/* Mcp-Method and Mcp-Name against the body: the headers, the body, the error code the
 * gateway answers with (-32020: the headers do not match; -32602: they do, and the method
 * then knows no such tool), what that shows. */
#define CALL(name)	MODERN(9, "tools/call", "\"name\":\"" name "\",\"arguments\":{}," META)
static const struct {
	struct hdrs h;
	const char *body;
	int code;
	const char *what;
} named[] = {
	{ { .pv = "2026-07-28" }, MODERN(1, "tools/list", META), -32020, "no Mcp-Method: -32020" },
	{ { .pv = "2026-07-28", .method = "prompts/list" }, MODERN(1, "tools/list", META), -32020,
	    "Mcp-Method naming another method: -32020" },
	{ { .pv = "2026-07-28", .method = "TOOLS/LIST" }, MODERN(1, "tools/list", META), -32020,
	    "Mcp-Method values are case-sensitive" },
	{ { .pv = "2026-07-28", .method = "tools/call", .name = "wrong" }, CALL("x"), -32020,
	    "Mcp-Name unlike params.name: -32020" },
	{ { .pv = "2026-07-28", .method = "tools/call" }, CALL("x"), -32020, "no Mcp-Name for tools/call: -32020" },
	{ { .pv = "2026-07-28", .method = "tools/call", .name = "=?base64?w6k=?=" }, CALL("\\u00e9"), -32602,
	    "a base64 Mcp-Name is decoded before comparing" },
	{ { .pv = "2026-07-28", .method = "tools/call", .name = "=?base64?eA?=" }, CALL("x"), -32020,
	    "base64 with broken padding: -32020" },
	{ { .pv = "2026-07-28", .method = "tools/call", .name = "=?base64?e!A=?=" }, CALL("x"), -32020,
	    "base64 with a foreign character: -32020" },
	{ { .pv = "2026-07-28", .method = "tools/call", .name = "=?base64?eA==" }, CALL("=?base64?eA=="), -32602,
	    "without ?= the value is literal" },
};

static void
modern(void)
{
	json_t *o, *v;
	size_t i;
	int has_new = 0, has_old = 0;

	is_int(post(&m_disc, MODERN(1, "server/discover", META), &o), 200, "server/discover: 200");
	json_array_foreach(walk(o, "result.supportedVersions"), i, v) {
		has_new |= strcmp(json_string_value(v), "2026-07-28") == 0;
		has_old |= strcmp(json_string_value(v), "2025-11-25") == 0;
	}
	ok(has_new && has_old, "supportedVersions: 2026-07-28 and those of initialize");
	ok(json_object_get(walk(o, "result.capabilities"), "tools") != NULL, "capabilities");
	is_str(str(o, "result.resultType"), "complete", "resultType complete");
	is_str(json_string_value(json_object_get(json_object_get(walk(o, "result._meta"),
	    "io.modelcontextprotocol/serverInfo"), "name")), "gw", "serverInfo in the result's _meta");
	ok(*str(o, "result.cacheScope") && num(o, "result.ttlMs") >= 0, "cacheScope and ttlMs");
	is_str(str(o, "result.instructions"), "Use the tools.", "instructions");
	ok(*issued == '\0', "no session for 2026-07-28");
	json_decref(o);

	is_int(post(&m_disc, MODERN(101, "server/discover", ""), &o), 400, "no _meta: 400");
	is_int(num(o, "error.code"), -32602, "… -32602 in a JSON-RPC body");
	is_int(num(o, "id"), 101, "… echoing the id");
	is_str(str(o, "jsonrpc"), "2.0", "… a JSON-RPC error, not an HttpError");
	json_decref(o);
	is_int(post(&m_disc, MODERN(104, "server/discover",
	    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}"), &o), 400,
	    "_meta without clientCapabilities: 400");
	is_int(num(o, "error.code"), -32602, "… -32602");
	json_decref(o);
	is_int(post(&(struct hdrs){ .pv = "v999", .method = "server/discover" }, MODERN(301, "server/discover",
	    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"v999\",\"io.modelcontextprotocol/clientCapabilities\":{}}"),
	    &o), 400, "an unsupported version: 400");
	is_int(num(o, "error.code"), -32022, "… -32022");
	is_str(str(o, "error.data.requested"), "v999", "… echoing the requested version");
	is_str(str(o, "error.data.supported.0"), "2026-07-28", "… listing the supported ones");
	is_int(num(o, "id"), 301, "… and the id");
	json_decref(o);
	is_int(post(&m_disc, MODERN(302, "server/discover",
	    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"v999\",\"io.modelcontextprotocol/clientCapabilities\":{}}"),
	    &o), 400, "_meta version unlike the header: 400");
	is_int(num(o, "error.code"), -32020, "… -32020 header mismatch");
	json_decref(o);
	is_int(post(&(struct hdrs){ .method = "server/discover" }, MODERN(303, "server/discover", META), &o), 400,
	    "_meta version and no MCP-Protocol-Version header: 400");
	is_int(num(o, "error.code"), -32020, "… -32020");
	json_decref(o);

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		post(&named[i].h, named[i].body, &o);
		is_int(num(o, "error.code"), named[i].code, "%s", named[i].what);
		json_decref(o);
	}
	is_int(post(&(struct hdrs){ .pv = " 2026-07-28", .method = "  tools/list\t" }, MODERN(1, "tools/list", META), &o),
	    200, "blanks around header values are not part of them");
	ok(json_is_array(walk(o, "result.tools")), "tools/list answers");
	is_str(str(o, "result.resultType"), "complete", "… with resultType");
	is_str(str(o, "result.cacheScope"), "private", "… private to the caller");
	ok(num(o, "result.ttlMs") >= 0, "… with ttlMs");
	json_decref(o);

	is_int(post(&(struct hdrs){ .pv = "2026-07-28", .method = "tools/call", .name = " x " }, CALL("x"), &o), 200,
	    "a matching Mcp-Name reaches the method");
	is_int(num(o, "error.code"), -32602, "… which knows no tool yet: -32602");
	json_decref(o);

	{
		static const char *const removed[] = { "initialize", "ping", "logging/setLevel",
			"resources/subscribe", "unknown/method", "resources/unsubscribe" };

		for (i = 0; i < sizeof(removed) / sizeof(removed[0]); i++) {
			char body[512];

			snprintf(body, sizeof(body), MODERN(500, "%s", META), removed[i]);
			is_int(post(&(struct hdrs){ .pv = "2026-07-28", .method = removed[i] }, body, &o), 404,
			    "%s in 2026-07-28: 404", removed[i]);
			ok(num(o, "error.code") == -32601 && num(o, "id") == 500, "… -32601 with the id");
			json_decref(o);
		}
	}
	is_int(post(&m_list, "[" MODERN(1, "tools/list", META) "]", &o), 400, "a batch in 2026-07-28: 400");
	ok(num(o, "error.code") == -32600 && json_is_null(walk(o, "id")), "… -32600, id null");
	json_decref(o);
	is_int(post(&m_list, "{\"jsonrpc\":", &o), 400, "not JSON in 2026-07-28: 400");
	ok(num(o, "error.code") == -32700 && walk(o, "jsonrpc_code") == NULL, "… a JSON-RPC -32700 body");
	json_decref(o);
	is_int(post(&m_list, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\",\"x\":1}", &o), 400,
	    "a bad envelope in 2026-07-28: 400");
	ok(num(o, "error.code") == -32600 && num(o, "id") == 4, "… -32600 with the id");
	json_decref(o);
	is_int(post(&(struct hdrs){ .pv = "2026-07-28", .method = "tools/list", .session = "garbage" },
	    MODERN(1, "tools/list", META), &o), 200, "2026-07-28 ignores Mcp-Session-Id");
	json_decref(o);
	is_int(post(&plain, MODERN(1, "tools/list", META), &o), 400,
	    "a 2026-07-28 _meta makes the request modern even without headers");
	is_int(num(o, "error.code"), -32020, "… and the headers are then required");
	json_decref(o);
	is_int(post(&m_list, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{" META "}}", &o),
	    202, "a notification in 2026-07-28: 202");
}

static void
streams(void)
{
	const struct hdrs sse = { .accept = "text/event-stream" };
	json_t *o;

	is_int(post(&sse, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &o), 200, "Accept: text/event-stream: 200");
	ok(o == NULL, "the body went out as a stream");
	ok(strstr(raw.data, "Content-Type: text/event-stream\r\n") != NULL, "Content-Type text/event-stream");
	ok(strstr(raw.data, "Cache-Control: no-cache\r\n") != NULL, "Cache-Control: no-cache");
	ok(strstr(raw.data, "X-Accel-Buffering: no\r\n") != NULL, "X-Accel-Buffering: no");
	ok(strstr(raw.data, "Content-Length") == NULL, "no Content-Length");
	ok(strstr(raw.data, "\r\n\r\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n") != NULL,
	    "one event: message with the response");
	ok(flushes >= 2, "the head and the event are each flushed (%d flushes)", flushes);

	post(&sse, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"method\":\"n\"},"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":3}]", &o);
	is_int(count(raw.data, "event: message\n"), 3, "a batch: one event per response");
	ok(flushes >= 4, "… each flushed as it is written (%d flushes)", flushes);
	ok(strstr(raw.data, "\"id\":1,") < strstr(raw.data, "\"id\":2,") &&
	    strstr(raw.data, "\"id\":2,") < strstr(raw.data, "\"id\":3,"), "… in order");
	is_int(post(&sse, "[{\"jsonrpc\":\"2.0\",\"method\":\"a\"}]", &o), 202, "a batch of notifications: still 202");
	is_int(post(&(struct hdrs){ .accept = "application/json;q=0, text/event-stream" },
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &o), 200, "q=0 excludes JSON");
	ok(o == NULL && strstr(raw.data, "event: message") != NULL, "… so the answer streams");
	is_int(post(&(struct hdrs){ .accept = "application/json, text/event-stream" },
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &o), 200, "both accepted: JSON");
	ok(o != NULL && strstr(raw.data, "Content-Type: application/json\r\n") != NULL, "… application/json");
	json_decref(o);
	is_int(post(&(struct hdrs){ .accept = "*/*" }, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &o), 200,
	    "*/*: JSON");
	ok(o != NULL, "… a JSON body");
	json_decref(o);
	is_int(post(&(struct hdrs){ .accept = "text/html" }, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &o), 400,
	    "Accept that admits neither: 400");
	json_decref(o);
	is_int(post(&(struct hdrs){ .accept = "text/event-stream" }, "{nope", &o), 400,
	    "errors are never streamed");
	ok(o != NULL && strstr(raw.data, "event:") == NULL, "… a JSON HttpError");
	json_decref(o);
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	buf_init(&raw, 1 << 20);
	env.pages = fragcache_new(1 << 20, 4);
	snprintf(conf, sizeof(conf), "%s", fixture_file("gw.conf",
	    "[gateway]\nresource = https://gw.example.com/mcp\nname = gw\nversion = 9.9.9\nmax-batch = 4\n"
	    "instructions = Use the tools.\n[auth]\nissuer = https://idp.example.com\n"));
	run_case(legacy);
	run_case(batches);
	run_case(modern);
	run_case(streams);
	buf_free(&raw);
	catalog_view_free(&view);
	fragcache_free(env.pages);
	return done_testing();
}
