#!/usr/bin/env bash
# tests/fed/upstream.sh — the gateway's MCP client (src/net/upstream*.c), driven by
# tests/fed/upstream_cli, against the real SDK fixture upstream (tests/upstream/fixture.mjs,
# event-stream and --json modes) and small loopback fault stubs (tests/fed/stub.py).
#
#   tests/fed/upstream.sh [BUILDDIR]
#
# BUILDDIR holds the built driver (make tests/fed/upstream_cli); default: the source
# tree. UPSTREAM_CLI=PATH names the driver directly. TAP on stdout; exit 1 on a failure.
# Builds nothing; needs node (with tests/node_modules), python3 and jq.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
. "$SRC/tests/lib/tap.sh"

# (under tests/run: the build of $MCPGATE_BIN)
default_dir=$SRC
[ -z "${MCPGATE_BIN:-}" ] || default_dir=$(cd "$(dirname "$MCPGATE_BIN")/.." && pwd)
CLI=${UPSTREAM_CLI:-${1:-$default_dir}/tests/fed/upstream_cli}
if [ ! -x "$CLI" ]; then
	echo "Bail out! no driver at $CLI (make tests/fed/upstream_cli)"
	exit 1
fi
for tool in node python3 jq; do
	command -v "$tool" >/dev/null || { echo "Bail out! $tool is needed"; exit 1; }
done

