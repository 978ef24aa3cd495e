#!/usr/bin/env bash
# tests/fed/validate.sh — a tool's schemas held against its calls. Three SDK fixture
# upstreams with --schemas (tools whose schemas say what arguments and results must be,
# each counting the calls that reach it) behind nginx + spawn-fcgi + mcpgate:
#   s  (no prefix)  validate = yes (default), validate-output = log (default)
#   o  (prefix o_)  validate-output = yes, max-result = 65536
#   n  (prefix n_)  validate = no, validate-output = no
#
#  - arguments that do not satisfy the inputSchema get -32602 with the first error (its
#    instance path, keyword and schema path, also in error.data), and never reach the
#    upstream; arguments that do are passed on; none at all are checked as {};
#  - a draft-07 schema (its $schema) is read as draft-07 (a tuple `items`);
#  - a schema the gateway cannot check (a lookahead pattern) refuses the call rather than
#    pass it unchecked, and mcpgate -t says so at each upstream that validates;
#    validate = no passes it, and anything else, on;
#  - a result whose structuredContent does not match the outputSchema: logged (log),
#    turned into a tool error (yes), passed on silently (no); a missing one likewise;
#  - a batch: each element checked on its own;
#  - an answer over max-result is refused while it comes, a smaller one passes.
#
# Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq --node @modelcontextprotocol/sdk/package.json

for u in s o n; do
	start_fixture "$u" --port 0 --json --name "$u" --schemas --bulk && wait_fixture "$u" \
		|| bail "fixture $u started" "$(tail -n 5 "$T/$u.log")"
done
MG_PORT=$(free_port)
URL=http://127.0.0.1:$MG_PORT/mcp
start_idp "$URL"
gateway_conf "$T/gw.conf" "$URL" "page-size = 1000"
cat >> "$T/gw.conf" <<CONF
[upstream "s"]
url = ${FIXTURE_URL[s]}
[upstream "o"]
url = ${FIXTURE_URL[o]}
prefix = o_
validate-output = yes
max-result = 65536
[upstream "n"]
url = ${FIXTURE_URL[n]}
prefix = n_
validate = no
validate-output = no
CONF
start_gateway "$MG_PORT" "nginx + spawn-fcgi + mcpgate in front of s, o and n, the --schemas fixtures"
TOKEN=$(mint_cc machine-acme)
[ -n "$TOKEN" ] && [ "$TOKEN" != null ] || bail "a token" "$(tail -n 5 "$T/idp.log")"

post() { mcp_post "$URL" "$TOKEN" "$1"; }
# call NAME ARGS-JSON: the JSON-RPC answer of tools/call (ARGS "-": no arguments member).
call() {
	local params
	if [ "$2" = - ]; then params=$(jq -cn --arg n "$1" '{name: $n}')
	else params=$(jq -cn --arg n "$1" --argjson a "$2" '{name: $n, arguments: $a}'); fi
	post "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":$params}"
}
# reached PREFIX TOOL: how many calls reached TOOL at that upstream.
reached() { call "${1}checked_calls" '{}' | jq -r --arg t "$2" '.result.content[0].text | fromjson | .[$t] // 0'; }

jcheck "tools/list shows checked_add with its schemas" \
	"$(post '{"jsonrpc":"2.0","id":1,"method":"tools/list"}')" \
	'[.result.tools[] | select(.name == "checked_add")][0] | .inputSchema.required == ["a","b"] and .outputSchema.required == ["sum"]'

# --- arguments ----------------------------------------------------------------------------
jcheck "checked_add {a:1, b:2}: passed on, answered 3" "$(call checked_add '{"a":1,"b":2}')" \
	'.result.structuredContent.sum == 3 and (.result.isError | not)'
is "… it reached the upstream" "$(reached "" checked_add)" 1
out=$(call checked_add '{"a":1,"b":"2"}')
jcheck "checked_add {a:1, b:\"2\"}: -32602 with the first error (path, keyword, schema path)" "$out" \
	'.error.code == -32602 and (.error.message | test("Invalid arguments for tool checked_add: /b: .*type")) and
	 .error.data.instancePath == "/b" and .error.data.keyword == "type" and .error.data.schemaPath == "/properties/b/type"'
