#!/usr/bin/env bash
# tests/fed/bound.sh — a name stays with the upstream that offered it. Two SDK fixture
# upstreams, a and b, without prefixes, both list the same tools (echo among them),
# behind nginx + spawn-fcgi + mcpgate (catalog-ttl 1 s, so that the catalog is rebuilt
# while a is down):
#
#  - echo is a's (the first in the file): its call goes to a, never to b;
#  - a killed, the catalog rebuilt without it: echo is neither listed nor passed to b's
#    echo — its call is refused (-32603, "the upstream that offers it is down") and b
#    sees no call; a tool only b offers is still served;
#  - a started again: echo is listed and goes to a again;
#  - mcpgate -t (against the catalog the gateway saved) and the catalog's log warn that
#    the names are shared.
#
# Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq --node @modelcontextprotocol/sdk/package.json

# fixture_up NAME PORT [OPTION...]: the fixture NAME (--json) on 127.0.0.1:PORT, ready.
fixture_up() {
	local name=$1 port=$2
	shift 2
	start_fixture "$name" --port "$port" --json --name "$name" "$@" && wait_fixture "$name"
}
PORT_A=$(free_port)
fixture_up a "$PORT_A" || bail "fixture a started" "$(tail -n 5 "$T/a.log")"
fixture_up b 0 --notes || bail "fixture b started" "$(tail -n 5 "$T/b.log")"
MG_PORT=$(free_port)
URL=http://127.0.0.1:$MG_PORT/mcp
start_idp "$URL"
gateway_conf "$T/gw.conf" "$URL" "catalog-ttl = 1" "page-size = 1000"
cat >> "$T/gw.conf" <<CONF
[upstream "a"]
url = http://127.0.0.1:$PORT_A/mcp
timeout-ms = 3000
[upstream "b"]
url = ${FIXTURE_URL[b]}
CONF
start_gateway "$MG_PORT" "nginx + spawn-fcgi + mcpgate in front of a and b, the same tools, no prefixes"
TOKEN=$(mint_cc machine-acme)
[ -n "$TOKEN" ] && [ "$TOKEN" != null ] || bail "a token" "$(tail -n 5 "$T/idp.log")"

post() { mcp_post "$URL" "$TOKEN" "$1"; }	# post BODY: through nginx; the JSON-RPC answer on stdout
names() { post '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' | jq -r '.result.tools[].name' | sort; }
echo_call() { post '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"amount":100}}}'; }
calls() { grep -c 'POST tools/call' "$T/$1.log"; }

names > "$T/names"
grep -qx echo "$T/names" && grep -qx note_get "$T/names" && pass "echo (a and b) and note_get (b alone) are listed" \
	|| fail "echo and note_get are listed" "$(cat "$T/names")"
b0=$(calls b)
jcheck "echo goes to a, the first in the file" "$(echo_call)" '.result.content[0].text == "{\"amount\":100}"'
is "… b saw no call" "$(calls b)" "$b0"
grep -Eq '"warn".*name [a-z_]+ is offered by more than one upstream' "$T/gw.log" \
	&& pass "the catalog's log warns that a name is offered by more than one upstream" \
	|| fail "the catalog's log warns that a name is offered by more than one upstream" "$(grep catalog "$T/gw.log" | head -5)"
out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1)
like "mcpgate -t warns, at b's section, that echo is also a's" "$out" \
	"warning: $T/gw.conf:[0-9]+: \[upstream \"b\"\]: tool echo is also upstream a's"

# --- a down, the catalog rebuilt without it --------------------------------------------------
kill -9 "${FIXTURE_PID[a]}"
wait_until 30 bash -c "! kill -0 ${FIXTURE_PID[a]} 2>/dev/null" || fail "fixture a killed"
rebuilt() { names > "$T/names.down"; ! grep -qx test_simple_text "$T/names.down" || ! grep -qx note_get "$T/names.down"; }
# (test_simple_text is a's and b's; once a is left out and the names are held, it is gone)
wait_until 60 rebuilt
grep -q 'catalog: upstream a: ' "$T/gw.log" && pass "the catalog was rebuilt with a left out" \
	|| fail "the catalog was rebuilt with a left out" "$(tail -n 5 "$T/gw.log")"
grep -qx echo "$T/names.down" && fail "echo is not listed while its upstream is down" "$(cat "$T/names.down")" \
	|| pass "echo is not listed while its upstream is down"
b0=$(calls b)
out=$(echo_call)
jcheck "echo: refused, -32603, its upstream down (not passed to b's echo)" "$out" \
	'.error.code == -32603 and (.error.message | test("unavailable: the upstream that offers it is down"))'
is "… b saw no call" "$(calls b)" "$b0"
jcheck "note_get, b's alone, is still served" \
	"$(post '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"note_get","arguments":{}}}')" '.result.content[0].text == "(none)"'
grep -Eq 'name [a-z_]+ of upstream b is not served: upstream a offered it first and is down' "$T/gw.log" \
	&& pass "the log says b's echo is not served: a offered it first and is down" \
	|| fail "the log says b's echo is not served: a offered it first and is down" "$(grep catalog "$T/gw.log" | tail -5)"

# --- a back --------------------------------------------------------------------------------
fixture_up a "$PORT_A" || bail "fixture a started again" "$(tail -n 5 "$T/a.log")"
back() { names > "$T/names.back"; grep -qx echo "$T/names.back"; }
wait_until 60 back && pass "a back: echo is listed again" || fail "a back: echo is listed again" "$(cat "$T/names.back")"
b0=$(calls b)
jcheck "… and goes to a" "$(echo_call)" '.result.content[0].text == "{\"amount\":100}"'
is "… b saw no call" "$(calls b)" "$b0"
tap_done
