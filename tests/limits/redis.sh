#!/usr/bin/env bash
# Two hosts, one gateway: two nginx + spawn-fcgi (2 x 2) + mcpgate stacks with their own
# state files, one resource, one session-key-file and one redis-server ([limits] store =
# redis://…), real oidc-provider tokens. Their combined admissions equal one limit (also
# 40 requests at once, half at each host); a session begun on host A and ended on host B
# is 404 on A; a request with a cached token costs one Redis round trip, in a session too;
# with [auth] shared-cache a token introspected on A is accepted on B without introspection,
# and an entry altered or copied under another token's name is not taken. Redis hung
# (SIGSTOP) and stopped: host A (redis-fail = closed) answers 503 with Retry-After within
# its timeout, host B (redis-fail = open) keeps serving, nothing hangs, the outage is
# logged once per process; Redis back (SIGCONT, restarted): both serve again without a
# restart. Windows are an hour long, so a slow machine refills nothing meanwhile.
# REDIS_VIA=unix (tests/limits/redis-unix.sh): the same with every redis-server on a unix
# socket alone (no TCP port) and every store = unix://PATH?db=N.
# Prints TAP. Env: MCPGATE_BIN, REDIS_VIA (tcp, the default, or unix).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq redis-server:redis-server \
	redis-cli:redis-tools --node @modelcontextprotocol/sdk/package.json

# --- redis-server, on loopback or a unix socket, nothing kept on disk ------------------------
. "$top/tests/lib/redis.sh"
start_redis || bail "redis-server ($LISTEN_MAIN)" "$(tail -n 5 "$T/redis.log")"

PORT_A=$(free_port)
PORT_B=$(free_port)
URL_A=http://127.0.0.1:$PORT_A/mcp
URL_B=http://127.0.0.1:$PORT_B/mcp
start_idp "$URL_A"
(umask 077 && head -c 32 /dev/urandom > "$T/session.key")
# host NAME FAIL: its configuration (the resource is host A's URL: one gateway).
host_conf() {
	GW_STATE=$T/$1.state GW_LOG=$T/$1.log gateway_conf "$T/$1.conf" "$URL_A" "session-key-file = $T/session.key"
	sed -i 's/^\[auth\]$/[auth]\nshared-cache = yes/' "$T/$1.conf"
	cat >> "$T/$1.conf" <<CONF
[limits]
gateway = 1000000/3600
token = 10/3600
store = $(store redis 3)
redis-timeout-ms = 1000
redis-fail = $2
CONF
}
host_conf a closed
host_conf b open
out=$("$MCPGATE_BIN" -t -c "$T/a.conf" 2>&1) || bail "mcpgate -t accepts the Redis store" "$out"
pass "mcpgate -t accepts store = $(store redis 3 | sed "s|$T|T|; s|:[0-9]*/3|:PORT/3|")"
like "… and names the shared store" "$out" "shared store: Redis at $WHERE, database 3 \\(rate limits and ended sessions, accepted tokens; redis-fail = closed\\)"
# start_host NAME PORT: spawn-fcgi -F 2 -w 2 and nginx, in a directory of its own.
start_host() {
	local dir=$T/host-$1
	mkdir -p "$dir/tmp" "$dir/empty"
	MG_DIR=$dir MG_LOG=$dir/mcpgate.log start_mcpgate_fcgi "$dir/mcpgate.sock" "$T/$1.conf" 2 2 > "$dir/start.out" 2>&1 &&
		MG_DIR=$dir MG_SOCK=$dir/mcpgate.sock start_nginx "$2" >> "$dir/start.out" 2>&1
}
# (in this shell: MG_PIDS collects every host's processes; MG_DIR stays $T)
start_host a "$PORT_A" || bail "host A: nginx + spawn-fcgi + mcpgate" "$(tail -n 20 "$T/host-a/start.out")"
start_host b "$PORT_B" || bail "host B: nginx + spawn-fcgi + mcpgate" "$(tail -n 20 "$T/host-b/start.out")"
pass "two hosts: nginx + spawn-fcgi (2 x 2) + mcpgate each, separate state files, one Redis"

