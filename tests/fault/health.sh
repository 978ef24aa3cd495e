#!/usr/bin/env bash
# /mcp/health names the dependency that fails (docs/ARCHITECTURE.md §1, §9): two SDK
# fixture upstreams, oidc-provider and a redis-server ([limits] store = redis://, open on
# failure) behind mcpgate under spawn-fcgi (2 processes x 2 threads) and nginx, and CGI
# runs on the same state file. Each dependency is failed and brought back, and health
# is read at once through nginx and as a CGI run (another process):
#
#  - all up: ok, and each dependency (authorization-server metadata, introspection, each
#    upstream, the state file, Redis) up since an RFC 3339 time;
#  - a call whose answer is over its max-result, one whose request is over 8 MiB, one the upstream drops
#    (over its own 4 MiB) and one that outlives its upstream's timeout-ms: each fails
#    (-32603), and health stays ok (what one call does is that call's, not the
#    upstream's state: any caller could otherwise mark an upstream down);
#  - an upstream killed: the first failed call names it, at once (the catalog, kept for
#    an hour, was fetched while it was up): degraded, still 200, that upstream down since
#    the failure with what happened (never where: no address or port), the other up;
#    started again at the same address: back to up (a later since) after a call succeeds;
#  - the introspection failing (the IdP's injected 500): degraded, introspection down;
#    answering again: up;
#  - Redis stopped: degraded, redis down, requests still served (redis-fail = open);
#    started again: up;
#  - an issuer whose metadata cannot be fetched: authorization_server_metadata down;
#  - a gateway that cannot serve (no usable configuration): 500 HttpError.
# Health itself asks no dependency: each answer comes from what requests observed.
# Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq redis-server:redis-server \
	--node @modelcontextprotocol/sdk/package.json

# --- the dependencies ----------------------------------------------------------------------
# fixture_up NAME PORT: the fixture NAME on 127.0.0.1:PORT, ready; sets FIXTURE_URL[NAME].
fixture_up() { start_fixture "$1" --port "$2" --name "$1" --bulk --quiet && wait_fixture "$1"; }
. "$top/tests/lib/redis.sh"
PORT_B=$(free_port)
fixture_up a 0 || bail "fixture a started" "$(tail -n 5 "$T/a.log")"
fixture_up b "$PORT_B" || bail "fixture b started on port $PORT_B" "$(tail -n 5 "$T/b.log")"
start_redis || bail "redis-server on 127.0.0.1:$RPORT" "$(tail -n 5 "$T/redis.log")"
NGX_PORT=$(free_port)
NGX_URL=http://127.0.0.1:$NGX_PORT/mcp
start_idp "$NGX_URL"

(umask 077 && head -c 32 /dev/urandom > "$T/session.key")
gateway_conf "$T/gw.conf" "$NGX_URL" 'catalog-ttl = 3600' "session-key-file = $T/session.key" 'max-body = 12582912'
cat >> "$T/gw.conf" <<CONF
[limits]
token = 1000/60
store = redis://127.0.0.1:$RPORT/0
redis-fail = open
redis-timeout-ms = 200
[upstream "a"]
url = ${FIXTURE_URL[a]}
prefix = a_
[upstream "b"]
url = ${FIXTURE_URL[b]}
prefix = b_
timeout-ms = 5000
CONF
start_gateway "$NGX_PORT" "nginx + spawn-fcgi (2 processes x 2 threads) + mcpgate, upstreams a and b, Redis, the IdP"
TOKEN=$(mint --client machine-acme --scope mcp:tools --resource "$NGX_URL")
T2=$(mint --client machine-acme --scope mcp:tools --resource "$NGX_URL")
[ -n "$TOKEN" ] && [ "$TOKEN" != null ] || bail "a token for $NGX_URL" "$(tail -n 5 "$T/idp.log")"