T=$(mktemp -d /tmp/mcpgate-fed-XXXXXX)
declare -A URL PID
cleanup() {
	local p
	for p in "${PID[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${PID[@]}"; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# wait_ready NAME FILE: until FILE holds the ready line, or the process died (60 s at most).
wait_ready() {
	local _
	for _ in $(seq 1 1200); do
		[ -s "$2" ] && break
		kill -0 "${PID[$1]}" 2>/dev/null || break
		sleep 0.05
	done
	URL[$1]=$(sed -n 's/^ready //p' "$2" 2>/dev/null)
	[ -n "${URL[$1]}" ]
}

# fixture NAME [ARGS...]: the SDK fixture upstream; its log is $T/NAME.log.
fixture() {
	local name=$1
	shift
	rm -f "$T/$name.ready"
	node "$SRC/tests/upstream/fixture.mjs" --ready-file "$T/$name.ready" "$@" >/dev/null 2>>"$T/$name.log" &
	PID[$name]=$!
	wait_ready "$name" "$T/$name.ready"
}

# stub NAME MODE: a fault stub.
stub() {
	rm -f "$T/$1.ready"
	python3 "$HERE/stub.py" --mode "$2" --ready-file "$T/$1.ready" 2>>"$T/$1.log" &
	PID[$1]=$!
	wait_ready "$1" "$T/$1.ready"
}

stop() {
	kill "${PID[$1]}" 2>/dev/null
	wait "${PID[$1]}" 2>/dev/null
	unset "PID[$1]"
}

# A port nobody listens on.
DOWN_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')

(umask 077 && printf 'X-Api-Key: fed-key-1\n' > "$T/key.header" &&
	printf 'Authorization: Bearer upstream-secret-1\r\n' > "$T/bearer.header")

# The configuration: the gateway section, then one [upstream] per name given as
# NAME=URL[,auth-header-file][,timeout-ms].
write_conf() {
	local spec name url rest hf to
	{
		printf '[gateway]\nresource = https://gw.example.com/mcp\nname = mcpgate-fed-test\nversion = 0.0.7\n'
		printf '[auth]\nissuer = https://idp.example.com\n'
		for spec in "$@"; do
			name=${spec%%=*}
			rest=${spec#*=}
			IFS=, read -r url hf to <<< "$rest"
			printf '[upstream "%s"]\nurl = %s\n' "$name" "$url"
			[ -n "$hf" ] && printf 'auth-header-file = %s\n' "$hf"
			[ -n "$to" ] && printf 'timeout-ms = %s\n' "$to"
		done
	} > "$T/gw.conf"
}

# run NAME METHOD [PARAMS] [-- CLI OPTIONS]: the driver's stdout in $T/out, stderr in
# $T/err, exit status in RC, duration in MS.
run() {
	local t0
	t0=$(now_ms)
	"$CLI" -c "$T/gw.conf" "$@" > "$T/out" 2> "$T/err"
	RC=$?
	MS=$(( $(now_ms) - t0 ))
	cat "$T/err" >> "$T/all.err"
}
response() { sed -n "${1:-1}p" <(grep -E '^[0-9]+ response ' "$T/out") | cut -d' ' -f3-; }
messages() { grep -E '^[0-9]+ message ' "$T/out"; }
reason() { sed -n 's/^upstream_cli: //p' "$T/err" | head -1; }

# ---------------------------------------------------------------------------------------
fixture sse --port 0 || { echo "Bail out! the fixture did not start: $(tail -3 "$T/sse.log")"; exit 1; }
fixture json --port 0 --json || { echo "Bail out! the --json fixture did not start"; exit 1; }
fixture auth --port 0 || { echo "Bail out! the third fixture did not start"; exit 1; }
fixture bearer --port 0 || { echo "Bail out! the fourth fixture did not start"; exit 1; }
fixture restart --port 0 || { echo "Bail out! the fifth fixture did not start"; exit 1; }
for m in 500 garbage big big-chunked hang sse-die sse-end; do
	stub "$m" "$m" || { echo "Bail out! stub $m did not start: $(tail -3 "$T/$m.log")"; exit 1; }
done
write_conf "sse=${URL[sse]}" "json=${URL[json]}" "auth=${URL[auth]},$T/key.header" \
	"bearer=${URL[bearer]},$T/bearer.header" "restart=${URL[restart]}" \
	"down=http://127.0.0.1:$DOWN_PORT/mcp,,2000" "nores=http://nonexistent.invalid/mcp?k=secret-q,,2000" "s500=${URL[500]}" "garbage=${URL[garbage]}" \
	"big=${URL[big]}" "bigchunked=${URL[big-chunked]}" "hang=${URL[hang]},,1500" "ssedie=${URL[sse-die]}" "sseend=${URL[sse-end]}"

# A run of the driver that succeeds (its start, an initialize, a ping), measured here: the
# room "promptly" leaves for a slow machine (an ASan build under load takes a second).
BASE=0
for _ in 1 2; do run auth ping; [ "$MS" -le "$BASE" ] || BASE=$MS; done

# --- initialize + tools/list, both answer framings ----------------------------------------
for mode in sse json; do
	run "$mode" tools/list
	is "$mode: tools/list exits 0" "$RC" 0
	is "$mode: the fixture's 19 tools" "$(response | jq '.result.tools | length')" 19
	is "$mode: test_simple_text among them" \
		"$(response | jq -r '[.result.tools[].name] | index("test_simple_text") != null')" true
	is "$mode: the answer carries the gateway's own id" "$(response | jq -r '.jsonrpc + " " + (.id | type)')" "2.0 number"
done
like "sse: the fixture opened one session" "$(grep -c 'session .* opened' "$T/sse.log")" '^1$'

# --- tools/call --------------------------------------------------------------------------
run sse tools/call '{"name":"test_simple_text","arguments":{}}'
is "tools/call test_simple_text: exit 0" "$RC" 0
is "tools/call test_simple_text: its text" "$(response | jq -r '.result.content[0].text')" \
	"This is a simple text response for testing."
run sse tools/call '{"name":"test_error_handling","arguments":{}}'
is "tools/call test_error_handling: an isError result is an answer" "$(response | jq -r '.result.isError')" true
run sse tools/call '{"name":"rpc_error","arguments":{"code":-32099,"message":"nope"}}'
is "tools/call rpc_error: the upstream's JSON-RPC error is an answer" "$(response | jq -r '.error.code')" -32099

# --- progress relayed before the result, as it comes --------------------------------------
for mode in sse json; do
	run "$mode" tools/call '{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":"p-1"}}'
	is "$mode: test_tool_with_progress exits 0" "$RC" 0
	n=$(messages | grep -c '"notifications/progress"')
	if [ "$mode" = sse ]; then
		is "sse: 3 progress notifications relayed" "$n" 3
		is "sse: 0, 50, 100 of 100, token p-1" \
			"$(messages | cut -d' ' -f3- | jq -r '"\(.params.progressToken):\(.params.progress)/\(.params.total)"' | paste -sd' ')" \
			"p-1:0/100 p-1:50/100 p-1:100/100"
		ts=$(messages | cut -d' ' -f1 | paste -sd' ')
		rt=$(grep -E '^[0-9]+ response ' "$T/out" | cut -d' ' -f1)
		read -r t1 t2 t3 <<< "$ts"
		ok_order=$([ "$t1" -le "$t2" ] && [ "$t2" -le "$t3" ] && [ "$t3" -le "$rt" ] && echo yes)
		is "sse: every progress before the result ($ts < $rt ms)" "$ok_order" yes
		ok_spread=$([ $((t3 - t1)) -ge 60 ] && echo yes)
		is "sse: relayed as they came, not at the end (first to last $((t3 - t1)) ms)" "$ok_spread" yes
	else
		is "json: no notifications (the SDK drops them in JSON mode)" "$n" 0
	fi
done

# --- the session and the connection are reused ---------------------------------------------
opened0=$(grep -c 'session .* opened' "$T/auth.log")
HTTP_AUTHORIZATION='Bearer caller-token-never-forwarded' \
	run auth tools/call '{"name":"request_headers","arguments":{}}' -n 2
is "two calls in one process: exit 0" "$RC" 0
h1=$(response 1 | jq -r '.result.content[0].text')
h2=$(response 2 | jq -r '.result.content[0].text')
s1=$(jq -r '."mcp-session-id"' <<< "$h1")
s2=$(jq -r '."mcp-session-id"' <<< "$h2")
like "the upstream's session id was sent" "$s1" '^[0-9a-f-]{36}$'
is "the same session for both calls" "$s2" "$s1"
is "one initialize for both calls" "$(( $(grep -c 'session .* opened' "$T/auth.log") - opened0 ))" 1
is "one connection for everything (initialize, initialized, 2 calls)" "$(sed -n 's/^connects //p' "$T/out")" 1
is "MCP-Protocol-Version: the negotiated one" "$(jq -r '."mcp-protocol-version"' <<< "$h1")" 2025-11-25
is "Accept: both framings" "$(jq -r '.accept' <<< "$h1")" "application/json, text/event-stream"
is "the auth-header-file line reached the upstream" "$(jq -r '."x-api-key"' <<< "$h1")" fed-key-1
is "no Authorization at all (none configured; the caller's is never sent)" "$(jq -r '.authorization' <<< "$h1")" null
is "no header beyond the gateway's own" \
	"$(jq -r 'keys - ["host","user-agent","content-type","accept","content-length","mcp-protocol-version","mcp-session-id","x-api-key"] | length' <<< "$h1")" 0
run bearer tools/call '{"name":"request_headers","arguments":{}}'
hb=$(response | jq -r '.result.content[0].text')
is "an Authorization from auth-header-file is the configured one" "$(jq -r '.authorization' <<< "$hb")" "Bearer upstream-secret-1"
if grep -rq 'upstream-secret-1\|fed-key-1' "$T/err"; then fail "no credential in the log"; else pass "no credential in the log"; fi

# --- the upstream restarts: one re-initialize on 404 ------------------------------------
port=${URL[restart]##*:}
port=${port%%/*}
rm -f "$T/go"
"$CLI" -c "$T/gw.conf" -n 2 -W "$T/go" restart tools/call '{"name":"request_headers","arguments":{}}' \
	> "$T/rs.out" 2> "$T/rs.err" &
PID[cli]=$!
for _ in $(seq 1 200); do
	grep -q ' response ' "$T/rs.out" 2>/dev/null && break
	sleep 0.05
done
stop restart
mv "$T/restart.log" "$T/restart-1.log"
fixture restart --port "$port" || fail "the fixture restarted on port $port" "$(tail -3 "$T/restart.log")"
touch "$T/go"
wait "${PID[cli]}"
is "after a restart: the second call succeeds" "$?" 0
unset "PID[cli]"
r1=$(grep ' response ' "$T/rs.out" | sed -n 1p | cut -d' ' -f3- | jq -r '.result.content[0].text | fromjson | ."mcp-session-id"')
r2=$(grep ' response ' "$T/rs.out" | sed -n 2p | cut -d' ' -f3- | jq -r '.result.content[0].text | fromjson | ."mcp-session-id"')
if [ -n "$r2" ] && [ "$r2" != null ] && [ "$r2" != "$r1" ]; then pass "after a restart: a new session"; else fail "after a restart: a new session" "$r1 / $r2"; fi
is "after a restart: the old session got 404" "$(grep -c 'POST tools/call → 404' "$T/restart.log")" 1
is "after a restart: exactly one re-initialize" "$(grep -c 'session .* opened' "$T/restart.log")" 1

# --- faults: exit 1 with the reason, promptly ---------------------------------------------
# fault NAME WANT-REGEX MAX-MS [MIN-MS]: MAX-MS plus twice a good run ($BASE ms)
fault() {
	local max=$(($3 + 2 * BASE))
	run "$1" tools/call '{"name":"x","arguments":{}}'
	is "$1: exit 1" "$RC" 1
	like "$1: the reason" "$(reason)" "$2"
	if [ "$MS" -le "$max" ] && [ "$MS" -ge "${4:-0}" ]; then pass "$1: in $MS ms"; else fail "$1: in $MS ms" "want ${4:-0}..$max ms"; fi
}
fault down "^upstream down: cannot connect \\(127\\.0\\.0\\.1:$DOWN_PORT: .*\\)$" 1500
# A host that does not resolve: named with its port, never the URL's query.
fault nores '^upstream nores: cannot connect \(nonexistent\.invalid:80: [^?]*\)$' 1500
fault s500 '^upstream s500: HTTP 500$' 2000
fault garbage '^upstream garbage: an answer that is not JSON$' 2000
fault big '^upstream big: an answer over its max-result of 4194304 bytes$' 3000
fault bigchunked '^upstream bigchunked: an answer over its max-result of 4194304 bytes$' 3000
fault hang '^upstream hang: timed out after 1500 ms$' 2500 1450
fault ssedie '^upstream ssedie: the event stream broke before the answer \(.*\)$' 2000
is "ssedie: the notification before the break was relayed" "$(messages | wc -l)" 1
fault sseend '^upstream sseend: the event stream ended before the answer$' 2000
like "a failure logs one warning line (reason, method, duration)" \
	"$(grep -c '"level":"warn".*upstream sseend: the event stream ended before the answer (tools/call, after [0-9]* ms)' "$T/err")" '^1$'

# Memory stays bounded while a 50 MB answer of unannounced size is refused: peak RSS of
# the driver against that stub, minus that of a small call.
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f '%M' -o "$T/rss.small" "$CLI" -c "$T/gw.conf" sse ping > /dev/null 2>&1
	/usr/bin/time -f '%M' -o "$T/rss.big" "$CLI" -c "$T/gw.conf" bigchunked tools/call '{"name":"x"}' > /dev/null 2>&1
	small=$(tail -1 "$T/rss.small")
	big=$(tail -1 "$T/rss.big")
	delta=$(( (big - small) / 1024 ))
	if [ "$delta" -le 40 ]; then pass "bigchunked: memory bounded (+$delta MiB over a small call)"; else fail "bigchunked: memory bounded" "+$delta MiB"; fi
else
	pass "# SKIP /usr/bin/time is missing"
fi

# on_msg abandons: the call ends at once, the connection is dropped.
# (the call would last 20 s; "at once" is 2 s plus twice a good run)
run sse tools/call '{"name":"slow","arguments":{"ms":20000},"_meta":{"progressToken":1}}' -a 2
is "abandon: exit 1" "$RC" 1
is "abandon: the reason" "$(reason)" "upstream sse: call abandoned"
if [ "$MS" -lt $((2000 + 2 * BASE)) ]; then pass "abandon: at once ($MS ms)"; else fail "abandon: at once ($MS ms)" "want < $((2000 + 2 * BASE)) ms"; fi
for _ in $(seq 1 600); do
	grep -q 'POST notifications/cancelled → 202' "$T/sse.log" && break
	sleep 0.05
done
is "abandon: notifications/cancelled sent upstream" "$(grep -c 'POST notifications/cancelled → 202' "$T/sse.log")" 1

# Notifications.
run json notifications/cancelled '{"requestId":12345,"reason":"test"}' -N
is "upstream_notify: accepted" "$RC" 0
is "upstream_notify: the upstream got it" "$(grep -c 'POST notifications/cancelled → 202' "$T/json.log")" 1

# Under --enable-sanitizers: not one report from any run of the driver.
cat "$T/rs.err" >> "$T/all.err"
if grep -q 'Sanitizer\|runtime error' "$T/all.err"; then
	fail "no sanitizer report" "$(grep -m5 'Sanitizer\|runtime error' "$T/all.err")"
else
	pass "no sanitizer report"
fi

tap_done
