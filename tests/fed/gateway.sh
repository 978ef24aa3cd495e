#!/usr/bin/env bash
# Federation end to end: two upstream MCP servers written with the official SDK
# (tests/upstream/fixture.mjs) and a third that is down, behind mcpgate under spawn-fcgi
# (2 processes x 2 threads) and real nginx and lighttpd (deploy/ recipes), and as CGI with
# the same configuration (so the same state file), with oidc-provider (tests/idp) tokens:
#
#  1. tools/list over curl through nginx and as CGI, following nextCursor: the union is
#     exactly the upstreams' tools (asked of each fixture directly) with the prefixes
#     applied, records passed through, sorted, no duplicates, pages of page-size, a
#     description and an object inputSchema on each; tampered, foreign and another
#     caller's cursors -32602; Cache-Control: private, Vary: Authorization.
#  2. the upstream that is down: its tools are absent, /mcp/health says degraded, the log
#     says why; once it comes up, its tools appear after catalog-ttl and health is ok.
#  3. the catalog is shared: 20 concurrent tools/list (10 through nginx, 10 CGI runs) on
#     a stale catalog cost one tools/list fetch per upstream (counted in the fixtures'
#     request logs, which have one line per HTTP request).
#  4. tools/call with the SDK client (tests/fed/gateway-client.mjs) through nginx:
#     results relayed unchanged, arguments passed through, unknown tool -32602, progress
#     and log notifications arriving before the result and as they come, an upstream
#     timeout and an upstream killed mid-call answered promptly with -32603, the other
#     upstream still served, the dead one's tools gone after catalog-ttl.
#  5. request_headers: the caller's Authorization never reaches an upstream; the line of
#     its auth-header-file does.
#  6. lighttpd: the SDK lists the catalog and gets progress unbuffered.
#
# Time: the shared-catalog check allows one fetch per catalog lifetime the burst spans
# (a slow machine's longer burst may refresh it again, never once per request); every
# "at once" is measured against a timeout several seconds longer, so a loaded machine
# passes too.
#
# Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir (logs of the gateway, fronts, fixtures).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light lighttpd:lighttpd spawn-fcgi:spawn-fcgi curl:curl jq:jq --node @modelcontextprotocol/sdk/package.json
CLIENT=$here/gateway-client.mjs

PAGE=50		# [gateway] page-size
B_TIMEOUT=6000	# [upstream "beta"] timeout-ms
A_TIMEOUT=20000	# [upstream "alpha"] timeout-ms
TTL=5		# [gateway] catalog-ttl: what a catalog with an upstream down lives anyway
STALE=6		# sleep that makes any cached catalog stale (catalog-ttl + margin)
A_SECRET='Bearer upstream-alpha-secret-7f3a'
B_SECRET='upstream-beta-key-91c2'

# --- fixtures --------------------------------------------------------------------------
# The fixtures: start_fixture and wait_fixture (tests/lib/suite.sh), FIXTURE_PID[NAME], FIXTURE_URL[NAME].
# lists NAME: how many tools/list requests the fixture has answered so far.
lists() { grep -c 'POST tools/list ' "$T/$1.log"; }

# fixture_rpc URL SID ID METHOD PARAMS: one request straight to a fixture (curl), prints
# the JSON-RPC answer with that id (the fixture answers with an event stream).
sse_data() { sed -n 's/^data: //p' "$1" | tr -d '\r' | grep -v '^$'; }
fixture_rpc() {
	local url=$1 sid=$2 id=$3 method=$4 params=$5
	curl -sS --max-time 10 -o "$T/fx.b" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $sid" \
		-H 'MCP-Protocol-Version: 2025-06-18' \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":$id,\"method\":\"$method\",\"params\":$params}" "$url" \
		|| return 1
	{ sse_data "$T/fx.b"; grep '^{' "$T/fx.b"; } | jq -c --argjson id "$id" 'select(.id == $id)' | head -n 1
}
# fixture_session URL: initializes a session straight with a fixture; prints its id.
fixture_session() {
	local sid
	curl -sS --max-time 10 -D "$T/fx.h" -o "$T/fx.b" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' \
		--data-binary '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fed-tests","version":"1.0.0"}}}' \
		"$1" || return 1
	sid=$(grep -i '^mcp-session-id:' "$T/fx.h" | sed 's/^[^:]*:[[:space:]]*//' | tr -d '\r')
	[ -n "$sid" ] || return 1
	curl -sS --max-time 10 -o /dev/null -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $sid" \
		-H 'MCP-Protocol-Version: 2025-06-18' \
		--data-binary '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$1" || return 1
	printf '%s\n' "$sid"
}
# fixture_tools NAME PREFIX OUT: every tool of the fixture (following its cursors) as it
# lists them, each name with PREFIX, into OUT (a JSON array); the pages in OUT.pages.
fixture_tools() {
	local prefix=$2 out=$3 url=${FIXTURE_URL[$1]} sid cursor='' i r params
	sid=$(fixture_session "$url") || return 1
	: > "$out.jsonl"
	for i in $(seq 1 30); do
		params='{}'
		[ -z "$cursor" ] || params=$(jq -nc --arg c "$cursor" '{cursor: $c}')
		r=$(fixture_rpc "$url" "$sid" "$i" tools/list "$params") || return 1
		jq -c '.result.tools[]' <<<"$r" >> "$out.jsonl" || return 1
		cursor=$(jq -r '.result.nextCursor // empty' <<<"$r")
		[ -n "$cursor" ] || break
	done
	echo "$i" > "$out.pages"
	jq -s --arg p "$prefix" 'map(.name = $p + .name)' "$out.jsonl" > "$out"
	curl -sS --max-time 5 -o /dev/null -X DELETE -H "Mcp-Session-Id: $sid" \
		-H 'MCP-Protocol-Version: 2025-06-18' "$url" || true
}
# fixture_call NAME TOOL ARGS: the fixture's own JSON-RPC answer to tools/call.
fixture_call() {
	local url=${FIXTURE_URL[$1]} sid
	sid=$(fixture_session "$url") || return 1
	fixture_rpc "$url" "$sid" 1 tools/call "$(jq -nc --arg n "$2" --argjson a "$3" '{name: $n, arguments: $a}')"
}

