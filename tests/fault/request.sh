#!/usr/bin/env bash
# tests/fault/request.sh — how long one request may hold a worker, through real nginx
# and spawn-fcgi (one process, one worker thread: a request that held it would stall the
# next), with oidc-provider tokens and the SDK fixture upstream (tests/upstream):
#
#  1. a client that hangs up during a slow tools/call (curl --max-time): in JSON mode,
#     on an event stream, and during a batch, the worker is free at once (the next
#     request is answered long before the call would have ended), the upstream gets
#     notifications/cancelled for the call (its log says so), the rest of the batch is
#     not run, the gateway logs why; the same for a CGI run whose stdout is closed;
#  2. slowloris: as many raw connections as a process has workers, each stalled while
#     delivering its request (half a record header; params trickling in a byte at a
#     time; a body that stops short; a kept connection left idle) cannot stop it: a
#     normal request is answered, and each stalled connection is shut down by the
#     gateway after client-timeout-ms;
#  3. SIGHUP (a reload) during an event-stream tools/call leaves the stream intact;
#  4. a batch of slow calls ends by the request's deadline (request-timeout-ms), not
#     after each call's own timeout one after another; the answers already made stay;
#  5. SIGTERM during an event-stream call: the call finishes, then the process exits on
#     its own; a new process on the same socket serves.
#
# Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi cgi-fcgi:libfcgi-bin curl:curl jq:jq python3:python3 \
	--node @modelcontextprotocol/sdk/package.json

BOUND=1000	# [gateway] client-timeout-ms
DEADLINE=2500	# [gateway] request-timeout-ms, for the batch (4)
SLOW=15000	# a call the client does not wait for (ms)
UP_TIMEOUT=20000	# [upstream] timeout-ms
QUICK=6000	# "at once": a worker held by the slow call would answer after ~SLOW

now_ms() { echo $(( ${EPOCHREALTIME/./} / 1000 )); }	# (wait.sh's, without a fork: the timings below)
count() { grep -c -- "$1" "$2" 2>/dev/null; }
more_than() { [ "$(count "$1" "$2")" -gt "$3" ]; }

# --- the upstream, the authorization server, the gateway ---------------------------------
fixture_and_idp up --port 0 --name up

conf() {	# conf [GATEWAY-LINE...]: the gateway's configuration, with more [gateway] lines
	GW_CACHE_TTL=300 GW_AUTH_TIMEOUT_MS=3000 gateway_conf "$T/gw.conf.new" "$GW_URL" "client-timeout-ms = $BOUND" "$@"
	printf '[upstream "up"]\nurl = %s\ntimeout-ms = %s\n' "${FIXTURE_URL[up]}" "$UP_TIMEOUT" >> "$T/gw.conf.new"
	mv "$T/gw.conf.new" "$T/gw.conf"
}
conf
out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1) || bail "mcpgate -t accepts the configuration" "$out"
SOCK=$T/mcpgate.sock
if start_mcpgate_fcgi "$SOCK" "$T/gw.conf" 1 1 >> "$T/start.out" 2>&1 && start_nginx "$GW_PORT" >> "$T/start.out" 2>&1; then
	pass "spawn-fcgi (1 process x 1 worker thread) + mcpgate behind nginx, the fixture upstream at ${FIXTURE_URL[up]}"
else
	bail "spawn-fcgi + mcpgate behind nginx" "$(tail -n 20 "$T/start.out")"
fi
PID=$MG_FCGI_PIDS
TOKEN=$(mint --client machine-acme --scope mcp:tools --resource "$GW_URL")
[ -n "$TOKEN" ] && [ "$TOKEN" != null ] || bail "a client_credentials token for $GW_URL" "$(tail -n 5 "$T/idp.log")"

