#!/usr/bin/env bash
# bench/limits.sh — the benchmark of rate limits.
#
# Two gateway stacks in the same run, sharing the authorization server (tests/idp), each
# its own nginx + spawn-fcgi + mcpgate, the same binary and configuration but [limits]:
#
#   stack L   all five limits on (gateway, ip, tenant, token, tool: BENCH_LIMIT each,
#             6000000/60 by default — 100,000 a second, far above what the machine
#             serves, so none is ever exceeded), in the store LIMITS_STORE
#   stack O   no [limits]: limits off (the router takes no bucket at all)
#
# Requests per second of:
#
#   L   POST /mcp ping (JSON-RPC) with a cached bearer token through stack L: four
#       buckets taken per request (gateway and ip before authentication, tenant and
#       token after it; tool only for tools/call), and the RateLimit headers
#   O   the same ping through stack O
#   H   GET /mcp/health on stack L (no token, no limit): for scale
#
# Target: L / O >= 0.95 (the median of the per-repetition ratios). The kinds run
# interleaved (L O H, L O H, ...). Every answer's status and body are checked (wrk.lua's
# response(): 200 with a "result"): a run with any other answer (a 429 above all) or a
# socket error is not a measurement, and nothing is appended then; nor when stack L's
# log has a rate_limited line. A benchmark, not a timed test: nothing here fails a build.
#
# Usage: bench/limits.sh         (as root on Debian 12: installs what it lacks)
# Settings (environment):
#   BENCH_DURATION=10   seconds per measured run      BENCH_REPS=3    repetitions
#   BENCH_WARMUP=3      seconds per warm-up run       BENCH_THREADS=2 BENCH_CONNS=8  (wrk -t -c)
#   BENCH_PROCS=2 BENCH_WORKERS=2   mcpgate processes (spawn-fcgi -F) x threads (-w)
#   BENCH_LIMIT=6000000/60  the rate of each of the five limits of stack L
#   LIMITS_STORE=shm    written as stack L's [limits] store = ... (the buckets' store;
#                       shm, the host's state file, is the one there is; a shared store
#                       such as redis://127.0.0.1:PORT/0 goes here once the gateway has one)
#   BENCH_PERF=0        1: L and O once more after the measured runs, with perf recording
#                       the stack's mcpgate processes (top symbols: out/limits/perf.*.txt)
#   BENCH_SESSION=1     ping carries the Mcp-Session-Id and MCP-Protocol-Version of an
#                       initialize with that stack, as a client does (0: no session)
#   BENCH_SRC=worktree  build from the working tree (default), or HEAD (git archive)
#   BENCH_RESULTS=bench/RESULTS.md  where the dated section is appended ("" = nowhere)
#   MG_KEEP=1           keep the temp dir (configs, logs) after the run
# Everything goes to bench/out/limits/ (gitignored): the build, the temp dir of the
# stacks, runs.tsv, the raw wrk output, the last run's logs.
# What it shares with the other scripts is in bench/lib.sh.
# The whole script is one brace group: bash reads it completely before running it, so
# editing this file while it runs cannot derail the run.
{
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$here/out/limits
LIMIT=${BENCH_LIMIT:-6000000/60}
STORE=${LIMITS_STORE:-shm}
PERF=${BENCH_PERF:-0}
CACHE_TTL=3600
KINDS="L O H"
NKINDS=3
KNOBS="BENCH_LIMIT=$LIMIT LIMITS_STORE=$STORE BENCH_SESSION=$SESSION BENCH_PERF=$PERF BENCH_SRC=$SRC"
PV=2025-11-25
CLASSES="gateway ip tenant token tool"
# the token (tests/idp: 3600 s) must outlive the run
[ $((REPS * NKINDS * (DURATION + 2) + NKINDS * WARMUP)) -lt 3300 ] ||
	die "a run this long outlives the token (1 h); fewer BENCH_REPS or a shorter BENCH_DURATION"
[[ $LIMIT =~ ^[0-9]+/[0-9]+$ ]] || die "BENCH_LIMIT must be N/SECONDS"

# --- 1. What it needs -------------------------------------------------------------
setup

# --- 2. The binary ------------------------------------------------------------------
# A copy of the sources, built out of tree: src/mcpgate (bench/lib.sh's build_mcpgate);
# the same binary serves both stacks.
build_mcpgate

# --- 3. The two stacks --------------------------------------------------------------
# Each in a directory of its own under the temp dir (bench/out/limits/tmp). No upstream
# and no [tenant]: ping is answered by the gateway, and the policy is off in both.
mkdir -p "$OUT/tmp"
TMPDIR=$OUT/tmp bench_root '*/mcpgate.log' '*/nginx/error.log' idp.log '*/mcpgate.conf'
LIMITS_CONF=$(printf '[limits]\nstore = %s\n' "$STORE"; for c in $CLASSES; do printf '%s = %s\n' "$c" "$LIMIT"; done)
ports=$(two_ports) || exit 1
read -r PORT_L PORT_O <<<"$ports"
BASE_L=http://127.0.0.1:$PORT_L
BASE_O=http://127.0.0.1:$PORT_O
start_idp "$BASE_L/mcp" "$BASE_O/mcp"
# stack L's configuration first, checked before anything starts on it (a store the
# gateway does not know is refused here, by mcpgate -t, with its reason)
mkdir -p "$ROOT/L"
CONF_MORE=$LIMITS_CONF write_conf "$ROOT/L" "$BASE_L"
out=$("$BIN" -t -c "$ROOT/L/mcpgate.conf" 2>&1) || die "mcpgate -t refuses stack L's configuration ([limits] store = $STORE): $out"
say "starting nginx + spawn-fcgi ($PROCS x $WORKERS) twice: limits on $PORT_L, limits off $PORT_O"
CONF_MORE=$LIMITS_CONF
start_stack "$ROOT/L" "$BIN" "$PORT_L" || die "stack L (limits) did not start"
FCGI_L=$STACK_FCGI NGINX_L=$STACK_NGINX
CONF_MORE=
start_stack "$ROOT/O" "$BIN" "$PORT_O" || die "stack O (no limits) did not start"
FCGI_O=$STACK_FCGI NGINX_O=$STACK_NGINX
CONF_L=$ROOT/L/mcpgate.conf
CONF_O=$ROOT/O/mcpgate.conf
out=$("$BIN" -t -c "$CONF_O" 2>&1) || die "mcpgate -t -c $CONF_O refuses the configuration: $out"

# --- 4. Tokens, sessions, and a correctness check ------------------------------------
# One token per stack (each stack's resource is its own URL: the audience differs).
token_for() { # RESOURCE → a client_credentials token (machine-acme, mcp:tools) for it
	local t
	t=$(node "$top/tests/idp/token.mjs" --issuer "$IDP" --client machine-acme --scope mcp:tools --resource "$1" | jq -r .access_token)
	[ -n "$t" ] && [ "$t" != null ] && echo "$t"
}
TOKEN_L=$(token_for "$BASE_L/mcp") || die "cannot mint a token for stack L"
TOKEN_O=$(token_for "$BASE_O/mcp") || die "cannot mint a token for stack O"
BASIC="Basic $(printf 'mcpgate:mcpgate-secret' | base64)"
CLAIMS=$(curl -s --max-time 10 -H "Authorization: $BASIC" --data "token=$TOKEN_L&token_type_hint=access_token" "$IDP/token/introspection" | jq -c .)
check "introspection of L's token: active, tenant acme" "$(jq -c '{active, tenant}' <<<"$CLAIMS")" '"active":true,"tenant":"acme"'

INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"'$PV'","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
PING='{"jsonrpc":"2.0","id":1,"method":"ping"}'
post_to() { # URL BODY [HEADER...] → "BODY STATUS" (and the headers in $ROOT/headers)
	local url=$1 body=$2
	shift 2
	curl -s --max-time 20 -D "$ROOT/headers" -w ' %{http_code}' -X POST "$url" \
		-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "$@" --data "$body"
}
hdr() { tr -d '\r' <"$ROOT/headers" | sed -n "s/^$1: *//Ip"; }

declare -A SID=() TOK=([L]=$TOKEN_L [O]=$TOKEN_O) BASEOF=([L]=$BASE_L [O]=$BASE_O) POLICY_HDR=()
for s in L O; do
	check "stack $s: GET /mcp/health: 200, ok" "$(curl -s --max-time 10 -w ' %{http_code}' "${BASEOF[$s]}/mcp/health")" '"status":"ok".* 200$'
	check "stack $s: ping without a token: 401" "$(post_to "${BASEOF[$s]}/mcp" "$PING")" ' 401$'
	SESS=()
	if [ "$SESSION" != 0 ]; then
		check "stack $s: initialize: 200" "$(post_to "${BASEOF[$s]}/mcp" "$INIT" -H "Authorization: Bearer ${TOK[$s]}")" "\"protocolVersion\":\"$PV\".* 200\$"
		SID[$s]=$(hdr Mcp-Session-Id)
		[ -n "${SID[$s]}" ] || die "stack $s: initialize gave no Mcp-Session-Id"
		SESS=(-H "Mcp-Session-Id: ${SID[$s]}" -H "MCP-Protocol-Version: $PV")
	fi
	check "stack $s: ping: 200 {}" "$(post_to "${BASEOF[$s]}/mcp" "$PING" -H "Authorization: Bearer ${TOK[$s]}" "${SESS[@]}")" '"result":\{\}.* 200$'
	POLICY_HDR[$s]=$(hdr RateLimit-Policy)
done
# L's answers carry the RateLimit headers of the tightest class met; O's none
LIM_N=${LIMIT%/*} LIM_W=${LIMIT#*/}
check "stack L: ping answers with RateLimit-Policy" "${POLICY_HDR[L]}" "^\"(gateway|ip|tenant|token)\";q=$LIM_N;w=$LIM_W\$"
[ -z "${POLICY_HDR[O]}" ] || die "check failed: stack O (limits off) answers with RateLimit-Policy: ${POLICY_HDR[O]}"
# explain on L's configuration: the five limits on, each from its [limits] line
got=$("$BIN" explain -c "$CONF_L" --claims "$CLAIMS" --tool bench_tool --json 2>"$ROOT/explain.err")
check "explain --tool on L's configuration: the five limits on at $LIMIT, from [limits]" \
	"$(jq -c '[.limits[] | [.limit, .on, "\(.n)/\(.per)", .section]]' <<<"$got" 2>/dev/null)" \
	"^\\[$(for c in $CLASSES; do printf '\\["%s",true,"%s","limits"\\],' "$c" "$LIMIT"; done | sed 's/,$//')\\]\$"

# --- 5. Measuring -------------------------------------------------------------------
runs_header kind us_nginx us_mcpgate

# kind_run KIND SECONDS FILE: one wrk run of KIND (bench/lib.sh's measure), its output
# in FILE. The CPU groups: nginx (the master and its workers) and mcpgate of the stack
# the kind goes to.
kind_run() {
	local kind=$1 secs=$2 file=$3 s=L path=/mcp envs=()
	case $kind in
	H) envs=(BENCH_TARGET=health) path=/mcp/health ;;
	L | O)
		s=$kind
		envs=(BENCH_TARGET=ping "BENCH_TOKEN=${TOK[$s]}")
		[ "$SESSION" = 0 ] || envs+=("BENCH_SESSION=${SID[$s]}" "BENCH_PROTOCOL=$PV")
		;;
	esac
	CPU_PIDS=("$(nginx_pids "${NGINXOF[$s]}")" "${FCGIOF[$s]}")
	measure "$kind" "$secs" "$file" "${BASEOF[$s]}$path" BENCH_EXPECT=200 "${envs[@]}"
}
declare -A NGINXOF=([L]=$NGINX_L [O]=$NGINX_O) FCGIOF=([L]=$FCGI_L [O]=$FCGI_O)
# run KIND SECONDS REP: one measured run (kind_run); appends a row to $RUNS (REP "w" =
# warm-up, not reported, but checked like the others).
run() {
	kind_run "$1" "$2" "$OUT/wrk.$3.$1.out"
	row "$3" "$1"
	said "$3" "$1"
}

