#!/usr/bin/env bash
# bench/mrtr.sh — the benchmark of the stateless revision (2026-07-28) through the gateway.
#
# One upstream MCP server, a (tests/upstream/fixture.mjs --modern --json, its own tools
# and BENCH_TOOLS echo tools, prefix a_), which the gateway finds by server/discover
# speaks 2026-07-28 and calls statelessly (no initialize, no session: _meta and the
# MCP-Protocol-Version, Mcp-Method, Mcp-Name headers on every request), behind real
# nginx + spawn-fcgi + mcpgate, with a token already in the shared cache (tests/idp).
# Requests per second of:
#
#   LS  tools/list through the gateway as a 2026-07-28 client: params._meta (its
#       protocolVersion and clientCapabilities) and the headers, no session
#   LL  tools/list through the gateway as a 2025-11-25 client in a session (the
#       Mcp-Session-Id and MCP-Protocol-Version of one initialize)
#   C   tools/call of a_echo through the gateway as a 2026-07-28 client; the gateway calls
#       the upstream statelessly
#   D   the same tools/call of echo straight to the upstream as a 2026-07-28 client (the
#       same wrk, no Authorization)
#   D1  D with one connection (wrk -t1 -c1): a direct client that keeps one request in
#       flight, as each of the gateway's worker threads does. The upstream's CPU per
#       call depends on how loaded it is: D's connections keep node saturated, where it
#       takes several requests per wake-up and each costs it less; the gateway's calls,
#       and D1's, come one at a time. So the upstream's CPU per call is compared with
#       D1's, at a like rate (both below node's saturation), and with D's for the record.
#   CL  tools/call of a_echo through the gateway as a 2025-11-25 client in a session (the
#       gateway still calls the upstream statelessly)
#   IR  the input_required round trip through the gateway as a 2026-07-28 client: each
#       wrk thread alternates tools/call of a_test_input_required_result_elicitation
#       (answered input_required, with the gateway's sealed requestState) and its retry
#       with inputResponses {user_name: accept {name: x}} and a requestState minted just
#       before the run by the same caller (the gateway's state is bound to the caller and
#       the tool, lives 10 minutes and may be used more than once): the retry gets the
#       complete result "Hello, x!". The rate counts HTTP exchanges, both kinds.
#
# Targets: LS / LL >= 1.0 (no session to open or check); C / D >= 0.85, the upstream's
# CPU per call in C within 10 % of its CPU per call in D1 (the gateway's requests cost
# it no more than a client's that loads it alike; at most 1.1: cheaper passes), mcpgate's CPU per call in C <= 2 x its CPU per LS; IR / C
# >= 0.9. CL / C for comparison.
#
# Checked once before the runs: LS and LL list the same tools; the gateway's result of C
# is the upstream's of D (and CL's content the same); IR's first answer is input_required
# with one elicitation, its retry complete, twice with the same state; the upstream's
# GET /_traffic, zeroed once the catalog was fetched, shows every request the gateway
# made to it was of 2026-07-28 (byRevision) and opened no session, before the runs and
# after them (then with at least as many tools/call as wrk saw answered). Every answer of
# every run is checked by wrk.lua's response() (LS, LL: the tools' "inputSchema"; C, D,
# CL: the echoed argument; IR: input_required or "Hello, x!", and as many of each within
# the connections in flight): a run with any other answer or a socket error is not a
# measurement, and nothing is appended then. A benchmark, not a timed test.
#
# Usage: bench/mrtr.sh           (as root on Debian 12: installs what it lacks)
# Settings (environment):
#   BENCH_DURATION=10   seconds per measured run      BENCH_REPS=3    repetitions
#   BENCH_WARMUP=3      seconds per warm-up run       BENCH_THREADS=2 BENCH_CONNS=8  (wrk -t -c)
#   BENCH_PROCS=2 BENCH_WORKERS=2   mcpgate processes (spawn-fcgi -F) x threads (-w)
#   BENCH_TOOLS=31      echo tools added to the fixture's own
#   BENCH_SRC=worktree  build from the working tree (default), or HEAD (git archive)
#   BENCH_RESULTS=bench/RESULTS.md  where the dated section is appended ("" = nowhere)
#   MG_KEEP=1           keep the temp dir (configs, logs) after the run
# Everything goes to bench/out/mrtr/ (gitignored): the build, the temp dir of the stack,
# runs.tsv, the raw wrk output, the last run's logs. What it shares with the others is in
# bench/lib.sh; the requests are bench/wrk.lua's (BENCH_MODERN, BENCH_EXTRA_PARAMS,
# BENCH_ALTERNATE).
# The whole script is one brace group: bash reads it completely before running it, so
# editing this file while it runs cannot derail the run.
{
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$here/out/mrtr
ECHO_TOOLS=${BENCH_TOOLS:-31}
CACHE_TTL=3600
CATALOG_TTL=3600
KINDS="LS LL C D D1 CL IR"
NKINDS=7
UPMODE=${BENCH_UPSTREAM:-modern}
case $UPMODE in modern | modern-only) ;; *) die "BENCH_UPSTREAM is modern or modern-only" ;; esac
KNOBS="BENCH_TOOLS=$ECHO_TOOLS BENCH_UPSTREAM=$UPMODE BENCH_SRC=$SRC"
# CL's calls at the upstream: over the caller's own upstream session (2025-11-25) when the
# upstream keeps sessions too (--modern), stateless when it speaks 2026-07-28 alone
CL_LEGACY=$([ "$UPMODE" = modern ] && echo 1 || echo 0)
MODERN=2026-07-28
ECHO_ARG=mrtr-bench-echo
IR_TOOL=test_input_required_result_elicitation
IR_NAME=x
# the token (tests/idp: 3600 s) and the catalog (catalog-ttl) must outlive the run (IR's
# state is minted afresh before each of its runs: it lives 10 minutes)
[ $((REPS * NKINDS * (DURATION + 2) + NKINDS * WARMUP)) -lt 3300 ] ||
	die "a run this long outlives the token and the catalog (1 h); fewer BENCH_REPS or a shorter BENCH_DURATION"