rpc() {	# rpc ID METHOD PARAMS: a JSON-RPC request body
	jq -nc --argjson id "$1" --arg m "$2" --argjson p "$3" '{jsonrpc: "2.0", id: $id, method: $m, params: $p}'
}
slow() {	# slow ID MS [PROGRESS-TOKEN]: tools/call slow
	rpc "$1" tools/call "$(jq -nc --argjson ms "$2" --arg t "${3:-}" \
		'{name: "slow", arguments: {ms: $ms}} + (if $t == "" then {} else {_meta: {progressToken: $t}} end)')"
}
# post BODY [ACCEPT [MAX-TIME [OUT]]]: through nginx; the body in OUT (default $T/b),
# the headers in $T/h; prints the HTTP status (000 when curl gave up).
post() {
	curl -sS -N --max-time "${3:-30}" -o "${4:-$T/b}" -D "$T/h" -w '%{http_code}' -H 'Content-Type: application/json' \
		-H "Accept: ${2:-application/json}" -H "Authorization: Bearer $TOKEN" \
		--data-binary "$1" "$GW_URL" 2>> "$T/curl.err"
}
sse_data() { sed -n 's/^data: //p' "$1" | tr -d '\r' | grep -v '^$'; }
# next_request: how long a ping through nginx takes to be answered (ms); "fail" if not 200.
next_request() {
	local t0 st
	t0=$(now_ms)
	st=$(post "$(rpc 99 ping '{}')" application/json 30 "$T/next.b")
	if [ "$st" = 200 ] && jq -e '.id == 99 and .result == {}' "$T/next.b" > /dev/null 2>&1; then
		echo $(( $(now_ms) - t0 ))
	else
		echo "fail (HTTP $st: $(head -c 200 "$T/next.b"))"
	fi
}
fast() { case $1 in ''|*[!0-9]*) return 1;; esac; [ "$1" -lt "$QUICK" ]; }

st=$(post "$(rpc 1 tools/list '{}')")
jcheck "tools/list through nginx lists the upstream's slow tool" \
	"$(jq -c --arg st "$st" '{status: $st, slow: ([.result.tools[]?.name] | index("slow"))}' "$T/b" 2>/dev/null)" \
	'.status == "200" and .slow != null'

# --- 1. a client that hangs up -------------------------------------------------------------
# gone LABEL ACCEPT BODY CANCELS: the client gives up after 1 s; then the next request,
# the upstream's cancellations (CANCELS more), the gateway's log line.
gone() {
	local label=$1 accept=$2 body=$3 want=$4 c0 a0 ms st
	c0=$(count 'cancelled after' "$T/up.log")
	a0=$(count 'the caller went away' "$T/gw.log")
	st=$(post "$body" "$accept" 1 "$T/gone.b")
	ms=$(next_request)
	if fast "$ms"; then
		pass "$label: the client hung up after 1 s; the next request on the one worker is answered at once ($ms ms; the call would take $SLOW)"
	else
		fail "$label: the client hung up after 1 s; the next request on the one worker is answered at once" \
			"next request: $ms ms; the hung-up request: HTTP $st, $(head -c 300 "$T/gone.b")"
	fi
	if wait_until 10 more_than 'cancelled after' "$T/up.log" "$c0" && sleep 0.5 \
		&& [ "$(count 'cancelled after' "$T/up.log")" -eq $((c0 + want)) ]; then
		pass "$label: the upstream received notifications/cancelled for the call ($(grep 'cancelled after' "$T/up.log" | tail -n 1 | sed 's/^upstream\[up\]: //'))"
	else
		fail "$label: the upstream received notifications/cancelled for the call (exactly $want)" \
			"$(grep -c 'cancelled after' "$T/up.log") cancellations, $c0 before; $(tail -n 5 "$T/up.log")"
	fi
	if more_than 'the caller went away' "$T/gw.log" "$a0"; then
		pass "$label: the gateway logs why the call was abandoned"
	else
		fail "$label: the gateway logs why the call was abandoned" "$(tail -n 5 "$T/gw.log")"
	fi
}
gone "JSON" application/json "$(slow 2 "$SLOW")" 1
gone "event stream, progress relayed" text/event-stream "$(slow 3 "$SLOW" tok-gone)" 1
if [ -s "$T/gone.b" ] && sse_data "$T/gone.b" | jq -se 'length >= 1 and all(.method == "notifications/progress")' > /dev/null 2>&1; then
	pass "event stream: progress had arrived before the client hung up"
