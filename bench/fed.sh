#!/usr/bin/env bash
# bench/fed.sh — the benchmark of federation.
#
# Three upstream MCP servers (tests/upstream/fixture.mjs, official SDK, --json, with
# echo tools added so that the three expose BENCH_TOOLS (200) tools together, prefixes
# a_, b_, c_) behind real nginx + spawn-fcgi + mcpgate, with a token already in the
# shared cache (tests/idp). Requests per second of:
#
#   H   GET /mcp/health (no token): the baseline, the cheapest request the gateway serves
#   L   POST /mcp tools/list: the whole cached catalog in one page (page-size = the
#       catalog's size, catalog-ttl longer than the run)
#   C   POST /mcp tools/call of a_echo (the fixture's echo tool, prefixed) with a small
#       argument: relayed to upstream a over the worker's kept-alive connection
#   D   the same tools/call of echo sent straight to upstream a by the same wrk (its own
#       session, Mcp-Session-Id and MCP-Protocol-Version): what the gateway is added to
#   H1, C1, D1  H, C and D with one connection (wrk -t1 -c1): the latency of a lone
#       request (H1: what nginx + FastCGI + mcpgate's cheapest answer take alone)
#
# And the system calls per request of H, L and C (strace -f -c on the mcpgate processes,
# one request at a time, BENCH_STRACE_SECONDS (3) each, less the calls made idle).
#
# Targets: L / H >= 0.7; the gateway adds <= 15 % to a call (C / D >= 1 / 1.15, rates at
# the same concurrency) and < 150 µs (p50 latency of C1 minus D1: one call at a time, no
# queueing); memory per worker with the catalog loaded <= 10 MiB RSS (VmRSS of each
# mcpgate process after the runs, and that divided by its worker threads; also its
# private part, RssAnon, and Pss).
#
# The kinds run interleaved (H L C D H1 C1 D1, H L C D H1 C1 D1, ...) and the medians are
# reported. Every answer's status and body are checked (wrk.lua's response(): L must hold
# BENCH_TOOLS "inputSchema", C and D the echoed argument): a run with any other answer or
# a socket error is not a measurement, and nothing is appended then. A benchmark, not a
# timed test: nothing here fails a build.
#
# Usage: bench/fed.sh            (as root on Debian 12: installs what it lacks)
# Settings (environment):
#   BENCH_DURATION=10   seconds per measured run      BENCH_REPS=3    repetitions
#   BENCH_WARMUP=3      seconds per warm-up run       BENCH_THREADS=2 BENCH_CONNS=8  (wrk -t -c)
#   BENCH_PROCS=2 BENCH_WORKERS=2   mcpgate processes (spawn-fcgi -F) x threads (-w)
#   BENCH_TOOLS=200     tools in the catalog, from the three upstreams together
#   BENCH_SESSION=1     L and C carry the Mcp-Session-Id and MCP-Protocol-Version of an
#                       initialize with the gateway, as a client does (0: no session)
#   BENCH_SRC=worktree  build from the working tree (default), or HEAD (git archive)
#   BENCH_RESULTS=bench/RESULTS.md  where the dated section is appended ("" = nowhere)
#   MG_KEEP=1           keep the temp dir (configs, logs) after the run
# Everything goes to bench/out/fed/ (gitignored): the build, the temp dir of the stack,
# runs.tsv, the raw wrk output, rss.tsv, the last run's logs.
# What it shares with bench/auth.sh and bench/mcp.sh is in bench/lib.sh.
# The whole script is one brace group: bash reads it completely before running it, so
# editing this file while it runs cannot derail the run.
{
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$here/out/fed
TOOLS=${BENCH_TOOLS:-200}
CACHE_TTL=3600
CATALOG_TTL=3600
KINDS="H L C D H1 C1 D1"
NKINDS=7
KNOBS="BENCH_TOOLS=$TOOLS BENCH_SESSION=$SESSION BENCH_SRC=$SRC"
UPSTREAMS="a b c"
ECHO_ARG=fed-bench-echo
# the token (tests/idp: 3600 s) and the catalog (catalog-ttl) must outlive the run
[ $((REPS * NKINDS * (DURATION + 2) + NKINDS * WARMUP)) -lt 3300 ] ||
	die "a run this long outlives the token and the catalog (1 h); fewer BENCH_REPS or a shorter BENCH_DURATION"
[ "$TOOLS" -ge $((3 * OWN_TOOLS)) ] || die "BENCH_TOOLS must be at least $((3 * OWN_TOOLS)) (the fixture's own tools, 3 times)"

# --- 1. What it needs -------------------------------------------------------------
setup
need_sdk

# --- 2. The binary ------------------------------------------------------------------
# A copy of the sources, built out of tree: src/mcpgate (bench/lib.sh's build_mcpgate).
build_mcpgate

# --- 3. The upstreams ---------------------------------------------------------------
# One stack, in the temp dir itself (configs, sockets, state file, logs), under
# bench/out/fed/tmp; the three fixtures first, their tools split so that the three
# expose TOOLS together.
mkdir -p "$OUT/tmp"
TMPDIR=$OUT/tmp bench_root mcpgate.log nginx/error.log idp.log mcpgate.conf 'up-*.log'
# shellcheck disable=SC2086 # the names, one word each
start_upstreams "$TOOLS" $UPSTREAMS

# --- 4. The stack -------------------------------------------------------------------
# page-size = the catalog's size: one tools/list answers the whole catalog.
CONF_GATEWAY="page-size = $TOOLS
catalog-ttl = $CATALOG_TTL"
CONF_MORE=$(for u in $UPSTREAMS; do printf '[upstream "%s"]\nurl = %s\nprefix = %s_\ntimeout-ms = 5000\n' "$u" "${UP_URL[$u]}" "$u"; done)
one_stack "$BIN"

# rss WHEN: one row per mcpgate process in $OUT/rss.tsv: its VmRSS, RssAnon, RssFile,
# RssShmem (kB, /proc/PID/status), Pss (kB, /proc/PID/smaps_rollup: shared pages split
# among the processes that map them) and threads.
RSS=$OUT/rss.tsv
tsv when pid vmrss_kb rssanon_kb rssfile_kb rssshmem_kb pss_kb threads >"$RSS"
rss() {
	local p
	for p in $FCGI; do printf '%s\t%s\t%s\n' "$1" "$p" "$(proc_mem "$p")" >>"$RSS"; done
}
rss start

# --- 5. The token, the sessions, and a correctness check -----------------------------
TOKEN=$(one_token) || die "cannot mint a token"
LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
ARGS='{"text":"'$ECHO_ARG'"}'
call() { printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":%s}}' "$1" "$ARGS"; }
# the echo tool answers its arguments as JSON text: this, in the answer's JSON
WANT_ECHO='\"text\":\"'$ECHO_ARG'\"'

check "GET /mcp/health: 200, ok" "$(curl -s --max-time 10 -w ' %{http_code}' "$BASE/mcp/health")" '"status":"ok".* 200$'
check "gateway initialize: 200" "$(post_to "$BASE/mcp" "$INIT" -H "Authorization: Bearer $TOKEN")" "\"protocolVersion\":\"$PV\".* 200\$"
SID=$(sid)
[ -n "$SID" ] || die "the gateway's initialize gave no Mcp-Session-Id"
SESS=()
[ "$SESSION" = 0 ] || SESS=(-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $PV")
got=$(post_to "$BASE/mcp" "$LIST" -H "Authorization: Bearer $TOKEN" "${SESS[@]}")
check "tools/list: 200" "$got" ' 200$'
counts=$(body "$got" | jq -r '[(.result.tools | length), (.result.nextCursor // "none"),
	(.result.tools | map(.name | split("_")[0]) | group_by(.) | map("\(.[0]):\(length)") | join(","))] | join(" ")')
want_counts="$TOOLS none $(for u in $UPSTREAMS; do printf '%s:%s,' "$u" $((OWN_TOOLS + UP_N[$u])); done | sed 's/,$//')"
[ "$counts" = "$want_counts" ] || die "check failed: tools/list: want '$want_counts' (tools, nextCursor, per prefix), got '$counts'"
[ "$(body "$got" | grep -o '"inputSchema"' | wc -l)" = "$TOOLS" ] || die "check failed: tools/list: not $TOOLS \"inputSchema\""
LIST_BYTES=$(($(wc -c <<<"$got") - 5))
GW_CALL=$(post_to "$BASE/mcp" "$(call a_echo)" -H "Authorization: Bearer $TOKEN" "${SESS[@]}")
[[ $GW_CALL == *"$WANT_ECHO"*" 200" ]] || die "check failed: tools/call a_echo through the gateway: 200 with the echo: got '$GW_CALL'"
# straight to upstream a: a session of its own (initialize + notifications/initialized)
up_session "${UP_URL[a]}"
UP_CALL=$(post_to "${UP_URL[a]}" "$(call echo)" "${UP_SESS[@]}")
check "tools/call echo straight to upstream a: 200" "$UP_CALL" ' 200$'
[ "$(body "$GW_CALL" | jq -c .result)" = "$(body "$UP_CALL" | jq -c .result)" ] ||
	die "check failed: the gateway's result differs from the upstream's: $(body "$GW_CALL") vs $(body "$UP_CALL")"

# --- 6. Measuring -------------------------------------------------------------------
runs_header kind us_nginx us_mcpgate us_upstreams
# the CPU of nginx (the master and its workers), mcpgate and the three upstreams
CPU_PIDS=("$(nginx_pids "$NGINX")" "$FCGI" "${UP_PID[*]}")

# run KIND SECONDS REP: one wrk run (bench/lib.sh's measure); appends a row to $RUNS
# (REP "w" = warm-up, not reported, but checked like the others).
run() {
	local kind=$1 secs=$2 rep=$3 url=$BASE/mcp envs t=$THREADS c=$CONNS
	case $kind in
	H | H1) url=$BASE/mcp/health envs=(BENCH_TARGET=health) ;;
	L) envs=(BENCH_TARGET=list "BENCH_TOKEN=$TOKEN" "BENCH_WANT=\"inputSchema\"" "BENCH_WANT_N=$TOOLS") ;;
	C | C1) envs=(BENCH_TARGET=call "BENCH_TOKEN=$TOKEN" BENCH_TOOL=a_echo) ;;
	D | D1) url=${UP_URL[a]} envs=(BENCH_TARGET=call BENCH_TOOL=echo "BENCH_SESSION=$UP_SID" "BENCH_PROTOCOL=$PV") ;;
	esac
	case $kind in C* | D*) envs+=("BENCH_ARGS=$ARGS" "BENCH_WANT=$WANT_ECHO") ;; esac
	case $kind in ?1) t=1 c=1 ;; esac
	[ "$rep" != s ] || t=1 c=1	# counting system calls: one request at a time
	[ "$SESSION" = 0 ] || [ "${kind#H}" != "$kind" ] || [ "${kind#D}" != "$kind" ] || envs+=("BENCH_SESSION=$SID" "BENCH_PROTOCOL=$PV")
	THREADS=$t CONNS=$c measure "$kind" "$secs" "$OUT/wrk.$rep.$kind.out" "$url" BENCH_EXPECT=200 "${envs[@]}"
	[ "$rep" != s ] || return 0	# (not a measured run)
	row "$rep" "$kind"
	said "$rep" "$kind"
}