[ "$DURATION" -lt 500 ] || die "BENCH_DURATION must be under 500 s (IR's requestState lives 10 minutes)"

# --- 1. What it needs -------------------------------------------------------------
setup
need_sdk

# --- 2. The binary ------------------------------------------------------------------
build_mcpgate

# --- 3. The upstream ----------------------------------------------------------------
# One stack, in the temp dir itself (configs, sockets, state file, logs), under
# bench/out/mrtr/tmp; the fixture first, speaking both revisions (--modern: the
# gateway's server/discover finds 2026-07-28; a 2025-11-25 client could still have a
# session there, which is how the /_traffic check tells the two apart).
mkdir -p "$OUT/tmp"
TMPDIR=$OUT/tmp bench_root mcpgate.log nginx/error.log idp.log mcpgate.conf 'up-*.log'
UP_ARGS=("--$UPMODE")
start_upstreams $((OWN_TOOLS + ECHO_TOOLS)) a
UP=${UP_URL[a]}
TRAFFIC=${UP%/mcp}/_traffic

# --- 4. The stack -------------------------------------------------------------------
CONF_GATEWAY="page-size = 1000
catalog-ttl = $CATALOG_TTL"
CONF_MORE=$(printf '[upstream "a"]\nurl = %s\nprefix = a_\ntimeout-ms = 5000\n' "$UP")
one_stack "$BIN"