# --- requests ------------------------------------------------------------------------------
call() { jq -nc --arg n "$1" '{jsonrpc: "2.0", id: 1, method: "tools/call", params: {name: $n, arguments: {x: 1}}}'; }
LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
ngx() {	# ngx BODY [TOKEN]: POST through nginx; prints the status, the body in $T/b
	curl -sS --max-time 30 -o "$T/b" -w '%{http_code}' -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H "Authorization: Bearer ${2:-$TOKEN}" \
		--data-binary "$1" "$NGX_URL" 2>> "$T/curl.err"
}
# health_ngx / health_cgi [CONF]: the health document, with its HTTP status as .http.
health_ngx() {
	local st
	st=$(curl -sS --max-time 10 -o "$T/h.b" -w '%{http_code}' "http://127.0.0.1:$NGX_PORT/mcp/health" 2>> "$T/curl.err")
	jq -c --arg st "$st" '. + {http: ($st | tonumber)}' "$T/h.b" 2>/dev/null || echo "{\"http\": $st}"
}
health_cgi() {
	local st
	env -i PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 SERVER_PROTOCOL=HTTP/1.1 REMOTE_ADDR=127.0.0.1 \
		REQUEST_METHOD=GET SCRIPT_NAME=/mcp/health MCPGATE_CONFIG="${1:-$T/gw.conf}" "$MCPGATE_BIN" > "$T/hc.out" 2>> "$T/cgi.err"
	sed '1,/^\r$/d' "$T/hc.out" > "$T/hc.b"
	st=$(sed -n 's/^Status: \([0-9]*\).*/\1/p' "$T/hc.out" | head -n 1)
	jq -c --arg st "${st:-200}" '. + {http: ($st | tonumber)}' "$T/hc.b" 2>/dev/null || echo "{\"http\": ${st:-0}}"
}
# dep JSON DEPENDENCY [NAME]: that dependency's entry.
dep() { jq -c --arg d "$2" --arg n "${3:-}" '.dependencies[] | select(.dependency == $d and (.name // "") == $n)' <<<"$1"; }
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }	# iso EPOCH-SECONDS: RFC 3339, as health writes it

# --- all up ----------------------------------------------------------------------------------
st=$(ngx "$LIST")
jcheck "tools/list through nginx: the tools of a and b (the catalog, kept an hour)" "$(cat "$T/b")" \
	'.result.tools | map(.name) | (index("a_echo") != null and index("b_echo") != null)'