run_kinds " (H1, C1, D1: -t1 -c1)"

# System calls per request: strace -f -c on every mcpgate process while wrk -t1 -c1 sends
# H, L and C for STRACE_SECS each (strace slows them: counts, not rates), less what the
# processes make idle for as long (the tick, the watchdog). SYSCALLS: one line per kind,
# "KIND per-request name:count...".
STRACE_SECS=${BENCH_STRACE_SECONDS:-3}
SYSCALLS=
traced() { # every mcpgate process has a tracer
	local p
	for p in $FCGI; do [ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$p/status")" != 0 ] || return 1; done
}
total_calls() { awk '$NF == "total" { print $4 + 0 }' "$1"; }
for kind in idle H L C; do
	# shellcheck disable=SC2046,SC2086 # one -p per process
	strace -f -c -o "$OUT/strace.$kind" $(printf -- '-p %s ' $FCGI) 2>/dev/null &
	spid=$!
	for _ in $(seq 1 100); do traced && break; sleep 0.1; done
	if [ "$kind" = idle ]; then sleep "$STRACE_SECS"; else run "$kind" "$STRACE_SECS" s; fi
	kill -INT "$spid"
	wait "$spid" 2>/dev/null
	[ "$kind" = idle ] && { idle_calls=$(total_calls "$OUT/strace.idle"); continue; }
	SYSCALLS+="$kind $(awk -v c="$(total_calls "$OUT/strace.$kind")" -v i="$idle_calls" -v r="$REQ" 'BEGIN { printf "%.1f", (r > 0 ? (c - i) / r : 0) }')"
	SYSCALLS+=" $(awk -v r="$REQ" '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" && $4 / r >= 0.05 { printf "%s:%.1f\n", $NF, $4 / r }' "$OUT/strace.$kind" |
		sort -t: -k2 -g -r | head -n 10 | tr '\n' ' ')"$'\n'