# --- 5. The token, the session, and the checks ------------------------------------
TOKEN=$(one_token) || die "cannot mint a token"
AUTH=(-H "Authorization: Bearer $TOKEN")
CAPS='{"elicitation":{}}'
ARGS='{"text":"'$ECHO_ARG'"}'
# the echo tool answers its arguments as JSON text: this, in the answer's JSON
WANT_ECHO='\"text\":\"'$ECHO_ARG'\"'
LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
call() { printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":%s}}' "$1" "$ARGS"; }
# modern URL METHOD PARAMS [NAME [CURL ARG...]]: a 2026-07-28 request (post_to): PARAMS
# with _meta, the three headers (Mcp-Name when NAME is not empty)
modern() {
	local url=$1 method=$2 params=$3 name=${4:-} b
	shift $(($# < 4 ? $# : 4))
	b=$(jq -cn --arg m "$method" --argjson p "$params" --argjson caps "$CAPS" --arg v "$MODERN" \
		'{jsonrpc: "2.0", id: 1, method: $m, params: ($p + {_meta: {"io.modelcontextprotocol/protocolVersion": $v,
			"io.modelcontextprotocol/clientCapabilities": $caps}})}')
	post_to "$url" "$b" -H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: $method" ${name:+-H "Mcp-Name: $name"} "$@"
}
ir_call() { # [EXTRA PARAMS]: the input_required tool through the gateway, as a 2026-07-28 client
	modern "$BASE/mcp" tools/call "$(jq -cn --arg n "a_$IR_TOOL" --argjson x "${1:-{\}}" '{name: $n, arguments: {}} + $x')" \
		"a_$IR_TOOL" "${AUTH[@]}"
}
# mint_state: a first call of IR's tool, as wrk's will be: sets IR_FIRST (its body) and
# IR_RETRY (the retry's extra params: inputResponses and the gateway's requestState)
mint_state() {
	local got key state
	got=$(ir_call)
	check "IR: tools/call a_$IR_TOOL through the gateway: 200" "$got" ' 200$'
	IR_FIRST=$(body "$got")
	jq -e '.result.resultType == "input_required" and (.result.inputRequests | length) == 1 and
		([.result.inputRequests[] | .method] == ["elicitation/create"]) and (.result.requestState | type) == "string"' \
		<<<"$IR_FIRST" >/dev/null || die "check failed: IR's first call: input_required with one elicitation and a requestState: got $IR_FIRST"
	key=$(jq -r '.result.inputRequests | keys[0]' <<<"$IR_FIRST")
	state=$(jq -r .result.requestState <<<"$IR_FIRST")
	IR_RETRY=$(jq -cn --arg k "$key" --arg s "$state" --arg n "$IR_NAME" \
		'{inputResponses: {($k): {action: "accept", content: {name: $n}}}, requestState: $s}')
}
traffic() { curl -s --max-time 10 "$TRAFFIC"; }

