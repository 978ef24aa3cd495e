#!/usr/bin/env bash
# bench/mcp.sh — the benchmark of the MCP exchange.
#
# Requests per second through real nginx + spawn-fcgi + mcpgate, with a token already
# in the shared cache (the real authorization server, tests/idp, minted it and was
# asked once), of four kinds of request, reported as ratios to the first, taken in the
# same run:
#
#   H   GET /mcp/health (no token): the baseline, the cheapest request the gateway serves
#   I   POST /mcp initialize (seals a new Mcp-Session-Id every time)
#   P   POST /mcp ping, with the Mcp-Session-Id of one initialize (opened every time)
#   B   POST /mcp a batch of BENCH_BATCH (10) pings, same session
#
# Targets: I / H >= 0.85 and P / H >= 0.85 (B / H and its messages/s are reported).
# And the cost of a session's seal + open, per request, in µs (target < 5 µs): measured
# by bench/session.c (built here as bench/session_bench) with the gateway's own code,
# and compared with mcpgate's CPU per health request.
#
# The kinds run interleaved (H I P B, H I P B, ...) and the medians are reported. Every
# answer's status is counted (wrk.lua's response()): a run with any answer other than the
# expected 200, a wrong body or a socket error is not a measurement, and nothing is
# appended then. A benchmark, not a timed test: nothing here fails a build.
#
# Usage: bench/mcp.sh            (as root on Debian 12: installs what it lacks)
# Settings (environment):
#   BENCH_DURATION=10   seconds per measured run      BENCH_REPS=3    repetitions
#   BENCH_WARMUP=3      seconds per warm-up run       BENCH_THREADS=2 BENCH_CONNS=8  (wrk -t -c)
#   BENCH_PROCS=2 BENCH_WORKERS=2   mcpgate processes (spawn-fcgi -F) x threads (-w)
#   BENCH_BATCH=10      pings per batch
#   BENCH_SESSION=1     ping and batch carry the Mcp-Session-Id and MCP-Protocol-Version
#                       of an initialize, as a client does (0: stateless, no session)
#   BENCH_SESSION_N=20000  operations per repetition of bench/session_bench (7 repetitions)
#   BENCH_SRC=worktree  build from the working tree (default), or HEAD (git archive)
#   BENCH_RESULTS=bench/RESULTS.md  where the dated section is appended ("" = nowhere)
#   MG_KEEP=1           keep the temp dir (configs, logs) after the run
# Everything goes to bench/out/mcp/ (gitignored): the build, the temp dir of the stack,
# runs.tsv, the raw wrk output, session.out, the last run's logs.
# What it shares with bench/auth.sh (set-up, build, stack, measuring, report) is in
# bench/lib.sh.
# The whole script is one brace group: bash reads it completely before running it, so
# editing this file while it runs cannot derail the run.
{
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$here/out/mcp
BATCH=${BENCH_BATCH:-10}
SESSION_N=${BENCH_SESSION_N:-20000}
CACHE_TTL=3600
KINDS="H I P B"
KNOBS="BENCH_BATCH=$BATCH BENCH_SESSION=$SESSION BENCH_SESSION_N=$SESSION_N BENCH_SRC=$SRC"
# the token (tests/idp: 3600 s) must outlive the run
[ $((REPS * 4 * (DURATION + 2) + 4 * WARMUP)) -lt 3300 ] || die "a run this long outlives the token (1 h); fewer BENCH_REPS or a shorter BENCH_DURATION"

# --- 1. What it needs -------------------------------------------------------------
setup

# --- 2. The binaries ----------------------------------------------------------------
# A copy of the sources (bench/lib.sh's build), built out of tree: src/mcpgate (the
# default CFLAGS, as installed), and bench/session_bench (make bench/session_bench, an
# EXTRA_PROGRAMS of Makefile.am). bench/session.c is the benchmark's own: always the
# working tree's.
build_mcpgate_with session_bench

# --- 3. Session seal + open, alone ----------------------------------------------------
# Before the stack starts, so that nothing of ours competes with it.
prog_run "session seal + open" -n "$SESSION_N" -r 7

# --- 4. The stack -------------------------------------------------------------------
# One stack, in the temp dir itself (configs, sockets, state file, logs), under
# bench/out/mcp/tmp.
mkdir -p "$OUT/tmp"
TMPDIR=$OUT/tmp bench_root mcpgate.log nginx/error.log idp.log mcpgate.conf
one_stack "$BIN"

# --- 5. The token, the session, and a correctness check ------------------------------
TOKEN=$(one_token) || die "cannot mint a token"
PING='{"jsonrpc":"2.0","id":1,"method":"ping"}'
BATCHBODY=$(for i in $(seq 1 "$BATCH"); do printf '{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' "$i"; done | paste -sd, | sed 's/^/[/; s/$/]/')

post() { # BODY [HEADER...] → "STATUS BODY" (and the headers in $ROOT/headers)
	local body=$1
	shift
	curl -s --max-time 10 -D "$ROOT/headers" -w ' %{http_code}' -X POST "$BASE/mcp" \
		-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "$@" --data "$body"
}
check "GET /mcp/health: 200" "$(curl -s --max-time 10 -w ' %{http_code}' "$BASE/mcp/health")" '"status".* 200$'
check "ping without a token: 401" "$(post "$PING")" ' 401$'
check "initialize: 200 with the protocol version" "$(post "$INIT" -H "Authorization: Bearer $TOKEN")" "\"protocolVersion\":\"$PV\".* 200\$"
SID=$(tr -d '\r' <"$ROOT/headers" | sed -n 's/^[Mm][Cc][Pp]-[Ss]ession-[Ii][Dd]: *//p')
[ -n "$SID" ] || die "initialize gave no Mcp-Session-Id"
SESS=()
[ "$SESSION" = 0 ] || SESS=(-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $PV")
check "ping: 200 {}" "$(post "$PING" -H "Authorization: Bearer $TOKEN" "${SESS[@]}")" '"result":\{\}.* 200$'
got=$(post "$BATCHBODY" -H "Authorization: Bearer $TOKEN" "${SESS[@]}")
check "batch of $BATCH pings: 200" "$got" ' 200$'
[ "$(grep -o '"result"' <<<"$got" | wc -l)" = "$BATCH" ] || die "check failed: batch: not $BATCH results: $got"
check "ping with a forged session: 404" "$(post "$PING" -H "Authorization: Bearer $TOKEN" -H "Mcp-Session-Id: x${SID:1}" -H "MCP-Protocol-Version: $PV")" ' 404$'

# --- 6. Measuring -------------------------------------------------------------------
runs_header kind us_nginx us_mcpgate
# the CPU of nginx (the master and its workers) and mcpgate
CPU_PIDS=("$(nginx_pids "$NGINX")" "$FCGI")

# run KIND SECONDS REP: one wrk run (bench/lib.sh's measure); appends a row to $RUNS
# (REP "w" = warm-up, not reported, but checked like the others).
run() {
	local kind=$1 secs=$2 rep=$3 url=$BASE/mcp envs
	case $kind in
	H) url=$BASE/mcp/health envs=(BENCH_TARGET=health) ;;
	I) envs=(BENCH_TARGET=initialize "BENCH_TOKEN=$TOKEN") ;;
	P) envs=(BENCH_TARGET=ping "BENCH_TOKEN=$TOKEN") ;;
	B) envs=(BENCH_TARGET=batch "BENCH_TOKEN=$TOKEN" "BENCH_BATCH=$BATCH") ;;
	esac
	[ "$SESSION" = 0 ] || [ "$kind" = H ] || [ "$kind" = I ] || envs+=("BENCH_SESSION=$SID" "BENCH_PROTOCOL=$PV")
	measure "$kind" "$secs" "$OUT/wrk.$rep.$kind.out" "$url" BENCH_EXPECT=200 "${envs[@]}"
	row "$rep" "$kind"
	said "$rep" "$kind"
}