else
	fail "event stream: progress had arrived before the client hung up" "$(head -c 300 "$T/gone.b")"
fi
gone "event stream, no progress" text/event-stream "$(slow 4 "$SLOW")" 1
gone "a batch of three slow calls" application/json "[$(slow 5 "$SLOW"),$(slow 6 "$SLOW"),$(slow 7 "$SLOW")]" 1
like "a batch: the two elements not started are not run, and the log says so" \
	"$(grep 'batch elements not run' "$T/gw.log" | tail -n 1)" '2 of 3 batch elements not run'

# CGI: the server closes the program's stdout (here: the reading end of a pipe exits).
cgi_gone() {
	local body=$1 c0 t0 ms
	local env=(PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 SERVER_PROTOCOL=HTTP/1.1 SERVER_NAME=127.0.0.1
		SERVER_PORT="$GW_PORT" REMOTE_ADDR=127.0.0.1 REQUEST_METHOD=POST SCRIPT_NAME=/mcp PATH_INFO=
		QUERY_STRING= HTTP_HOST="127.0.0.1:$GW_PORT" HTTP_ACCEPT=application/json
		HTTP_AUTHORIZATION="Bearer $TOKEN" CONTENT_TYPE=application/json CONTENT_LENGTH="$(printf '%s' "$body" | wc -c)")
	c0=$(count 'cancelled after' "$T/up.log")
	t0=$(now_ms)
	printf '%s' "$body" | timeout -k 2 30 env -i "${env[@]}" MCPGATE_CONFIG="$T/gw.conf" "$MCPGATE_BIN" 2>> "$T/cgi.err" | { sleep 1; }
	ms=$(( $(now_ms) - t0 ))
	if [ "$ms" -lt "$QUICK" ]; then
		pass "CGI: stdout closed after 1 s: the run ends at once ($ms ms; the call would take $SLOW)"
	else
		fail "CGI: stdout closed after 1 s: the run ends at once" "it took $ms ms; $(tail -n 3 "$T/cgi.err")"
	fi
	if wait_until 10 more_than 'cancelled after' "$T/up.log" "$c0"; then
		pass "CGI: the upstream received notifications/cancelled for the call"
	else
		fail "CGI: the upstream received notifications/cancelled for the call" "$(tail -n 5 "$T/up.log")"
	fi
}
cgi_gone "$(slow 8 "$SLOW")"

# --- 2. slowloris ------------------------------------------------------------------------------
STALL=$T/stall.sock
spawn-fcgi -s "$STALL" -P "$T/stall.pid" -- "$MCPGATE_BIN" -c "$T/gw.conf" -w 2 > /dev/null 2>> "$T/stall.err"
STALL_PID=$(cat "$T/stall.pid" 2>/dev/null)
[ -n "$STALL_PID" ] && mg_track "$STALL_PID"
wait_until 10 test -S "$STALL" || fail "a second mcpgate (2 worker threads) on its own socket" "$(cat "$T/stall.err")"
health() {	# cgi-fcgi GET /mcp/health on the stalled process: "ms status"
	local t0
	t0=$(now_ms)
	env -i PATH="$PATH" REQUEST_METHOD=GET SCRIPT_NAME=/mcp/health SERVER_PROTOCOL=HTTP/1.1 \
		timeout 20 cgi-fcgi -bind -connect "$STALL" > "$T/health.out" 2>/dev/null
	echo "$(( $(now_ms) - t0 )) $(sed -n 's/^Status: \([0-9]*\).*/\1/p' "$T/health.out" | head -n 1)"
}
for kind in header trickle body kept; do
	python3 "$here/fcgi-stall.py" "$STALL" "$kind" 2 20 > "$T/stall.$kind" 2> "$T/stall.$kind.err" &
	NODE_PID=$!
	if ! wait_until 15 grep -q '^ready' "$T/stall.$kind"; then
		fail "slowloris ($kind): two stalled connections opened" "$(cat "$T/stall.$kind.err")"
		stop_node
		continue
	fi
	read -r ms status <<<"$(health)"
	if [ "${status:-}" = 200 ] && [ "$ms" -lt $((BOUND + 5000)) ]; then
		pass "slowloris ($kind): with both workers' connections stalled, a normal request is answered ($ms ms, client-timeout-ms $BOUND)"
	else
		fail "slowloris ($kind): with both workers' connections stalled, a normal request is answered" \
			"status ${status:-none} after $ms ms"
	fi
	wait "$NODE_PID"
	NODE_PID=
	r=$(tail -n 1 "$T/stall.$kind")
	jcheck "slowloris ($kind): the gateway shut each stalled connection down after client-timeout-ms ($BOUND ms)" \
		"$r" "(.closed_ms | length) == 2 and all(.closed_ms[]; . != null and . >= $((BOUND - 300)) and . < $((BOUND + 5000)))"
	[ "$kind" != kept ] || jcheck "slowloris (kept): the kept connections' requests were answered first" "$r" '.answered == [true, true]'