check "GET /mcp/health: 200, ok" "$(curl -s --max-time 10 -w ' %{http_code}' "$BASE/mcp/health")" '"status":"ok".* 200$'
check "gateway initialize (2025-11-25): 200" "$(post_to "$BASE/mcp" "$INIT" "${AUTH[@]}")" "\"protocolVersion\":\"$PV\".* 200\$"
SID=$(sid)
[ -n "$SID" ] || die "the gateway's initialize gave no Mcp-Session-Id"
SESS=(-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $PV")
# the lists (the first one fetches the catalog: server/discover, tools/list)
got=$(modern "$BASE/mcp" tools/list '{}' "" "${AUTH[@]}")
check "LS: tools/list as a 2026-07-28 client: 200" "$got" ' 200$'
LS_BODY=$(body "$got")
got=$(post_to "$BASE/mcp" "$LIST" "${AUTH[@]}" "${SESS[@]}")
check "LL: tools/list as a 2025-11-25 client in a session: 200" "$got" ' 200$'
LL_BODY=$(body "$got")
names() { jq -c '[.result.tools[].name] | sort' <<<"$1"; }
N_LS=$(jq '.result.tools | length' <<<"$LS_BODY")
N_LL=$(jq '.result.tools | length' <<<"$LL_BODY")
[ "$(names "$LS_BODY")" = "$(names "$LL_BODY")" ] ||
	die "check failed: LS and LL list other tools: $(names "$LS_BODY") vs $(names "$LL_BODY")"
[ "$(grep -o '"inputSchema"' <<<"$LS_BODY" | wc -l)" = "$N_LS" ] || die "check failed: LS: not $N_LS \"inputSchema\""
[ "$(grep -o '"inputSchema"' <<<"$LL_BODY" | wc -l)" = "$N_LL" ] || die "check failed: LL: not $N_LL \"inputSchema\""
jq -e --arg t "a_$IR_TOOL" '[.result.tools[].name] | index("a_echo") != null and index($t) != null' <<<"$LS_BODY" >/dev/null ||
	die "check failed: the catalog has no a_echo or a_$IR_TOOL"
LS_BYTES=${#LS_BODY}
LL_BYTES=${#LL_BODY}
# /mcp/health names the revision as the answering worker's catalog has it: a worker that
# has not loaded it yet names none (after the runs every one has)
for _ in $(seq 1 20); do
	got=$(curl -s --max-time 10 "$BASE/mcp/health")
	[[ $got == *"\"protocolVersion\":\"$MODERN\""* ]] && break
done
check "the gateway speaks $MODERN to upstream a (/mcp/health)" "$got" "\"protocolVersion\":\"$MODERN\""
# what the upstream had so far (the catalog's server/discover and lists, and with
# --modern what the gateway asked for older callers, their sessions); from here on,
# every request it gets is counted
T_PRE=$(traffic)
check "upstream a: /_traffic/reset" "$(curl -s --max-time 10 "$TRAFFIC/reset")" '"reset":true'

GW_CALL=$(modern "$BASE/mcp" tools/call "{\"name\":\"a_echo\",\"arguments\":$ARGS}" a_echo "${AUTH[@]}")
[[ $GW_CALL == *"$WANT_ECHO"*" 200" ]] || die "check failed: C: tools/call a_echo through the gateway: 200 with the echo: got '$GW_CALL'"
UP_CALL=$(modern "$UP" tools/call "{\"name\":\"echo\",\"arguments\":$ARGS}" echo)
[[ $UP_CALL == *"$WANT_ECHO"*" 200" ]] || die "check failed: D: tools/call echo straight to upstream a: 200 with the echo: got '$UP_CALL'"
[ "$(body "$GW_CALL" | jq -cS .result)" = "$(body "$UP_CALL" | jq -cS .result)" ] ||
	die "check failed: C: the gateway's result differs from the upstream's: $(body "$GW_CALL") vs $(body "$UP_CALL")"
CL_CALL=$(post_to "$BASE/mcp" "$(call a_echo)" "${AUTH[@]}" "${SESS[@]}")
[[ $CL_CALL == *"$WANT_ECHO"*" 200" ]] || die "check failed: CL: tools/call a_echo in a session: 200 with the echo: got '$CL_CALL'"
[ "$(body "$CL_CALL" | jq -cS .result.content)" = "$(body "$UP_CALL" | jq -cS .result.content)" ] ||
	die "check failed: CL: the gateway's content differs from the upstream's: $(body "$CL_CALL") vs $(body "$UP_CALL")"
mint_state
for i in 1 2; do	# the same state twice: it is not single-use
	got=$(ir_call "$IR_RETRY")
	check "IR: the retry ($i) with the answer: 200" "$got" ' 200$'
	jq -e --arg h "Hello, $IR_NAME!" '.result.resultType == "complete" and ([.result.content[].text] | index($h) != null)' \
		<<<"$(body "$got")" >/dev/null || die "check failed: IR: the retry ($i): complete with \"Hello, $IR_NAME!\": got $(body "$got")"
done
T0=$(traffic)
jq -e --argjson l "$CL_LEGACY" '.sessionsOpened == 0 and .byRevision.legacy == $l and .byRevision["2026-07-28"] == .posts - $l and
	.byMethod["tools/call"] == 6' <<<"$T0" >/dev/null ||
	die "check failed: upstream a's /_traffic after C, D, CL and IR's three: 6 calls, all of $MODERN but $CL_LEGACY (CL's), no session opened: got $T0"

# --- 6. Measuring -------------------------------------------------------------------
runs_header kind n_alt us_nginx us_mcpgate us_upstream
# the CPU of nginx (the master and its workers), mcpgate and the upstream
CPU_PIDS=("$(nginx_pids "$NGINX")" "$FCGI" "${UP_PID[a]}")

# run KIND SECONDS REP: one wrk run (bench/lib.sh's measure); appends a row to $RUNS
# (REP "w" = warm-up, not reported, but checked like the others).
run() {
	local kind=$1 secs=$2 rep=$3 url=$BASE/mcp envs
	# (D1: measure's wrk -t -c, for this run alone)
	local THREADS=$THREADS CONNS=$CONNS
	case $kind in
	LS) envs=(BENCH_TARGET=list BENCH_MODERN=1 "BENCH_CAPS=$CAPS" "BENCH_TOKEN=$TOKEN" "BENCH_WANT=\"inputSchema\"" "BENCH_WANT_N=$N_LS") ;;
	LL) envs=(BENCH_TARGET=list "BENCH_TOKEN=$TOKEN" "BENCH_SESSION=$SID" "BENCH_PROTOCOL=$PV" "BENCH_WANT=\"inputSchema\"" "BENCH_WANT_N=$N_LL") ;;
	C) envs=(BENCH_TARGET=call BENCH_MODERN=1 "BENCH_CAPS=$CAPS" "BENCH_TOKEN=$TOKEN" BENCH_TOOL=a_echo) ;;
	D | D1) url=$UP envs=(BENCH_TARGET=call BENCH_MODERN=1 "BENCH_CAPS=$CAPS" BENCH_TOOL=echo) ;;
	CL) envs=(BENCH_TARGET=call "BENCH_TOKEN=$TOKEN" BENCH_TOOL=a_echo "BENCH_SESSION=$SID" "BENCH_PROTOCOL=$PV") ;;
	IR)
		mint_state	# (outside the measured time)
		envs=(BENCH_TARGET=call BENCH_MODERN=1 "BENCH_CAPS=$CAPS" "BENCH_TOKEN=$TOKEN" "BENCH_TOOL=a_$IR_TOOL"
			"BENCH_EXTRA_PARAMS=$IR_RETRY" BENCH_ALTERNATE=1 'BENCH_WANT="resultType":"input_required"'
			"BENCH_WANT_ALT=Hello, $IR_NAME!")
		;;
	esac
	[ "$kind" != D1 ] || THREADS=1 CONNS=1
	case $kind in C | D | D1 | CL) envs+=("BENCH_ARGS=$ARGS" "BENCH_WANT=$WANT_ECHO") ;; esac
	measure "$kind" "$secs" "$OUT/wrk.$rep.$kind.out" "$url" BENCH_EXPECT=200 "${envs[@]}"
	row "$rep" "$kind" "$(if [ "$kind" = IR ]; then kv n_alt; else echo -; fi)"
	said "$rep" "$kind"
}