done
# shellcheck disable=SC2086
runs_done $FCGI
rss end
HEALTH_END=$(curl -s --max-time 10 -w ' %{http_code}' "$BASE/mcp/health")
# an upstream left out, or a catalog too large for the state file (the three fixtures
# offer the same resource URIs: "offered by more than one upstream" lines about those are expected)
CATALOG_LOG=$(grep -Ec 'catalog: .*(what it offers is left out|kept per worker)' "$ROOT/mcpgate.log")

# --- 7. Report ----------------------------------------------------------------------
ratio_medians L/H C/D C1/D1

# correctness over every run, warm-ups included
bad=$(awk -F'\t' '$1 != "rep" && ($6 > 0 || $8 > 0 || $9 > 0 || $5 != $4) { printf "%s/%s ", $1, $2 }' "$RUNS")
intro=$(awk -F'\t' '$1 != "rep" { s += $12 } END { print s + 0 }' "$RUNS")
[[ $HEALTH_END =~ '"status":"ok"'.*' 200'$ ]] || bad="$bad health-after:${HEALTH_END// /_} "
[ "$CATALOG_LOG" = 0 ] || bad="$bad catalog-log-lines:$CATALOG_LOG "

# per repetition: the p50 latency of A minus B's (µs), and the time per call at
# CONNS connections (Little's law: CONNS / rate) of A minus B's
p50_diffs() { for r in $(seq 1 "$REPS"); do printf ' %s' $(($(val "$r" "$1" 10) - $(val "$r" "$2" 10))); done; }
p50_ratios() { for r in $(seq 1 "$REPS"); do printf ' %s' "$(ratio "$(val "$r" "$1" 10)" "$(val "$r" "$2" 10)")"; done; }
little_diffs() {
	for r in $(seq 1 "$REPS"); do
		awk -v a="$(val "$r" "$1" 3)" -v b="$(val "$r" "$2" 3)" -v c="$CONNS" 'BEGIN { printf " %.0f", (a > 0 && b > 0 ? 1e6 * c / a - 1e6 * c / b : 0) }'
	done
}
ADD1=$(p50_diffs C1 D1)
ADD1_MED=$(medlist <<<"$ADD1")
LAT1=$(p50_ratios C1 D1)
ADD8=$(p50_diffs C D)
LITTLE8=$(little_diffs C D)
# per process, after the runs: the largest of each column (MiB)
rssmax() { awk -F'\t' -v c="$1" '$1 == "end" { if ($c > m) m = $c } END { printf "%.1f", m / 1024 }' "$RSS"; }
rssmin() { awk -F'\t' -v c="$1" -v w="$2" '$1 == w { if (m == "" || $c < m) m = $c } END { printf "%.1f", m / 1024 }' "$RSS"; }
RSS_MAX=$(rssmax 3)
ANON_MAX=$(rssmax 4)
THR=$(awk -F'\t' '$1 == "end" { print $8; exit }' "$RSS")
per_worker() { awk -v x="$1" -v t="$WORKERS" 'BEGIN { printf "%.1f", x / t }'; }
le10() { awk -v x="$1" 'BEGIN { print (x <= 10 ? "PASS" : "FAIL") }'; }

