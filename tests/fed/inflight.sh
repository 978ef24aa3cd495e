#!/usr/bin/env bash
# tests/fed/inflight.sh — relayed calls are not capped by the worker threads: one mcpgate
# process of 2 worker threads (spawn-fcgi -F 1, max-workers = 12) behind nginx, in front
# of the SDK fixture upstream, takes 8 calls of its `slow` tool (SLOW_MS each) at once.
# Every call holds its thread on the upstream, so with 2 threads the calls would run two
# at a time (4 rounds); the process starts more threads while calls are held
# (src/front/front.c: after UPSTREAM_SLOW_MS with CPU to spare, after a second whatever
# the load), so that all 8 are in flight together: the process runs at least 8 worker
# threads meanwhile, and all 8 are done in less than 3 x SLOW_MS (two at a time: 4 x).
# Then the extra threads, idle, stop (after 10 s), and the process serves on with its 2.
#
# Time: SLOW_MS is long enough that even on a loaded machine (where growth waits for a
# call held a whole second) all 8 calls start before the first ends; the checks wait on
# conditions, with bounds several times what they take.
#
# Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq --node @modelcontextprotocol/sdk/package.json

CALLS=8
SLOW_MS=8000
WORKERS=2
MAX=12

# --- the upstream, the authorization server, the gateway ----------------------------------
fixture_and_idp up --port 0 --json --name up
TOKEN=$(mint --client machine-acme --scope mcp:tools --resource "$GW_URL")
[ -n "$TOKEN" ] && [ "$TOKEN" != null ] || bail "a client_credentials token" "$(tail -n 5 "$T/idp.log")"
gateway_conf "$T/gw.conf" "$GW_URL" "workers = $WORKERS" "max-workers = $MAX" "client-timeout-ms = 30000"
printf '[upstream "up"]\nurl = %s\nprefix = up_\ntimeout-ms = 60000\n' "${FIXTURE_URL[up]}" >>"$T/gw.conf"
start_gateway "$GW_PORT" "nginx + spawn-fcgi + 1 mcpgate process of $WORKERS worker threads" 1 "$WORKERS"
PID=${MG_FCGI_PIDS%% *}
# threads: the process's threads (the workers, the main thread, the watchdog)
threads() { ls "/proc/$PID/task" 2>/dev/null | wc -l; }
back_to_workers() { [ "$(threads)" -le $((WORKERS + 2)) ]; }
# (under valgrind the line comes a while after the socket: waited for)
wait_until 60 grep -q 'serving with' "$T/gw.log"
like "the process says how far it may grow" "$(grep 'serving with' "$T/gw.log")" \
	"serving with $WORKERS worker threads, up to $MAX while calls wait on upstreams"

# call ID MS: tools/call of up_slow through nginx (no session: the gateway's own, with
# ids of its own); the status and body in $T/call.ID
call() {
	curl -s --max-time 120 -o "$T/call.$1" -w '%{http_code}' -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H "Authorization: Bearer $TOKEN" \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"up_slow\",\"arguments\":{\"ms\":$2}}}" \
		"$GW_URL" >"$T/status.$1"
}
st=$(call 0 10; cat "$T/status.0")
is "one quick call: 200" "$st" 200
jcheck "… its result is the upstream's" "$(cat "$T/call.0")" '.result.content[0].text == "slept 10 ms"'
is "the process runs its $WORKERS worker threads (and its main and watchdog threads)" "$(threads)" $((WORKERS + 2))

# --- 8 slow calls at once ----------------------------------------------------------------
most=0
pids=()
t0=$(now_ms)
for i in $(seq 1 "$CALLS"); do
	call "$i" "$SLOW_MS" &
	pids+=($!)
done
# the most threads seen while the calls run
while :; do
	n=$(threads)
	[ "$n" -le "$most" ] || most=$n
	alive=0
	for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
	[ "$alive" = 1 ] || break
	sleep 0.2
done
for p in "${pids[@]}"; do wait "$p"; done
took=$(( $(now_ms) - t0 ))
ok_n=0
for i in $(seq 1 "$CALLS"); do
	[ "$(cat "$T/status.$i")" = 200 ] && jq -e ".id == $i and .result.content[0].text == \"slept $SLOW_MS ms\"" "$T/call.$i" >/dev/null 2>&1 &&
		ok_n=$((ok_n + 1))
done
is "$CALLS slow calls at once: each answered 200 with its own id and the upstream's result" "$ok_n" "$CALLS"
if [ "$most" -ge $((CALLS + 2)) ]; then
	pass "while they ran, the process ran at least $CALLS worker threads ($((most - 2)) at most)"
else
	fail "while they ran, the process ran at least $CALLS worker threads" "$((most - 2)) at most"
fi
# two at a time they would take $((CALLS / WORKERS)) x SLOW_MS
if [ "$took" -lt $((3 * SLOW_MS)) ]; then
	pass "… all in flight together: done in $took ms, less than 3 x $SLOW_MS ms (two at a time: $((CALLS / WORKERS)) x)"
else
	fail "… all in flight together: done in less than 3 x $SLOW_MS ms" "$took ms"
fi
ends=$(grep -c 'POST tools/call → 200' "$T/up.log")
is "the upstream answered every call (and the quick one)" "$ends" $((CALLS + 1))

# --- the extra threads stop when idle ---------------------------------------------------
if wait_until 60 back_to_workers; then
	pass "idle, the extra threads stop: the process is back to its $WORKERS worker threads"
else
	fail "idle, the extra threads stop" "$(threads) threads after 60 s"
fi
st=$(call 100 10; cat "$T/status.100")
is "the process serves on: a call, 200" "$st" 200
jcheck "… with the upstream's result" "$(cat "$T/call.100")" '.result.content[0].text == "slept 10 ms"'
alive=0
for p in $MG_FCGI_PIDS; do mg_alive "$p" && alive=$((alive + 1)); done
is "the mcpgate process is alive" "$alive" 1
stop_all
tap_done