# --- the gateway: curl through a front, or a CGI run ------------------------------------
# post URL BODY [ACCEPT [TOKEN]]: the answer's headers in $T/h, body in $T/b; prints the
# HTTP status.
post() {
	curl -sS --max-time 20 -o "$T/b" -D "$T/h" -w '%{http_code}' -H 'Content-Type: application/json' \
		-H "Accept: ${3:-application/json, text/event-stream}" -H "Authorization: Bearer ${4:-$TOKEN}" \
		--data-binary "$2" "$1" 2>> "$T/curl.err"
}
post_ngx() { post "$NGX_URL" "$@"; }
# cgi_run OUT METHOD PATH [BODY [ACCEPT [TOKEN]]]: one CGI run of the binary with the
# gateway's configuration; the raw answer in OUT.
cgi_run() {
	local out=$1 method=$2 path=$3 body=${4:-} accept=${5:-application/json, text/event-stream} tok=${6:-$TOKEN}
	local env=(PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 SERVER_PROTOCOL=HTTP/1.1 SERVER_NAME=127.0.0.1
		SERVER_PORT="$NGX_PORT" REMOTE_ADDR=127.0.0.1 REQUEST_METHOD="$method" SCRIPT_NAME="$path"
		PATH_INFO= QUERY_STRING= HTTP_HOST="127.0.0.1:$NGX_PORT" HTTP_ACCEPT="$accept"
		HTTP_AUTHORIZATION="Bearer $tok")
	[ "$method" != POST ] || env+=(CONTENT_TYPE=application/json CONTENT_LENGTH="$(printf '%s' "$body" | wc -c)")
	printf '%s' "$body" | timeout -k 2 60 env -i "${env[@]}" MCPGATE_CONFIG="$T/gw.conf" "$MCPGATE_BIN" > "$out" 2>> "$T/cgi.err"
}
# cgi_split RAW: headers → $T/h, body → $T/b; prints the status (200 without Status:).
cgi_split() {
	local st
	sed -n '1,/^\r$/p' "$1" | tr -d '\r' > "$T/h"
	sed '1,/^\r$/d' "$1" > "$T/b"
	st=$(sed -n 's/^Status: \([0-9]*\).*/\1/p' "$T/h")
	echo "${st:-200}"
}
post_cgi() { cgi_run "$T/cgi.out" POST /mcp "$1" "${2:-}" "${3:-}"; cgi_split "$T/cgi.out"; }
# hdr NAME: the values of a response header in $T/h, repeated ones joined with ", ".
hdr() { grep -i "^$1:" "$T/h" | sed 's/^[^:]*:[[:space:]]*//' | tr -d '\r' | paste -sd, - | sed 's/,/, /g; s/,  /, /g'; }
has_token() { printf '%s' "$1" | tr ',' '\n' | sed 's/^[[:space:]]*//; s/[[:space:]]*$//; s/=.*//' | grep -qix "$2"; }
rpc() {	# rpc ID METHOD PARAMS: a JSON-RPC request body
	jq -nc --argjson id "$1" --arg m "$2" --argjson p "$3" '{jsonrpc: "2.0", id: $id, method: $m, params: $p}'
}

# list_pages VIA LABEL: tools/list through VIA (post_ngx or post_cgi), following
# nextCursor (20 pages at most). Tools → $T/LABEL.tools (a JSON array), tools per page →
# $T/LABEL.pages (a JSON array), the first cursor → $T/LABEL.cursor1, page 2's body →
# $T/LABEL.page2; anything wrong (status, shape, headers) → $T/LABEL.problems.
list_pages() {
	local via=$1 label=$2 cursor='' i st params cc vary
	: > "$T/$label.jsonl"
	: > "$T/$label.problems"
	: > "$T/$label.sizes"
	rm -f "$T/$label.cursor1" "$T/$label.page2"
	for i in $(seq 1 20); do
		params='{}'
		[ -z "$cursor" ] || params=$(jq -nc --arg c "$cursor" '{cursor: $c}')
		st=$("$via" "$(rpc "$i" tools/list "$params")")
		if [ "$st" != 200 ] || ! jq -e --argjson id "$i" '.id == $id and (.result.tools | type) == "array"' "$T/b" > /dev/null 2>&1; then
			echo "page $i: HTTP $st, Content-Type $(hdr Content-Type): $(head -c 400 "$T/b")" >> "$T/$label.problems"
			cursor=''
			break
		fi
		cc=$(hdr Cache-Control)
		vary=$(hdr Vary)
		has_token "$cc" private || echo "page $i: Cache-Control: '$cc' (no private)" >> "$T/$label.problems"
		has_token "$vary" Authorization || echo "page $i: Vary: '$vary' (no Authorization)" >> "$T/$label.problems"
		jq -c '.result.tools[]' "$T/b" >> "$T/$label.jsonl"
		jq '.result.tools | length' "$T/b" >> "$T/$label.sizes"
		[ "$i" -ne 2 ] || cp "$T/b" "$T/$label.page2"
		cursor=$(jq -r '.result.nextCursor // empty' "$T/b")
		[ "$i" -ne 1 ] || [ -z "$cursor" ] || printf '%s' "$cursor" > "$T/$label.cursor1"
		[ -n "$cursor" ] || break
	done
	[ -z "$cursor" ] || echo "still a nextCursor after 20 pages" >> "$T/$label.problems"
	jq -s . "$T/$label.jsonl" > "$T/$label.tools"
	jq -s . "$T/$label.sizes" > "$T/$label.pages"
}

# catalog_checks LABEL EXPECTED: the checks of a listing made by list_pages LABEL
# against the expected records (a JSON array, sorted by name).
catalog_checks() {
	local l=$1 want=$2 got=$T/$1.tools missing extra diff
	if [ -s "$T/$l.problems" ]; then
		fail "$l: every page 200 with tools, Cache-Control: private, Vary: Authorization" "$(head -n 8 "$T/$l.problems")"
	else
		pass "$l: every page 200 with tools, Cache-Control: private, Vary: Authorization ($(jq -c . "$T/$l.pages") tools per page)"
	fi
	missing=$(jq -r --slurpfile w "$want" '($w[0] | map(.name)) - map(.name) | .[:12] | join(" ")' "$got")
	extra=$(jq -r --slurpfile w "$want" 'map(.name) - ($w[0] | map(.name)) | .[:12] | join(" ")' "$got")
	if [ -z "$missing" ] && [ -z "$extra" ]; then
		pass "$l: the union of the pages is exactly the upstreams' tools, prefixed ($(jq length "$got") tools)"
	else
		fail "$l: the union of the pages is exactly the upstreams' tools, prefixed" \
			"$(jq length "$got") tools, want $(jq length "$want")
missing: ${missing:-none}
extra:   ${extra:-none}"
	fi
	jcheck "$l: no tool listed twice" "$(jq -c '[map(.name) | group_by(.) | .[] | select(length > 1) | .[0]]' "$got")" '. == []'
	jcheck "$l: sorted by name" "$(jq -c 'map(.name) as $n | {sorted: ($n == ($n | sort)), first: $n[:4]}' "$got")" '.sorted'
	jcheck "$l: pages of page-size ($PAGE) tools, the last one shorter" "$(jq -c . "$T/$l.pages")" \
		"length >= 1 and (.[:-1] | all(. == $PAGE)) and .[-1] >= 1 and .[-1] <= $PAGE"
	jcheck "$l: every tool has a description and an object inputSchema" \
		"$(jq -c '[.[] | select((.description | type) != "string" or .description == "" or (.inputSchema | type) != "object") | .name]' "$got")" '. == []'
	diff=$(jq -c --slurpfile w "$want" '[sort_by(.name), ($w[0] | sort_by(.name))] | transpose
		| map(select(.[0] != .[1])) | .[0] // empty | {gateway: .[0], upstream: .[1]}' "$got")
	if [ -z "$diff" ] && [ -z "$missing$extra" ]; then
		pass "$l: each tool record is the upstream's own (title, description, schemas, annotations), renamed"
	else
		fail "$l: each tool record is the upstream's own, renamed" "${diff:-the sets differ}"
	fi
}

# --- start ------------------------------------------------------------------------------
NGX_PORT=$(free_port)
LTY_PORT=$(free_port)
DOWN_PORT=$(free_port)
NGX_URL=http://127.0.0.1:$NGX_PORT/mcp
LTY_URL=http://127.0.0.1:$LTY_PORT/mcp
start_fixture alpha --port 0 --name alpha --tools 150
start_fixture beta --port 0 --name beta --page-size 8
start_idp "$NGX_URL"
wait_fixture alpha && wait_fixture beta \
	|| bail "the fixture upstreams started" "$(tail -n 5 "$T/alpha.log" "$T/beta.log")"
pass "fixture upstreams: alpha (--tools 150) at ${FIXTURE_URL[alpha]}, beta (--page-size 8) at ${FIXTURE_URL[beta]}; gamma down at :$DOWN_PORT"

(umask 077 && printf 'Authorization: %s\n' "$A_SECRET" > "$T/alpha.header" &&
	printf 'X-Api-Key: %s\n' "$B_SECRET" > "$T/beta.header")
TOKEN=$(mint --client machine-acme --scope mcp:tools --resource "$NGX_URL")
TOKEN2=$(mint --client machine-beta --scope mcp:tools --resource "$NGX_URL")
[ -n "$TOKEN" ] && [ "$TOKEN" != null ] && [ -n "$TOKEN2" ] && [ "$TOKEN2" != null ] \
	|| bail "client_credentials tokens for $NGX_URL" "$(tail -n 5 "$T/idp.log")"
# gw_conf OUT CATALOG-TTL STATE LOG: the gateway's configuration.
gw_conf() {
GW_STATE=$3 GW_LOG=$4 gateway_conf "$1" "$NGX_URL" "catalog-ttl = $2" "page-size = $PAGE"
cat >> "$1" <<CONF
[upstream "alpha"]
url = ${FIXTURE_URL[alpha]}
prefix = a_
auth-header-file = $T/alpha.header
timeout-ms = $A_TIMEOUT
[upstream "beta"]
url = ${FIXTURE_URL[beta]}
auth-header-file = $T/beta.header
timeout-ms = $B_TIMEOUT
[upstream "gamma"]
url = http://127.0.0.1:$DOWN_PORT/mcp
prefix = c_
timeout-ms = 1000
CONF
}
gw_conf "$T/gw.conf" "$TTL" "$T/state" "$T/gw.log"
if out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1); then
	pass "mcpgate -t accepts the configuration (3 upstreams, catalog-ttl $TTL, page-size $PAGE)"