done
like "the gateway logs a connection that did not deliver its request" \
	"$(grep 'did not deliver its request' "$T/gw.log" | head -n 1)" 'client-timeout-ms \(1000 ms\): shut down'

# --- 3. SIGHUP during an event-stream call --------------------------------------------------
# stream_call BODY OUT: an event-stream call through nginx in the background (CURL_PID).
stream_call() {
	curl -sS -N --max-time 60 -o "$2" -H 'Content-Type: application/json' -H 'Accept: text/event-stream' \
		-H "Authorization: Bearer $TOKEN" --data-binary "$1" "$GW_URL" 2>> "$T/curl.err" &
	CURL_PID=$!
}
progressed() { grep -qs 'notifications/progress' "$1"; }
# stream_checks LABEL OUT ID MS: the stream ended with the result, after its progress.
stream_checks() {
	jcheck "$1: the stream went on to its end: progress, then the result" \
		"$(sse_data "$2" | jq -sc --argjson id "$3" '{n: length, progress: ([.[] | select(.method == "notifications/progress")] | length),
			values: [.[] | select(.method == "notifications/progress") | .params.progress], last: .[-1]}' 2>/dev/null)" \
		".progress >= 5 and .values == (.values | sort) and .last.id == $3 and .last.result.content[0].text == \"slept $4 ms\""
}
r0=$(count 'config: reloaded' "$T/gw.log")
stream_call "$(slow 10 3000 tok-hup)" "$T/hup.b"
if wait_until 15 progressed "$T/hup.b"; then
	kill -HUP "$PID"
	wait "$CURL_PID"
	stream_checks "SIGHUP during an event-stream call (3000 ms; client-timeout-ms $BOUND)" "$T/hup.b" 10 3000
	if wait_until 10 more_than 'config: reloaded' "$T/gw.log" "$r0"; then pass "SIGHUP: the configuration was reloaded"
	else fail "SIGHUP: the configuration was reloaded" "$(tail -n 5 "$T/gw.log")"; fi
else
	fail "SIGHUP during an event-stream call: progress arrives" "$(head -c 300 "$T/hup.b")"
	kill "$CURL_PID" 2>/dev/null
fi

# --- 4. the request's deadline ----------------------------------------------------------------
r0=$(count 'config: reloaded' "$T/gw.log")
conf "request-timeout-ms = $DEADLINE"
kill -HUP "$PID"
wait_until 10 more_than 'config: reloaded' "$T/gw.log" "$r0" || fail "request-timeout-ms = $DEADLINE: reloaded" "$(tail -n 5 "$T/gw.log")"
batch="[$(rpc 21 tools/call '{"name":"echo","arguments":{"kept":true}}'),$(slow 22 3000),$(slow 23 3000),$(slow 24 3000),$(rpc 25 ping '{}')]"
t0=$(now_ms)
st=$(post "$batch" application/json 60)
ms=$(( $(now_ms) - t0 ))
if [ "$st" = 200 ] && [ "$ms" -ge $((DEADLINE - 500)) ] && [ "$ms" -lt $((DEADLINE + 4000)) ]; then
	pass "a batch of three 3000 ms calls ends by request-timeout-ms ($DEADLINE): $ms ms, not 9000+"