kindname() {
	case $1 in
	H) echo "H GET /mcp/health" ;;
	L) echo "L tools/list, $TOOLS tools in one page ($((LIST_BYTES / 1024)) KiB)" ;;
	C) echo "C tools/call a_echo through the gateway" ;;
	D) echo "D tools/call echo straight to upstream a" ;;
	H1) echo "H1 = H, 1 connection" ;;
	C1) echo "C1 = C, 1 connection" ;;
	D1) echo "D1 = D, 1 connection" ;;
	esac
}
table() {
	# shellcheck disable=SC2086
	rates_table request "nginx, mcpgate, upstreams, wrk" $KINDS
	ratio_row L/H "L / H (tools/list vs health)" "≥ 0.7" 0.7
	ratio_row C/D "C / D (call through the gateway vs straight, -c$CONNS)" "≥ 0.870 (adds ≤ 15 %: 1 / 1.15)" 0.8696
	ratio_row C1/D1 "C1 / D1 (the same, 1 connection)"
	echo
	echo "What the gateway adds to a call (µs; per repetition, median):"
	echo
	echo "| measure | per repetition | median | target | result |"
	echo "|---|---|---:|---|---|"
	echo "| **p50 latency, 1 connection: C1 − D1** (one call at a time: nginx + mcpgate + the hop to the upstream, no queueing) | ${ADD1# } | **$ADD1_MED** | < 150 | $(awk -v x="$ADD1_MED" 'BEGIN { print (x < 150 ? "PASS" : "FAIL") }') |"
	echo "| p50 latency ratio, 1 connection: C1 / D1 | ${LAT1# } | $(medlist <<<"$LAT1") | (≤ 1.15) | $(awk -v x="$(medlist <<<"$LAT1")" 'BEGIN { print (x <= 1.15 ? "PASS" : "FAIL") }') |"
	echo "| p50 latency at -c$CONNS: C − D (includes waiting for the 2 CPUs) | ${ADD8# } | $(medlist <<<"$ADD8") | — | |"
	echo "| time per call at -c$CONNS (Little: $CONNS / rate): C − D | ${LITTLE8# } | $(medlist <<<"$LITTLE8") | — | |"
	echo "| for scale: p50 latency of a health request, 1 connection (H1: nginx + FastCGI + mcpgate, no upstream) | $(for r in $(seq 1 "$REPS"); do printf '%s ' "$(val "$r" H1 10)"; done) | $(med H1 10) | — | |"
	echo "| CPU per call of nginx + mcpgate in C (medians) | | $(awk -v a="$(med C 13)" -v b="$(med C 14)" 'BEGIN { print a + b }') | — | |"
	echo "| mcpgate's CPU per call (C) minus per health request (H) (medians) | | $(awk -v a="$(med C 14)" -v b="$(med H 14)" 'BEGIN { print a - b }') | — | |"
	echo
	echo "System calls per request (strace -f -c on the mcpgate processes, wrk -t1 -c1 for $STRACE_SECS s a kind, less the calls of as long idle); the most frequent, per request:"
	echo
	echo "| kind | system calls per request | the most frequent |"
	echo "|---|---:|---|"
	while read -r k n top_calls; do
		[ -n "$k" ] && echo "| $k | $n | $top_calls |"
	done <<<"$SYSCALLS"
	echo
	echo "Memory of each mcpgate process ($PROCS processes, each $WORKERS worker threads + the main thread = $THR, the $TOOLS-tool catalog loaded; MiB, /proc/PID/status and smaps_rollup; RssFile is mostly the shared libraries, RssAnon the process's own):"
	echo
	echo "| | VmRSS | RssAnon | RssFile | RssShmem | Pss |"
	echo "|---|---:|---:|---:|---:|---:|"
	echo "| at start, before any request (smallest) | $(rssmin 3 start) | $(rssmin 4 start) | $(rssmin 5 start) | $(rssmin 6 start) | $(rssmin 7 start) |"
	echo "| after the runs (largest) | **$RSS_MAX** | $(rssmax 4) | $(rssmax 5) | $(rssmax 6) | $(rssmax 7) |"
	echo
	echo "| memory | value | target | result |"
	echo "|---|---:|---|---|"
	echo "| VmRSS per process, after the runs (largest) | **$RSS_MAX MiB** | ≤ 10 MiB | $(le10 "$RSS_MAX") |"
	echo "| VmRSS per worker thread (÷ $WORKERS) | $(per_worker "$RSS_MAX") MiB | ≤ 10 MiB | $(le10 "$(per_worker "$RSS_MAX")") |"
	echo "| private memory (RssAnon) per process; per worker thread | $ANON_MAX MiB; $(per_worker "$ANON_MAX") MiB | — | |"
	echo
	echo "Correctness during every run (warm-ups included):"
	echo "- status codes: every answer 200 with the expected body (health \"status\"; tools/list $TOOLS \"inputSchema\"; the calls the echoed argument), no socket errors; /mcp/health still ok after the runs; no upstream left out and the catalog in the state file (mcpgate's log): $([ -z "$bad" ] && echo yes || echo "NO: $bad (see bench/out/fed/runs.tsv)")"
	echo "- checked once before: tools/list answers exactly $TOOLS tools ($want_counts: tools, nextCursor, per prefix), and the gateway's tools/call result is the upstream's own"
	echo "- introspections at the IdP during the runs (the token was cached before; 0 expected): $intro"
}
report
[ -z "$bad" ] || die "some answers were not 200 with the expected body, or sockets failed ($bad): not a measurement; nothing appended (see $RUNS and $OUT/wrk.*.out)"