# post URL TOKEN BODY [HEADER...]: headers in $T/h, body in $T/b; prints the status.
post() {
	local url=$1 tok=$2 body=$3
	shift 3
	curl -sS --max-time 30 -o "$T/b" -D "$T/h" -w '%{http_code}' -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H "Authorization: Bearer $tok" "$@" \
		--data-binary "$body" "$url" 2>> "$T/curl.err"
}
hdr() { grep -i "^$1: " "$T/h" | head -n 1 | sed 's/^[^:]*: //' | tr -d '\r'; }
PING='{"jsonrpc":"2.0","id":1,"method":"ping"}'
# watch … trips: the round trips the gateways make to Redis in between, seen by MONITOR
# (a script's own commands are marked "lua" there and are not round trips; an ECHO of a
# fresh word, sent last, shows the output is complete), as "COMMAND COMMAND …". A worker
# that had not spoken to Redis yet opens its connection first: SELECT and SCRIPT LOAD in
# one write (pipelined, so adjacent in MONITOR), one round trip a connection, not a
# request's; those openings are left out and counted in $T/opened.
watch() {
	rcli monitor > "$T/mon" 2>&1 &
	MON=$!
	wait_until 10 grep -aq '^OK' "$T/mon"
}
trips() {
	local mark=mark-$RANDOM$RANDOM all
	rcli echo "$mark" > /dev/null
	wait_until 10 grep -aq "$mark" "$T/mon"
	kill "$MON" 2>/dev/null
	wait "$MON" 2>/dev/null
	all=$(grep -av -e ' lua\]' -e "$mark" -e '^OK' "$T/mon" | sed -n 's/^[0-9.]* \[[^]]*\] "\([A-Za-z]*\)".*/\1/p' | tr '\n' ' ')
	grep -o 'SELECT SCRIPT ' <<< "$all" | wc -l > "$T/opened"
	echo "${all//SELECT SCRIPT /}"
}
# back URL: ten requests without a token in a row are decided (the gateway limit, in
# Redis) and answered 401, not 503: every worker of the host has Redis back.
back() {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ "$(curl -sS --max-time 30 -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
			--data-binary "$PING" "$1" 2>> "$T/curl.err")" = 401 ] || return 1
	done
}

# A token per phase: each may take at most 10 requests (token = 10/3600).
declare -a K
for i in 1 2 3 4 5 6 7 8; do
	K[i]=$(mint --client machine-acme --scope mcp:tools)
	case ${K[i]} in ''|null) bail "tokens" "$(tail -n 5 "$T/idp.log")" ;; esac
done
K1=${K[1]} K2=${K[2]} K3=${K[3]} K4=${K[4]} K5=${K[5]} K6=${K[6]} K7=${K[7]} K8=${K[8]}

# --- one bucket for both hosts -----------------------------------------------------------------
out=
for i in 1 2 3 4 5 6; do out="$out$(post "$URL_A" "$K1" "$PING")$(post "$URL_B" "$K1" "$PING") "; done
is "token = 10/3600, pings alternating between hosts A and B: 10 pass, then both refuse" "$out" \
	"200200 200200 200200 200200 200200 429429 "
is "… host B's 429 names the class and window" "$(jq -r .error_description "$T/b")" "token limit 10 per 3600 s exceeded"
ra=$(hdr Retry-After)
check "… with Retry-After in whole seconds (one interval: 360 s or less), got $ra" test "${ra:-0}" -ge 1 -a "${ra:-0}" -le 360
is "… the bucket is a keyed digest in Redis (no token in any key)" "$(rcli -n 3 --scan --pattern 'mcpgate:rl:*' | grep -cvE '^mcpgate:rl:[0-9a-f]{32}$')" 0

# 40 requests at once, 20 at each host, of a fresh token: exactly 10 pass.
post "$URL_A" "$K2" '{"jsonrpc":"2.0","id":0,"method":"tools/list"}' > /dev/null	# cached on A
post "$URL_B" "$K2" '{"jsonrpc":"2.0","id":0,"method":"tools/list"}' > /dev/null	# and on B
for i in $(seq 1 38); do [ $((i % 2)) = 0 ] && echo "$URL_A" || echo "$URL_B"; done |
	xargs -P 38 -I{} curl -sS --max-time 60 -o /dev/null -w '%{http_code}\n' -H 'Content-Type: application/json' \
		-H 'Accept: application/json' -H "Authorization: Bearer $K2" --data-binary "$PING" {} > "$T/par" 2>> "$T/curl.err"