h=$(health_ngx)
jcheck "all up: 200 ok, no reasons, each dependency up since an RFC 3339 time" "$h" \
	'.http == 200 and .status == "ok" and (has("reasons") | not) and
	 ([.dependencies[] | "\(.dependency)/\(.name // "")"] | sort) == ["authorization_server_metadata/", "introspection/", "redis/", "state_file/", "upstream/a", "upstream/b"] and
	 all(.dependencies[]; .state == "up" and (.since | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")))'
jcheck "… a CGI run (another process) says the same of the shared dependencies" "$(health_cgi)" \
	'.status == "ok" and ([.dependencies[] | select(.dependency != "state_file") | .state] | unique) == ["up"]'

# --- one call's answer too large, or too late: the upstream is not down -------------------------
post_file() {	# post_file FILE: POST through nginx; prints the status, the body in $T/b
	curl -sS --max-time 60 -o "$T/b" -w '%{http_code}' -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H "Authorization: Bearer $TOKEN" \
		--data-binary @"$1" "$NGX_URL" 2>> "$T/curl.err"
}
st=$(ngx '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a_bulk","arguments":{"kib":9216}}}')
jcheck "a_bulk of 9 MiB: its answer is over a's max-result (4 MiB by default), -32603" "$(jq -c --arg st "$st" '. + {st: $st}' "$T/b")" \
	'.st == "200" and .error.code == -32603 and (.error.message | test("over its max-result of 4194304 bytes"))'
head -c $((9 * 1024 * 1024)) /dev/zero | tr '\0' a | jq -Rsc '{jsonrpc: "2.0", id: 1, method: "tools/call", params: {name: "a_echo", arguments: {blob: .}}}' > "$T/big.json"
st=$(post_file "$T/big.json")
jcheck "a_echo of 9 MiB (max-body 12 MiB): the request is over 8 MiB, -32603" "$(jq -c --arg st "$st" '. + {st: $st}' "$T/b")" \
	'.st == "200" and .error.code == -32603 and (.error.message | test("request is over 8 MiB"))'
head -c $((5 * 1024 * 1024)) /dev/zero | tr '\0' a | jq -Rsc '{jsonrpc: "2.0", id: 1, method: "tools/call", params: {name: "a_echo", arguments: {blob: .}}}' > "$T/big.json"
st=$(post_file "$T/big.json")
jcheck "a_echo of 5 MiB: the upstream takes at most 4 MiB and drops the connection, -32603" \
	"$(jq -c --arg st "$st" '. + {st: $st}' "$T/b")" '.st == "200" and .error.code == -32603'
st=$(ngx '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"b_slow","arguments":{"ms":15000}}}')
jcheck "b_slow of 15 s, b's timeout-ms 5000: -32603 timed out" "$(jq -c --arg st "$st" '. + {st: $st}' "$T/b")" \
	'.st == "200" and .error.code == -32603 and (.error.message | test("timed out"))'
h=$(health_ngx)
jcheck "… health: still ok, a and b up (one call's answer is not its upstream's state)" "$h" \
	'.http == 200 and .status == "ok" and ([.dependencies[] | select(.dependency == "upstream") | .state] | unique) == ["up"]'

# --- an upstream goes down: its first failed call names it -------------------------------------
b_since_up=$(dep "$h" upstream b | jq -r .since)
kill -9 "${FIXTURE_PID[b]}" 2>/dev/null
wait_until 30 bash -c "! kill -0 ${FIXTURE_PID[b]} 2>/dev/null" || fail "fixture b killed"
t_kill=$(date -u +%s)
st=$(ngx "$(call b_echo)")
jcheck "b killed: a call to b_echo answers -32603 at once" "$(jq -c --arg st "$st" '. + {st: $st}' "$T/b")" \
	'.st == "200" and .error.code == -32603'
h=$(health_ngx)
jcheck "… health at once: 200 degraded, b down (since the failure, with what happened, not where), a up" \
	"$(jq -c --arg t "$(iso "$t_kill")" '. + {t: $t}' <<<"$h")" \
	'.http == 200 and .status == "degraded" and
	 (.dependencies[] | select(.name == "b") | .state == "down" and .since >= .t and (.detail | length) > 0
	  and (.detail | test("127\\.0\\.0\\.1|:[0-9]{2,5}") | not)) and
	 (.dependencies[] | select(.name == "a") | .state == "up") and
	 (.reasons | any(test("^upstream b is down since ")))'
jcheck "… and a CGI run says so too (the state is the host's)" "$(health_cgi)" \
	'.status == "degraded" and (.dependencies[] | select(.name == "b") | .state == "down")'
st=$(ngx "$(call a_echo)")
jcheck "… a's tools are still served" "$(cat "$T/b")" '.result.content | length > 0'

# --- back: a call that succeeds ------------------------------------------------------------------
sleep 1	# so that the new since is later than the one of the failure
fixture_up b "$PORT_B" || bail "fixture b started again on port $PORT_B" "$(tail -n 5 "$T/b.log")"
t_back=$(date -u +%s)
ok_call=no
for _ in 1 2 3 4 5; do	# the first call may meet the connection the old b left
	st=$(ngx "$(call b_echo)")
	if jq -e '.result.content' "$T/b" > /dev/null 2>&1; then ok_call=yes; break; fi
done
is "b started again at the same address: b_echo answers" "$ok_call" yes
h=$(health_ngx)
jcheck "… health: ok again, b up since it came back" "$(jq -c --arg t "$(iso "$t_back")" --arg was "$b_since_up" '. + {t: $t, was: $was}' <<<"$h")" \
	'.status == "ok" and (.dependencies[] | select(.name == "b") | .state == "up" and .since >= .t and .since > .was)'

# --- the introspection fails, then answers -------------------------------------------------------
idp_fault 500
st=$(ngx "$LIST" "$T2")
is "the IdP's introspection answers 500: a new token's request is 500 (never 401)" "$st" 500
h=$(health_ngx)
jcheck "… health: degraded, introspection down, the metadata still up" "$h" \
	'.http == 200 and .status == "degraded" and
	 (.dependencies[] | select(.dependency == "introspection") | .state == "down") and
	 (.dependencies[] | select(.dependency == "authorization_server_metadata") | .state == "up") and
	 (.reasons | any(test("^introspection is down")))'
idp_fault none
st=$(ngx "$LIST" "$T2")
is "… answering again: the same token is accepted" "$st" 200
jcheck "… health: ok, introspection up" "$(health_ngx)" \
	'.status == "ok" and (.dependencies[] | select(.dependency == "introspection") | .state == "up")'

# --- Redis stops, then starts again ------------------------------------------------------------
kill "$REDIS_PID" 2>/dev/null
wait_until 30 bash -c "! redis-cli -p $RPORT ping > /dev/null 2>&1" || fail "redis stopped"
st=$(ngx "$LIST")
is "Redis stopped: requests are still served (redis-fail = open)" "$st" 200
jcheck "… health: degraded, redis down" "$(health_ngx)" \
	'.status == "degraded" and (.dependencies[] | select(.dependency == "redis") | .state == "down") and
	 (.reasons | any(test("^redis is down")))'
start_redis || bail "redis-server again" "$(tail -n 5 "$T/redis.log")"
# Each process tries Redis again a second after its failure: requests until one answers.
back() { ngx "$LIST" > /dev/null; [ "$(health_ngx | jq -r '.dependencies[] | select(.dependency == "redis") | .state')" = up ]; }
if wait_until 30 back; then pass "Redis started again: redis up once a request reaches it"; else fail "Redis started again: redis up" "$(health_ngx)"; fi
jcheck "… health: ok" "$(health_ngx)" '.status == "ok"'

# --- an issuer whose metadata cannot be fetched ------------------------------------------------------
DEAD=$(free_port)
sed "s|^issuer = .*|issuer = http://127.0.0.1:$DEAD|; s|^state = .*|state = $T/dead-state|; /^\\[limits\\]/,/^redis-timeout-ms/d" \
	"$T/gw.conf" > "$T/dead.conf"
env -i PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 SERVER_PROTOCOL=HTTP/1.1 REMOTE_ADDR=127.0.0.1 REQUEST_METHOD=GET \
	SCRIPT_NAME=/.well-known/oauth-authorization-server MCPGATE_CONFIG="$T/dead.conf" "$MCPGATE_BIN" > "$T/meta.out" 2>> "$T/cgi.err"
like "an issuer that does not answer: its metadata document is 500" "$(head -n 1 "$T/meta.out")" '^Status: 500'
jcheck "… health: degraded, authorization_server_metadata down" "$(health_cgi "$T/dead.conf")" \
	'.http == 200 and .status == "degraded" and
	 (.dependencies[] | select(.dependency == "authorization_server_metadata") | .state == "down" and (.since | length) > 0)'

# --- a gateway that cannot serve: 500 ----------------------------------------------------------------
printf '[gateway]\nresource = nonsense\n' > "$T/broken.conf"
jcheck "no usable configuration: health is 500 with an HttpError" "$(health_cgi "$T/broken.conf")" \
	'.http == 500 and (.error | length) > 0 and (.request_id | length) > 0'

tap_done
