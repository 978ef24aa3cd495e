#!/usr/bin/env bash
# Two gateways of two issuers on one host, sharing one state file (its session key and
# its digest key), run as CGI with real oidc-provider tokens and the SDK fixture
# upstream: what one gateway seals or counts for a caller is not another's. Gateway A
# (resource A, issuer 1) and gateway B (resource B, issuer 2) each know an "alice" of
# tenant acme, client cli. Alice of issuer 1's session (Mcp-Session-Id) and list cursor
# are refused at B for alice of issuer 2 (404, -32602), and her DELETE there ends
# nothing; each gateway's gateway, ip and tenant rate-limit buckets are its own.
# Prints TAP. Env: MCPGATE_BIN.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin curl:curl jq:jq --node @modelcontextprotocol/sdk/package.json
IDP1_PID= IDP2_PID=
stop_idps() { IDP_PID=$IDP1_PID stop_idp; IDP_PID=$IDP2_PID stop_idp; }
trap 'stop_idps; stop_all' EXIT

URL_A=http://127.0.0.1:8080/mcp
URL_B=http://127.0.0.1:8081/mcp
start_idp "$URL_A"
IDP1=$IDP IDP1_PID=$IDP_PID
start_idp "$URL_B"
IDP2=$IDP IDP2_PID=$IDP_PID
start_fixture up --port 0 --tools 3 --quiet
wait_fixture up || bail "the fixture upstream started" "$(tail -n 5 "$T/up.log")"
UP=${FIXTURE_URL[up]}
pass "two issuers (oidc-provider) and an upstream (the SDK fixture) started"

# conf OUT RESOURCE ISSUER [LINES...]: a gateway of that resource and issuer on the one
# state file $T/state, the LINES appended.
conf() {
	local out=$1 resource=$2
	IDP=$3 gateway_conf "$out" "$resource" 'page-size = 1'
	shift 3
	printf '%s\n' "$@" >> "$out"
}
conf "$T/a.conf" "$URL_A" "$IDP1" '[upstream "fx"]' "url = $UP"
conf "$T/b.conf" "$URL_B" "$IDP2" '[upstream "fx"]' "url = $UP"
for c in a b; do
	out=$("$MCPGATE_BIN" -t -c "$T/$c.conf" 2>&1) || bail "mcpgate -t accepts $c.conf" "$out"
done