is "40 requests of one token at once, half at each host (2 before, 38 together): exactly 10 pass" \
	"$(sort "$T/par" | uniq -c | awk '{printf "%s:%s ", $2, $1}')" "200:8 429:30 "

# --- one Redis round trip per request -------------------------------------------------------------
post "$URL_A" "$K3" "$PING" > /dev/null	# K3 cached on A, A's connections open
post "$URL_A" "$K3" "$PING" > /dev/null
post "$URL_A" "$K3" "$PING" > /dev/null
watch
for i in 1 2 3 4 5; do post "$URL_A" "$K3" "$PING" > /dev/null; done
is "5 pings with a cached token, no session: one round trip each (the limit script)" "$(trips)" \
	"EVALSHA EVALSHA EVALSHA EVALSHA EVALSHA "
opened=$(cat "$T/opened")
check "… besides the first of a worker that had none yet (host A has 4): $opened opened" test "$opened" -le 4

# --- a session ended on one host is ended on every host -----------------------------------------
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
is "initialize on host A" "$(post "$URL_A" "$K4" "$INIT")" 200
SID=$(hdr Mcp-Session-Id)
check "… gives a session" test -n "$SID"
post "$URL_B" "$K4" "$PING" > /dev/null	# the token cached on B
watch
is "… the session works on host B (one session-key-file)" "$(post "$URL_B" "$K4" "$PING" -H "Mcp-Session-Id: $SID")" 200
is "… a request in a session: one round trip too (the limit script looks for the tombstone)" "$(trips)" "EVALSHA "
opened=$(cat "$T/opened")
check "… besides opening the connection, when that worker had none yet: $opened opened" test "$opened" -le 1
st=$(curl -sS --max-time 30 -o /dev/null -w '%{http_code}' -X DELETE -H "Authorization: Bearer $K4" -H "Mcp-Session-Id: $SID" "$URL_B")
is "DELETE on host B: 204" "$st" 204
is "… then host A answers 404 for it" "$(post "$URL_A" "$K4" "$PING" -H "Mcp-Session-Id: $SID")" 404
is "… and so does host B" "$(post "$URL_B" "$K4" "$PING" -H "Mcp-Session-Id: $SID")" 404
is "… its tombstone is in Redis, named by a digest" "$(rcli -n 3 --scan --pattern 'mcpgate:ts:*' | grep -cE '^mcpgate:ts:[0-9a-f]{32}$')" 1
is "initialize again on host B" "$(post "$URL_B" "$K4" "$INIT")" 200
SID2=$(hdr Mcp-Session-Id)

# --- [auth] shared-cache: a token accepted on one host is accepted on all -------------------------
tc_keys() { rcli -n 3 --scan --pattern 'mcpgate:tc:*' | sort; }
tc_keys > "$T/tc.before"
i0=$(idp_stats introspections)
is "shared-cache: a fresh token on host A" "$(post "$URL_A" "$K6" "$PING")" 200
i1=$(idp_stats introspections)
is "… is introspected once" "$((i1 - i0))" 1
is "… then on host B: 200" "$(post "$URL_B" "$K6" "$PING")" 200
is "… without introspection (its claims came from Redis)" "$(idp_stats introspections)" "$i1"
tc_keys > "$T/tc.after"
TC6=$(comm -13 "$T/tc.before" "$T/tc.after")
like "… under a digest's name" "$TC6" '^mcpgate:tc:[0-9a-f]{32}$'
v=$(rcli -n 3 get "$TC6")
sealed() { [ -n "$1" ] && ! grep -qe machine-acme -e acme -e "$2" <<<"$1"; }
check "… sealed: neither the client, the tenant nor the token readable in it" sealed "$v" "$K6"
is "another token on host A" "$(post "$URL_A" "$K7" "$PING")" 200
tc_keys > "$T/tc.after2"
TC7=$(comm -13 "$T/tc.after" "$T/tc.after2")
rcli -n 3 set "$TC7" "$v" KEEPTTL > /dev/null	# K6's sealed claims under K7's name
i2=$(idp_stats introspections)
is "… its entry replaced by another token's: host B does not take it (200)" "$(post "$URL_B" "$K7" "$PING")" 200
is "… but introspects" "$(( $(idp_stats introspections) - i2 ))" 1
is "a third token on host A" "$(post "$URL_A" "$K8" "$PING")" 200
tc_keys > "$T/tc.after3"
TC8=$(comm -13 "$T/tc.after2" "$T/tc.after3")
v8=$(rcli -n 3 get "$TC8")
c=${v8:20:1}; [ "$c" = A ] && c=B || c=A	# one character changed, never to itself
rcli -n 3 set "$TC8" "${v8:0:20}$c${v8:21}" KEEPTTL > /dev/null
i3=$(idp_stats introspections)
is "… its entry altered: host B answers 200" "$(post "$URL_B" "$K8" "$PING")" 200
is "… after introspecting" "$(( $(idp_stats introspections) - i3 ))" 1

