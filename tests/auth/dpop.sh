#!/usr/bin/env bash
# DPoP (RFC 9449) through real nginx (deploy/nginx recipe) + spawn-fcgi (2 processes x 2
# threads), with DPoP-bound tokens of oidc-provider and proofs of tests/lib/dpop.mjs: every
# row of tests/auth/dpop-rows.mjs (a valid proof, a replayed jti, a wrong htm and htu, a
# stale and a future iat, a proof for another token, a bound token sent as Bearer, a proof
# signed by another key than cnf.jkt, ...) with opaque tokens (cnf.jkt by introspection),
# then JWT access tokens (cnf.jkt in the token), then dpop = required; and a proof replayed
# at another host sharing the Redis store (refused) or not sharing it (the control).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq redis-server:redis-server redis-cli:redis-tools

. "$top/tests/lib/redis.sh"
start_redis || { echo "Bail out! redis-server: $(tail -3 "$T/redis.log")"; exit 1; }

port=$(free_port)
base=http://127.0.0.1:$port
start_idp "$base/mcp"
(umask 077 && head -c 32 /dev/urandom > "$T/session.key")
# conf STATE REDIS [AUTH-LINE...]: the configuration in $T/mcpgate.conf (state file STATE;
# REDIS "yes": the hosts' Redis store), with these [auth] lines besides.
conf() {
	local state=$1 redis=$2
	shift 2
	GW_STATE=$state gateway_conf "$T/conf.new" "$base/mcp" "session-key-file = $T/session.key"
	{
		echo '[auth]'
		printf '%s\n' "$@"
		[ "$redis" != yes ] || printf '[limits]\nstore = %s\nredis-timeout-ms = 2000\n' "$(store redis 0)"
	} >> "$T/conf.new"
}
reloads() { grep -c 'config: reloaded' "$T/gw.log"; }
reloaded() { [ "$(reloads)" -ge "$1" ]; }
reconf() {	# reconf AUTH-LINE...: the stack's configuration, reloaded by both processes
	local before
	before=$(reloads)
	conf "$T/state" yes "$@"
	mv "$T/conf.new" "$T/mcpgate.conf"
	wait_until 30 reloaded $((before + 2))
}
conf "$T/state" yes 'dpop-window = 60'
mv "$T/conf.new" "$T/mcpgate.conf"
start_mcpgate_fcgi "$T/mcpgate.sock" "$T/mcpgate.conf" 2 2 && start_nginx "$port" \
	&& pass "nginx + spawn-fcgi + mcpgate + oidc-provider + redis-server started" \
	|| { fail "stack started"; tap_done; exit 1; }
pids=$MG_FCGI_PIDS

# rows WHAT ARGS...: tests/auth/dpop-rows.mjs, its lines relayed as ours
rows() {
	local what=$1
	shift
	timeout -k 2 180 node "$here/dpop-rows.mjs" "$base/mcp" --issuer "$IDP" "$@" > "$T/rows.tap" 2> "$T/rows.err"
	local rc=$?
	sed -i "s/^\(ok\|not ok\) [0-9]* - /\1 0 - $what: /" "$T/rows.tap"
	tap_relay "$T/rows.tap"
	[ "$rc" -eq 0 ] && [ "$tap_relayed" -ge 30 ] && pass "$what: every row ran ($tap_relayed)" \
		|| fail "$what: every row ran" "exit $rc after $tap_relayed; $(tail -5 "$T/rows.err")"
}

rows "opaque tokens" --handoff "$T/handoff.json"
is "opaque DPoP-bound tokens were introspected" "$([ "$(idp_stats)" -gt 0 ] && echo yes)" yes

# A proof the stack accepted, replayed at host B (a CGI run with a state file of its own)
# sharing the Redis store: refused. At host C, sharing nothing: accepted (what Redis is for).
cgi() {	# cgi CONF → the status line of one tools/list with the handed-off token and proof
	local tok proof body='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
	tok=$(jq -r .token "$T/handoff.json")
	proof=$(jq -r .proof "$T/handoff.json")
	printf '%s' "$body" | REQUEST_METHOD=POST PATH_INFO=/mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#body} \
		HTTP_ACCEPT='application/json, text/event-stream' HTTP_AUTHORIZATION="DPoP $tok" HTTP_DPOP="$proof" \
		MCPGATE_CONFIG=$1 timeout 20 "$MCPGATE_BIN" 2>> "$T/gw.log" > "$T/cgi.out"
	head -1 "$T/cgi.out" | tr -d '\r'
}
conf "$T/state-b" yes 'dpop-window = 60'; mv "$T/conf.new" "$T/b.conf"
conf "$T/state-c" no 'dpop-window = 60'; mv "$T/conf.new" "$T/c.conf"
like "a proof accepted by this host, replayed at host B sharing its Redis: 401" "$(cgi "$T/b.conf")" '^Status: 401'
like "... invalid_dpop_proof, replayed" "$(grep -i '^WWW-Authenticate' "$T/cgi.out")" 'error="invalid_dpop_proof", error_description="DPoP proof replayed'
like "the same proof at host C, sharing no store (the control): 200" "$(cgi "$T/c.conf")" '^Status: 200'
is "Redis holds the proofs seen (mcpgate:dp:*)" "$([ "$(rcli --scan --pattern 'mcpgate:dp:*' | wc -l)" -gt 0 ] && echo yes)" yes

reconf 'verify = jwt' 'dpop-window = 60' && pass "reloaded with verify = jwt" || fail "reloaded with verify = jwt"
idp_format jwt
idp_reset
rows "JWT access tokens"
is "JWT access tokens: no introspection" "$(idp_stats)" 0

reconf 'verify = jwt' 'dpop-window = 60' 'dpop = required' && pass "reloaded with dpop = required" || fail "reloaded with dpop = required"
rows "dpop = required" --required

# Redis down: the host's own state still refuses a replay on this host.
kill "$REDIS_PID"
wait "$REDIS_PID" 2>/dev/null
rows "Redis down" --required

is "no piece of a token or a proof in the gateway's, nginx's or the IdP's logs" \
	"$(pieces_logged "$(jq -r .token "$T/handoff.json")" "$(jq -r .proof "$T/handoff.json")")" 0
is "the mcpgate processes survived" "$(gone $pids)" none
tap_done
