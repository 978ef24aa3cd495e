#!/usr/bin/env bash
# tests/proto/cases.sh — the data-driven protocol suite for POST /mcp (tests/proto/README.md).
# Every case of tests/proto/cases/ runs three times: as CGI (the binary run once per case),
# through nginx and through lighttpd (the deploy/ recipes, spawn-fcgi, 2 processes x 2
# threads), with a real token from oidc-provider (tests/idp). Prints TAP; exits non-zero
# on any failure. Env: MCPGATE_BIN (default src/mcpgate), PROTO_ONLY (run.mjs --only).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light lighttpd:lighttpd spawn-fcgi:spawn-fcgi curl:curl jq:jq

nport=$(free_port)
lport=$(free_port)
while [ "$lport" = "$nport" ]; do lport=$(free_port); done
resource=http://127.0.0.1:$nport/mcp
start_idp "$resource"
# The suite's configuration (README): gateway_conf, plus what the cases expect.
gateway_conf "$T/mcpgate.conf" "$resource"
cat >> "$T/mcpgate.conf" <<'CONF'
[gateway]
title = Protocol test gateway
version = 9.8.7
instructions = Call tools/list to see the tools.
max-body = 4194304
max-batch = 100
CONF
if ! "$MCPGATE_BIN" -t -c "$T/mcpgate.conf" > "$T/check.out" 2>&1; then
	fail "the suite's configuration is valid" "$(cat "$T/check.out")"
	tap_done
	exit 1
fi
if start_mcpgate_fcgi "$T/mcpgate.sock" "$T/mcpgate.conf" 2 2 > "$T/start.out" 2>&1 \
	&& start_nginx "$nport" >> "$T/start.out" 2>&1 && nginx_pid=$MG_FRONT_PID \
	&& start_lighttpd "$lport" >> "$T/start.out" 2>&1 && lighttpd_pid=$MG_FRONT_PID; then
	pass "oidc-provider, spawn-fcgi + mcpgate (2 x 2), nginx and lighttpd started"
else
	fail "oidc-provider, spawn-fcgi + mcpgate, nginx and lighttpd started" "$(tail -n 20 "$T/start.out")"
	tap_done
	exit 1
fi
pids_before=$MG_FCGI_PIDS

token=$(mint --client machine-acme --scope mcp:tools)
if [ -n "$token" ] && [ "$token" != null ]; then
	pass "a token minted for $resource"
else
	fail "a token minted for $resource" "$(tail -n 5 "$T/idp.log")"
	tap_done
	exit 1
fi

# The cases: run.mjs prints "ok N - target: case: description"; its lines are renumbered
# into ours, its "#" lines passed through.
only=()
[ -z "${PROTO_ONLY:-}" ] || only=(--only "$PROTO_ONLY")
timeout -k 5 300 node "$here/run.mjs" --no-plan --jobs 4 --token "$token" --conf "$T/mcpgate.conf" \
	--cgi "cgi=$MCPGATE_BIN" --url "nginx=http://127.0.0.1:$nport/mcp" --url "lighttpd=http://127.0.0.1:$lport/mcp" \
	"${only[@]}" > "$T/run.tap" 2> "$T/run.err" &
NODE_PID=$!
wait "$NODE_PID"
rc=$?
NODE_PID=
ran=0 bad=0
re_ok='^ok [0-9]+ - (.*)$'
re_not='^not ok [0-9]+ - (.*)$'
while IFS= read -r line; do
	if [[ $line =~ $re_ok ]]; then
		ran=$((ran + 1)); pass "${BASH_REMATCH[1]}"
	elif [[ $line =~ $re_not ]]; then
		ran=$((ran + 1)); bad=$((bad + 1))
		tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1))
		printf 'not ok %d - %s\n' "$tap_n" "${BASH_REMATCH[1]}"
	elif [ -n "$line" ]; then
		case $line in "#"*) printf '%s\n' "$line" ;; *) printf '# %s\n' "$line" ;; esac
	fi
done < "$T/run.tap"
cases=$(node "$here/run.mjs" --list ${PROTO_ONLY:+--only "$PROTO_ONLY"} | wc -l)
if [ "$ran" -eq $((cases * 3)) ] && { [ "$rc" -eq 0 ] || [ "$bad" -gt 0 ]; }; then
	pass "run.mjs ran $cases cases x 3 targets (exit $rc)"
else
	fail "run.mjs ran every case on every target" "$ran of $((cases * 3)) results, exit $rc; stderr: $(tail -n 15 "$T/run.err")"
fi

# Nothing crashed on the way: the FastCGI processes and both fronts are still there.
gone=
for pid in $pids_before $nginx_pid $lighttpd_pid; do mg_alive "$pid" || gone="$gone $pid"; done
is "mcpgate processes, nginx and lighttpd survived every case" "${gone:-none}" none
tap_done
