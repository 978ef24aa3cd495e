#!/usr/bin/env bash
# bench/validate.sh — the benchmark of holding tool schemas against calls.
#
# One upstream MCP server (tests/upstream/fixture.mjs --schemas, official SDK, --json)
# behind real nginx + spawn-fcgi + mcpgate, configured twice: as upstream "v" (prefix
# v_, validate = yes and validate-output = log, the defaults) and as upstream "u" (prefix
# u_, validate = no, validate-output = no), with a token already in the shared cache
# (tests/idp). Requests per second of tools/call, interleaved in one run:
#
#   SV  v_checked_add {a, b}: two integer properties, and an outputSchema its
#       structuredContent is checked against: validated
#   SU  u_checked_add: the same call, not validated
#   NV  v_checked_nested: twenty properties in four nested objects (strings with
#       lengths, a pattern and an enum, bounded integers, booleans): validated
#   NU  u_checked_nested: the same, not validated
#
# and, with the gateway's own code before the stack starts (bench/validate.c), the
# validation of each call's arguments and the compile of each schema (µs, median of the
# repetitions), with the schemas the gateway listed.
#
# Targets: SV / SU ≥ 0.97 and NV / NU ≥ 0.97 (a validated call costs at most 3 % of
# the rate).
#
# Every answer's status and body are checked (wrk.lua's response()): a run with any
# other answer is not a measurement, and nothing is appended then. A benchmark, not a
# timed test: nothing here fails a build.
#
# Usage: bench/validate.sh      (as root on Debian 12: installs what it lacks)
# Settings (environment): BENCH_DURATION=10 BENCH_REPS=3 BENCH_WARMUP=3 BENCH_THREADS=2
#   BENCH_CONNS=8 BENCH_PROCS=2 BENCH_WORKERS=2 BENCH_SRC=worktree BENCH_RESULTS MG_KEEP
#   (bench/fed.sh says what each does)
# Everything goes to bench/out/validate/ (gitignored).
# The whole script is one brace group: bash reads it completely before running it.
{
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$here/out/validate
CACHE_TTL=3600
KINDS="SV SU NV NU"
KNOBS="BENCH_SRC=$SRC"
[ $((REPS * 4 * (DURATION + 2) + 4 * WARMUP)) -lt 3300 ] ||
	die "a run this long outlives the token and the catalog (1 h); fewer BENCH_REPS or a shorter BENCH_DURATION"

setup
need_sdk
build_mcpgate_with validate_bench

mkdir -p "$OUT/tmp"
TMPDIR=$OUT/tmp bench_root mcpgate.log nginx/error.log idp.log mcpgate.conf 'up-*.log'
UP_ARGS=(--schemas)
start_upstreams "$OWN_TOOLS" up
CONF_GATEWAY="page-size = 1000
catalog-ttl = 3600"
CONF_MORE=$(printf '[upstream "v"]\nurl = %s\nprefix = v_\n[upstream "u"]\nurl = %s\nprefix = u_\nvalidate = no\nvalidate-output = no\n' \
	"${UP_URL[up]}" "${UP_URL[up]}")
one_stack "$BIN"

TOKEN=$(one_token) || die "cannot mint a token"
ADD='{"a":20,"b":22}'
NESTED=$(jq -cn '["p","q","r","s"] | map(. as $n | {key: $n, value:
	{($n+"_0"): "some text", ($n+"_1"): 4711, ($n+"_2"): "medium", ($n+"_3"): "a_name-1", ($n+"_4"): true}}) | from_entries')
call() { printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":%s}}' "$1" "$2"; }
check "GET /mcp/health: 200, ok" "$(curl -s --max-time 10 -w ' %{http_code}' "$BASE/mcp/health")" '"status":"ok".* 200$'
check "gateway initialize: 200" "$(post_to "$BASE/mcp" "$INIT" -H "Authorization: Bearer $TOKEN")" "\"protocolVersion\":\"$PV\".* 200\$"
SID=$(sid)
SESS=(-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $PV")
for p in v u; do
	check "tools/call ${p}_checked_add: the sum" "$(post_to "$BASE/mcp" "$(call "${p}_checked_add" "$ADD")" -H "Authorization: Bearer $TOKEN" "${SESS[@]}")" '"sum":42.* 200$'
	check "tools/call ${p}_checked_nested: ok" "$(post_to "$BASE/mcp" "$(call "${p}_checked_nested" "$NESTED")" -H "Authorization: Bearer $TOKEN" "${SESS[@]}")" '"text":"ok".* 200$'
done
check "v_checked_add with a string: -32602 (validation is on)" \
	"$(post_to "$BASE/mcp" "$(call v_checked_add '{"a":"x","b":1}')" -H "Authorization: Bearer $TOKEN" "${SESS[@]}")" '"code":-32602.* 200$'

# The schemas as the gateway lists them, for bench/validate.c.
got=$(post_to "$BASE/mcp" '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' -H "Authorization: Bearer $TOKEN" "${SESS[@]}")
for t in add nested; do
	body "$got" | jq ".result.tools[] | select(.name == \"v_checked_$t\") | .inputSchema" >"$OUT/schema.$t.json"
done
printf '%s\n' "$ADD" >"$OUT/inst.add.json"
printf '%s\n' "$NESTED" >"$OUT/inst.nested.json"
declare -A VAL COMP
for t in add nested; do
	prog_run "checked_$t" -n 20000 -r 7 "$OUT/schema.$t.json" "$OUT/inst.$t.json"
	VAL[$t]=$(pb validate_ns)
	COMP[$t]=$(pb compile_ns)
done

runs_header kind us_nginx us_mcpgate us_upstream
CPU_PIDS=("$(nginx_pids "$NGINX")" "$FCGI" "${UP_PID[up]}")
run() {
	local kind=$1 tool args want
	case $kind in
	S?) tool=checked_add args=$ADD want='"sum":42' ;;
	N?) tool=checked_nested args=$NESTED want='"text":"ok"' ;;
	esac
	case $kind in ?V) tool=v_$tool ;; ?U) tool=u_$tool ;; esac
	measure "$kind" "$2" "$OUT/wrk.$3.$kind.out" "$BASE/mcp" BENCH_EXPECT=200 BENCH_TARGET=call "BENCH_TOKEN=$TOKEN" \
		"BENCH_TOOL=$tool" "BENCH_ARGS=$args" "BENCH_WANT=$want" "BENCH_SESSION=$SID" "BENCH_PROTOCOL=$PV"
	row "$3" "$kind"
	said "$3" "$kind"
}
run_kinds ""
# shellcheck disable=SC2086
runs_done $FCGI

ratio_medians SV/SU NV/NU
bad=$(awk -F'\t' '$1 != "rep" && ($6 > 0 || $8 > 0 || $9 > 0 || $5 != $4) { printf "%s/%s ", $1, $2 }' "$RUNS")
kindname() {
	case $1 in
	SV) echo "SV tools/call v_checked_add (2 properties + outputSchema), validated" ;;
	SU) echo "SU the same at u_, not validated" ;;
	NV) echo "NV tools/call v_checked_nested (20 properties, 4 nested objects), validated" ;;
	NU) echo "NU the same at u_, not validated" ;;
	esac
}
table() {
	# shellcheck disable=SC2086
	rates_table request "nginx, mcpgate, upstream, wrk" $KINDS
	ratio_row SV/SU "SV / SU (2 properties: validated vs not)" "≥ 0.97" 0.97
	ratio_row NV/NU "NV / NU (20 nested properties: validated vs not)" "≥ 0.97" 0.97
	echo
	echo "The check alone, with the gateway's code (bench/validate.c, this thread's CPU, median of 7 × 20000; a compile: once per worker, tool and catalog):"
	echo
	echo "| schema | validation of a call's arguments | compile |"
	echo "|---|---:|---:|"
	echo "| checked_add | **$(us "${VAL[add]}") µs** | $(us "${COMP[add]}") µs |"
	echo "| checked_nested | **$(us "${VAL[nested]}") µs** | $(us "${COMP[nested]}") µs |"
	echo
	echo "- every answer 200 with the expected body, no socket errors: $([ -z "$bad" ] && echo yes || echo "NO: $bad")"
	echo "- mcpgate's CPU per call, validated minus not (medians): checked_add $(awk -v a="$(med SV 14)" -v b="$(med SU 14)" 'BEGIN { print a - b }') µs, checked_nested $(awk -v a="$(med NV 14)" -v b="$(med NU 14)" 'BEGIN { print a - b }') µs"
}
report
[ -z "$bad" ] || die "some answers were not 200 with the expected body ($bad): not a measurement; nothing appended"
append_results validate "" "one client_credentials token of oidc-provider $(oidc_version), cached" kind "$KINDS" \
	"- upstream: tests/upstream/fixture.mjs --json --schemas (SDK $(jq -r .version "$top/tests/node_modules/@modelcontextprotocol/sdk/package.json"), node $(node -v)), as upstreams v (validated) and u (validate = no, validate-output = no)" \
	"- requests: POST /mcp tools/call with a session; arguments \`$ADD\` and a 20-property object ($(printf '%s' "$NESTED" | wc -c) bytes)"
exit 0
}
