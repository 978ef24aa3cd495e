#!/usr/bin/env bash
# bench/exchange.sh — an upstream reached as the caller ([upstream] credentials =
# exchange, RFC 8693) against the same upstream behind a static header.
#
# Two gateway stacks in the same run, sharing the authorization server (tests/idp, whose
# token exchange grant issues the upstream's tokens) and one upstream
# (tests/upstream/fixture.mjs, official SDK, --json, which takes any credentials: what is
# measured is the gateway's side), each its own nginx + spawn-fcgi + mcpgate
# (BENCH_PROCS x BENCH_WORKERS), the same binary:
#
#   stack S   [upstream] credentials = static: one auth-header-file line for every caller
#   stack X   [upstream] credentials = exchange: the caller's token exchanged once, then
#             the issued token from the host's cache (the state file), unsealed per call
#
# Requests per second, p50/p99 latency and CPU per request of tools/call of the echo
# tool (a_echo) in a session of each stack, with 16 client connections (S16, X16) and 64
# (S64, X64); and X100: 100 callers' tokens in turn on stack X, each
# call without a session, whose exchanges are counted: one per caller for all the runs. Target: X16 / S16 and X64 / S64 ≥ 0.95 (a cached exchanged token costs a
# relayed call no more than 5 %). The difference of mcpgate's CPU per request, X - S, is
# what a cache hit costs (the lookup and the unsealing).
#
# And, after the runs, what a first call costs: BENCH_FIRST fresh tokens of the same
# client, each making one tools/call on stack X (a new caller token: one exchange at
# the token endpoint) and then a second (a cache hit); the median wall time of each, and
# the token endpoint's requests (one exchange per token, counted at the idp).
#
# Every answer's status and body are checked (wrk.lua: the echoed argument): a run with
# any other answer or a socket error is not a measurement, and nothing is appended then.
# A benchmark, not a timed test: nothing here fails a build.
#
# Usage: bench/exchange.sh       (as root on Debian 12: installs what it lacks)
# Settings (environment):
#   BENCH_DURATION=10   seconds per measured run      BENCH_REPS=3    repetitions
#   BENCH_WARMUP=3      seconds per warm-up run       BENCH_THREADS=1 (wrk -t)
#   BENCH_PROCS=2 BENCH_WORKERS=2   mcpgate processes (spawn-fcgi -F) x threads (-w)
#   BENCH_FIRST=20      fresh tokens for the first-call measure
#   BENCH_SRC=worktree  build from the working tree (default), or HEAD (git archive)
#   BENCH_RESULTS=bench/RESULTS.md  where the dated section is appended ("" = nowhere)
#   MG_KEEP=1           keep the temp dir (configs, logs) after the run
# Everything goes to bench/out/exchange/ (gitignored). What it shares with the other
# scripts is in bench/lib.sh.
# The whole script is one brace group: bash reads it completely before running it, so
# editing this file while it runs cannot derail the run.
{
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$here/out/exchange
THREADS=${BENCH_THREADS:-1}
FIRST=${BENCH_FIRST:-20}
CACHE_TTL=3600
KINDS="S16 X16 S64 X64 X100"
NKINDS=5
CALLERS=100
KNOBS="BENCH_FIRST=$FIRST BENCH_SRC=$SRC"
ECHO_ARG=exchange-bench-echo
[[ $FIRST =~ ^[1-9][0-9]*$ ]] || die "BENCH_FIRST must be a number of tokens"
[ $((REPS * NKINDS * (DURATION + 2) + NKINDS * WARMUP)) -lt 3000 ] ||
	die "a run this long outlives the tokens (1 h); fewer BENCH_REPS or a shorter BENCH_DURATION"

setup
need_sdk
build_mcpgate

# --- The upstream and the two stacks -------------------------------------------------
mkdir -p "$OUT/tmp"
TMPDIR=$OUT/tmp bench_root '*/mcpgate.log' '*/nginx/error.log' idp.log 'up-*.log'
start_upstreams 50 a
read -r PORT_S PORT_X <<<"$(two_ports)" || die "no free ports"
declare -A BASEOF=([S]=http://127.0.0.1:$PORT_S [X]=http://127.0.0.1:$PORT_X) FCGIOF=() NGINXOF=() TOK=() SID=()
start_idp "${BASEOF[X]}/mcp" "${BASEOF[S]}/mcp" "${UP_URL[a]}"	# X first: bench/mint.mjs's tokens are X's
(umask 077 && printf 'Authorization: Bearer static-bench-credential\n' > "$ROOT/static.header")
say "starting nginx + spawn-fcgi ($PROCS x $WORKERS) twice: a static header on $PORT_S, token exchange on $PORT_X"
mkdir -p "$ROOT/S" "$ROOT/X"
CONF_MORE=$(printf '[upstream "a"]\nurl = %s\nprefix = a_\ncredentials = static\nauth-header-file = %s\n' \
	"${UP_URL[a]}" "$ROOT/static.header") start_stack "$ROOT/S" "$BIN" "$PORT_S" || die "stack S did not start"
FCGIOF[S]=$STACK_FCGI NGINXOF[S]=$STACK_NGINX
CONF_MORE=$(printf '[upstream "a"]\nurl = %s\nprefix = a_\ncredentials = exchange\n' "${UP_URL[a]}") \
	start_stack "$ROOT/X" "$BIN" "$PORT_X" || die "stack X did not start"
FCGIOF[X]=$STACK_FCGI NGINXOF[X]=$STACK_NGINX

open_sessions S X
ARGS='{"text":"'$ECHO_ARG'"}'
call() { printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":%s}}' "$1" "$2"; }
for s in S X; do
	check "stack $s: tools/call a_echo: the echo" \
		"$(post_to "${BASEOF[$s]}/mcp" "$(call a_echo "$ARGS")" -H "Authorization: Bearer ${TOK[$s]}" \
		-H "Mcp-Session-Id: ${SID[$s]}" -H "MCP-Protocol-Version: $PV")" "$ECHO_ARG.* 200\$"
done
exchanges() { curl -s --max-time 5 "$IDP/_stats" | jq -r .exchanges; }
[ "$(exchanges)" -ge 1 ] || die "stack X made no token exchange"
say "minting $CALLERS callers' tokens for X100"
node "$here/mint.mjs" --issuer "$IDP" --count "$CALLERS" --out "$ROOT/callers.txt" --concurrency 8 || die "minting failed"

# --- Measuring -----------------------------------------------------------------------
runs_header kind us_nginx us_mcpgate us_upstream
run() { # KIND SECONDS REP
	local kind=$1 s=${1:0:1} who
	CONNS=${kind//[A-Z]/}
	who=("BENCH_TOKEN=${TOK[$s]}" "BENCH_SESSION=${SID[$s]}" "BENCH_PROTOCOL=$PV")
	# X100: the pool's callers in turn, each without a session (stateless calls)
	[ "$kind" != X100 ] || { CONNS=16; who=("BENCH_POOL=$ROOT/callers.txt" BENCH_CYCLE=1); }
	CPU_PIDS=("$(nginx_pids "${NGINXOF[$s]}")" "${FCGIOF[$s]}" "${UP_PID[a]}")
	measure "$kind" "$2" "$OUT/wrk.$3.$kind.out" "${BASEOF[$s]}/mcp" BENCH_EXPECT=200 BENCH_TARGET=call \
		BENCH_TOOL=a_echo "BENCH_ARGS=$ARGS" "BENCH_WANT=$ECHO_ARG" "${who[@]}"
	row "$3" "$kind"
	said "$3" "$kind"
}
x0=$(exchanges)
run_kinds " (S: a static header; X: token exchange, cached; X100: $CALLERS callers in turn, 16 connections)"
x1=$(exchanges)
# shellcheck disable=SC2086
runs_done ${FCGIOF[S]} ${FCGIOF[X]}
CONNS=16

# --- The first call of a caller: one exchange ------------------------------------------
say "first calls: $FIRST fresh tokens on stack X, a first and a second tools/call each"
first=() second=() e0=$(exchanges)
for _ in $(seq 1 "$FIRST"); do
	t=$(token_for "${BASEOF[X]}/mcp") || die "cannot mint a token"
	# the token verified and cached at the gate first (ping), so that the first call's
	# extra time is the exchange, not the introspection
	post_to "${BASEOF[X]}/mcp" '{"jsonrpc":"2.0","id":1,"method":"ping"}' -H "Authorization: Bearer $t" >/dev/null
	for n in 1 2; do
		w=$(curl -s --max-time 20 -o "$ROOT/first.out" -w '%{time_total}' -X POST "${BASEOF[X]}/mcp" \
			-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
			-H "Authorization: Bearer $t" --data "$(call a_echo "$ARGS")")
		grep -q "$ECHO_ARG" "$ROOT/first.out" || die "a first-call answer without the echo: $(head -c 300 "$ROOT/first.out")"
		if [ "$n" = 1 ]; then first+=("$w"); else second+=("$w"); fi
	done
done
e1=$(exchanges)
ms() { printf '%s\n' "$@" | medlist | awk '{ printf "%.2f", $1 * 1000 }'; }

# --- Report --------------------------------------------------------------------------
ratio_medians X16/S16 X64/S64
bad=$(awk -F'\t' '$1 != "rep" && ($6 > 0 || $8 > 0 || $9 > 0 || $5 != $4) { printf "%s/%s ", $1, $2 }' "$RUNS")
kindname() {
	case $1 in
	S*) echo "$1 tools/call a_echo, static header, ${1//[A-Z]/} connections" ;;
	X100) echo "$1 tools/call a_echo, token exchange, $CALLERS callers in turn (no session), 16 connections" ;;
	X*) echo "$1 the same, token exchange (cached)" ;;
	esac
}
table() {
	# shellcheck disable=SC2086
	rates_table request "nginx, mcpgate, the upstream" $KINDS
	ratio_row X16/S16 "X16 / S16 (a cached exchanged token vs a static header, 16 connections)" "≥ 0.95" 0.95
	ratio_row X64/S64 "X64 / S64 (the same, 64 connections)" "≥ 0.95" 0.95
	echo
	echo "mcpgate CPU per call, X − S (what a cache hit costs: the lookup and the unsealing), median: 16 connections $(awk -v a="$(med X16 14)" -v b="$(med S16 14)" 'BEGIN { print a - b }') µs, 64 connections $(awk -v a="$(med X64 14)" -v b="$(med S64 14)" 'BEGIN { print a - b }') µs."
	echo
	echo "Token exchanges during all the runs, warm-ups included (the one caller of X16 and X64 had its token already; the $CALLERS callers of X100 one each, then the cache): $((x1 - x0)) (target: $CALLERS, one per caller and upstream while the tokens live)."
	echo
	echo "A caller's first call on stack X (its token already accepted at the gate; one exchange at the token endpoint) against its second (a cache hit), wall time, median of $FIRST callers: first $(ms "${first[@]}") ms, second $(ms "${second[@]}") ms; token exchanges made: $((e1 - e0)) for $FIRST callers."
	echo
	echo "Correctness during every run (warm-ups included): every answer 200 with the echoed argument, no socket errors: $([ -z "$bad" ] && echo yes || echo "NO: $bad")"
}
report
[ -z "$bad" ] || die "some answers were not right ($bad): not a measurement; nothing appended (see $RUNS)"
# shellcheck disable=SC2016 # the backquotes are Markdown
append_results exchange "" "client_credentials tokens of oidc-provider $(oidc_version) (its RFC 8693 grant, tests/idp/exchange.mjs), cached at the gate (cache-ttl = $CACHE_TTL); two stacks: S with \`credentials = static\`, X with \`credentials = exchange\`; upstream: tests/upstream/fixture.mjs --json (SDK $(jq -r .version "$top/tests/node_modules/@modelcontextprotocol/sdk/package.json"), node $(node -v))" \
	kind "$KINDS" \
	"- requests: POST /mcp tools/call of a_echo with \`Authorization: Bearer\`, in the \`Mcp-Session-Id\` of one initialize with \`MCP-Protocol-Version: $PV\`; wrk -t$THREADS, -c16 and -c64"
exit 0
}