jcheck "checked_add {a:1}: -32602, b is required" "$(call checked_add '{"a":1}')" \
	'.error.code == -32602 and .error.data.keyword == "required" and (.error.message | test("\"b\""))'
jcheck "checked_add {a:1, b:2, c:3}: -32602, additionalProperties" "$(call checked_add '{"a":1,"b":2,"c":3}')" \
	'.error.code == -32602 and .error.data.keyword == "additionalProperties"'
jcheck "checked_add with no arguments at all: checked as {} (-32602, required)" "$(call checked_add -)" \
	'.error.code == -32602 and .error.data.keyword == "required"'
jcheck "checked_add with arguments that are no object: -32602, whatever the schema" "$(call checked_add '[1,2]')" \
	'.error.code == -32602 and (.error.message | test("arguments must be an object"))'
is "… none of the four reached the upstream" "$(reached "" checked_add)" 1
grep -q '"tools/call checked_add: arguments refused: type at /b (schema /properties/b/type)' "$T/gw.log" \
	&& pass "the log names the refusal (keyword, paths; no argument values)" \
	|| fail "the log names the refusal" "$(grep -i refused "$T/gw.log" | head -3)"
grep -q 'arguments refused.*"2"' "$T/gw.log" && fail "the log holds no argument value" || pass "the log holds no argument value"

jcheck "checked_draft7 {pair: [\"x\", 1]} (draft-07 tuple): passed on" \
	"$(call checked_draft7 '{"pair":["x",1]}')" '.result.content[0].text == "[\"x\",1]"'
jcheck "checked_draft7 {pair: [\"x\", \"y\"]}: -32602 at /pair/1" "$(call checked_draft7 '{"pair":["x","y"]}')" \
	'.error.code == -32602 and .error.data.instancePath == "/pair/1" and .error.data.keyword == "type"'
jcheck "checked_draft7 {pair: [\"x\", 1, 2]}: -32602, additionalItems" "$(call checked_draft7 '{"pair":["x",1,2]}')" \
	'.error.code == -32602 and .error.data.keyword == "additionalItems"'
is "… one reached the upstream" "$(reached "" checked_draft7)" 1

jcheck "checked_nested with all twenty properties right: passed on" \
	"$(call checked_nested "$(jq -cn '[range(4)] | map({key: ["p","q","r","s"][.], value: (. as $g | ["p","q","r","s"][$g] as $n |
		{($n+"_0"): "text", ($n+"_1"): 7, ($n+"_2"): "low", ($n+"_3"): "a_b", ($n+"_4"): true})}) | from_entries')")" \
	'.result.content[0].text == "ok"'
jcheck "checked_nested with /r/r_3 against its pattern: -32602 there" \
	"$(call checked_nested "$(jq -cn '[range(4)] | map({key: ["p","q","r","s"][.], value: (. as $g | ["p","q","r","s"][$g] as $n |
		{($n+"_0"): "text", ($n+"_1"): 7, ($n+"_2"): "low", ($n+"_3"): (if $n == "r" then "A b" else "a_b" end), ($n+"_4"): true})}) | from_entries')")" \
	'.error.code == -32602 and .error.data.instancePath == "/r/r_3" and .error.data.keyword == "pattern"'

out=$(call checked_lookahead '{"user":"bob"}')
jcheck "checked_lookahead (a schema the gateway cannot check): refused, not passed on unchecked" "$out" \
	'.error.code == -32603 and (.error.message | test("cannot check arguments against its inputSchema"))'
is "… it did not reach the upstream" "$(reached "" checked_lookahead)" 0
grep -q 'tool checked_lookahead: its inputSchema cannot be checked by the gateway' "$T/gw.log" \
	&& pass "… the log says why" || fail "… the log says why" "$(grep -i lookahead "$T/gw.log" | head -3)"