run_kinds " (L: stack L, five limits on; O: stack O, limits off; H: stack L)"
# BENCH_PERF=1: after the measured runs, L and O once more each (not reported) with
# perf recording their stack's mcpgate processes (cpu-clock samples, no call graphs:
# no frame pointers), and the top symbols in $OUT/perf.L.txt and perf.O.txt.
if [ "$PERF" = 1 ]; then
	need_cmds perf:linux-perf >>"$OUT/install.log" 2>&1 || die "cannot install perf (linux-perf)"
	for k in L O; do
		perf record -q -F 1999 -o "$OUT/perf.$k.data" -p "$(tr -s ' ' ',' <<<"${FCGIOF[$k]}" | sed 's/^,//; s/,$//')" \
			-- sleep "$DURATION" >"$OUT/perf.$k.log" 2>&1 &
		perf_pid=$!
		sleep 0.3
		kind_run "$k" "$DURATION" "$OUT/wrk.perf.$k.out"
		wait "$perf_pid"
		say "  perf $k $(kv rps) req/s under perf: $OUT/perf.$k.txt"
		perf report -i "$OUT/perf.$k.data" --no-children --sort dso,sym --stdio 2>/dev/null | grep -v '^#' | grep . |
			head -n 40 >"$OUT/perf.$k.txt"
	done
