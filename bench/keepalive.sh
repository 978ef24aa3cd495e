#!/usr/bin/env bash
# bench/keepalive.sh — FastCGI keep-alive between nginx and mcpgate: on against off.
#
# Two gateway stacks in the same run, sharing the authorization server (tests/idp), each
# its own nginx + spawn-fcgi + mcpgate, the same binary and configuration:
#
#   stack N   the nginx recipe as shipped (deploy/nginx): a new FastCGI connection a
#             request, closed after the answer
#   stack K   the same with FastCGI keep-alive: fastcgi_keep_conn on, through an
#             upstream {} keeping BENCH_KEEPALIVE (64) idle connections — more than
#             mcpgate's threads (BENCH_PROCS x BENCH_WORKERS), which park between
#             requests (src/front/kept.h)
#
# Requests per second and p50/p99 latency of POST /mcp ping in a session (a cached
# bearer token, one initialize's Mcp-Session-Id) through each, with 16 and with 64
# client connections (wrk -c16, -c64):
#
#   N16 K16 N64 K64
#
# Targets: K16 / N16 >= 1 and K64 / N64 >= 1, and no p99 of K above N's at the same
# connections (a stall behind an idle connection shows there first). Every answer's
# status and body are checked (wrk.lua): a run with any other answer or a socket error
# is not a measurement, and nothing is appended then. A benchmark, not a timed test:
# nothing here fails a build.
#
# Usage: bench/keepalive.sh      (as root on Debian 12: installs what it lacks)
# Settings (environment):
#   BENCH_DURATION=10   seconds per measured run      BENCH_REPS=3    repetitions
#   BENCH_WARMUP=3      seconds per warm-up run       BENCH_THREADS=2 (wrk -t)
#   BENCH_PROCS=2 BENCH_WORKERS=2   mcpgate processes (spawn-fcgi -F) x threads (-w)
#   BENCH_KEEPALIVE=64  stack K's nginx keepalive (idle connections kept)
#   BENCH_SRC=worktree  build from the working tree (default), or HEAD (git archive)
#   BENCH_RESULTS=bench/RESULTS.md  where the dated section is appended ("" = nowhere)
#   MG_KEEP=1           keep the temp dir (configs, logs) after the run
# Everything goes to bench/out/keepalive/ (gitignored). What it shares with the other
# scripts is in bench/lib.sh.
# The whole script is one brace group: bash reads it completely before running it, so
# editing this file while it runs cannot derail the run.
{
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$here/out/keepalive
KEEP=${BENCH_KEEPALIVE:-64}
CACHE_TTL=3600
KINDS="N16 K16 N64 K64"
NKINDS=4
KNOBS="BENCH_KEEPALIVE=$KEEP BENCH_SRC=$SRC"
[[ $KEEP =~ ^[1-9][0-9]*$ ]] || die "BENCH_KEEPALIVE must be a number of connections"
[ $((REPS * NKINDS * (DURATION + 2) + NKINDS * WARMUP)) -lt 3300 ] ||
	die "a run this long outlives the token (1 h); fewer BENCH_REPS or a shorter BENCH_DURATION"

setup
build_mcpgate

# --- The two stacks ------------------------------------------------------------------
mkdir -p "$OUT/tmp"
TMPDIR=$OUT/tmp bench_root '*/mcpgate.log' '*/nginx/error.log' idp.log
read -r PORT_N PORT_K <<<"$(two_ports)" || die "no free ports"
declare -A BASEOF=([N]=http://127.0.0.1:$PORT_N [K]=http://127.0.0.1:$PORT_K) FCGIOF=() NGINXOF=() TOK=() SID=()
start_idp "${BASEOF[N]}/mcp" "${BASEOF[K]}/mcp"
say "starting nginx + spawn-fcgi ($PROCS x $WORKERS) twice: keep-alive off on $PORT_N, on ($KEEP kept) on $PORT_K"
mkdir -p "$ROOT/N" "$ROOT/K"
unset MG_NGINX_KEEPALIVE
start_stack "$ROOT/N" "$BIN" "$PORT_N" || die "stack N did not start"
FCGIOF[N]=$STACK_FCGI NGINXOF[N]=$STACK_NGINX
MG_NGINX_KEEPALIVE=$KEEP start_stack "$ROOT/K" "$BIN" "$PORT_K" || die "stack K did not start"
FCGIOF[K]=$STACK_FCGI NGINXOF[K]=$STACK_NGINX
grep -Eq '^ *fastcgi_pass mcpgate_kept; fastcgi_keep_conn on;' "$ROOT/K/nginx/mcpgate.conf" || die "stack K's nginx does not keep FastCGI connections"
! grep -Eq '^ *fastcgi_keep_conn on;|fastcgi_pass mcpgate_kept' "$ROOT/N/nginx/mcpgate.conf" || die "stack N's nginx keeps FastCGI connections"

open_sessions N K
# connections to stack S's mcpgate socket that are open (nginx's)
conns() { ss -x -H state connected 2>/dev/null | grep -cF "$ROOT/$1/mcpgate.sock"; }

# --- Measuring -----------------------------------------------------------------------
runs_header kind conns_after us_nginx us_mcpgate
run() { # KIND SECONDS REP
	local kind=$1 s=${1:0:1}
	CONNS=${kind:1}
	CPU_PIDS=("$(nginx_pids "${NGINXOF[$s]}")" "${FCGIOF[$s]}")
	measure "$kind" "$2" "$OUT/wrk.$3.$kind.out" "${BASEOF[$s]}/mcp" BENCH_EXPECT=200 BENCH_TARGET=ping \
		"BENCH_TOKEN=${TOK[$s]}" "BENCH_SESSION=${SID[$s]}" "BENCH_PROTOCOL=$PV"
	row "$3" "$kind" "$(conns "$s")"
	said "$3" "$kind"
}
run_kinds " (N: keep-alive off; K: on, $KEEP kept; 16 and 64 client connections)"
# shellcheck disable=SC2086
runs_done ${FCGIOF[N]} ${FCGIOF[K]}
CONNS=16

# --- Report --------------------------------------------------------------------------
ratio_medians K16/N16 K64/N64
bad=$(awk -F'\t' '$1 != "rep" && ($6 > 0 || $8 > 0 || $9 > 0 || $5 != $4) { printf "%s/%s ", $1, $2 }' "$RUNS")
kindname() {
	case $1 in
	N16) echo "N16 ping, keep-alive off, 16 connections" ;;
	K16) echo "K16 ping, keep-alive on ($KEEP kept), 16 connections" ;;
	N64) echo "N64 ping, keep-alive off, 64 connections" ;;
	K64) echo "K64 ping, keep-alive on, 64 connections" ;;
	esac
}
table() {
	local c
	# shellcheck disable=SC2086
	rates_table request "nginx, mcpgate, wrk" $KINDS
	ratio_row K16/N16 "K16 / N16 (keep-alive on vs off, 16 connections)" "≥ 1" 1
	ratio_row K64/N64 "K64 / N64 (the same, 64 connections)" "≥ 1" 1
	echo
	echo "| p99 latency, ms (median of the repetitions) | keep-alive off | keep-alive on |"
	echo "|---|---:|---:|"
	for c in 16 64; do
		echo "| $c connections | $(us "$(med "N$c" 11)") | $(us "$(med "K$c" 11)") |"
	done
	echo
	echo "FastCGI connections open to mcpgate right after each run (\`ss -x\`, median): N $(med N16 13) and $(med N64 13), K $(med K16 13) and $(med K64 13) (16 and 64 client connections; mcpgate has $((PROCS * WORKERS)) threads)."
	echo
	echo "Correctness during every run (warm-ups included): every answer 200 with its \"result\", no socket errors: $([ -z "$bad" ] && echo yes || echo "NO: $bad")"
}
report
[ -z "$bad" ] || die "some answers were not right ($bad): not a measurement; nothing appended (see $RUNS)"
# shellcheck disable=SC2016 # the backquotes are Markdown
append_results keepalive "" "one client_credentials token of oidc-provider $(oidc_version) per stack, cached (cache-ttl = $CACHE_TTL); two stacks: N the recipe as shipped, K with \`fastcgi_keep_conn on\` and an upstream {} with \`keepalive $KEEP\`" \
	kind "$KINDS" \
	"- requests: POST /mcp ping with \`Authorization: Bearer\`, the \`Mcp-Session-Id\` of one initialize and \`MCP-Protocol-Version: $PV\`; wrk -c16 for N16 and K16, -c64 for N64 and K64"
exit 0
}