append_results fed "" \
	"one client_credentials token of oidc-provider $(oidc_version), cached (cache-ttl = $CACHE_TTL)" kind "$KINDS" \
	"- upstreams: 3 × tests/upstream/fixture.mjs --json (SDK $(jq -r .version "$top/tests/node_modules/@modelcontextprotocol/sdk/package.json"), node $(node -v)), --tools $(for u in $UPSTREAMS; do printf '%s/' "${UP_N[$u]}"; done | sed 's,/$,,') + their $OWN_TOOLS own = $TOOLS tools, prefixes a_ b_ c_; page-size = $TOOLS (one tools/list answers the whole catalog, $LIST_BYTES bytes), catalog-ttl = $CATALOG_TTL (cached for the whole run)" \
	"- requests: POST /mcp with \`Content-Type: application/json\`, \`Accept: application/json, text/event-stream\`, \`Authorization: Bearer\`$([ "$SESSION" = 0 ] && echo ", no session" || echo ", the \`Mcp-Session-Id\` of one initialize and \`MCP-Protocol-Version: $PV\`"); C and D: \`tools/call\` with the arguments \`$ARGS\`; D straight to upstream a with the same wrk and wrk.lua, its own session of one initialize (Mcp-Session-Id, MCP-Protocol-Version), no Authorization; H1, C1, D1: wrk -t1 -c1"
exit 0
}
