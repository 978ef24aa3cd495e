#!/usr/bin/env bash
# bench/metrics.sh — what the Prometheus metrics cost on the hot path.
#
# Two gateway stacks in the same run, sharing the authorization server (tests/idp), each
# its own nginx + spawn-fcgi + mcpgate, the same binary and configuration but [metrics]:
#
#   stack M   [metrics] (allow = 127.0.0.1): every request counted in the state file
#             (by route and status, its JSON-RPC method, the token cache's hit), a few
#             relaxed atomic adds on counters every process of the host shares
#   stack O   no [metrics]: nothing counted
#
# Requests per second of:
#
#   M   POST /mcp ping (JSON-RPC) with a cached bearer token through stack M
#   O   the same ping through stack O
#
# Target: M / O >= 0.97 (the median of the per-repetition ratios). The kinds run
# interleaved (M O, M O, ...). Every answer's status and body are checked (wrk.lua's
# response(): 200 with a "result"); a run with any other answer or a socket error is not
# a measurement, and nothing is appended then; nor when M's counters did not count the
# pings: the growth of mcpgate_jsonrpc_requests_total{method="ping"} over the runs must
# be at least the pings wrk counted, and at most those plus one a connection a run (the
# requests still in flight when wrk stops); nor when O's /metrics is not 404. A
# benchmark, not a timed test: nothing here fails a build.
#
# Usage: bench/metrics.sh       (as root on Debian 12: installs what it lacks)
# Settings (environment):
#   BENCH_DURATION=10   seconds per measured run      BENCH_REPS=3    repetitions
#   BENCH_WARMUP=3      seconds per warm-up run       BENCH_THREADS=2 BENCH_CONNS=8  (wrk -t -c)
#   BENCH_PROCS=2 BENCH_WORKERS=2   mcpgate processes (spawn-fcgi -F) x threads (-w)
#   BENCH_SESSION=1     ping carries the Mcp-Session-Id and MCP-Protocol-Version of an
#                       initialize with that stack, as a client does (0: no session)
#   BENCH_SRC=worktree  build from the working tree (default), or HEAD (git archive)
#   BENCH_RESULTS=bench/RESULTS.md  where the dated section is appended ("" = nowhere)
#   MG_KEEP=1           keep the temp dir (configs, logs) after the run
# Everything goes to bench/out/metrics/ (gitignored): the build, the temp dir of the
# stacks, runs.tsv, the raw wrk output, the last run's logs.
# What it shares with the other scripts is in bench/lib.sh.
# The whole script is one brace group: bash reads it completely before running it, so
# editing this file while it runs cannot derail the run.
{
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$here/out/metrics
CACHE_TTL=3600
KINDS="M O"
NKINDS=2
KNOBS="BENCH_SESSION=$SESSION BENCH_SRC=$SRC"
# the token (tests/idp: 3600 s) must outlive the run
[ $((REPS * NKINDS * (DURATION + 2) + NKINDS * WARMUP)) -lt 3300 ] ||
	die "a run this long outlives the token (1 h); fewer BENCH_REPS or a shorter BENCH_DURATION"

# --- 1. What it needs, the binary -----------------------------------------------------
setup
build_mcpgate

# --- 2. The two stacks ----------------------------------------------------------------
mkdir -p "$OUT/tmp"
TMPDIR=$OUT/tmp bench_root '*/mcpgate.log' '*/nginx/error.log' idp.log '*/mcpgate.conf'
ports=$(free_ports 2) || die "no free ports"
read -r PORT_M PORT_O <<<"$ports"
declare -A PORTOF=([M]=$PORT_M [O]=$PORT_O) BASEOF=([M]=http://127.0.0.1:$PORT_M [O]=http://127.0.0.1:$PORT_O)
declare -A CONFMORE=([M]=$(printf '[metrics]\nallow = 127.0.0.1') [O]='')
declare -A FCGIOF=() NGINXOF=()
start_idp "${BASEOF[M]}/mcp" "${BASEOF[O]}/mcp"
for s in M O; do
	mkdir -p "$ROOT/$s"
	CONF_MORE=${CONFMORE[$s]} write_conf "$ROOT/$s" "${BASEOF[$s]}"
	out=$("$BIN" -t -c "$ROOT/$s/mcpgate.conf" 2>&1) || die "mcpgate -t refuses stack $s's configuration: $out"
done
say "starting nginx + spawn-fcgi ($PROCS x $WORKERS) twice: metrics on at $PORT_M, off at $PORT_O"
for s in M O; do
	CONF_MORE=${CONFMORE[$s]}
	start_stack "$ROOT/$s" "$BIN" "${PORTOF[$s]}" || die "stack $s did not start"
	FCGIOF[$s]=$STACK_FCGI NGINXOF[$s]=$STACK_NGINX
done
CONF_MORE=

# --- 3. Tokens, sessions, and a correctness check --------------------------------------
declare -A TOK=() SID=()
PING='{"jsonrpc":"2.0","id":1,"method":"ping"}'
open_sessions M O
for s in M O; do
	SESS=()
	[ "$SESSION" = 0 ] || SESS=(-H "Mcp-Session-Id: ${SID[$s]}" -H "MCP-Protocol-Version: $PV")
	check "stack $s: ping: 200 {}" "$(post_to "${BASEOF[$s]}/mcp" "$PING" -H "Authorization: Bearer ${TOK[$s]}" "${SESS[@]}")" '"result":\{\}.* 200$'
done
# pings_counted: what stack M's /metrics says of ping so far
pings_counted() {
	curl -s --max-time 10 "${BASEOF[M]}/metrics" | awk '$1 == "mcpgate_jsonrpc_requests_total{method=\"ping\"}" { print $2; f = 1 } END { if (!f) print 0 }'
}
check "stack M: /metrics answers Prometheus text, ping counted" "$(pings_counted)" '^[1-9][0-9]*$'
check "stack O: /metrics is 404 (no [metrics])" "$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "${BASEOF[O]}/metrics")" '^404$'
PINGS0=$(pings_counted)

# --- 4. Measuring -----------------------------------------------------------------------
runs_header kind us_nginx us_mcpgate
run() {
	local s=$1 envs=(BENCH_TARGET=ping "BENCH_TOKEN=${TOK[$1]}")
	[ "$SESSION" = 0 ] || envs+=("BENCH_SESSION=${SID[$s]}" "BENCH_PROTOCOL=$PV")
	CPU_PIDS=("$(nginx_pids "${NGINXOF[$s]}")" "${FCGIOF[$s]}")
	measure "$s" "$2" "$OUT/wrk.$3.$s.out" "${BASEOF[$s]}/mcp" BENCH_EXPECT=200 "${envs[@]}"
	row "$3" "$s"
	said "$3" "$s"
}
run_kinds " (M: metrics on; O: metrics off)"
# shellcheck disable=SC2086
runs_done ${FCGIOF[M]} ${FCGIOF[O]}
PINGS1=$(pings_counted)

# --- 5. Report ----------------------------------------------------------------------------
ratio_medians M/O
bad=$(awk -F'\t' '$1 != "rep" && ($6 > 0 || $8 > 0 || $9 > 0 || $5 != $4) { printf "%s/%s ", $1, $2 }' "$RUNS")
intro=$(awk -F'\t' '$1 != "rep" { s += $12 } END { print s + 0 }' "$RUNS")
read -r M_REQ M_RUNS <<<"$(awk -F'\t' '$1 != "rep" && $2 == "M" { q += $4; n++ } END { print q + 0, n + 0 }' "$RUNS")"
COUNTED=$((PINGS1 - PINGS0))
[ "$COUNTED" -ge "$M_REQ" ] && [ "$COUNTED" -le $((M_REQ + M_RUNS * CONNS)) ] ||
	bad="$bad pings-counted:$COUNTED-for-$M_REQ-answered "

kindname() {
	case $1 in
	M) echo "M ping, [metrics] on" ;;
	O) echo "O ping, no [metrics]" ;;
	esac
}
table() {
	# shellcheck disable=SC2086
	rates_table request "nginx, mcpgate (of the stack measured), wrk" $KINDS
	ratio_row M/O "M / O (ping with the metrics counted vs not)" "≥ 0.97" 0.97
	echo
	echo "| CPU per ping (medians, µs) | nginx | mcpgate |"
	echo "|---|---:|---:|"
	echo "| M (metrics on) | $(med M 13) | $(med M 14) |"
	echo "| O (metrics off) | $(med O 13) | $(med O 14) |"
	echo
	echo "Correctness during every run (warm-ups included):"
	echo "- status codes: every answer 200 with a \"result\", no socket errors: $([ -z "$bad" ] && echo yes || echo "NO: $bad (see bench/out/metrics/runs.tsv)")"
	echo "- M's /metrics counted $COUNTED pings over the runs for $M_REQ that wrk saw answered (at most one a connection a run more: the requests in flight when a run ends); O's /metrics is 404"
	echo "- introspections at the IdP during the runs (the tokens were cached before; 0 expected): $intro"
}
report
[ -z "$bad" ] || die "some answers were not 200 with a result, sockets failed, or the pings were not counted ($bad): not a measurement; nothing appended (see $RUNS and $OUT/wrk.*.out)"

# shellcheck disable=SC2016 # the backquotes are Markdown
append_results metrics "" \
	"one client_credentials token of oidc-provider $(oidc_version) per stack (machine-acme), cached (cache-ttl = $CACHE_TTL); two stacks (M with \`[metrics]\`, O without) sharing the IdP" kind "$KINDS" \
	"- metrics of M: \`[metrics] allow = 127.0.0.1\` (a ping counts its route and status, its JSON-RPC method and the token cache's hit); O: no [metrics]; no [limits], no [tenant], no upstream in either" \
	"- requests: POST /mcp ping with \`Content-Type: application/json\`, \`Accept: application/json, text/event-stream\`, \`Authorization: Bearer\`$([ "$SESSION" = 0 ] && echo ", no session" || echo ", the \`Mcp-Session-Id\` of one initialize with that stack and \`MCP-Protocol-Version: $PV\`")"
exit 0
}