run_kinds ""
# shellcheck disable=SC2086
runs_done $FCGI
T1=$(traffic)
HEALTH_END=$(curl -s --max-time 10 -w ' %{http_code}' "$BASE/mcp/health")

# --- 7. Report ----------------------------------------------------------------------
ratio_medians LS/LL C/D IR/C CL/C

# the column of runs.tsv named NAME
col() { head -n 1 "$RUNS" | tr '\t' '\n' | grep -nx "$1" | cut -d: -f1; }
C_ALT=$(col n_alt)
C_NG=$(col us_nginx)
C_MG=$(col us_mcpgate)
C_UP=$(col us_upstream)
# correctness over every run, warm-ups included: every answer 200 with its body, no
# socket error; IR's two answers as many within the requests in flight (CONNS + THREADS)
bad=$(awk -F'\t' -v a="$C_ALT" -v m="$((CONNS + THREADS))" '$1 != "rep" && ($6 > 0 || $8 > 0 || $9 > 0 || $5 != $4 ||
	($2 == "IR" && ($a < 1 || ($5 - $8 - $a) < 1 || ($5 - $8 - 2 * $a) > m || (2 * $a - $5 + $8) > m))) { printf "%s/%s ", $1, $2 }' "$RUNS")
intro=$(awk -F'\t' '$1 != "rep" { s += $12 } END { print s + 0 }' "$RUNS")
[[ $HEALTH_END =~ '"status":"ok"'.*'"protocolVersion":"'$MODERN'"'.*' 200'$ ]] || bad="$bad health-after:${HEALTH_END// /_} "
# the calls wrk saw answered through the gateway and straight (warm-ups included): the
# upstream had them all, with the checks' 6 and the minted states, none opening a session;
# every one of 2026-07-28 but CL's with --modern (its legacy POSTs: CL's answered, and at
# most CONNS a CL run in flight when the run ended)
CALLS=$(awk -F'\t' '$1 != "rep" && ($2 == "C" || $2 == "D" || $2 == "D1" || $2 == "CL" || $2 == "IR") { s += $5 } END { print s + 0 }' "$RUNS")
CL_CALLS=$(awk -F'\t' '$1 != "rep" && $2 == "CL" { s += $5 } END { print s + 0 }' "$RUNS")
MODERN_CALLS=$((CALLS - CL_CALLS))
jq -e --argjson n "$CALLS" --argjson m "$MODERN_CALLS" --argjson cl "$CL_CALLS" --argjson l "$CL_LEGACY" \
	--argjson slack $((CONNS * (REPS + 1))) '.sessionsOpened == 0 and .byMethod["tools/call"] >= $n + 6 and
	.byRevision["2026-07-28"] >= $m + 5 and
	(if $l == 1 then .byRevision.legacy >= $cl + 1 and .byRevision.legacy <= $cl + 1 + $slack else .byRevision.legacy == 0 end)' \
	<<<"$T1" >/dev/null || bad="$bad traffic "

