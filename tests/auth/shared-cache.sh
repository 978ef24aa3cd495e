#!/usr/bin/env bash
# [auth] shared-cache = yes with a real redis-server and oidc-provider: two hosts of one
# gateway (CGI runs of two configurations with their own state files, one resource, one
# session-key-file, one Redis). An entry a host put in Redis ends cache-ttl after the
# token was verified, whatever Redis says: made persistent (PERSIST) or given an hour
# (PEXPIRE), it is not taken past that end, so a token revoked meanwhile is introspected
# again and refused (401); and a host that took an entry from Redis keeps it no longer
# than the entry's own end (not cache-ttl from the moment it took it). cache-ttl is
# sized from a CGI run this machine measured; every wait is what that ttl requires.
# Prints TAP. Env: MCPGATE_BIN.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin curl:curl jq:jq redis-server:redis-server redis-cli:redis-tools \
	--node @modelcontextprotocol/sdk/package.json
. "$top/tests/lib/redis.sh"
start_redis || bail "redis-server ($LISTEN_MAIN)" "$(tail -n 5 "$T/redis.log")"
URL=http://127.0.0.1:8080/mcp
start_idp "$URL"
(umask 077 && head -c 32 /dev/urandom > "$T/session.key")

# host NAME TTL: host NAME's configuration, cache-ttl TTL.
host() {
	GW_STATE=$T/$1.state GW_LOG=$T/$1.log GW_CACHE_TTL=$2 gateway_conf "$T/$1.conf" "$URL" \
		"session-key-file = $T/session.key"
	printf '%s\n' '[auth]' 'shared-cache = yes' '[limits]' "store = $(store redis 0)" 'redis-timeout-ms = 2000' \
		>> "$T/$1.conf"
}
PING='{"jsonrpc":"2.0","id":1,"method":"ping"}'
run() {	# run HOST TOKEN: one CGI ping at host HOST; prints its status
	printf '%s' "$PING" | env -i PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 SERVER_PROTOCOL=HTTP/1.1 \
		REMOTE_ADDR=127.0.0.1 REQUEST_METHOD=POST SCRIPT_NAME=/mcp CONTENT_TYPE=application/json \
		CONTENT_LENGTH=${#PING} HTTP_ACCEPT=application/json HTTP_AUTHORIZATION="Bearer $2" \
		${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"} ${UBSAN_OPTIONS:+UBSAN_OPTIONS="$UBSAN_OPTIONS"} \
		MCPGATE_CONFIG="$T/$1.conf" timeout 60 "$MCPGATE_BIN" 2>> "$T/cgi.err" | sed -n 's/^Status: \([0-9]*\).*/\1/p'
}
tc_keys() { rcli --scan --pattern 'mcpgate:tc:*' | sort; }
# accept HOST TOKEN: a ping at HOST accepted (200); sets NEWKEY to the Redis entry it made
# and DONE to when the run ended (the entry ends cache-ttl after the token was verified,
# so by then at the latest).
accept() {
	tc_keys > "$T/tc.before"
	is "$3" "$(run "$1" "$2")" 200
	DONE=$(now_ms)
	tc_keys > "$T/tc.after"
	NEWKEY=$(comm -13 "$T/tc.before" "$T/tc.after")
}

# cache-ttl: three times what a CGI run that introspects takes here, 3 s at least.
host probe 3600
t0=$(now_ms)
probe=$(mint_cc machine-acme)
run probe "$probe" > /dev/null
TTL=$(lifetime_for $(( $(now_ms) - t0 )) 3)
host a "$TTL"
host b "$TTL"
out=$("$MCPGATE_BIN" -t -c "$T/a.conf" 2>&1) || bail "mcpgate -t accepts the configuration" "$out"
pass "two hosts of one gateway, one Redis, cache-ttl = $TTL s (a run took $(( $(now_ms) - t0 )) ms)"

K1=$(mint_cc machine-acme) K2=$(mint_cc machine-acme) K3=$(mint_cc machine-beta)
for k in "$K1" "$K2" "$K3"; do case $k in ''|null) bail "tokens" "$(tail -n 5 "$T/idp.log")" ;; esac; done

# K1: shared, then held at host B no longer than host A's entry ends.
idp_reset
accept a "$K1" "K1 at host A: 200"
K1KEY=$NEWKEY K1DONE=$DONE
like "… its claims kept in Redis, sealed, under a digest's name" "$K1KEY" '^mcpgate:tc:[0-9a-f]{32}$'
sleep_until_ms $((K1DONE + TTL * 400))	# part of the entry's life gone
is "K1 at host B, within its cache-ttl: 200" "$(run b "$K1")" 200
is "… without introspection (from Redis)" "$(idp_stats)" 1
revoke "$K1"

# K2: its entry made persistent in Redis; K3: its entry given an hour.
accept a "$K2" "K2 at host A: 200"
K2KEY=$NEWKEY K2DONE=$DONE
is "… PERSIST its entry" "$(rcli persist "$K2KEY")" 1
is "… which Redis now keeps for ever" "$(rcli pttl "$K2KEY")" -1
accept a "$K3" "K3 at host A: 200"
K3KEY=$NEWKEY K3DONE=$DONE
is "… PEXPIRE its entry to an hour" "$(rcli pexpire "$K3KEY" 3600000)" 1
revoke "$K2"
revoke "$K3"

sleep_until_ms $((K1DONE + TTL * 1000 + 200))
idp_reset
is "K1 revoked, at host B past A's entry's end (cache-ttl after A verified it): 401" "$(run b "$K1")" 401
is "… introspected again (B held it no longer than A's entry)" "$(idp_stats)" 1
sleep_until_ms $((K3DONE + TTL * 1000 + 200))
idp_reset
is "K2 revoked, its Redis entry persistent, at host B past cache-ttl: 401" "$(run b "$K2")" 401
is "… the entry in Redis still, not taken: introspected" "$(rcli exists "$K2KEY") $(idp_stats)" "1 1"
is "K3 revoked, its Redis entry given an hour, at host B past cache-ttl: 401" "$(run b "$K3")" 401
is "… introspected" "$(idp_stats)" 2
is "K2 at host A too (its own cache ended, Redis's entry not taken): 401" "$(run a "$K2")" 401

is "no token in any log" "$(pieces_logged "$K1" "$K2" "$K3" "$probe")" 0
tap_done
