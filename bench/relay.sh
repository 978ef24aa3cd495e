#!/usr/bin/env bash
# bench/relay.sh — relayed tools/call against the worker threads: does a call waiting on
# its upstream hold back the next ones?
#
# Two gateway stacks in the same run, sharing the authorization server (tests/idp) and one
# upstream (tests/upstream/fixture.mjs, official SDK, --json), each its own nginx +
# spawn-fcgi + mcpgate (BENCH_PROCS x BENCH_WORKERS), the same binary:
#
#   stack E   as shipped: more threads while calls are held by the upstream, up to
#             [gateway] max-workers (64) a process (src/front/front.c)
#   stack F   the same with max-workers = workers: never more than the workers
#
# Requests per second, p50/p99 latency and CPU per request of:
#
#   E16 F16 D16   tools/call of the echo tool (a_echo) in a session of each stack, and
#                 D straight to the upstream in a session of its own: the local
#                 upstream answers in well under a millisecond of its own work, so the
#                 processors, not the threads, bound these (wrk -c16)
#   E64 F64 D64   the same with 64 client connections
#   ES16 FS16     tools/call of the slow tool (a_slow, BENCH_SLOW_MS each, no session:
#   ES64 FS64     the gateway's own upstream sessions, its own ids): calls that hold
#                 their thread on the upstream, 16 and 64 client connections; held a
#                 second and more, they get more threads whatever else the machine does
#
# And, right after each run, the worker threads each stack's processes run (all of
# them: a process shows its workers, the main thread and the watchdog besides).
#
# Targets: the slow calls are not capped by the workers: ES16 / FS16 and ES64 / FS64
# ≥ 2 (F holds BENCH_PROCS x BENCH_WORKERS calls at once); the quick ones lose nothing
# to it: E16 / F16 and E64 / F64 ≥ 0.95. And for scale, the call through the gateway
# against the call straight to the upstream, E16 / D16 and E64 / D64 (bench/run's row
# 4). Every answer's status and body are checked (wrk.lua: the echoed argument, "slept
# BENCH_SLOW_MS ms"): a run with any other answer or a socket error is not a
# measurement, and nothing is appended then. A benchmark, not a timed test: nothing here
# fails a build.
#
# Usage: bench/relay.sh          (as root on Debian 12: installs what it lacks)
# Settings (environment):
#   BENCH_DURATION=10   seconds per measured run      BENCH_REPS=3    repetitions
#   BENCH_WARMUP=3      seconds per warm-up run       BENCH_THREADS=1 (wrk -t)
#   BENCH_PROCS=2 BENCH_WORKERS=2   mcpgate processes (spawn-fcgi -F) x threads (-w)
#   BENCH_SLOW_MS=1200  how long each slow call sleeps at the upstream (below a second,
#                       the threads grow only while the machine has CPU to spare)
#   BENCH_SRC=worktree  build from the working tree (default), or HEAD (git archive)
#   BENCH_RESULTS=bench/RESULTS.md  where the dated section is appended ("" = nowhere)
#   MG_KEEP=1           keep the temp dir (configs, logs) after the run
# Everything goes to bench/out/relay/ (gitignored). What it shares with the other
# scripts is in bench/lib.sh.
# The whole script is one brace group: bash reads it completely before running it, so
# editing this file while it runs cannot derail the run.
{
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$here/out/relay
THREADS=${BENCH_THREADS:-1}
SLOW=${BENCH_SLOW_MS:-1200}
CACHE_TTL=3600
KINDS="E16 F16 D16 ES16 FS16 E64 F64 D64 ES64 FS64"
NKINDS=10
KNOBS="BENCH_SLOW_MS=$SLOW BENCH_SRC=$SRC"
ECHO_ARG=relay-bench-echo
[[ $SLOW =~ ^[1-9][0-9]*$ ]] || die "BENCH_SLOW_MS must be a number of milliseconds"
[ $((REPS * NKINDS * (DURATION + 2) + NKINDS * WARMUP)) -lt 3300 ] ||
	die "a run this long outlives the token (1 h); fewer BENCH_REPS or a shorter BENCH_DURATION"

setup
need_sdk
build_mcpgate

# --- The upstream and the two stacks -------------------------------------------------
mkdir -p "$OUT/tmp"
TMPDIR=$OUT/tmp bench_root '*/mcpgate.log' '*/nginx/error.log' idp.log 'up-*.log'
start_upstreams 50 a
read -r PORT_E PORT_F <<<"$(two_ports)" || die "no free ports"
declare -A BASEOF=([E]=http://127.0.0.1:$PORT_E [F]=http://127.0.0.1:$PORT_F) FCGIOF=() NGINXOF=() TOK=() SID=()
start_idp "${BASEOF[E]}/mcp" "${BASEOF[F]}/mcp"
CONF_MORE=$(printf '[upstream "a"]\nurl = %s\nprefix = a_\ntimeout-ms = 60000\n' "${UP_URL[a]}")
say "starting nginx + spawn-fcgi ($PROCS x $WORKERS) twice: threads as shipped on $PORT_E, at most $WORKERS a process on $PORT_F"
mkdir -p "$ROOT/E" "$ROOT/F"
CONF_GATEWAY='' start_stack "$ROOT/E" "$BIN" "$PORT_E" || die "stack E did not start"
FCGIOF[E]=$STACK_FCGI NGINXOF[E]=$STACK_NGINX
CONF_GATEWAY="max-workers = $WORKERS" start_stack "$ROOT/F" "$BIN" "$PORT_F" || die "stack F did not start"
FCGIOF[F]=$STACK_FCGI NGINXOF[F]=$STACK_NGINX
grep -q "up to $WORKERS while calls wait" "$ROOT/F/mcpgate.log" || die "stack F's processes may grow beyond $WORKERS threads"
grep -q "up to 64 while calls wait" "$ROOT/E/mcpgate.log" || die "stack E's processes do not grow as shipped (64)"

open_sessions E F
up_session "${UP_URL[a]}"
ARGS='{"text":"'$ECHO_ARG'"}'
SLOW_ARGS='{"ms":'$SLOW'}'
call() { printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":%s}}' "$1" "$2"; }
for s in E F; do
	check "stack $s: tools/call a_echo: the echo" \
		"$(post_to "${BASEOF[$s]}/mcp" "$(call a_echo "$ARGS")" -H "Authorization: Bearer ${TOK[$s]}" \
		-H "Mcp-Session-Id: ${SID[$s]}" -H "MCP-Protocol-Version: $PV")" "$ECHO_ARG.* 200\$"
	check "stack $s: tools/call a_slow: slept $SLOW ms" \
		"$(post_to "${BASEOF[$s]}/mcp" "$(call a_slow "$SLOW_ARGS")" -H "Authorization: Bearer ${TOK[$s]}")" \
		"slept $SLOW ms.* 200\$"
done
check "tools/call echo straight to the upstream: the echo" \
	"$(post_to "${UP_URL[a]}" "$(call echo "$ARGS")" "${UP_SESS[@]}")" "$ECHO_ARG.* 200\$"
# workers S: the worker threads the processes of stack S run now
workers() {
	local p n=0
	for p in ${FCGIOF[$1]}; do n=$((n + $(find "/proc/$p/task" -mindepth 1 -maxdepth 1 | wc -l) - 2)); done
	echo "$n"
}

# --- Measuring -----------------------------------------------------------------------
runs_header kind workers_after us_nginx us_mcpgate us_upstream
run() { # KIND SECONDS REP
	local kind=$1 s=${1:0:1} url envs
	CONNS=${kind//[A-Z]/}
	url=${BASEOF[$s]:-}/mcp
	case $kind in
	D*) url=${UP_URL[a]}
		envs=(BENCH_TOOL=echo "BENCH_ARGS=$ARGS" "BENCH_WANT=$ECHO_ARG" "BENCH_SESSION=$UP_SID" "BENCH_PROTOCOL=$PV") ;;
	?S*) envs=(BENCH_TOOL=a_slow "BENCH_ARGS=$SLOW_ARGS" "BENCH_WANT=slept $SLOW ms" "BENCH_TOKEN=${TOK[$s]}") ;;
	*) envs=(BENCH_TOOL=a_echo "BENCH_ARGS=$ARGS" "BENCH_WANT=$ECHO_ARG" "BENCH_TOKEN=${TOK[$s]}"
		"BENCH_SESSION=${SID[$s]}" "BENCH_PROTOCOL=$PV") ;;
	esac
	if [ "$s" = D ]; then
		CPU_PIDS=("" "" "${UP_PID[a]}")
	else
		CPU_PIDS=("$(nginx_pids "${NGINXOF[$s]}")" "${FCGIOF[$s]}" "${UP_PID[a]}")
	fi
	# a slow call queued behind F's threads waits connections / threads x SLOW ms
	WRK_TIMEOUT=5
	case $kind in ?S*) WRK_TIMEOUT=$((CONNS * SLOW / 1000 + 10)) ;; esac
	measure "$kind" "$2" "$OUT/wrk.$3.$kind.out" "$url" BENCH_EXPECT=200 BENCH_TARGET=call "${envs[@]}"
	if [ "$s" = D ]; then row "$3" "$kind" -; else row "$3" "$kind" "$(workers "$s")"; fi
	said "$3" "$kind"
}
run_kinds " (E: threads as shipped; F: $WORKERS a process at most; D: straight to the upstream; S: the slow tool, $SLOW ms)"
# shellcheck disable=SC2086
runs_done ${FCGIOF[E]} ${FCGIOF[F]}
CONNS=16