run_kinds ''
# shellcheck disable=SC2086
runs_done $FCGI

# --- 7. Report ----------------------------------------------------------------------
ratio_medians I/H P/H B/H "B/H/$BATCH"

# correctness over every run, warm-ups included
bad=$(awk -F'\t' '$1 != "rep" && ($6 > 0 || $8 > 0 || $9 > 0 || $5 != $4) { printf "%s/%s ", $1, $2 }' "$RUNS")
intro=$(awk -F'\t' '$1 != "rep" { s += $12 } END { print s + 0 }' "$RUNS")

# the session micro-benchmark, and what it is worth per request
SEAL_OPEN_NS=$(pb seal_open_ns)
US_HEALTH_MG=$(med H 14)
US_SEAL_OPEN=$(us "$SEAL_OPEN_NS")

kindname() {
	case $1 in
	H) echo "H GET /mcp/health" ;; I) echo "I initialize" ;;
	P) echo "P ping$([ "$SESSION" = 0 ] && echo ", no session" || echo ", in a session")" ;;
	B) echo "B batch of $BATCH pings$([ "$SESSION" = 0 ] || echo ", in a session")" ;;
	esac
}
table() {
	# shellcheck disable=SC2086
	rates_table request "nginx, mcpgate, wrk" $KINDS
	ratio_row I/H "I / H (initialize vs health)" "≥ 0.85" 0.85
	ratio_row P/H "P / H (ping vs health)" "≥ 0.85" 0.85
	ratio_row B/H "B / H (batch of $BATCH vs health, requests)"
	ratio_row "B/H/$BATCH" "$BATCH × B / H (batch, messages/s vs health requests/s)"
	echo
	echo "Session seal + open (\`bench/session_bench -n $(pb n) -r $(pb reps)\`: src/state/session.c, a $(pb id_chars)-character Mcp-Session-Id, $(pb tombs) tombstones in a state file; CPU time, median of $(pb reps)):"
	echo
	echo "| operation | µs | target | result |"
	echo "|---|---:|---|---|"
	echo "| seal (session_who + session_seal: initialize) | $(us "$(pb seal_ns)") | | |"
	echo "| open (session_who + session_open: every request of a session) | $(us "$(pb open_ns)") | | |"
	echo "| **seal + open** | **$US_SEAL_OPEN** (best $(us "$(pb seal_open_best_ns)")) | < 5 | $(awk -v x="$SEAL_OPEN_NS" 'BEGIN { print (x < 5000 ? "PASS" : "FAIL") }') |"
	echo "| pieces: session_open without tombstones; secret_seal; secret_open; the nonce (getrandom) | $(us "$(pb open_notombs_ns)"); $(us "$(pb secret_seal_ns)"); $(us "$(pb secret_open_ns)"); $(us "$(pb random_ns)") | | |"
	echo "| for scale: mcpgate's CPU per health request (H, through nginx) | $US_HEALTH_MG | | seal + open = $(awk -v a="$SEAL_OPEN_NS" -v b="$US_HEALTH_MG" 'BEGIN { printf "%.0f", (b > 0 ? a / 10 / b : 0) }') % of it |"
	echo
	echo "Correctness during every run (warm-ups included):"
	echo "- status codes: every answer 200 with the expected body (health \"status\", initialize \"protocolVersion\" and an Mcp-Session-Id, ping a \"result\", batch $BATCH of them), no socket errors: $([ -z "$bad" ] && echo yes || echo "NO: $bad (see bench/out/mcp/runs.tsv)")"
	echo "- introspections at the IdP during the runs (the token was cached before; 0 expected): $intro"
}
report
[ -z "$bad" ] || die "some answers were not 200 with the expected body, or sockets failed ($bad): not a measurement; nothing appended (see $RUNS and $OUT/wrk.*.out)"

append_results mcp "" \
	"one client_credentials token of oidc-provider $(oidc_version), cached (cache-ttl = $CACHE_TTL)" kind "$KINDS" \
	"- requests: POST /mcp with \`Content-Type: application/json\`, \`Accept: application/json, text/event-stream\`, \`Authorization: Bearer\`; $([ "$SESSION" = 0 ] && echo "ping and batch without a session" || echo "ping and batch with the \`Mcp-Session-Id\` of one initialize and \`MCP-Protocol-Version: $PV\`"); initialize asks for $PV"
exit 0
}
