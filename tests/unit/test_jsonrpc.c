/* Unit tests: JSON-RPC envelopes (spec tables) and the POST /mcp exchange. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonrpc.h"
#include "mcp.h"
#include "tap.h"

static const struct {
	const char *json;
	int valid;		/* 1 = valid envelope */
	enum jr_kind kind;
} rows[] = {
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", 1, JR_REQUEST },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\",\"params\":{}}", 1, JR_REQUEST },
	{ "{\"jsonrpc\":\"2.0\",\"id\":-7,\"method\":\"x\",\"params\":[]}", 1, JR_REQUEST },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", 1, JR_NOTIFICATION },
	{ "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}", 1, JR_RESPONSE },
	{ "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-1,\"message\":\"no\"}}", 1, JR_RESPONSE },
	{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-1,\"message\":\"no\"}}", 1, JR_RESPONSE },
	{ "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", 0, 0 },
	{ "{\"jsonrpc\":2.0,\"id\":1,\"method\":\"ping\"}", 0, 0 },
	{ "{\"id\":1,\"method\":\"ping\"}", 0, 0 },
	{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", 0, 0 },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", 0, 0 },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"ping\"}", 0, 0 },
	{ "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", 0, 0 },
	{ "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", 0, 0 },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}", 0, 0 },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", 0, 0 },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1}", 0, 0 },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":\"x\"}", 0, 0 },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":null}", 0, 0 },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"extra\":1}", 0, 0 },
	{ "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{},\"error\":{\"code\":1,\"message\":\"x\"}}", 0, 0 },
	{ "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":\"1\",\"message\":\"x\"}}", 0, 0 },
	{ "[1]", 0, 0 },
	{ "\"ping\"", 0, 0 },
};

static char conf[256];
static const unsigned char session_key[32] = { 7 };
static const struct mcp_env env = { session_key, NULL };

struct chunk {
	const char *p;
	size_t n;
};

static long
test_read(void *ctx, void *p, size_t n)
{
	struct chunk *c = ctx;

	if (n > c->n)
		n = c->n;
	memcpy(p, c->p, n);
	c->p += n;
	c->n -= n;
	return (long)n;
}

/* Runs one POST /mcp exchange; returns status; *out gets the JSON body (or NULL). */
static int
post(const char *ctype, const char *pv, const char *body, json_t **out)
{
	struct cfg_errors errs;
	struct config *cfg;
	struct request req;
	struct response resp;
	struct caller caller;
	struct chunk ck = { body, strlen(body) };
	int status;

	memset(&req, 0, sizeof(req));
	memset(&caller, 0, sizeof(caller));
	config_load(conf, &cfg, &errs);
	req.content_type = ctype ? strdup(ctype) : NULL;
	req.protocol_version = pv ? strdup(pv) : NULL;
	req.content_length = (long long)strlen(body);
	req.body.ctx = &ck;
	req.body.read = test_read;
	response_init(&resp, "rid");
	mcp_exchange(&env, cfg, &caller, &req, &resp);
	status = resp.status;
	*out = resp.json ? json_incref(resp.json) : NULL;
	response_free(&resp);
	free(req.content_type);
	free(req.protocol_version);
	config_unref(cfg);
	return status;
}

/* The value at a dotted path ("result.tools", "0.error.code"), or NULL. */
static json_t *
walk(json_t *j, const char *path)
{
	char buf[128], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && j; tok = strtok_r(NULL, ".", &save))
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