# --- Redis hung: SIGSTOP ----------------------------------------------------------------------------
kill -STOP "$REDIS_PID"
t0=$(now_ms)
st=$(post "$URL_A" "$K5" "$PING")
t1=$(now_ms)
is "Redis hung (SIGSTOP): host A (redis-fail = closed) answers 503" "$st" 503
is "… Retry-After: 1" "$(hdr Retry-After)" 1
like "… saying why" "$(jq -r .error_description "$T/b")" 'Redis'
check "… without hanging (took $((t1 - t0)) ms; the timeout is 1000 ms a step)" test $((t1 - t0)) -lt 10000
is "… host B (redis-fail = open) keeps serving" "$(post "$URL_B" "$K5" "$PING")" 200
is "… its session too (the host's own tombstones decide meanwhile)" "$(post "$URL_B" "$K4" "$PING" -H "Mcp-Session-Id: $SID2")" 200
# Every worker of A meets the outage: at most one line per process.
for i in 1 2 3 4 5 6; do post "$URL_A" "$K5" "$PING" > /dev/null; done
n=$(grep -cF "redis at $WHERE cannot be used" "$T/host-a/mcpgate.log" "$T/a.log" 2>/dev/null | awk -F: '{s += $NF} END {print s + 0}')
check "… the outage is logged once per process of host A (2 processes: $n lines)" test "$n" -ge 1 -a "$n" -le 2
kill -CONT "$REDIS_PID"
wait_until 60 back "$URL_A"
is "Redis resumed (SIGCONT): host A serves again, no restart" "$(post "$URL_A" "$K5" "$PING")" 200

# --- Redis stopped, then started again ----------------------------------------------------------------
kill -TERM "$REDIS_PID"
wait_until 30 eval "! mg_alive $REDIS_PID"
wait "$REDIS_PID" 2>/dev/null
t0=$(now_ms)
st=$(post "$URL_A" "$K5" "$PING")
t1=$(now_ms)
is "Redis stopped: host A answers 503" "$st" 503
check "… at once (took $((t1 - t0)) ms)" test $((t1 - t0)) -lt 10000
is "… host B serves" "$(post "$URL_B" "$K5" "$PING")" 200
start_redis || bail "redis-server again" "$(tail -n 5 "$T/redis.log")"
wait_until 60 back "$URL_A"
is "Redis started again: host A serves, no restart" "$(post "$URL_A" "$K5" "$PING")" 200
like "… the recovery is logged" "$(cat "$T/host-a/mcpgate.log" "$T/a.log" 2>/dev/null | grep -c 'redis answers again')" '^[1-9]'
# Host B (redis-fail = open) answers 200 in an outage too, so a 200 does not say it has
# Redis back: each of its processes that logged an outage logs its recovery once, when a
# worker of it reaches Redis again (after the worker's one-second pause). Every outage line
# matched by a recovery line: every process of B counts in Redis again.
b_back() {
	post "$URL_B" "$K5" "$PING" > /dev/null
	local log o r
	log=$(cat "$T/host-b/mcpgate.log" "$T/b.log" 2>/dev/null)
	o=$(grep -cF "redis at $WHERE cannot be used" <<<"$log")
	r=$(grep -c 'redis answers again' <<<"$log")
	[ "$o" -eq "$r" ]
}
wait_until 60 b_back
is "… and the limits hold again across hosts (the new Redis starts empty: 10 of 12 pass)" \
	"$(for i in 1 2 3 4 5 6; do printf '%s%s ' "$(post "$URL_A" "$K3" "$PING")" "$(post "$URL_B" "$K3" "$PING")"; done)" \
	"200200 200200 200200 200200 200200 429429 "