# --- Report --------------------------------------------------------------------------
ratio_medians ES16/FS16 ES64/FS64 E16/F16 E64/F64 E16/D16 E64/D64
bad=$(awk -F'\t' '$1 != "rep" && ($6 > 0 || $8 > 0 || $9 > 0 || $5 != $4) { printf "%s/%s ", $1, $2 }' "$RUNS")
kindname() {
	local c=${1//[A-Z]/}
	case $1 in
	E[0-9]*) echo "$1 tools/call a_echo, stack E (threads as shipped), $c connections" ;;
	F[0-9]*) echo "$1 the same, stack F (at most $WORKERS threads a process)" ;;
	D*) echo "$1 tools/call echo straight to the upstream, $c connections" ;;
	ES*) echo "$1 tools/call a_slow ($SLOW ms), stack E, $c connections" ;;
	FS*) echo "$1 the same, stack F" ;;
	esac
}
table() {
	local k
	# shellcheck disable=SC2086
	rates_table request "nginx, mcpgate, the upstream, wrk" $KINDS
	ratio_row ES16/FS16 "ES16 / FS16 (slow calls: threads as shipped vs at most the workers, 16 connections)" "≥ 2" 2
	ratio_row ES64/FS64 "ES64 / FS64 (the same, 64 connections)" "≥ 2" 2
	ratio_row E16/F16 "E16 / F16 (quick calls, 16 connections)" "≥ 0.95" 0.95
	ratio_row E64/F64 "E64 / F64 (the same, 64 connections)" "≥ 0.95" 0.95
	ratio_row E16/D16 "E16 / D16 (through the gateway vs straight, 16 connections)"
	ratio_row E64/D64 "E64 / D64 (the same, 64 connections)"
	echo
	echo "Worker threads of each stack's $PROCS processes right after each run (median; F may have $((PROCS * WORKERS)) at most):"
	echo
	echo "| kind | worker threads |"
	echo "|---|---:|"
	for k in $KINDS; do
		[ "${k:0:1}" = D ] || echo "| $k | $(med "$k" 13) |"
	done
	echo
	echo "Correctness during every run (warm-ups included): every answer 200 with the echoed argument or \"slept $SLOW ms\", no socket errors: $([ -z "$bad" ] && echo yes || echo "NO: $bad")"
}
report
[ -z "$bad" ] || die "some answers were not right ($bad): not a measurement; nothing appended (see $RUNS)"
# shellcheck disable=SC2016 # the backquotes are Markdown
append_results relay "" "one client_credentials token of oidc-provider $(oidc_version) per stack, cached (cache-ttl = $CACHE_TTL); two stacks: E as shipped (\`max-workers\` 64), F with \`max-workers = $WORKERS\`; upstream: tests/upstream/fixture.mjs --json (SDK $(jq -r .version "$top/tests/node_modules/@modelcontextprotocol/sdk/package.json"), node $(node -v))" \
	kind "$KINDS" \
	"- requests: POST /mcp tools/call with \`Authorization: Bearer\`; echo calls in the \`Mcp-Session-Id\` of one initialize with \`MCP-Protocol-Version: $PV\` (D: the upstream's own session); slow calls without a session, wrk's --timeout connections x $SLOW ms + 10 s (F queues them: a call waits its turn); wrk -t$THREADS, -c16 and -c64"
exit 0
}