else
	fail "a batch of three 3000 ms calls ends by request-timeout-ms ($DEADLINE)" "HTTP $st after $ms ms: $(head -c 300 "$T/b")"
fi
jcheck "the batch: the answer already made is kept; the call under way ends with the deadline; the elements not started get -32603" \
	"$(jq -c 'map({id, text: .result.content[0].text?, code: .error.code, message: .error.message})' "$T/b" 2>/dev/null)" \
	'length == 5 and (.[0] | .id == 21 and (.text | fromjson) == {"kept": true})
		and (.[1] | .id == 22 and .code == -32603 and (.message | test("ran out of time")))
		and (.[2:] | map(.id) == [23, 24, 25]) and (.[2:] | all(.code == -32603 and (.message | test("before this element was started"))))'

# --- 5. SIGTERM during an event-stream call ----------------------------------------------------
r0=$(count 'config: reloaded' "$T/gw.log")
conf	# back to the default request-timeout-ms: the call below must not meet the deadline
kill -HUP "$PID"
wait_until 10 more_than 'config: reloaded' "$T/gw.log" "$r0" || fail "request-timeout-ms unset again: reloaded" "$(tail -n 5 "$T/gw.log")"
stream_call "$(slow 30 2000 tok-term)" "$T/term.b"
if wait_until 15 progressed "$T/term.b"; then
	kill -TERM "$PID"
	wait "$CURL_PID"
	stream_checks "SIGTERM during an event-stream call (2000 ms)" "$T/term.b" 30 2000
else
	fail "SIGTERM during an event-stream call: progress arrives" "$(head -c 300 "$T/term.b")"
	kill -TERM "$PID"
	kill "$CURL_PID" 2>/dev/null
fi
exited() { ! mg_alive "$PID"; }
if wait_until 15 exited; then
	pass "SIGTERM: the process exited after the call"
else
	fail "SIGTERM: the process exited after the call" "still running; $(tail -n 3 "$T/gw.log")"
fi
like "SIGTERM: it stopped in order (its last log line)" "$(grep 'fastcgi: stopped' "$T/gw.log" | tail -n 1)" 'fastcgi: stopped'
is "SIGTERM: no sanitizer report or crash in its output" \
	"$(grep -lE 'AddressSanitizer|LeakSanitizer|runtime error|Segmentation|Aborted' "$MG_LOG" "$T/gw.log" 2>/dev/null | tr '\n' ' ')" ""
if start_mcpgate_fcgi "$SOCK" "$T/gw.conf" 1 1 >> "$T/start.out" 2>&1; then
	PID=$MG_FCGI_PIDS
	st=$(post "$(rpc 40 ping '{}')")
	jcheck "a new process on the same socket serves" "$(jq -c --arg st "$st" '{status: $st, id, result}' "$T/b" 2>/dev/null)" \
		'.status == "200" and .id == 40 and .result == {}'
else
	fail "a new process on the same socket starts" "$(tail -n 10 "$T/start.out")"
fi

# --- afterwards ------------------------------------------------------------------------------------
gone=
for pid in $PID $STALL_PID; do mg_alive "$pid" || gone="$gone $pid"; done
is "the other mcpgate processes survived the run" "${gone:-none}" none
leaks=
for f in "$T/gw.log" "$T/cgi.err" "$MG_LOG" "$T"/nginx/*.log "$T/up.log"; do
	[ -f "$f" ] && grep -qF -- "${TOKEN:0:12}" "$f" && leaks="$leaks ${f#"$T/"}"
done
is "no caller token in any log" "${leaks:-none}" none
tap_done