# --- CGI runs share the buckets too --------------------------------------------------------------
GW_STATE=$T/cgi.state GW_LOG=$T/cgi.log gateway_conf "$T/cgi.conf" "$URL_A" "session-key-file = $T/session.key"
printf '[limits]\ngateway = 10/3600\nstore = %s\nredis-timeout-ms = 5000\n' "$(store redis 4)" >> "$T/cgi.conf"
cgi_pids=()
for i in $(seq 1 40); do
	(
		printf '%s' "$PING" |
		env -i PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 SERVER_PROTOCOL=HTTP/1.1 REMOTE_ADDR=127.0.0.1 \
			REQUEST_METHOD=POST SCRIPT_NAME=/mcp CONTENT_TYPE=application/json HTTP_ACCEPT=application/json \
			CONTENT_LENGTH=${#PING} MCPGATE_CONFIG="$T/cgi.conf" "$MCPGATE_BIN" 2>/dev/null |
		sed -n 's/^Status: \([0-9]*\).*/\1/p' > "$T/cgi-status.$i"
	) &
	cgi_pids+=($!)
done
wait "${cgi_pids[@]}"	# (not the servers this shell started)
is "gateway = 10/3600 in Redis, 40 concurrent CGI runs: 10 pass (401: no token), 30 are limited" \
	"$(cat "$T"/cgi-status.* 2>/dev/null | grep -E '^[0-9]+$' | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}')" "401:10 429:30 "

# --- AUTH: a password, an ACL user ----------------------------------------------------------------
[ "$VIA" = unix ] || RPORTS[auth]=$(free_port)
# shellcheck disable=SC2046 # listen: options
redis-server $(listen auth) --save '' --appendonly no --dir "$T" --requirepass 'adm!n' \
	--daemonize no > "$T/redis-auth.log" 2>&1 &
mg_track $!
# shellcheck disable=SC2046 # at: options
acli() { redis-cli $(at auth) -a 'adm!n' --no-auth-warning "$@"; }
wait_until 30 acli ping > /dev/null 2>&1 || bail "redis-server with requirepass" "$(tail -n 5 "$T/redis-auth.log")"
acli acl setuser app on '>p@ss w/rd' '~mcpgate:*' '+@all' > /dev/null
cgi_ping() {	# cgi_ping STORE: the status of one CGI ping whose gateway limit is in STORE
	sed -i "s|^store = .*|store = $1|" "$T/cgi.conf"
	printf '%s' "$PING" | env -i PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 SERVER_PROTOCOL=HTTP/1.1 \
		REMOTE_ADDR=127.0.0.1 REQUEST_METHOD=POST SCRIPT_NAME=/mcp CONTENT_TYPE=application/json \
		HTTP_ACCEPT=application/json CONTENT_LENGTH=${#PING} MCPGATE_CONFIG="$T/cgi.conf" "$MCPGATE_BIN" 2>/dev/null |
		sed -n 's/^Status: \([0-9]*\).*/\1/p'
}
is "AUTH with the password ($VIA://:PASSWORD@…): the limit decided (401: no token)" \
	"$(cgi_ping "$(store auth 0 :adm%21n@)")" 401
is "AUTH as an ACL user, its password percent-encoded ($VIA://app:p%40ss%20w%2Frd@…)" \
	"$(cgi_ping "$(store auth 1 app:p%40ss%20w%2Frd@)")" 401
is "… its bucket in database 1" "$(acli -n 1 --scan --pattern 'mcpgate:rl:*' | grep -c .)" 1
is "a wrong password: 503 (limits fail closed)" "$(cgi_ping "$(store auth 0 :wrong@)")" 503
is "no password where one is required: 503" "$(cgi_ping "$(store auth 0)")" 503
check "… the reason logged, never the password" eval "grep -q 'WRONGPASS\|NOAUTH' '$T/cgi.log' && ! grep -qe 'adm!n' -e 'p@ss' -e 'adm%21n' '$T/cgi.log'"

leaked=0
for k in "${K[@]}"; do grep -qF -e "$k" "$T/a.log" "$T/b.log" "$T/host-a/mcpgate.log" "$T/host-b/mcpgate.log" 2>/dev/null && leaked=1; done
is "no token in any log" "$leaked" 0
tap_done