int
main(void)
{
	char dir[] = "/tmp/mcpgate-test-jr-XXXXXX";
	struct jr_msg m;
	const char *why;
	json_t *j, *id, *o;
	size_t i;
	int code;
	FILE *f;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		j = json_loads(rows[i].json, JSON_DECODE_ANY, NULL);
		if (rows[i].valid)
			ok(jsonrpc_validate(j, &m, &why, &id) == 0 && m.kind == rows[i].kind, "valid: %s", rows[i].json);
		else
			ok(jsonrpc_validate(j, &m, &why, &id) < 0, "invalid: %s", rows[i].json);
		json_decref(j);
	}
	j = json_loads("{\"jsonrpc\":\"1.0\",\"id\":42,\"method\":\"x\"}", 0, NULL);
	ok(jsonrpc_validate(j, &m, &why, &id) < 0 && json_integer_value(id) == 42, "the id of an invalid message is still read");
	json_decref(j);

	ok(jsonrpc_parse("{", 1, &code, &why) == NULL && code == -32700, "not JSON: -32700");
	ok(jsonrpc_parse("[]", 2, &code, &why) == NULL && code == -32600, "empty batch: -32600");
	ok(jsonrpc_parse("{\"a\":1,\"a\":2}", 13, &code, &why) == NULL && code == -32600, "duplicate keys: -32600");
	ok(jsonrpc_parse("7", 1, &code, &why) == NULL && code == -32600, "a number: -32600");
	ok(jsonrpc_parse("{} x", 4, &code, &why) == NULL && code == -32700, "trailing garbage: -32700");

	mkdtemp(dir);
	snprintf(conf, sizeof(conf), "%s/gw.conf", dir);
	f = fopen(conf, "w");
	fputs("[gateway]\nresource = https://gw.example.com/mcp\nname = gw\nversion = 9.9.9\nmax-batch = 3\n"
	    "instructions = Use the tools.\n[auth]\nissuer = https://idp.example.com\n", f);
	fclose(f);

	is_int(post("text/plain", NULL, "{}", &o), 400, "wrong Content-Type: 400");
	json_decref(o);
	is_int(post("application/json; charset=utf-8", "1999-01-01", "{}", &o), 400, "unsupported MCP-Protocol-Version: 400");
	json_decref(o);
	is_int(post("application/json", NULL, "{nope", &o), 400, "not JSON: 400");
	is_int(num(o, "jsonrpc_code"), -32700, "with jsonrpc_code -32700");
	json_decref(o);
	is_int(post("application/json", NULL, "{\"jsonrpc\":\"2.0\",\"id\":1}", &o), 400, "invalid envelope: 400");
	is_int(num(o, "jsonrpc_code"), -32600, "with jsonrpc_code -32600");
	json_decref(o);
	is_int(post("application/json", NULL,
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}", &o), 200,
	    "initialize: 200");
	is_str(str(o, "result.protocolVersion"), "2025-06-18", "a supported version is echoed");
	is_str(str(o, "result.serverInfo.name"), "gw", "serverInfo from config");
	is_str(str(o, "result.instructions"), "Use the tools.", "instructions from config");
	ok(json_object_get(json_object_get(json_object_get(o, "result"), "capabilities"), "tools") != NULL, "tools capability");
	json_decref(o);
	post("application/json", NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2099-01-01\"}}", &o);
	is_str(str(o, "result.protocolVersion"), MCP_LATEST_VERSION, "an unknown version gets the newest");
	json_decref(o);
	post("application/json", NULL, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\"}", &o);
	is_int(num(o, "error.code"), -32602, "initialize without params: -32602");
	json_decref(o);
	is_int(post("application/json", NULL, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &o), 202, "notification: 202");
	ok(o == NULL, "no body");
	json_decref(o);
	is_int(post("application/json", NULL, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}", &o), 202, "a response from the client: 202");
	json_decref(o);
	is_int(post("application/json", NULL, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}", &o), 200, "ping: 200");
	ok(json_is_object(json_object_get(o, "result")) && json_object_size(json_object_get(o, "result")) == 0, "ping result {}");
	is_str(str(o, "id"), "p", "string id echoed");
	json_decref(o);
	post("application/json", NULL, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"no/such\"}", &o);
	is_int(num(o, "error.code"), -32601, "unknown method: -32601");
	is_int(num(o, "id"), 6, "error echoes the id");
	json_decref(o);
	post("application/json", NULL, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\",\"params\":[1]}", &o);
	is_int(num(o, "error.code"), -32602, "wrong params shape: -32602");
	json_decref(o);

	is_int(post("application/json", NULL,
	    "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":2},"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}]", &o), 200, "batch: 200");
	is_int(json_array_size(o), 2, "batch: one answer per request, invalid elements included");
	is_int(num(o, "0.id"), 1, "batch: in order");
	is_int(num(o, "1.error.code"), -32600, "batch: the invalid element gets -32600");
	is_int(num(o, "1.id"), 2, "batch: with its id");
	json_decref(o);
	is_int(post("application/json", NULL, "[{\"jsonrpc\":\"2.0\",\"method\":\"a\"},{\"jsonrpc\":\"2.0\",\"method\":\"b\"}]", &o), 202,
	    "batch of notifications: 202");
	json_decref(o);
	post("application/json", NULL, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-03-26\"}}]", &o);
	is_int(num(o, "0.error.code"), -32600, "initialize in a batch: -32600");
	json_decref(o);
	is_int(post("application/json", NULL, "[1,2,3,4]", &o), 400, "batch over max-batch: 400");
	json_decref(o);
	is_int(post("application/json", NULL, "[]", &o), 400, "empty batch: 400");
	is_int(num(o, "jsonrpc_code"), -32600, "empty batch: -32600");
	json_decref(o);
	unlink(conf);
	rmdir(dir);
	return done_testing();
}