# run CONF METHOD TOKEN [BODY] [VAR=value...]: one CGI run; the status is printed, the
# headers in $T/h, the body in $T/b.
run() {
	local conf=$1 method=$2 tok=$3 body=${4:-}
	shift 4
	printf '%s' "$body" | env -i PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 SERVER_PROTOCOL=HTTP/1.1 \
		REMOTE_ADDR=127.0.0.1 REQUEST_METHOD="$method" SCRIPT_NAME=/mcp CONTENT_TYPE=application/json \
		CONTENT_LENGTH=${#body} HTTP_ACCEPT='application/json, text/event-stream' \
		${tok:+HTTP_AUTHORIZATION="Bearer $tok"} "$@" \
		${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"} ${UBSAN_OPTIONS:+UBSAN_OPTIONS="$UBSAN_OPTIONS"} \
		MCPGATE_CONFIG="$conf" timeout 60 "$MCPGATE_BIN" > "$T/out" 2>> "$T/cgi.err"
	sed -n '1,/^\r$/p' "$T/out" | tr -d '\r' > "$T/h"
	sed '1,/^\r$/d' "$T/out" > "$T/b"
	sed -n 's/^Status: \([0-9]*\).*/\1/p' "$T/h"
}
hdr() { grep -i "^$1: " "$T/h" | head -n 1 | sed 's/^[^:]*: //'; }
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
PING='{"jsonrpc":"2.0","id":2,"method":"ping"}'
LIST='{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}'
list_from() { jq -cn --arg c "$1" '{jsonrpc: "2.0", id: 4, method: "tools/list", params: {cursor: $c}}'; }

alice1=$(IDP=$IDP1 mint --user alice --scope mcp:tools)
alice2=$(IDP=$IDP2 mint --user alice --scope mcp:tools)
[ -n "$alice1" ] && [ "$alice1" != null ] && [ -n "$alice2" ] && [ "$alice2" != null ] \
	&& pass "alice's tokens from both issuers" || bail "tokens" "$(tail -n 5 "$T/idp.log")"

# --- sessions ------------------------------------------------------------------------------
is "gateway A, alice of issuer 1: initialize" "$(run "$T/a.conf" POST "$alice1" "$INIT")" 200
SID=$(hdr Mcp-Session-Id)
check "… a session" test -n "$SID"
is "… her session at A: 200" "$(run "$T/a.conf" POST "$alice1" "$PING" HTTP_MCP_SESSION_ID="$SID")" 200
is "her session at gateway B, presented by alice of issuer 2: 404" \
	"$(run "$T/b.conf" POST "$alice2" "$PING" HTTP_MCP_SESSION_ID="$SID")" 404
is "… session_not_found" "$(jq -r .error "$T/b")" session_not_found
is "… nor may B's alice end it (DELETE: 404)" "$(run "$T/b.conf" DELETE "$alice2" "" HTTP_MCP_SESSION_ID="$SID")" 404
is "… and it lives on at A" "$(run "$T/a.conf" POST "$alice1" "$PING" HTTP_MCP_SESSION_ID="$SID")" 200
is "gateway B's own session for its alice: 200" "$(run "$T/b.conf" POST "$alice2" "$INIT")" 200
SID2=$(hdr Mcp-Session-Id)
is "… used at B: 200" "$(run "$T/b.conf" POST "$alice2" "$PING" HTTP_MCP_SESSION_ID="$SID2")" 200
is "… presented at A by alice of issuer 1: 404" "$(run "$T/a.conf" POST "$alice1" "$PING" HTTP_MCP_SESSION_ID="$SID2")" 404

# --- list cursors --------------------------------------------------------------------------
is "gateway A: tools/list, a page of one" "$(run "$T/a.conf" POST "$alice1" "$LIST")" 200
CUR=$(jq -r '.result.nextCursor // empty' "$T/b")
check "… with a nextCursor" test -n "$CUR"
run "$T/a.conf" POST "$alice1" "$(list_from "$CUR")" > /dev/null
is "… the cursor at A: the next page" "$(jq -r '.result.tools | length' "$T/b")" 1
run "$T/b.conf" POST "$alice2" "$(list_from "$CUR")" > /dev/null
is "A's cursor at gateway B, alice of issuer 2: -32602" "$(jq -r '.error.code' "$T/b")" -32602

# --- rate limits ---------------------------------------------------------------------------
# The gateway and ip buckets (taken before the token is looked at: a request without one
# is 401, or 429 when limited) and a tenant's bucket, with the same limits at A and B.
lim() {	# lim NAME RESOURCE ISSUER LIMIT-LINE: a configuration of that limit alone
	conf "$T/$1.conf" "$2" "$3" '[limits]' "$4"
}
for class in gateway ip; do
	lim "$class-a" "$URL_A" "$IDP1" "$class = 2/3600"
	lim "$class-b" "$URL_B" "$IDP2" "$class = 2/3600"
	is "[limits] $class = 2/3600 at A: two requests pass (401: no token), the third is limited" \
		"$(run "$T/$class-a.conf" POST "" "$PING") $(run "$T/$class-a.conf" POST "" "$PING") $(run "$T/$class-a.conf" POST "" "$PING")" \
		"401 401 429"
	is "… gateway B's own $class bucket: its first request passes (401)" "$(run "$T/$class-b.conf" POST "" "$PING")" 401
done
lim tenant-a "$URL_A" "$IDP1" 'tenant = 2/3600'
lim tenant-b "$URL_B" "$IDP2" 'tenant = 2/3600'
is "[limits] tenant = 2/3600 at A, tenant acme: two pings pass, the third is limited" \
	"$(run "$T/tenant-a.conf" POST "$alice1" "$PING") $(run "$T/tenant-a.conf" POST "$alice1" "$PING") $(run "$T/tenant-a.conf" POST "$alice1" "$PING")" \
	"200 200 429"
is "… tenant acme of issuer 2 at B: its own bucket (200)" "$(run "$T/tenant-b.conf" POST "$alice2" "$PING")" 200

is "no token in any log" "$(pieces_logged "$alice1" "$alice2")" 0
tap_done