# cpu_ratios A B COL: per repetition, A's CPU per request in column COL over B's
cpu_ratios() { for r in $(seq 1 "$REPS"); do printf ' %s' "$(ratio "$(val "$r" "$1" "$3")" "$(val "$r" "$2" "$3")")"; done; }
UPCPU=$(cpu_ratios C D1 "$C_UP")
UPCPU_MED=$(medlist <<<"$UPCPU")
UPCPU_D=$(cpu_ratios C D "$C_UP")
MGCPU=$(cpu_ratios C LS "$C_MG")
MGCPU_MED=$(medlist <<<"$MGCPU")
cpus() { for r in $(seq 1 "$REPS"); do printf ' %s' "$(val "$r" "$1" "$2")"; done; }
atmost110() { awk -v x="$1" 'BEGIN { print (x <= 1.1 ? "PASS" : "FAIL") }'; }
atmost2() { awk -v x="$1" 'BEGIN { print (x <= 2 ? "PASS" : "FAIL") }'; }

kindname() {
	case $1 in
	LS) echo "LS tools/list, $MODERN client, stateless ($N_LS tools, $((LS_BYTES / 1024)) KiB)" ;;
	LL) echo "LL tools/list, $PV client in a session ($N_LL tools, $((LL_BYTES / 1024)) KiB)" ;;
	C) echo "C tools/call a_echo through the gateway, $MODERN client" ;;
	D) echo "D tools/call echo straight to the upstream, $MODERN client" ;;
	D1) echo "D1 the same with one connection (wrk -t1 -c1)" ;;
	CL) echo "CL tools/call a_echo through the gateway, $PV client in a session ($([ "$CL_LEGACY" = 1 ] && echo "relayed over its own upstream session" || echo "relayed statelessly"))" ;;
	IR) echo "IR input_required round trip through the gateway ($MODERN: the first call and its retry, alternating; per exchange)" ;;
	esac
}
table() {
	# shellcheck disable=SC2086
	rates_table request "nginx, mcpgate, upstream, wrk" $KINDS
	ratio_row LS/LL "LS / LL (tools/list: stateless vs in a session)" "≥ 1.0" 1.0
	ratio_row C/D "C / D (call through the gateway vs straight, both $MODERN, -c$CONNS)" "≥ 0.85" 0.85
	ratio_row IR/C "IR / C (an input_required exchange vs a plain call, through the gateway)" "≥ 0.9" 0.9
	ratio_row CL/C "CL / C (a $PV client's call in a session vs a $MODERN client's)"
	echo
	echo "CPU per call (µs, per repetition; ratios of the same repetition):"
	echo
	echo "| measure | per repetition | median | target | result |"
	echo "|---|---|---:|---|---|"
	echo "| the upstream's CPU per call in C | $(cpus C "$C_UP" | sed 's/^ //') | $(med C "$C_UP") | — | |"
	echo "| the upstream's CPU per call in D (saturated by $CONNS connections), D1 (one) | $(cpus D "$C_UP" | sed 's/^ //'); $(cpus D1 "$C_UP" | sed 's/^ //') | $(med D "$C_UP"), $(med D1 "$C_UP") | — | |"
	echo "| **the upstream's CPU per call, C / D1** (the gateway's stateless requests against a client's, both one at a time) | ${UPCPU# } | **$UPCPU_MED** | within 10 % (≤ 1.1) | $(atmost110 "$UPCPU_MED") |"
	echo "| the upstream's CPU per call, C / D (against a client that saturates it) | ${UPCPU_D# } | $(medlist <<<"$UPCPU_D") | — | |"
	echo "| mcpgate's CPU per request in C | $(cpus C "$C_MG" | sed 's/^ //') | $(med C "$C_MG") | — | |"
	echo "| mcpgate's CPU per request in LS | $(cpus LS "$C_MG" | sed 's/^ //') | $(med LS "$C_MG") | — | |"
	echo "| **mcpgate's CPU per call C / per list LS** | ${MGCPU# } | **$MGCPU_MED** | ≤ 2 | $(atmost2 "$MGCPU_MED") |"
	echo "| mcpgate's CPU per request in LL, CL, IR (medians) | | $(med LL "$C_MG"), $(med CL "$C_MG"), $(med IR "$C_MG") | — | |"
	echo "| nginx's CPU per request in C, LS (medians) | | $(med C "$C_NG"), $(med LS "$C_NG") | — | |"
	echo
	echo "Correctness during every run (warm-ups included):"
	echo "- status codes: every answer 200 with the expected body (the lists $N_LS \"inputSchema\"; C, D, CL the echoed argument; IR \`\"resultType\":\"input_required\"\` or \`Hello, $IR_NAME!\`, as many of each within $((CONNS + THREADS)) (n_alt in runs.tsv: the retries' answers)), no socket errors; /mcp/health still ok after the runs, naming $MODERN for upstream a: $([ -z "$bad" ] && echo yes || echo "NO: $bad (see bench/out/mrtr/runs.tsv)")"
	echo "- the upstream's /_traffic, zeroed after the catalog was fetched, after the runs: $(jq -c '{posts, byRevision, sessionsOpened, calls: .byMethod["tools/call"]}' <<<"$T1") for $CALLS calls wrk saw answered in C, D, CL and IR ($CL_CALLS of them CL's) and the checks' and minted states' own: no session opened; every request of $MODERN$([ "$CL_LEGACY" = 1 ] && echo " but CL's (legacy: a $PV caller's calls go over its own session at an upstream that keeps sessions, opened before the counts were zeroed)")"
	echo "- the upstream's /_traffic before it was zeroed (the catalog's fetch, the initialize and the first lists): $(jq -c '{posts, byMethod, byRevision, sessionsOpened}' <<<"$T_PRE")"
	echo "- checked once before: LS and LL list the same $N_LS tools; the gateway's result of C is the upstream's own (D), CL's content the same; IR's first answer input_required with one elicitation/create and the gateway's requestState, the retry complete (\"Hello, $IR_NAME!\"), twice with the same state; /_traffic then: $(jq -c '{posts, byRevision, sessionsOpened, byMethod}' <<<"$T0")"
	echo "- introspections at the IdP during the runs (the token was cached before; 0 expected): $intro"
}
report
[ -z "$bad" ] || die "some answers were not 200 with the expected body, sockets failed or the traffic was not all $MODERN ($bad): not a measurement; nothing appended (see $RUNS and $OUT/wrk.*.out)"

