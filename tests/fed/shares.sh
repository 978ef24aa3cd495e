#!/usr/bin/env bash
# tests/fed/shares.sh — one upstream cannot crowd the others out of the catalog. Two SDK
# fixture upstreams behind nginx + spawn-fcgi + mcpgate: "big" lists 1,800 tools with
# 4 KiB descriptions named a0000… (about 7 MiB, more than the catalog's 4 MiB; their
# names sort before every other tool), "hon" the fixture's own tools under the prefix
# hon_. Each upstream has its own share of the catalog (the smaller needs in full, the
# rest to the larger): hon keeps every tool, listed and callable; big keeps its first
# tools in its own order and loses the rest; the cut is logged once per catalog build
# and named in /mcp/health (degraded, still 200), through nginx and as a CGI run.
#
# Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq --node @modelcontextprotocol/sdk/package.json

start_fixture big --port 0 --json --padded-tools 1800 --name big --quiet
fixture_and_idp hon --port 0 --json --name hon --quiet
wait_fixture big || bail "upstream big started" "$(tail -n 5 "$T/big.log")"
gateway_conf "$T/gw.conf" "$GW_URL" "catalog-ttl = 3600" "page-size = 1000"
cat >> "$T/gw.conf" <<CONF
[upstream "big"]
url = ${FIXTURE_URL[big]}
# its one list page is larger than the catalog holds, and than max-result's default
max-result = 8388608
[upstream "hon"]
url = ${FIXTURE_URL[hon]}
prefix = hon_
CONF
start_gateway "$GW_PORT" "nginx + spawn-fcgi + mcpgate in front of big (1,800 tools of 4 KiB) and hon"
TOKEN=$(mint_cc machine-acme)
[ -n "$TOKEN" ] && [ "$TOKEN" != null ] || bail "a token" "$(tail -n 5 "$T/idp.log")"

post() { mcp_post "$GW_URL" "$TOKEN" "$1" 120; }	# post BODY: through nginx; the JSON-RPC answer on stdout
# every page of tools/list: the names, one a line
: > "$T/names"
cursor=
for _ in $(seq 1 20); do
	params=$(jq -nc --arg c "$cursor" 'if $c == "" then {} else {cursor: $c} end')
	post "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":$params}" > "$T/page"
	jq -r '.result.tools[].name' "$T/page" >> "$T/names"
	cursor=$(jq -r '.result.nextCursor // empty' "$T/page")
	[ -n "$cursor" ] || break
done
hon=$(grep -c '^hon_' "$T/names")
big=$(grep -c '^a[0-9]' "$T/names")
is "hon keeps every one of its 19 tools, after 1,800 of big's in name order" "$hon" 19
grep -qx hon_test_simple_text "$T/names" && pass "… hon_test_simple_text is listed" || fail "… hon_test_simple_text is listed"
out=$(post '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hon_test_simple_text","arguments":{}}}')
jcheck "… and answers" "$out" '.result.content[0].text == "This is a simple text response for testing."'
if [ "$big" -gt 100 ] && [ "$big" -lt 1800 ] && grep -qx a0000 "$T/names" && ! grep -qx a1799 "$T/names"; then
	pass "big is cut to its share: its first $big tools kept, the rest left out"
else
	fail "big is cut to its share" "$big of big's tools listed"
fi
out=$(post '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a0000","arguments":{}}}')
jcheck "… and what it keeps answers" "$out" '.result.content[0].text == "padded 0"'
n=$(grep -c 'catalog: upstream big: [0-9]* of its records left out: over its share' "$T/gw.log")
is "the cut is logged once (one catalog build)" "$n" 1
h=$(curl -s --max-time 10 "http://127.0.0.1:$GW_PORT/mcp/health")
jcheck "/mcp/health: degraded (200), naming big and its share; both upstreams up" "$h" \
	'.status == "degraded" and (.reasons | any(test("^catalog: upstream big: [0-9]+ records left out \\(over its share of the catalog, [0-9]+ bytes\\)$"))) and
	 (.reasons | any(test("hon")) | not) and ([.dependencies[] | select(.dependency == "upstream") | .state] | unique) == ["up"]'
h=$(env -i PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=GET SCRIPT_NAME=/mcp/health MCPGATE_CONFIG="$T/gw.conf" \
	"$MCPGATE_BIN" 2>/dev/null | sed '1,/^\r$/d')
jcheck "… a CGI run (another process) says the same" "$h" '.status == "degraded" and (.reasons | any(test("^catalog: upstream big: ")))'
tap_done