out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1)
like "mcpgate -t warns, at s's section, that checked_lookahead's calls are refused" "$out" \
	"warning: $T/gw.conf:[0-9]+: \\[upstream \"s\"\\]: tool checked_lookahead: its inputSchema cannot be checked \\(pattern: .*\\): its calls are refused"
grep -q 'tool o_checked_lookahead: its inputSchema cannot be checked' <<<"$out" \
	&& pass "… and at o's (it validates too)" || fail "… and at o's (it validates too)" "$out"
grep -q 'tool n_checked_lookahead' <<<"$out" && fail "… not at n's (validate = no)" "$out" || pass "… not at n's (validate = no)"
jcheck "n_checked_lookahead (validate = no): passed on" "$(call n_checked_lookahead '{"user":"bob"}')" \
	'.result.content[0].text == "bob"'
jcheck "n_checked_add {a:1, b:\"2\"} (validate = no): passed on" "$(call n_checked_add '{"a":1,"b":"2"}')" '.result != null'
is "… it reached n" "$(reached n_ checked_add)" 1

# --- a batch: each element on its own -------------------------------------------------------
out=$(post '[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"checked_add","arguments":{"a":"x","b":2}}},
	{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"checked_add","arguments":{"a":2,"b":2}}}]')
jcheck "a batch: the bad element -32602, the good one answered" "$out" \
	'(.[] | select(.id == 1) | .error.code == -32602 and .error.data.instancePath == "/a") and
	 (.[] | select(.id == 2) | .result.structuredContent.sum == 4)'
is "… one more reached the upstream" "$(reached "" checked_add)" 2

# --- results ---------------------------------------------------------------------------------
jcheck "checked_bad_output (validate-output = log): passed on as it is" "$(call checked_bad_output '{"a":1,"b":2}')" \
	'.result.structuredContent.sum == "three" and (.result.isError | not)'
grep -q 'tools/call checked_bad_output: upstream s.s result: its structuredContent does not match the tool.s outputSchema: /sum' "$T/gw.log" \
	&& pass "… and logged" || fail "… and logged" "$(grep -i outputSchema "$T/gw.log" | head -3)"
jcheck "o_checked_bad_output (validate-output = yes): a tool error saying why" "$(call o_checked_bad_output '{"a":1,"b":2}')" \
	'.result.isError == true and (.result.structuredContent == null) and
	 (.result.content[0].text | test("did not pass on the result of tool o_checked_bad_output: its structuredContent does not match the tool.s outputSchema: /sum"))'
jcheck "o_checked_no_structured: a tool error, no structuredContent" "$(call o_checked_no_structured '{"a":1,"b":2}')" \
	'.result.isError == true and (.result.content[0].text | test("no structuredContent"))'
jcheck "o_checked_add (a conforming result): passed on" "$(call o_checked_add '{"a":2,"b":3}')" \
	'.result.structuredContent.sum == 5 and (.result.isError | not)'
before=$(grep -c 'outputSchema' "$T/gw.log")
jcheck "n_checked_bad_output (validate-output = no): passed on" "$(call n_checked_bad_output '{"a":1,"b":2}')" \
	'.result.structuredContent.sum == "three"'
is "… and not logged" "$(grep -c 'outputSchema' "$T/gw.log")" "$before"

# --- max-result ------------------------------------------------------------------------------
jcheck "o_bulk of 16 KiB (under o's max-result of 64 KiB): answered" "$(call o_bulk '{"kib":16}')" \
	'(.result.content[0].text | length) == 16384'
jcheck "o_bulk of 128 KiB: refused while it comes, saying so" "$(call o_bulk '{"kib":128}')" \
	'.error.code == -32603 and (.error.message | test("over its max-result of 65536 bytes"))'
jcheck "bulk of 128 KiB at s (max-result 4 MiB by default): answered" "$(call bulk '{"kib":128}')" \
	'(.result.content[0].text | length) == 131072'
tap_done