fi
# shellcheck disable=SC2086
runs_done $FCGI_L $FCGI_O
# after the runs: a ping on L still passes, with the RateLimit header of a bucket it
# took (fewer remaining than the quota); and no request was refused
SESS=()
[ "$SESSION" = 0 ] || SESS=(-H "Mcp-Session-Id: ${SID[L]}" -H "MCP-Protocol-Version: $PV")
PING_END=$(post_to "$BASE_L/mcp" "$PING" -H "Authorization: Bearer $TOKEN_L" "${SESS[@]}")
RL_END=$(hdr RateLimit)
LIMITED_LOG=$(cat "$ROOT/L/mcpgate.log" "$ROOT/O/mcpgate.log" | grep -c '"event":"rate_limited"')

# --- 6. Report ----------------------------------------------------------------------
ratio_medians L/O L/H O/H

# correctness over every run, warm-ups included
bad=$(awk -F'\t' '$1 != "rep" && ($6 > 0 || $8 > 0 || $9 > 0 || $5 != $4) { printf "%s/%s ", $1, $2 }' "$RUNS")
intro=$(awk -F'\t' '$1 != "rep" { s += $12 } END { print s + 0 }' "$RUNS")
[[ $PING_END =~ '"result":{}'.*' 200'$ ]] || bad="$bad ping-after:${PING_END// /_} "
[[ $RL_END =~ ^\"(gateway|ip|tenant|token)\"\;r=([0-9]+)\; ]] && [ "${BASH_REMATCH[2]}" -lt "$LIM_N" ] || bad="$bad ratelimit-after:${RL_END:-none} "
[ "$LIMITED_LOG" = 0 ] || bad="$bad rate-limited-log-lines:$LIMITED_LOG "

kindname() {
	case $1 in
	L) echo "L ping, five limits on ($LIMIT each, store $STORE)" ;;
	O) echo "O ping, limits off (no [limits])" ;;
	H) echo "H GET /mcp/health (stack L)" ;;
	esac
}
table() {
	# shellcheck disable=SC2086
	rates_table request "nginx, mcpgate (of the stack measured), wrk" $KINDS
	ratio_row L/O "L / O (ping with the five limits vs without)" "≥ 0.95" 0.95
	ratio_row L/H "L / H (for scale)"
	ratio_row O/H "O / H (for scale)"
	echo
	echo "| CPU per ping (medians, µs) | nginx | mcpgate |"
	echo "|---|---:|---:|"
	echo "| L (limits) | $(med L 13) | $(med L 14) |"
	echo "| O (no limits) | $(med O 13) | $(med O 14) |"
	echo "| L − O | $(awk -v a="$(med L 13)" -v b="$(med O 13)" 'BEGIN { print a - b }') | $(awk -v a="$(med L 14)" -v b="$(med O 14)" 'BEGIN { print a - b }') |"
	echo
	echo "Correctness during every run (warm-ups included):"
	echo "- status codes: every answer 200 with a \"result\" (health \"status\"), no socket errors, no rate_limited line in either stack's log; after the runs a ping on L still 200 with its RateLimit header ($RL_END): $([ -z "$bad" ] && echo yes || echo "NO: $bad (see bench/out/limits/runs.tsv)")"
	echo "- checked once before: on L a ping answers \`RateLimit-Policy: ${POLICY_HDR[L]}\`, on O none; \`mcpgate explain --tool\` on L's configuration says the five limits are on at $LIMIT, each from [limits]"
	echo "- introspections at the IdP during the runs (the tokens were cached before; 0 expected): $intro"
}
report
[ -z "$bad" ] || die "some answers were not 200 with a result, sockets failed, or a limit refused ($bad): not a measurement; nothing appended (see $RUNS and $OUT/wrk.*.out)"

# shellcheck disable=SC2016 # the backquotes are Markdown
append_results limits "" \
	"one client_credentials token of oidc-provider $(oidc_version) per stack (machine-acme: tenant acme), cached (cache-ttl = $CACHE_TTL); two stacks (L with the limits, O without) sharing the IdP" kind "$KINDS" \
	"- limits of L: \`[limits] store = $STORE\`, $(for c in $CLASSES; do printf '`%s = %s`, ' "$c" "$LIMIT"; done | sed 's/, $//') (a ping takes gateway, ip, tenant and token; tool is a tools/call's); O: no [limits]; no [tenant] and no upstream in either" \
	"- requests: POST /mcp ping with \`Content-Type: application/json\`, \`Accept: application/json, text/event-stream\`, \`Authorization: Bearer\`$([ "$SESSION" = 0 ] && echo ", no session" || echo ", the \`Mcp-Session-Id\` of one initialize with that stack and \`MCP-Protocol-Version: $PV\`"); H: GET /mcp/health on stack L"
exit 0
}