else
	bail "mcpgate -t accepts the configuration" "$out"
fi
if start_mcpgate_fcgi "$T/mcpgate.sock" "$T/gw.conf" 2 2 >> "$T/start.out" 2>&1 \
	&& start_nginx "$NGX_PORT" >> "$T/start.out" 2>&1 && start_lighttpd "$LTY_PORT" >> "$T/start.out" 2>&1; then
	pass "spawn-fcgi (2 processes x 2 threads) + mcpgate behind nginx ($NGX_URL) and lighttpd ($LTY_URL)"
else
	bail "spawn-fcgi + mcpgate behind nginx and lighttpd" "$(tail -n 20 "$T/start.out")"
fi
FCGI_PIDS=$MG_FCGI_PIDS

# --- what the upstreams offer, asked directly -------------------------------------------
fixture_tools alpha a_ "$T/alpha.expect" && fixture_tools beta '' "$T/beta.expect" \
	|| bail "each fixture's tools/list, asked directly" "$(head -c 400 "$T/fx.b")"
A_PAGES=$(cat "$T/alpha.expect.pages")
B_PAGES=$(cat "$T/beta.expect.pages")
jq -s 'add | sort_by(.name)' "$T/alpha.expect" "$T/beta.expect" > "$T/expect.tools"
jcheck "expected catalog: alpha 169 tools (a_), beta 19 over $B_PAGES pages of its own" \
	"$(jq -nc --slurpfile a "$T/alpha.expect" --slurpfile b "$T/beta.expect" '{a: ($a[0] | length), b: ($b[0] | length)}')" \
	'.a == 169 and .b == 19'
ECHO_ARGS='{"text":"héllo ✓ \"quoted\"","n":42,"f":1.5,"list":[1,"two",null,true],"obj":{"k":"v","deep":{"x":[]}}}'
D_SIMPLE=$(fixture_call beta test_simple_text '{}')
D_MIXED=$(fixture_call beta test_multiple_content_types '{}')
D_ERROR=$(fixture_call beta test_error_handling '{}')
D_ASIMPLE=$(fixture_call alpha test_simple_text '{}')
[ -n "$D_SIMPLE" ] && [ -n "$D_MIXED" ] && [ -n "$D_ERROR" ] && [ -n "$D_ASIMPLE" ] \
	|| bail "the fixtures' own tools/call answers" "$(head -c 400 "$T/fx.b")"

