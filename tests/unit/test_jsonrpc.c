/* Unit tests: JSON-RPC envelopes (spec tables) and payload parsing. The exchange is
 * in test_mcp.c. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
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

/* Envelopes valid or invalid as the spec says; an invalid one's id is still read. */
static void
test_validate(void)
{
	struct jr_msg m;
	struct gw_error err;
	json_t *j, *id;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		j = json_loads(rows[i].json, JSON_DECODE_ANY, NULL);
		if (rows[i].valid)
			ok(jsonrpc_validate(j, &m, &id, &err) == 0 && m.kind == rows[i].kind, "valid: %s", rows[i].json);
		else
			ok(jsonrpc_validate(j, &m, &id, &err) < 0, "invalid: %s", rows[i].json);
		json_decref(j);
	}
	j = json_loads("{\"jsonrpc\":\"1.0\",\"id\":42,\"method\":\"x\"}", 0, NULL);
	ok(jsonrpc_validate(j, &m, &id, &err) < 0 && json_integer_value(id) == 42, "the id of an invalid message is still read");
	json_decref(j);
}

/* Payloads that do not parse, with their JSON-RPC error codes. */
static void
test_parse_errors(void)
{
	struct gw_error err;

	ok(jsonrpc_parse("{", 1, &err) == NULL && gw_error_rpc(&err) == -32700, "not JSON: -32700");
	ok(jsonrpc_parse("[]", 2, &err) == NULL && gw_error_rpc(&err) == -32600, "empty batch: -32600");
	ok(jsonrpc_parse("{\"a\":1,\"a\":2}", 13, &err) == NULL && gw_error_rpc(&err) == -32600, "duplicate keys: -32600");
	ok(jsonrpc_parse("7", 1, &err) == NULL && gw_error_rpc(&err) == -32600, "a number: -32600");
	ok(jsonrpc_parse("{} x", 4, &err) == NULL && gw_error_rpc(&err) == -32700, "trailing garbage: -32700");
}

/* A batch split into its elements, a repeated member invalidating only its own. */
static void
test_batch(void)
{
	static const char batch[] = "[ {\"jsonrpc\":\"2.0\",\"id\":\"a],{\\\"b\","
	    "\"method\":\"ping\"},"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"id\":3,\"method\":\"ping\"} ,"
	    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"x\","
	    "\"params\":{\"k\":[1,{\"d\":1,\"d\":2}]}},"
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}]";
	struct jr_msg m;
	struct gw_error err;
	json_t *j, *id;

	j = jsonrpc_parse(batch, sizeof(batch) - 1, &err);
	is_int(json_array_size(j), 4, "a batch with a repeated member: still four elements");
	ok(jsonrpc_validate(json_array_get(j, 0), &m, &id, &err) == 0 &&
	    strcmp(json_string_value(id), "a],{\"b") == 0,
	    "brackets and quotes inside strings do not split elements");
	ok(jsonrpc_validate(json_array_get(j, 1), &m, &id, &err) < 0 &&
	    strcmp(err.detail, "duplicate member name") == 0,
	    "the element that repeats a member is invalid on its own");
	ok(jsonrpc_validate(json_array_get(j, 2), &m, &id, &err) < 0,
	    "… also when the repetition is nested");
	ok(jsonrpc_validate(json_array_get(j, 3), &m, &id, &err) == 0 &&
	    json_integer_value(id) == 5, "the others stay valid");
	json_decref(j);
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	run_case(test_validate);
	run_case(test_parse_errors);
	run_case(test_batch);
	return done_testing();
}
