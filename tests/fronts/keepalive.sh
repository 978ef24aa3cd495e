#!/usr/bin/env bash
# tests/fronts/keepalive.sh — FastCGI keep-alive: nginx keeps up to 32 idle connections
# to one mcpgate process of 2 worker threads (spawn-fcgi -F 1), far more connections than
# threads. No thread waits on a kept connection (src/front/kept.h): every request is
# answered at once, where a thread pinned to an idle connection would hold the next
# requests for client-timeout-ms (30 s here; each request may take 15 s at most). Then
# the kept connections idle longer than client-timeout-ms (lowered to 1 s by a reload)
# are closed by mcpgate, and nginx goes on with new ones.
# Prints TAP; exits non-zero on failure. Env: MCPGATE_BIN (default src/mcpgate).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
. "$top/tests/lib/wait.sh"
. "$here/common.bash"
suite_need spawn-fcgi:spawn-fcgi nginx:nginx-light curl:curl ss:iproute2

CLIENTS=32
EACH=10
mg_init || { echo "Bail out! no temp dir"; exit 1; }
MG_PORT=$(free_port)
BASE=http://127.0.0.1:$MG_PORT
CONF=$MG_DIR/mcpgate.conf
gen_config "$CONF" "$BASE" /mcp "$MG_DIR/state"
printf '[gateway]\nclient-timeout-ms = 30000\n' >>"$CONF"
check "mcpgate -t accepts the configuration" "$MCPGATE_BIN" -t -c "$CONF"
start_ok "spawn-fcgi starts 1 mcpgate process of 2 worker threads" \
	start_mcpgate_fcgi "$MG_DIR/mcpgate.sock" "$CONF" 1 2 || { tap_done; exit 1; }
MG_NGINX_KEEPALIVE=$CLIENTS start_ok "nginx starts with FastCGI keep-alive (keepalive $CLIENTS)" start_nginx "$MG_PORT" ||
	{ tap_done; exit 1; }
like "nginx's configuration keeps FastCGI connections" "$(cat "$MG_DIR/nginx/mcpgate.conf" "$MG_DIR/nginx/nginx.conf")" \
	"keepalive $CLIENTS;"

# client N: EACH GET /mcp/health in one curl (one HTTP connection), the status codes
client() {
	local urls=() i
	for i in $(seq 1 "$EACH"); do urls+=(-o /dev/null "$BASE/mcp/health"); done
	curl -s --max-time 15 -w '%{http_code}\n' "${urls[@]}" >"$MG_DIR/client.$1" 2>&1
}
# load: CLIENTS clients at once; prints how many answers were 200, of CLIENTS x EACH
load() {
	local pids=() i
	for i in $(seq 1 "$CLIENTS"); do
		client "$i" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i"; done
	cat "$MG_DIR"/client.* | grep -c '^200$'
}
# kept: the connections to mcpgate's socket that are open (nginx's, kept or in use)
kept() { ss -x -H state connected 2>/dev/null | grep -cF "$MG_DIR/mcpgate.sock"; }

got=$(load)
is "$CLIENTS clients x $EACH requests at once through $CLIENTS kept connections and 2 threads: all answered 200 within 15 s each" \
	"$got" "$((CLIENTS * EACH))"
n=$(kept)
if [ "$n" -gt 2 ]; then
	pass "after the load nginx keeps more connections to mcpgate than mcpgate has threads ($n)"
else
	fail "after the load nginx keeps more connections to mcpgate than mcpgate has threads" "$n connected"
fi
got=$(load)
is "the same again, over the kept connections: all answered 200" "$got" "$((CLIENTS * EACH))"

# A kept connection idle longer than client-timeout-ms is closed by mcpgate.
sed -i 's/^client-timeout-ms = 30000$/client-timeout-ms = 1000/' "$CONF"
wait_until 30 grep -q 'kept connections\? idle for client-timeout-ms (1000 ms): closed' "$MG_LOG"
like "mcpgate closes the kept connections idle for client-timeout-ms (after a reload to 1000 ms)" \
	"$(grep 'kept connection' "$MG_LOG" | tail -n 1)" 'idle for client-timeout-ms \(1000 ms\): closed'
got=$(load)
is "after mcpgate closed them, nginx opens new ones: all answered 200" "$got" "$((CLIENTS * EACH))"
alive=0
for p in $MG_FCGI_PIDS; do mg_alive "$p" && alive=$((alive + 1)); done
is "the mcpgate process is alive" "$alive" 1
stop_all
tap_done