# --- 1. tools/list through nginx, curl --------------------------------------------------
list_pages post_ngx nginx
catalog_checks nginx "$T/expect.tools"
if [ -s "$T/nginx.cursor1" ]; then
	c1=$(cat "$T/nginx.cursor1")
	# one character changed, in the middle of the cursor
	mid=$((${#c1} / 2))
	ch=${c1:$mid:1}
	[ "$ch" = A ] && new=B || new=A
	bad="${c1:0:$mid}$new${c1:$((mid + 1))}"
	for case in "tampered:$bad" "truncated:${c1:0:$((${#c1} - 4))}" "made up:eyJvZmZzZXQiOjUwfQ" "empty:"; do
		st=$(post_ngx "$(rpc 9 tools/list "$(jq -nc --arg c "${case#*:}" '{cursor: $c}')")")
		jcheck "nginx: cursor ${case%%:*} → JSON-RPC error -32602 (HTTP 200)" \
			"$(jq -c --arg st "$st" '{status: $st, id, error, tools: (.result.tools | length?)}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
			'.status == "200" and .id == 9 and .error.code == -32602'
	done
	st=$(post_ngx "$(rpc 9 tools/list "$(jq -nc --arg c "$c1" '{cursor: $c}')")" '' "$TOKEN2")
	jcheck "nginx: another caller's cursor → -32602 (cursors are bound to their caller)" \
		"$(jq -c --arg st "$st" '{status: $st, error, tools: (.result.tools | length?)}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
		'.status == "200" and .error.code == -32602'
	st=$(post_ngx "$(rpc 9 tools/list "$(jq -nc --arg c "$c1" '{cursor: $c}')")")
	jcheck "nginx: the same cursor again → the same second page (cursors are not single-use)" \
		"$(jq -c --slurpfile p "$T/nginx.page2" --arg st "$st" '{status: $st, same: (.result.tools == $p[0].result.tools), first: (.result.tools[0].name?), want: ($p[0].result.tools[0].name?)}' "$T/b" 2>/dev/null)" \
		'.status == "200" and .same'
else
	fail "nginx: tools/list handed out a nextCursor (for the cursor checks)" "$(head -n 5 "$T/nginx.problems")"
fi

# --- 2. the upstream that is down ---------------------------------------------------------
jcheck "nginx: no tool of the down upstream (c_*) is listed" "$(jq -c '[.[].name | select(startswith("c_"))]' "$T/nginx.tools")" '. == []'
health=$(curl -sS --max-time 10 "http://127.0.0.1:$NGX_PORT/mcp/health")
jcheck "nginx: /mcp/health says degraded while an upstream is down" "$health" '.status == "degraded"'
like "the gateway log says why gamma was left out" "$(grep -i 'gamma' "$T/gw.log" | head -n 3)" \
	'[Gg]amma.*([Rr]efused|[Cc]onnect|[Uu]nreachable|down)'
st=$(post_ngx "$(rpc 10 tools/call '{"name":"c_echo","arguments":{}}')")
jcheck "nginx: tools/call of a tool of the down upstream → -32602 (not in the catalog)" \
	"$(jq -c --arg st "$st" '{status: $st, id, error, result}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	'.status == "200" and .error.code == -32602'

# --- tools/call over curl through nginx -------------------------------------------------
st=$(post_ngx "$(rpc 11 tools/call '{"name":"test_multiple_content_types","arguments":{}}')" 'application/json')
jcheck "nginx: tools/call test_multiple_content_types → the upstream's result, unchanged" \
	"$(jq -c --argjson d "$D_MIXED" --arg st "$st" '{status: $st, id, same: (.result == $d.result), result, upstream: $d.result}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	'.status == "200" and .id == 11 and .same'
st=$(post_ngx "$(rpc 12 tools/call '{"name":"a_test_simple_text","arguments":{}}')" 'application/json')
jcheck "nginx: tools/call a_test_simple_text (prefixed) → alpha's result, unchanged" \
	"$(jq -c --argjson d "$D_ASIMPLE" --arg st "$st" '{status: $st, same: (.result == $d.result), result}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	'.status == "200" and .same'
st=$(post_ngx "$(rpc 13 tools/call '{"name":"test_error_handling","arguments":{}}')" 'application/json')
jcheck "nginx: a tool error (isError) is relayed as the result, not a JSON-RPC error" \
	"$(jq -c --argjson d "$D_ERROR" --arg st "$st" '{status: $st, same: (.result == $d.result), result, error}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	'.status == "200" and .same and .result.isError == true'
st=$(post_ngx "$(rpc 14 tools/call "$(jq -nc --argjson a "$ECHO_ARGS" '{name: "a_echo", arguments: $a}')")" 'application/json')
jcheck "nginx: tools/call a_echo: the arguments reach the upstream as sent" \
	"$(jq -c --argjson a "$ECHO_ARGS" --arg st "$st" '{status: $st, echoed: (.result.content[0].text | fromjson? // .), same: ((.result.content[0].text | fromjson?) == $a)}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	'.status == "200" and .same'
# arguments that are not an object never go upstream: -32602 from the gateway.
calls_before=$(grep -c 'POST tools/call ' "$T/alpha.log")
for bad in '"text"' '[1,2]' '5' 'null' 'true'; do
	st=$(post_ngx "$(rpc 40 tools/call "{\"name\":\"a_echo\",\"arguments\":$bad}")" 'application/json')
	jcheck "nginx: tools/call a_echo with arguments $bad → -32602 from the gateway" \
		"$(jq -c --arg st "$st" '{status: $st, error}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
		'.status == "200" and .error.code == -32602 and (.error.message | test("arguments must be an object"))'
done
is "nginx: none of those calls reached the upstream" "$(grep -c 'POST tools/call ' "$T/alpha.log")" "$calls_before"
st=$(post_ngx "$(rpc 15 tools/call '{"name":"a_slow","arguments":{"ms":300},"_meta":{"progressToken":"tok-json"}}')" 'application/json')
jcheck "nginx: a call with a progressToken from a client accepting only JSON → one application/json answer" \
	"$(jq -c --arg st "$st" --arg ct "$(hdr Content-Type)" '{status: $st, ctype: $ct, id, result}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	'.status == "200" and (.ctype | startswith("application/json")) and .id == 15 and .result.content[0].text == "slept 300 ms"'
st=$(post_ngx "$(rpc 16 tools/call '{"name":"a_slow","arguments":{"ms":1200},"_meta":{"progressToken":"tok-sse"}}')")
ctype=$(hdr Content-Type)
msgs=$(sse_data "$T/b" | jq -sc . 2>/dev/null)
jcheck "nginx: Accept with text/event-stream → progress events (the caller's string token), then the result, last" \
	"$(jq -c --arg st "$st" --arg ct "$ctype" '{status: $st, ctype: $ct, n: length,
		progress: [.[] | select(.method == "notifications/progress") | .params.progressToken] | unique,
		last_id: (.[-1].id), last_text: (.[-1].result.content[0].text),
		in_order: ((map(.method == "notifications/progress") | index(false)) == length - 1)}' <<<"${msgs:-[]}")" \
	'.status == "200" and (.ctype | startswith("text/event-stream")) and .n >= 3 and .progress == ["tok-sse"] and .last_id == 16 and .last_text == "slept 1200 ms" and .in_order'

# --- the rest of the server surface: prompts, resources, completions, logging ----------
st=$(post_ngx "$(rpc 20 initialize '{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}')" 'application/json')
jcheck "nginx: initialize announces what the upstreams offer and the gateway relays (subscribe, listChanged of its own lists)" \
	"$(jq -c --arg st "$st" '{status: $st, caps: .result.capabilities}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	'.status == "200" and (.caps | keys) == ["completions", "logging", "prompts", "resources", "tools"] and .caps.resources == {"subscribe": true, "listChanged": true} and .caps.prompts == {"listChanged": true} and .caps.tools == {"listChanged": true}'
st=$(post_ngx "$(rpc 21 prompts/list '{}')" 'application/json')
jcheck "nginx: prompts/list: both upstreams' prompts, alpha's under its prefix, sorted" \
	"$(jq -c --arg st "$st" '{status: $st, names: [.result.prompts[].name], cc: "'"$(hdr Cache-Control)"'"}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	'.status == "200" and (.names | index("a_test_simple_prompt")) and (.names | index("test_simple_prompt")) and .names == (.names | sort) and .cc == "private"'
st=$(post_ngx "$(rpc 22 prompts/get '{"name":"a_test_prompt_with_arguments","arguments":{"arg1":"north","arg2":"south"}}')" 'application/json')
jcheck "nginx: prompts/get a_test_prompt_with_arguments → alpha's prompt under its own name, with the arguments" \
	"$(jq -c --arg st "$st" '{status: $st, text: ([.result.messages[].content.text] | join(" ")), error}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	'.status == "200" and (.text | contains("north")) and (.text | contains("south"))'
st=$(post_ngx "$(rpc 23 resources/read '{"uri":"test://template/4711/data"}')" 'application/json')
jcheck "nginx: resources/read of a template's expansion → the upstream whose template it expands" \
	"$(jq -c --arg st "$st" '{status: $st, uri: .result.contents[0].uri, text: .result.contents[0].text, error}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	'.status == "200" and .uri == "test://template/4711/data" and (.text | contains("4711"))'
st=$(post_ngx "$(rpc 24 resources/read '{"uri":"test://nobody/owns/this"}')" 'application/json')
jcheck "nginx: resources/read of a URI no upstream lists or expands (two offer resources) → -32002" \
	"$(jq -c --arg st "$st" '{status: $st, id, error}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	'.status == "200" and .id == 24 and .error.code == -32002'
st=$(post_ngx "$(rpc 25 completion/complete '{"ref":{"type":"ref/prompt","name":"a_test_prompt_with_arguments"},"argument":{"name":"arg1","value":"par"}}')" 'application/json')
jcheck "nginx: completion/complete of a prefixed prompt's argument → alpha's completions" \
	"$(jq -c --arg st "$st" '{status: $st, values: .result.completion.values, error}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	'.status == "200" and (.values | index("paris")) and (.values | index("park"))'
st=$(post_ngx "$(rpc 26 logging/setLevel '{"level":"warning"}')" 'application/json')
jcheck "nginx: logging/setLevel → {} (passed to every upstream that offers logging)" \
	"$(jq -c --arg st "$st" '{status: $st, result, error}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	'.status == "200" and .result == {}'

# --- a caller's own upstream sessions, server-to-client requests, the GET stream --------
# post_sid BODY SID [ACCEPT] [METHOD]: through nginx with Mcp-Session-Id SID.
post_sid() {
	curl -sS --max-time 20 -o "$T/b" -D "$T/h" -w '%{http_code}' -X "${4:-POST}" -H 'Content-Type: application/json' \
		-H "Accept: ${3:-application/json, text/event-stream}" -H "Authorization: Bearer $TOKEN" \
		-H "Mcp-Session-Id: $2" -H 'MCP-Protocol-Version: 2025-11-25' --data-binary "$1" "$NGX_URL" 2>> "$T/curl.err"
}
opened() { grep -c 'session .* opened' "$T/$1.log"; }
# sessions opened for a caller that declared sampling (a catalog fetch's declare none,
# and one may run at any time once catalog-ttl passes on a slow machine)
opened_sampling() { grep -c 'session .* opened .*client capabilities: .*sampling' "$T/$1.log"; }
closed() { grep -c 'session .* closed' "$T/$1.log"; }
oa=$(opened_sampling alpha) ob=$(opened_sampling beta) ca=$(closed alpha) cb=$(closed beta)
st=$(post_ngx "$(rpc 30 initialize '{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}')" 'application/json')
SID=$(hdr Mcp-Session-Id)
jcheck "nginx: initialize opens a session of the caller's own at each upstream that is up (alpha, beta; gamma is down)" \
	"$(jq -nc --arg st "$st" --arg sid "$SID" --argjson da "$(( $(opened_sampling alpha) - oa ))" --argjson db "$(( $(opened_sampling beta) - ob ))" \
		'{status: $st, sid: ($sid | length), alpha: $da, beta: $db}')" \
	'.status == "200" and .sid > 0 and .alpha == 1 and .beta == 1'
t0=$(date +%s%N)
st=$(post_sid "$(rpc 31 tools/call '{"name":"a_test_sampling","arguments":{"prompt":"hi"}}')" "$SID" 'application/json')
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
jcheck "nginx: the upstream's sampling request to a caller without an event stream is declined at once (no wait for timeout-ms)" \
	"$(jq -c --arg st "$st" --argjson ms "$ms" '{status: $st, ms: $ms, result, error}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	".status == \"200\" and .ms < $((A_TIMEOUT / 2)) and (.result.isError == true or .error != null)"
# With an event stream the request reaches the caller under a routing id; the caller's
# answer, POSTed on the session, goes back to the upstream, whose result ends the stream.
curl -sS -N --max-time 60 -o "$T/call32.sse" -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' -H "Authorization: Bearer $TOKEN" \
	-H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-11-25' \
	--data-binary "$(rpc 32 tools/call '{"name":"a_test_sampling","arguments":{"prompt":"hi"}}')" "$NGX_URL" 2>> "$T/curl.err" &
call_pid=$!
sampling_req() { sse_data "$T/call32.sse" | jq -sce '[.[] | select(.method == "sampling/createMessage")] | .[0] // empty' 2>/dev/null; }
wait_until 30 sampling_req
req=$(sampling_req)
jcheck "nginx: with an event stream, the sampling request reaches the caller under a routing id" \
	"$(jq -nc --argjson r "${req:-null}" '{id: $r.id, method: $r.method}')" \
	'(.id | type) == "string" and (.id | startswith("mcpgate:5:alpha")) and .method == "sampling/createMessage"'
st=$(post_sid "$(jq -nc --argjson r "${req:-null}" '{jsonrpc: "2.0", id: $r.id,
	result: {role: "assistant", content: {type: "text", text: "pong"}, model: "test"}}')" "$SID")
wait "$call_pid" 2>/dev/null
jcheck "nginx: the caller's answer (202) reaches the upstream, whose tool result ends the call's stream" \
	"$(sse_data "$T/call32.sse" | jq -sc --arg st "$st" '{status: $st, r: ([.[] | select(.id == 32)] | .[0])}' 2>/dev/null)" \
	'.status == "202" and .r.result.content[0].text == "LLM response: pong"'
nc=$(grep -c 'notifications/cancelled' "$T/alpha.log")
st=$(post_sid '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99,"reason":"test"}}' "$SID" 'application/json')
is "nginx: a caller's notifications/cancelled is accepted (202) and passed to its upstream sessions" \
	"$st $(( $(grep -c 'notifications/cancelled' "$T/alpha.log") - nc ))" "202 1"
# the standalone stream: GET with the session, a subscription, an update
curl -sS -N --max-time 60 -o "$T/get.sse" -D "$T/get.h" -H 'Accept: text/event-stream' -H "Authorization: Bearer $TOKEN" \
	-H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-11-25' "$NGX_URL" 2>> "$T/curl.err" &
get_pid=$!
wait_until 30 grep -q '^HTTP' "$T/get.h"
st=$(post_sid "$(rpc 33 resources/subscribe '{"uri":"test://watched-resource"}')" "$SID" 'application/json')
jcheck "nginx: resources/subscribe → {} from the upstream that lists the URI (alpha), on the caller's session" \
	"$(jq -c --arg st "$st" '{status: $st, result, error}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	'.status == "200" and .result == {}'
# The stream's headers come before the gateway has opened its GET at the upstream, and an
# update sent before that is lost: the update is made again until one arrives (30 s).
updated() { grep -q 'notifications/resources/updated' "$T/get.sse"; }
end=$(( $(now_ms) + 30000 ))
while [ "$(now_ms)" -lt "$end" ]; do
	st=$(post_sid "$(rpc 34 tools/call '{"name":"a_update_watched_resource","arguments":{}}')" "$SID" 'application/json')
	wait_until 2 updated && break
done
kill "$get_pid" 2>/dev/null; wait "$get_pid" 2>/dev/null
upd=$(sse_data "$T/get.sse" | jq -sc '[.[] | select(.method == "notifications/resources/updated") | .params.uri]' 2>/dev/null)
jcheck "nginx: GET /mcp with the session is its stream: the upstream's resources/updated arrives on it" \
	"$(jq -nc --arg st "$(sed -n '1s/^HTTP[^ ]* \([0-9]*\).*/\1/p' "$T/get.h")" --arg ct "$(grep -i '^content-type:' "$T/get.h" | tr -d '\r')" \
		--argjson u "${upd:-null}" '{status: $st, ctype: $ct, updated: $u}')" \
	'.status == "200" and (.ctype | test("text/event-stream")) and (.updated | unique) == ["test://watched-resource"]'
# (after the one above has ended: the gateway notices the client is gone at its next
# keep-alive, 5 s, and frees the stream's slot; until then this GET may get 405)
for _ in $(seq 1 10); do
	curl -sS -N --max-time 4 -o /dev/null -D "$T/get0.h" -H 'Accept: text/event-stream' -H "Authorization: Bearer $TOKEN" \
		-H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-11-25' "$NGX_URL" 2>> "$T/curl.err"
	[ "$(sed -n '1s/^HTTP[^ ]* \([0-9]*\).*/\1/p' "$T/get0.h" | tr -d '\r')" != 200 ] || break
	sleep 1
done
is "nginx: the GET stream's headers arrive at once (not with the first keep-alive, 5 s later)" \
	"$(sed -n '1s/^HTTP[^ ]* \([0-9]*\).*/\1/p' "$T/get0.h" | tr -d '\r')" 200
st=$(post_sid '' "$SID" 'application/json' DELETE)
jcheck "nginx: DELETE ends the caller's upstream sessions too" \
	"$(jq -nc --arg st "$st" --argjson da "$(( $(closed alpha) - ca ))" --argjson db "$(( $(closed beta) - cb ))" '{status: $st, alpha: $da, beta: $db}')" \
	'.status == "204" and .alpha == 1 and .beta == 1'

# --- 1/2 as CGI (same configuration, same state file) ------------------------------------
list_pages post_cgi cgi
catalog_checks cgi "$T/expect.tools"
if [ -s "$T/nginx.cursor1" ] && [ -s "$T/nginx.page2" ]; then
	st=$(post_cgi "$(rpc 2 tools/list "$(jq -nc --arg c "$(cat "$T/nginx.cursor1")" '{cursor: $c}')")")
	jcheck "CGI: a cursor handed out through nginx continues there (the same page 2)" \
		"$(jq -c --slurpfile p "$T/nginx.page2" --arg st "$st" '{status: $st, same: (.result.tools == $p[0].result.tools), first: (.result.tools[0].name?), want: ($p[0].result.tools[0].name?), error}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
		'.status == "200" and .same'
	st=$(post_cgi "$(rpc 3 tools/list "$(jq -nc --arg c "$bad" '{cursor: $c}')")")
	jcheck "CGI: a tampered cursor → -32602" "$(jq -c --arg st "$st" '{status: $st, error}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
		'.status == "200" and .error.code == -32602'
fi
cgi_run "$T/cgi.out" GET /mcp/health
cgi_split "$T/cgi.out" > /dev/null
jcheck "CGI: /mcp/health says degraded, naming the upstream that is down" "$(cat "$T/b")" \
	'.status == "degraded" and (.dependencies[] | select(.name == "gamma") | .state == "down")'
st=$(post_cgi "$(rpc 5 tools/call "$(jq -nc --argjson a "$ECHO_ARGS" '{name: "a_echo", arguments: $a}')")" 'application/json')
jcheck "CGI: tools/call a_echo → the arguments back" \
	"$(jq -c --argjson a "$ECHO_ARGS" --arg st "$st" '{status: $st, same: ((.result.content[0].text | fromjson?) == $a), result, error}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	'.status == "200" and .same'
ob=$(opened beta) cb=$(closed beta)
st=$(post_cgi "$(rpc 6 tools/call '{"name":"test_simple_text","arguments":{}}')" 'application/json')
# (Its own, and on a slow machine one more: a catalog fetch, once catalog-ttl passed.)
n_open=$(( $(opened beta) - ob )) n_closed=$(( $(closed beta) - cb ))
is "CGI: the run ends the sessions it opened at the upstream for itself (beta: opened, closed)" \
	"$n_open $n_closed" "$([ "$n_open" -ge 1 ] && [ "$n_open" -le 2 ] && echo "$n_open $n_open" || echo "1 or 2, each closed")"
jcheck "CGI: tools/call test_simple_text (beta, no prefix) → beta's result, unchanged" \
	"$(jq -c --argjson d "$D_SIMPLE" --arg st "$st" '{status: $st, same: (.result == $d.result), result, error}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	'.status == "200" and .same'
st=$(post_cgi "$(rpc 7 tools/call '{"name":"a_slow","arguments":{"ms":1200},"_meta":{"progressToken":7}}')")
ctype=$(hdr Content-Type)
msgs=$(sse_data "$T/b" | jq -sc . 2>/dev/null)
jcheck "CGI: progress events (the caller's integer token) before the result, on an event stream" \
	"$(jq -c --arg st "$st" --arg ct "$ctype" '{status: $st, ctype: $ct, n: length,
		progress: [.[] | select(.method == "notifications/progress") | .params.progressToken] | unique,
		last_id: (.[-1].id), in_order: ((map(.method == "notifications/progress") | index(false)) == length - 1)}' <<<"${msgs:-[]}")" \
	'.status == "200" and (.ctype | startswith("text/event-stream")) and .n >= 3 and .progress == [7] and .last_id == 7 and .in_order'

# --- 3. one catalog for every process --------------------------------------------------
# A fetch keeps the catalog fresh for catalog-ttl from its start, and the workers that
# find it stale while another fetches serve the stale one: a burst spanning k lifetimes
# costs k fetches at most, however slow the machine (k is 1 unless it is very slow).
sleep "$STALE"
a0=$(lists alpha)
b0=$(lists beta)
mkdir -p "$T/share"
LIST=$(rpc 1 tools/list '{}')
t0=$(date +%s%N)
jobs_pids=()
for i in $(seq 1 10); do
	curl -sS --max-time 30 -o "$T/share/nginx.$i" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H "Authorization: Bearer $TOKEN" \
		--data-binary "$LIST" "$NGX_URL" 2>> "$T/curl.err" &
	jobs_pids+=($!)
	cgi_run "$T/share/cgi.$i.raw" POST /mcp "$LIST" &
	jobs_pids+=($!)
done
wait "${jobs_pids[@]}"
ms=$((($(date +%s%N) - t0) / 1000000))
k=$((ms / (TTL * 1000) + 1))
a1=$(lists alpha)
b1=$(lists beta)
for i in $(seq 1 10); do sed '1,/^\r$/d' "$T/share/cgi.$i.raw" > "$T/share/cgi.$i"; done
jcheck "20 concurrent tools/list (10 through nginx, 10 CGI runs): each a full first page" \
	"$(for f in "$T"/share/nginx.* "$T"/share/cgi.?  "$T"/share/cgi.??; do jq -c '.result.tools | length' "$f" 2>/dev/null || echo null; done | jq -sc .)" \
	"length == 20 and all(. == $PAGE)"
jcheck "catalog shared: the 20 requests ($ms ms, $k catalog-ttl) fetched alpha's tools/list ($A_PAGES page) and beta's ($B_PAGES pages) at most $k time(s) (fixture logs)" \
	"{\"alpha\": $((a1 - a0)), \"beta\": $((b1 - b0))}" ".alpha <= $((A_PAGES * k)) and .beta <= $((B_PAGES * k))"
jcheck "catalog refreshed: the stale catalog was fetched again (catalog-ttl $TTL s)" \
	"{\"alpha\": $((a1 - a0)), \"beta\": $((b1 - b0))}" '.alpha >= 1 and .beta >= 1'

# --- 4/5. tools/call with the SDK client through nginx -------------------------------------
ops=(
	'{"tag":"list","op":"list"}'
	'{"tag":"simple_a","op":"call","name":"a_test_simple_text"}'
	'{"tag":"simple_b","op":"call","name":"test_simple_text"}'
	"$(jq -nc --argjson a "$ECHO_ARGS" '{tag: "echo", op: "call", name: "a_echo", arguments: $a}')"
	'{"tag":"echo149","op":"call","name":"a_echo_149","arguments":{"text":"the last of 150"}}'
	'{"tag":"mixed","op":"call","name":"test_multiple_content_types"}'
	'{"tag":"unknown","op":"call","name":"no_such_tool"}'
	'{"tag":"slow","op":"call","name":"a_slow","arguments":{"ms":1500},"progress":true,"timeout":10000}'
	'{"tag":"progress","op":"call","name":"test_tool_with_progress","progress":true}'
	'{"tag":"logging","op":"call","name":"a_test_tool_with_logging"}'
	'{"tag":"hdr_a","op":"call","name":"a_request_headers"}'
	'{"tag":"hdr_b","op":"call","name":"request_headers"}'
	'{"tag":"timeout","op":"call","name":"slow","arguments":{"ms":30000},"timeout":40000}'
	'{"tag":"after_timeout","op":"call","name":"test_simple_text"}'
)
MCP_BEARER_TOKEN=$TOKEN WATCHDOG_MS=140000 run_bounded 150 "$T/sdk.out" "$T/sdk.err" node "$CLIENT" "$NGX_URL" "${ops[@]}"
rc=$?
[ "$rc" -eq 0 ] || fail "SDK client run through nginx exited 0" "exit $rc; $(tail -n 3 "$T/sdk.out"; tail -n 10 "$T/sdk.err")"
op() { jq -c --arg t "$2" 'select(.tag == $t)' "$1" 2>/dev/null | head -n 1; }
S=$T/sdk.out
jcheck "SDK/nginx: listTools, following nextCursor: the expected tool names" \
	"$(op "$S" list | jq -c --slurpfile w "$T/expect.tools" '{error, pages, same: ((.tools | map(.name)) == ($w[0] | map(.name))),
		missing: (($w[0] | map(.name)) - (.tools | map(.name)))[:8], extra: ((.tools | map(.name)) - ($w[0] | map(.name)))[:8]}')" \
	'.error == null and .same'
jcheck "SDK/nginx: a_test_simple_text → alpha's content, unchanged" \
	"$(op "$S" simple_a | jq -c --argjson d "$D_ASIMPLE" '{error, content: .result.content, same: (.result.content == $d.result.content)}')" '.same'
jcheck "SDK/nginx: test_simple_text (beta) → 'This is a simple text response for testing.'" \
	"$(op "$S" simple_b | jq -c '{error, result}')" \
	'.result.content == [{"type": "text", "text": "This is a simple text response for testing."}]'
jcheck "SDK/nginx: a_echo with arguments → the arguments back" \
	"$(op "$S" echo | jq -c --argjson a "$ECHO_ARGS" '{error, echoed: (.result.content[0].text | fromjson? // .), same: ((.result.content[0].text | fromjson?) == $a)}')" '.same'
jcheck "SDK/nginx: a_echo_149 → routed to alpha's echo_149" \
	"$(op "$S" echo149 | jq -c '{error, result}')" '.result.content[0].text == "the last of 150" and (.result.isError | not)'
jcheck "SDK/nginx: test_multiple_content_types → the upstream's content, unchanged" \
	"$(op "$S" mixed | jq -c --argjson d "$D_MIXED" '{error, same: (.result.content == $d.result.content), content: .result.content}')" '.same'
jcheck "SDK/nginx: an unknown tool → McpError -32602" "$(op "$S" unknown | jq -c '{error, result}')" '.error.code == -32602'

r=$(op "$S" slow)
jcheck "SDK/nginx: a_slow 1500 ms with a progressToken → its result, on an event stream" \
	"$(jq -c '{error, ctype, result}' <<<"$r")" \
	'.error == null and .result.content[0].text == "slept 1500 ms" and (.ctype | startswith("text/event-stream"))'
jcheck "SDK/nginx: progress arrives as it happens, long before the result (not buffered)" \
	"$(jq -c '{ms, n: (.progress | length), first: .progress[0].t, last: .progress[-1].t, times: [.progress[].t]}' <<<"$r")" \
	'.n >= 3 and (.ms - .first) >= 1000 and (.last - .first) >= 900 and .last <= .ms'
jcheck "SDK/nginx: progress values increase, with total 1500" \
	"$(jq -c '{values: [.progress[].progress], totals: ([.progress[].total] | unique)}' <<<"$r")" \
	'(.values | length) >= 1 and .values == (.values | sort | unique) and .totals == [1500] and .values[-1] <= 1500'
r=$(op "$S" progress)
jcheck "SDK/nginx: test_tool_with_progress → progress 0, 50, 100 of 100 before the result; the token reached the upstream as sent" \
	"$(jq -c '.ms as $ms | {error, ms, progress: [.progress[]? | [.progress, .total]], before: ([.progress[]?.t] | all(. <= $ms)),
		text: .result.content[0].text, want: "Progress test completed (token \(.progressToken | tojson))"}' <<<"$r")" \
	'.progress == [[0,100],[50,100],[100,100]] and .before and .text == .want'
jcheck "SDK/nginx: a_test_tool_with_logging → its three notifications/message (info), before the result" \
	"$(op "$S" logging | jq -c '{error, ms, logs, text: .result.content[0].text}')" \
	'.text == "Tool with logging executed successfully" and ([.logs[].data] == ["Tool execution started", "Tool processing data", "Tool execution completed"])
		and ([.logs[].level] | unique) == ["info"] and ([.logs[].t] | max) <= .ms'

ha=$(op "$S" hdr_a | jq -c '.result.content[0].text | fromjson?' 2>/dev/null)
hb=$(op "$S" hdr_b | jq -c '.result.content[0].text | fromjson?' 2>/dev/null)
jcheck "alpha received the Authorization line of its auth-header-file, not the caller's" \
	"$(jq -c '{authorization}' <<<"${ha:-null}")" ".authorization == \"$A_SECRET\""
jcheck "beta received the X-Api-Key line of its auth-header-file and no Authorization at all" \
	"$(jq -c '{authorization, "x-api-key"}' <<<"${hb:-null}")" ".authorization == null and .\"x-api-key\" == \"$B_SECRET\""
jcheck "the caller's token appears in no header an upstream received" \
	"$(jq -nc --argjson a "${ha:-null}" --argjson b "${hb:-null}" --arg t "$TOKEN" \
		'{got_a: ($a != null), got_b: ($b != null), leaked: ([$a, $b] | tostring | contains($t))}')" \
	'.got_a and .got_b and (.leaked | not)'
r=$(op "$S" timeout)
jcheck "SDK/nginx: slow 30000 ms on beta (timeout-ms $B_TIMEOUT) → -32603 within timeout-ms + 4 s" \
	"$(jq -c '{ms, error, result}' <<<"$r")" ".error.code == -32603 and .ms < $((B_TIMEOUT + 4000))"
jcheck "SDK/nginx: the timeout's error message says what happened" \
	"$(jq -c '{message: .error.message}' <<<"$r")" '.message | test("time[ds]? ?out|timeout"; "i")'
jcheck "SDK/nginx: beta is served again after the timeout" \
	"$(op "$S" after_timeout | jq -c '{error, result}')" '.result.content[0].text == "This is a simple text response for testing."'

# --- 6. lighttpd ---------------------------------------------------------------------------
MCP_BEARER_TOKEN=$TOKEN WATCHDOG_MS=80000 run_bounded 90 "$T/lty.out" "$T/lty.err" node "$CLIENT" "$LTY_URL" \
	'{"tag":"list","op":"list"}' '{"tag":"slow","op":"call","name":"a_slow","arguments":{"ms":1500},"progress":true}'
L=$T/lty.out
jcheck "SDK/lighttpd: listTools, following nextCursor: the expected tool names" \
	"$(op "$L" list | jq -c --slurpfile w "$T/expect.tools" '{error, pages, same: ((.tools | map(.name)) == ($w[0] | map(.name)))}')" \
	'.error == null and .same'
jcheck "SDK/lighttpd: a_slow 1500 ms: progress arrives as it happens, long before the result" \
	"$(op "$L" slow | jq -c '{error, ctype, ms, n: (.progress | length), first: .progress[0].t, last: .progress[-1].t, text: .result.content[0].text}')" \
	'.text == "slept 1500 ms" and .n >= 3 and (.ms - .first) >= 1000 and (.last - .first) >= 900'
[ -s "$L" ] || fail "SDK client run through lighttpd printed its results" "$(tail -n 10 "$T/lty.err")"

# --- 2. the down upstream comes up -----------------------------------------------------------
start_fixture gamma --port "$DOWN_PORT" --name gamma --tools 3
if wait_fixture gamma && fixture_tools gamma c_ "$T/gamma.expect"; then
	jq -s 'add | sort_by(.name)' "$T/alpha.expect" "$T/beta.expect" "$T/gamma.expect" > "$T/expect3.tools"
	sleep "$STALE"
	list_pages post_ngx up3
	missing=$(jq -r --slurpfile w "$T/expect3.tools" '($w[0] | map(.name)) - map(.name) | .[:8] | join(" ")' "$T/up3.tools")
	extra=$(jq -r --slurpfile w "$T/expect3.tools" 'map(.name) - ($w[0] | map(.name)) | .[:8] | join(" ")' "$T/up3.tools")
	jcheck "gamma came up: after catalog-ttl its 22 tools (c_) are listed with the others" \
		"$(jq -c --slurpfile w "$T/expect3.tools" --arg m "$missing" --arg x "$extra" \
			'{n: length, want: ($w[0] | length), gamma: (map(select(.name | startswith("c_"))) | length), same: (. == $w[0]), missing: $m, extra: $x}' "$T/up3.tools")" \
		'.same and .gamma == 22'
	health=$(curl -sS --max-time 10 "http://127.0.0.1:$NGX_PORT/mcp/health")
	jcheck "nginx: /mcp/health says ok once every upstream answers" "$health" '.status == "ok"'
	st=$(post_ngx "$(rpc 20 tools/call '{"name":"c_test_simple_text","arguments":{}}')" 'application/json')
	jcheck "nginx: tools/call c_test_simple_text → routed to gamma" \
		"$(jq -c --arg st "$st" '{status: $st, result, error}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
		'.result.content[0].text == "This is a simple text response for testing."'
else
	fail "gamma started on the down upstream's port $DOWN_PORT" "$(tail -n 5 "$T/gamma.log")"
fi

# --- 4. an upstream that dies ---------------------------------------------------------------
B_PID=${FIXTURE_PID[beta]}
MCP_BEARER_TOKEN=$TOKEN WATCHDOG_MS=80000 run_bounded 90 "$T/kill.out" "$T/kill.err" node "$CLIENT" "$NGX_URL" \
	"{\"tag\":\"midcall\",\"op\":\"call\",\"name\":\"slow\",\"arguments\":{\"ms\":30000},\"progress\":true,\"killAfterProgress\":$B_PID,\"timeout\":40000}" \
	'{"tag":"dead","op":"call","name":"test_simple_text","timeout":40000}' \
	'{"tag":"alive","op":"call","name":"a_echo","arguments":{"still":"here"}}'
K=$T/kill.out
r=$(op "$K" midcall)
jcheck "beta killed mid-call (after its first progress) → -32603 within timeout-ms + 4 s" \
	"$(jq -c '{killedAt, ms, n: (.progress | length), error, result}' <<<"$r")" \
	".killedAt != null and .error.code == -32603 and .ms < $((B_TIMEOUT + 4000))"
jcheck "beta killed mid-call → the gateway noticed the closed connection at once (< timeout-ms / 2), not at timeout-ms" \
	"$(jq -c '{killedAt, ms, after_kill: (.ms - (.killedAt // 0))}' <<<"$r")" ".killedAt != null and .after_kill < $((B_TIMEOUT / 2))"
jcheck "the error message says what happened" "$(jq -c '{message: .error.message}' <<<"$r")" \
	'.message | test("upstream|beta|connect|closed|reset|refused|unavailable|failed"; "i")'
jcheck "… and names no host or port of the upstream (those stay in the gateway log)" \
	"$(op "$K" dead | jq -c '{message: .error.message}')" '.message | test("127\\.0\\.0\\.1|localhost|port [0-9]") | not'
jcheck "a call to a tool of the dead upstream → a JSON-RPC error within timeout-ms + 4 s" \
	"$(op "$K" dead | jq -c '{ms, error, result}')" "(.error.code == -32603 or .error.code == -32602) and .ms < $((B_TIMEOUT + 4000))"
jcheck "alpha is still served (a_echo)" "$(op "$K" alive | jq -c '{error, result}')" \
	'(.result.content[0].text | fromjson?) == {"still": "here"}'
sleep "$STALE"
list_pages post_ngx after
jq -s 'add | sort_by(.name)' "$T/alpha.expect" "$T/gamma.expect" > "$T/expect_ac.tools"
jcheck "after catalog-ttl: beta's tools are gone, alpha's and gamma's all listed" \
	"$(jq -c --slurpfile w "$T/expect_ac.tools" '{n: length, want: ($w[0] | length), same: (map(.name) == ($w[0] | map(.name))),
		beta_left: [.[].name | select(test("^(a_|c_)") | not)][:5]}' "$T/after.tools")" '.same'
health=$(curl -sS --max-time 10 "http://127.0.0.1:$NGX_PORT/mcp/health")
jcheck "nginx: /mcp/health says degraded again" "$health" '.status == "degraded"'
like "the gateway log says why beta was left out" "$(grep -i 'beta' "$T/gw.log" | grep -iv 'tools/call' | tail -n 3)" \
	'beta.*([Rr]efused|[Cc]onnect|[Uu]nreachable|down)'
st=$(post_ngx "$(rpc 30 tools/call '{"name":"test_simple_text","arguments":{}}')" 'application/json')
jcheck "nginx: a dead upstream's tool, once out of the catalog (not listed) → -32603, its upstream down (the name is still its)" \
	"$(jq -c --arg st "$st" '{status: $st, error, result}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	'.status == "200" and .error.code == -32603 and (.error.message | test("unavailable: the upstream that offers it is down"))'

# --- an upstream that forgets a caller's session -----------------------------------------
st=$(post_ngx "$(rpc 40 initialize '{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}')" 'application/json')
SID2=$(hdr Mcp-Session-Id)
a_port=${FIXTURE_URL[alpha]##*:}
a_port=${a_port%%/*}
kill "${FIXTURE_PID[alpha]}" 2>/dev/null
wait_until 30 eval '! mg_alive "${FIXTURE_PID[alpha]}"'
start_fixture alpha --port "$a_port" --name alpha --tools 150
if wait_fixture alpha; then
	st=$(post_sid "$(rpc 41 tools/call '{"name":"a_echo","arguments":{"x":1}}')" "$SID2" 'application/json')
	jcheck "alpha restarted (it forgot the caller's session): the call answers 404 session_not_found, so the client initializes again" \
		"$(jq -c --arg st "$st" '{status: $st, error, jsonrpc_code}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
		'.status == "404" and .error == "session_not_found"'
	st=$(post_ngx "$(rpc 42 initialize '{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}')" 'application/json')
	SID3=$(hdr Mcp-Session-Id)
	st=$(post_sid "$(rpc 43 tools/call '{"name":"a_echo","arguments":{"x":2}}')" "$SID3" 'application/json')
	jcheck "… and after a new initialize, the call goes through on a new session" \
		"$(jq -c --arg st "$st" '{status: $st, echoed: (.result.content[0].text | fromjson?), error}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
		'.status == "200" and .echoed == {"x": 2}'
else
	fail "alpha restarted on port $a_port" "$(tail -n 5 "$T/alpha.log")"
fi

# --- afterwards ---------------------------------------------------------------------------
gone=
for pid in $FCGI_PIDS; do mg_alive "$pid" || gone="$gone $pid"; done
is "the mcpgate FastCGI processes survived the run" "${gone:-none}" none
leaks=
for f in "$T/gw.log" "$T/cgi.err" "${MG_LOG:-/dev/null}" "$T"/nginx/*.log "$T"/lighttpd/*.log "$T"/alpha.log "$T"/beta.log "$T"/gamma.log; do
	[ -f "$f" ] || continue
	grep -qF -- "${TOKEN:0:12}" "$f" && leaks="$leaks ${f#"$T/"}:token"
	grep -qF -- "${A_SECRET#Bearer }" "$f" && leaks="$leaks ${f#"$T/"}:alpha-secret"
	grep -qF -- "$B_SECRET" "$f" && leaks="$leaks ${f#"$T/"}:beta-secret"
done
is "no caller token or upstream credential in any log (gateway, fronts, upstreams)" "${leaks:-none}" none
tap_done