append_results mrtr "" \
	"one client_credentials token of oidc-provider $(oidc_version), cached (cache-ttl = $CACHE_TTL)" kind "$KINDS" \
	"- upstream: tests/upstream/fixture.mjs --$UPMODE --json (SDK $(jq -r .version "$top/tests/node_modules/@modelcontextprotocol/sdk/package.json") for the session path, modern.mjs for $MODERN; node $(node -v)) --tools $ECHO_TOOLS: $N_LS tools as the gateway lists them (prefix a_; the $MODERN path's own probes included); the gateway found $MODERN by server/discover and calls it statelessly for a $MODERN caller$([ "$CL_LEGACY" = 1 ] && echo ", and for a $PV caller (CL) over that caller's own session there (the upstream keeps sessions too)"); page-size = 1000, catalog-ttl = $CATALOG_TTL" \
	"- requests: POST /mcp with \`Content-Type: application/json\`, \`Accept: application/json, text/event-stream\`, \`Authorization: Bearer\` (D: none). $MODERN (LS, C, D, IR): params._meta {io.modelcontextprotocol/protocolVersion: $MODERN, io.modelcontextprotocol/clientCapabilities: $CAPS}, \`MCP-Protocol-Version: $MODERN\`, \`Mcp-Method\`, \`Mcp-Name\` (calls), no session; $PV (LL, CL): the \`Mcp-Session-Id\` of one initialize and \`MCP-Protocol-Version: $PV\`. C, D, CL: \`tools/call\` with the arguments \`$ARGS\`. IR: each wrk thread alternates \`tools/call a_$IR_TOOL\` and the same with \`inputResponses\` {user_name: {action: accept, content: {name: $IR_NAME}}} and a \`requestState\` the gateway gave this caller just before the run (bench/wrk.lua BENCH_ALTERNATE)"
exit 0
}
