#!/usr/bin/env bash
# tests/fed/exchange-hosts.sh — an upstream reached as the caller ([upstream] credentials
# = exchange) by two hosts of one gateway: CGI runs of two configurations with their own
# state files, one resource, one session-key-file, one real redis-server, [auth]
# shared-cache = yes. In front of the SDK fixture upstream with --require-bearer
# (tokens for its own resource only, verified by introspection at oidc-provider):
#
#  - a caller's token exchanged at host A is the one host B sends: one exchange for the
#    two hosts, kept in Redis under a digest's name, sealed (no token the upstream
#    accepted is in Redis in clear; the detector is shown to find one in a control file);
#  - an entry altered in Redis is not taken: host B exchanges its own, and the call
#    works;
#  - Redis down: each host exchanges for itself, and the calls work.
#
# Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin curl:curl jq:jq redis-server:redis-server redis-cli:redis-tools \
	--node @modelcontextprotocol/sdk/package.json
. "$top/tests/lib/redis.sh"
. "$top/tests/lib/bearer.sh"
start_redis || bail "redis-server ($LISTEN_MAIN)" "$(tail -n 5 "$T/redis.log")"
UP_PORT=$(free_port)
UP_URL=http://127.0.0.1:$UP_PORT/mcp
GW_PORT=8080	# the server the CGI runs are told they serve (nothing listens there)
URL=http://127.0.0.1:$GW_PORT/mcp
start_idp "$URL" "$UP_URL"
start_fixture up --port "$UP_PORT" --name up --require-bearer "$IDP" --resource "$UP_URL"
wait_fixture up || bail "the fixture upstream (--require-bearer) started" "$(tail -n 5 "$T/up.log")"
(umask 077 && head -c 32 /dev/urandom > "$T/session.key" && printf 'gateway-exchange-secret\n' > "$T/exchange-secret")

# host NAME: host NAME's configuration.
host() {
	GW_STATE=$T/$1.state GW_LOG=$T/$1.log gateway_conf "$T/$1.conf" "$URL" "session-key-file = $T/session.key"
	printf '%s\n' '[auth]' 'shared-cache = yes' '[limits]' "store = $(store redis 0)" 'redis-timeout-ms = 2000' \
		'[upstream "up"]' "url = $UP_URL" 'credentials = exchange' 'client-id = gateway-exchange' \
		"client-secret-file = $T/exchange-secret" >> "$T/$1.conf"
}
host a
host b
out=$("$MCPGATE_BIN" -t -c "$T/a.conf" 2>&1) || bail "mcpgate -t accepts the configuration" "$out"
pass "two hosts of one gateway, one Redis, [auth] shared-cache = yes, an upstream reached as the caller"

ALICE=$(mint --user alice --scope mcp:tools --resource "$URL")
BOB=$(mint --user bob --scope mcp:tools --resource "$URL")
CAROL=$(mint --user carol --scope mcp:tools --resource "$URL")
DAVE=$(mint --user dave --scope mcp:tools --resource "$URL")
for t in "$ALICE" "$BOB" "$CAROL" "$DAVE"; do case $t in ''|null) bail "tokens" "$(tail -n 5 "$T/idp.log")" ;; esac; done

# whoami HOST TOKEN: tools/call whoami as one CGI run at HOST (in place of bearer.sh's,
# through a front); the upstream's answer (JSON), or the JSON-RPC error.
whoami() { cgi_rpc "$T/$1.conf" "$2" tools/call '{"name":"whoami","arguments":{}}' | text_of; }
uc_keys() { rcli --scan --pattern 'mcpgate:uc:*' | sort; }

# --- one exchange for two hosts ---------------------------------------------------------
jcheck "alice at host A: the upstream sees alice" "$(whoami a "$ALICE")" '.sub == "alice" and .client_id == "gateway-exchange"'
is "… one exchange (the catalog's and the call's: one token)" "$(exchanges alice)" 1
keys=$(uc_keys)
like "… the token kept in Redis under a digest's name" "$keys" '^mcpgate:uc:[0-9a-f]{32}$'
like "… for no longer than the token lives (an hour at most)" "$(rcli pttl "$keys")" '^[0-9]{4,7}$'
jcheck "alice at host B (its own state file): alice" "$(whoami b "$ALICE")" '.sub == "alice"'
is "… with host A's token, from Redis: no new exchange" "$(exchanges alice)" 1

# --- sealed in Redis -------------------------------------------------------------------------
is "the detector finds a token the upstream accepted in a file that holds it" "$(detector_control "$DAVE")" 1
for k in $(uc_keys); do rcli --raw get "$k"; done > "$T/redis.values"
is "no token the upstream accepted is in Redis in clear" "$(in_clear "$T/redis.values" "$T/seen.json")" 0
is "… nor in either state file" "$(( $(in_clear "$T/a.state" "$T/seen.json") + $(in_clear "$T/b.state" "$T/seen.json") ))" 0

# --- an entry altered in Redis ------------------------------------------------------------------
before=$(uc_keys)
jcheck "bob at host A: bob" "$(whoami a "$BOB")" '.sub == "bob"'
key=$(comm -13 <(echo "$before") <(uc_keys))
like "… his entry in Redis" "$key" '^mcpgate:uc:[0-9a-f]{32}$'
v=$(rcli --raw get "$key")
c=A; [ "${v:40:1}" != A ] || c=B
rcli set "$key" "${v:0:40}$c${v:41}" > /dev/null	# one character of the sealed text changed
jcheck "bob at host B, his Redis entry altered: bob still (host B exchanged its own)" "$(whoami b "$BOB")" '.sub == "bob"'
is "… two exchanges for bob" "$(exchanges bob)" 2

# --- Redis down ------------------------------------------------------------------------------------
kill "$REDIS_PID" 2>/dev/null
redis_gone() { ! mg_alive "$REDIS_PID"; }
wait_until 10 redis_gone
jcheck "Redis down: carol at host A: carol" "$(whoami a "$CAROL")" '.sub == "carol"'
jcheck "… and at host B: carol" "$(whoami b "$CAROL")" '.sub == "carol"'
is "… each host exchanged for itself" "$(exchanges carol)" 2
is "no caller's token in any log" "$(pieces_logged "$ALICE" "$BOB" "$CAROL")" 0
tap_done
