#!/usr/bin/env bash
# Authorization-server faults through the main path: nginx (deploy/ recipe) → spawn-fcgi
# (2 processes) → mcpgate, tokens from oidc-provider (tests/idp), whose introspection
# endpoint is switched into each fault in turn. For every fault a fresh token gets
# 500 + Retry-After and a JSON error (never 401: the token may be good), promptly; a token
# the gateway has cached is still served; once the fault is cleared the same fresh token
# is accepted (a failure is not remembered as a rejection) and the processes still run.
#
#   refused   the authorization server is down (then started again on its port)
#   hang      it never answers                      slow      answers after timeout-ms
#   500       HTTP 500                              garbage   200 with a body that is not JSON
#   huge      200 with a 4 MiB JSON body            cut       half the announced body, then cut
#   reset     the connection closed without an answer
# and a slow answer within timeout-ms is simply accepted. (CGI runs: tests/auth/cgi.sh.)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq --node oidc-provider/package.json
AS_TIMEOUT=4000	# [auth] timeout-ms

PORT=$(free_port)
URL=http://127.0.0.1:$PORT/mcp
start_idp "$URL"
IDP_PORT=${IDP##*:}
IDP_PORT=${IDP_PORT%%/*}
gateway_conf "$T/gw.conf" "$URL"
sed -i "s/^timeout-ms = .*/timeout-ms = $AS_TIMEOUT/" "$T/gw.conf"
start_mcpgate_fcgi "$T/mcpgate.sock" "$T/gw.conf" 2 2 > "$T/start.out" 2>&1 && start_nginx "$PORT" >> "$T/start.out" 2>&1 \
	|| bail "nginx + spawn-fcgi + mcpgate" "$(tail -n 20 "$T/start.out")"
PIDS=$MG_FCGI_PIDS
LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
# post TOKEN: tools/list through nginx; headers $T/h, body $T/b; prints the status.
post() {
	curl -s --max-time 60 -o "$T/b" -D "$T/h" -w '%{http_code}' -X POST "$URL" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H "Authorization: Bearer $1" --data-binary "$LIST"
}
hdr() { grep -i "^$1:" "$T/h" | head -n 1 | sed 's/^[^:]*:[[:space:]]*//' | tr -d '\r'; }
set_fault() {	# set_fault MODE [DELAY_MS]
	curl -s --max-time 10 -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		-d "{\"introspection\":\"$1\",\"delay_ms\":${2:-2000}}" "$IDP/_fault"
}

cached=$(mint --client machine-acme --scope mcp:tools)
t0=$(now_ms)
is "a good token: 200 (and now cached)" "$(post "$cached")" 200
# "promptly": within timeout-ms, plus four times a normal request measured here, plus 5 s
limit=$(( AS_TIMEOUT + 5000 + 4 * ($(now_ms) - t0) ))

# fault_row NAME: the checks while the fault is on (a fresh token, minted before).
fault_row() {
	local name=$1 fresh=$2 st ms
	t0=$(now_ms)
	st=$(post "$fresh")
	ms=$(( $(now_ms) - t0 ))
	jcheck "AS $name: a fresh token → 500 + Retry-After and a JSON error, never 401 (${ms} ms)" \
		"$(jq -c --arg st "$st" --arg ra "$(hdr Retry-After)" --arg wa "$(hdr WWW-Authenticate)" \
			'{status: $st, retry_after: $ra, www_authenticate: $wa, error, request_id}' "$T/b" 2>/dev/null || echo "{\"status\": \"$st\"}")" \
		'.status == "500" and (.retry_after | test("^[0-9]+$")) and .www_authenticate == "" and (.error | type) == "string"'
	[ "$ms" -lt "$limit" ] && pass "AS $name: answered promptly (${ms} ms < $limit)" || fail "AS $name: answered promptly" "${ms} ms, limit $limit"
	is "AS $name: a cached token is still served" "$(post "$cached")" 200
}
# after_row NAME FRESH: the fault is cleared: the same token is accepted.
after_row() {
	is "AS $1, cleared: the same fresh token → 200" "$(post "$2")" 200
}

for mode in hang slow 500 garbage huge cut reset; do
	fresh=$(mint --client machine-beta --scope mcp:tools)
	if [ "$mode" = slow ]; then
		is "fault switched on: slow, $((AS_TIMEOUT + 3000)) ms" "$(set_fault slow $((AS_TIMEOUT + 3000)))" 200
	else
		is "fault switched on: $mode" "$(set_fault "$mode")" 200
	fi
	fault_row "$mode" "$fresh"
	set_fault none > /dev/null
	after_row "$mode" "$fresh"
done

# Slow, but within timeout-ms: accepted.
fresh=$(mint --client machine-beta --scope mcp:tools)
set_fault slow 300 > /dev/null
is "AS slow by 300 ms (timeout-ms $AS_TIMEOUT): a fresh token → 200" "$(post "$fresh")" 200
set_fault none > /dev/null

# Refused: the server stops; then it starts again on the same port. Its tokens lived in
# its memory: the one minted before is unknown to the new one (401 is then right).
fresh=$(mint --client machine-beta --scope mcp:tools)
stop_idp
fault_row refused "$fresh"
IDP_PORT=$IDP_PORT start_idp "$URL"
fresh2=$(mint --client machine-beta --scope mcp:tools)
is "AS refused, started again: a token of the new server → 200" "$(post "$fresh2")" 200
is "AS refused, started again: the cached token is still served" "$(post "$cached")" 200

gone=
for pid in $PIDS; do mg_alive "$pid" || gone="$gone $pid"; done
is "the mcpgate processes survived every fault" "${gone:-none}" none
like "the failures are logged with their reason" "$(cat "$T/gw.log")" 'authorization server failed'
tap_done
