#!/usr/bin/env bash
# bench/policy.sh — the benchmark of per-caller tool catalogs.
#
# Two upstream MCP servers (tests/upstream/fixture.mjs, official SDK, --json, with echo
# tools added so that the two expose BENCH_TOOLS (1000) tools together, prefixes a_ and
# b_) behind two gateway stacks in the same run, sharing the authorization server
# (tests/idp) and the upstreams, each its own nginx + spawn-fcgi + mcpgate:
#
#   stack P   the policy: 50 [group]s (each a slice of the catalog by two or three
#             globs; members, scopes and features of their own) and one [tenant "acme"]
#             listing them all, with 20 rules (10 deny globs that match no tool, 10
#             allow globs that together match every tool)
#   stack O   the same [upstream]s and no [tenant] at all: no policy (src/model/policy.h)
#
# The caller (the IdP's client machine-acme: tenant acme, groups engineering and ops,
# scope mcp:tools) passes every group: it sees all BENCH_TOOLS tools through both
# stacks, and the two answer the same tools/list (checked before measuring), so the
# ratio measures only the cost of the decision. Requests per second of:
#
#   P   POST /mcp tools/list through stack P: the whole catalog in one page (page-size =
#       the catalog's size, catalog-ttl longer than the run), decided by the policy
#   O   the same tools/list through stack O (policy off)
#   H   GET /mcp/health on stack P (no token): for scale
#
# Targets: P / O >= 0.9 (the median of the per-repetition ratios); `mcpgate explain`
# on P's configuration answers in under 50 ms (wall clock of the whole command, which
# fetches the catalog from the two upstreams itself: the median of BENCH_EXPLAIN runs;
# the time of the decisions alone, its "decide_us", is reported too).
#
# The kinds run interleaved (P O H, P O H, ...) and the medians are reported. Every
# answer's status and body are checked (wrk.lua's response(): P and O must hold
# BENCH_TOOLS "inputSchema"): a run with any other answer or a socket error is not a
# measurement, and nothing is appended then. A benchmark, not a timed test: nothing
# here fails a build.
#
# Usage: bench/policy.sh         (as root on Debian 12: installs what it lacks)
# Settings (environment):
#   BENCH_DURATION=10   seconds per measured run      BENCH_REPS=3    repetitions
#   BENCH_WARMUP=3      seconds per warm-up run       BENCH_THREADS=2 BENCH_CONNS=8  (wrk -t -c)
#   BENCH_PROCS=2 BENCH_WORKERS=2   mcpgate processes (spawn-fcgi -F) x threads (-w)
#   BENCH_TOOLS=1000    tools in the catalog, from the two upstreams together
#   BENCH_EXPLAIN=21    timed runs of each `mcpgate explain` variant
#   BENCH_PERF=0        1: P and O once more after the measured runs, with perf recording
#                       the stack's mcpgate processes (top symbols: out/policy/perf.*.txt)
#   BENCH_SESSION=1     tools/list carries the Mcp-Session-Id and MCP-Protocol-Version of
#                       an initialize with that stack, as a client does (0: no session)
#   BENCH_SRC=worktree  build from the working tree (default), or HEAD (git archive)
#   BENCH_RESULTS=bench/RESULTS.md  where the dated section is appended ("" = nowhere)
#   MG_KEEP=1           keep the temp dir (configs, logs) after the run
# Everything goes to bench/out/policy/ (gitignored): the build, the temp dir of the
# stacks, runs.tsv, the raw wrk output, explain.tsv, the last run's logs.
# What it shares with bench/auth.sh, bench/mcp.sh and bench/fed.sh is in bench/lib.sh.
# The whole script is one brace group: bash reads it completely before running it, so
# editing this file while it runs cannot derail the run.
{
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$here/out/policy
TOOLS=${BENCH_TOOLS:-1000}
EXPLAIN_N=${BENCH_EXPLAIN:-21}
PERF=${BENCH_PERF:-0}
CACHE_TTL=3600
CATALOG_TTL=3600
KINDS="P O H"
NKINDS=3
KNOBS="BENCH_TOOLS=$TOOLS BENCH_EXPLAIN=$EXPLAIN_N BENCH_SESSION=$SESSION BENCH_PERF=$PERF BENCH_SRC=$SRC"
UPSTREAMS="a b"
NGROUPS=50
# the token (tests/idp: 3600 s) and the catalog (catalog-ttl) must outlive the run
[ $((REPS * NKINDS * (DURATION + 2) + NKINDS * WARMUP)) -lt 3300 ] ||
	die "a run this long outlives the token and the catalog (1 h); fewer BENCH_REPS or a shorter BENCH_DURATION"
[ "$TOOLS" -ge $((2 * OWN_TOOLS + 20)) ] || die "BENCH_TOOLS must be at least $((2 * OWN_TOOLS + 20)) (the fixture's own tools, twice, and 10 echo tools each)"
[ "$EXPLAIN_N" -ge 1 ] || die "BENCH_EXPLAIN must be at least 1"

# --- 1. What it needs -------------------------------------------------------------
setup
need_sdk

# --- 2. The binary ------------------------------------------------------------------
# A copy of the sources, built out of tree: src/mcpgate (bench/lib.sh's build_mcpgate); the same binary serves both stacks and explain.
build_mcpgate

# --- 3. The upstreams ---------------------------------------------------------------
# Two stacks, each in a directory of its own under the temp dir (bench/out/policy/tmp);
# the two fixtures first, their tools split so that the two expose TOOLS together.
mkdir -p "$OUT/tmp"
TMPDIR=$OUT/tmp bench_root '*/mcpgate.log' '*/nginx/error.log' idp.log '*/mcpgate.conf' 'up-*.log'
# shellcheck disable=SC2086 # the names, one word each
start_upstreams "$TOOLS" $UPSTREAMS

# --- 4. The two stacks --------------------------------------------------------------
# The same [gateway] additions and [upstream]s for both; P adds the policy.
CONF_GATEWAY="page-size = $TOOLS
catalog-ttl = $CATALOG_TTL"
UPSTREAM_CONF=$(for u in $UPSTREAMS; do printf '[upstream "%s"]\nurl = %s\nprefix = %s_\ntimeout-ms = 5000\n' "$u" "${UP_URL[$u]}" "$u"; done)

# The policy. Group gKK (KK = 00..49) holds the echo tools whose number ends in the two
# digits 2KK or 2KK+1 (echo_100, echo_101 in g00; ...; echo_98, echo_99 in g49), one glob
# per upstream; g00 also the single-digit ones, g01 the fixtures' echo, g02 their other
# own tools (none of which starts with an e). Together: every tool of the catalog, each
# in exactly one group. Members: every fifth group ops only, every fifth engineering or
# ops, the rest engineering; every third needs the scope mcp:tools; every tenth a
# feature (f1 ... f5) the tenant has. The caller (groups engineering ops, scope
# mcp:tools) passes them all. The tenant: the 50 groups, the 5 features, 10 deny globs
# that match no tool and 10 allow globs (8 narrow ones first, then a_* and b_*): 20 rules.
policy_conf() {
	local k a t u members names=''
	for k in $(seq 0 $((NGROUPS - 1))); do
		a=$((2 * k))
		t=$((a / 10)) u=$((a % 10))
		printf '[group "g%02d"]\n' "$k"
		printf 'tools = a_echo_*%s[%s%s] b_echo_*%s[%s%s]' "$t" "$u" $((u + 1)) "$t" "$u" $((u + 1))
		case $k in
		0) printf ' ?_echo_[0-9]' ;;
		1) printf ' ?_echo' ;;
		2) printf ' ?_[!e]*' ;;
		esac
		echo
		case $((k % 5)) in
		0) members=ops ;;
		1) members="engineering ops" ;;
		*) members=engineering ;;
		esac
		echo "members = $members"
		[ $((k % 3)) != 0 ] || echo "scopes = mcp:tools"
		[ $((k % 10)) != 9 ] || echo "feature = f$((k / 10 + 1))"
		names="$names $(printf 'g%02d' "$k")"
	done
	echo '[tenant "acme"]'
	echo "groups =$names"
	echo "features = f1 f2 f3 f4 f5"
	echo "deny = zz_never_* *_delete_* *_admin_* *_secret c_* d_* *_write_* a_echo_x* b_echo_x* *.internal"
	echo "allow = ?_echo_1* ?_echo_2* ?_echo_3* ?_echo_4* ?_echo_5* ?_echo_6* ?_echo_7* ?_echo_8* a_* b_*"
}
POLICY_CONF=$(policy_conf)
N_RULES=$(grep -E '^(deny|allow) = ' <<<"$POLICY_CONF" | cut -d= -f2 | wc -w)
N_GROUP_GLOBS=$(grep '^tools = ' <<<"$POLICY_CONF" | cut -d= -f2 | wc -w)
if [ "$(grep -c '^\[group ' <<<"$POLICY_CONF")" != "$NGROUPS" ] || [ "$N_RULES" != 20 ]; then
	die "the generated policy is not $NGROUPS groups and 20 rules"
fi

ports=$(two_ports) || exit 1
read -r PORT_P PORT_O <<<"$ports"
BASE_P=http://127.0.0.1:$PORT_P
BASE_O=http://127.0.0.1:$PORT_O
start_idp "$BASE_P/mcp" "$BASE_O/mcp"
say "starting nginx + spawn-fcgi ($PROCS x $WORKERS) twice: policy on $PORT_P, no policy on $PORT_O"
CONF_MORE="$UPSTREAM_CONF
$POLICY_CONF"
start_stack "$ROOT/P" "$BIN" "$PORT_P" || die "stack P (policy) did not start"
FCGI_P=$STACK_FCGI NGINX_P=$STACK_NGINX
CONF_MORE=$UPSTREAM_CONF
start_stack "$ROOT/O" "$BIN" "$PORT_O" || die "stack O (no policy) did not start"
FCGI_O=$STACK_FCGI NGINX_O=$STACK_NGINX
CONF_P=$ROOT/P/mcpgate.conf
CONF_O=$ROOT/O/mcpgate.conf
for c in "$CONF_P" "$CONF_O"; do
	out=$("$BIN" -t -c "$c" 2>&1) || die "mcpgate -t -c $c refuses the configuration: $out"
done

# --- 5. Tokens, sessions, and a correctness check ------------------------------------
# One token per stack (each stack's resource is its own URL: the audience differs).
TOKEN_P=$(token_for "$BASE_P/mcp") || die "cannot mint a token for stack P"
TOKEN_O=$(token_for "$BASE_O/mcp") || die "cannot mint a token for stack O"
BASIC="Basic $(printf 'mcpgate:mcpgate-secret' | base64)"
# what mcpgate's introspection of the token says: explain's --claims
CLAIMS=$(curl -s --max-time 10 -H "Authorization: $BASIC" --data "token=$TOKEN_P&token_type_hint=access_token" "$IDP/token/introspection" | jq -c .)
check "introspection of P's token: active, tenant acme, groups engineering ops" \
	"$(jq -c '{active, tenant, groups, scope}' <<<"$CLAIMS")" '"active":true,"tenant":"acme","groups":\["engineering","ops"\],"scope":"mcp:tools"'

LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'

declare -A SID=() TOK=([P]=$TOKEN_P [O]=$TOKEN_O) BASEOF=([P]=$BASE_P [O]=$BASE_O) LISTBODY=()
want_counts="$TOOLS none $(for u in $UPSTREAMS; do printf '%s:%s,' "$u" $((OWN_TOOLS + UP_N[$u])); done | sed 's/,$//')"
for s in P O; do
	check "stack $s: GET /mcp/health: 200, ok" "$(curl -s --max-time 10 -w ' %{http_code}' "${BASEOF[$s]}/mcp/health")" '"status":"ok".* 200$'
	SESS=()
	if [ "$SESSION" != 0 ]; then
		check "stack $s: initialize: 200" "$(post_to "${BASEOF[$s]}/mcp" "$INIT" -H "Authorization: Bearer ${TOK[$s]}")" "\"protocolVersion\":\"$PV\".* 200\$"
		SID[$s]=$(sid)
		[ -n "${SID[$s]}" ] || die "stack $s: initialize gave no Mcp-Session-Id"
		SESS=(-H "Mcp-Session-Id: ${SID[$s]}" -H "MCP-Protocol-Version: $PV")
	fi
	got=$(post_to "${BASEOF[$s]}/mcp" "$LIST" -H "Authorization: Bearer ${TOK[$s]}" "${SESS[@]}")
	check "stack $s: tools/list: 200" "$got" ' 200$'
	LISTBODY[$s]=$(body "$got")
	counts=$(jq -r '[(.result.tools | length), (.result.nextCursor // "none"),
		(.result.tools | map(.name | split("_")[0]) | group_by(.) | map("\(.[0]):\(length)") | join(","))] | join(" ")' <<<"${LISTBODY[$s]}")
	[ "$counts" = "$want_counts" ] || die "check failed: stack $s: tools/list: want '$want_counts' (tools, nextCursor, per prefix), got '$counts'"
	[ "$(grep -o '"inputSchema"' <<<"${LISTBODY[$s]}" | wc -l)" = "$TOOLS" ] || die "check failed: stack $s: tools/list: not $TOOLS \"inputSchema\""
done
[ "$(jq -cS .result <<<"${LISTBODY[P]}")" = "$(jq -cS .result <<<"${LISTBODY[O]}")" ] ||
	die "check failed: stacks P and O answer different tools/list results (the policy hides or changes something)"
LIST_BYTES=$(printf '%s' "${LISTBODY[P]}" | wc -c)
SAME_BYTES=$([ "${LISTBODY[P]}" = "${LISTBODY[O]}" ] && echo "byte for byte" || echo "as JSON (not byte for byte)")
# the policy is on in P (and decides every tool visible), off in O: explain says so
got=$("$BIN" explain -c "$CONF_P" --claims "$CLAIMS" --json 2>"$ROOT/explain.err") || die "explain on P's configuration failed: $(cat "$ROOT/explain.err")"
check "explain on P's configuration: policy on, tenant acme, $TOOLS visible, none hidden, no notes" \
	"$(jq -c '{policy, tenant, v: (.visible | length), h: (.hidden | length), notes}' <<<"$got")" \
	"^\\{\"policy\":true,\"tenant\":\"acme\",\"v\":$TOOLS,\"h\":0,\"notes\":\\[\\]\\}\$"
[ "$(jq -c '.visible | sort' <<<"$got")" = "$(jq -c '[.result.tools[].name] | sort' <<<"${LISTBODY[P]}")" ] ||
	die "check failed: explain's visible tools are not those of P's tools/list"
CLAIMS_O=$(jq -c --arg aud "$BASE_O/mcp" '.aud = $aud' <<<"$CLAIMS")
check "explain on O's configuration: policy off" \
	"$("$BIN" explain -c "$CONF_O" --claims "$CLAIMS_O" --json 2>/dev/null | jq -c '{policy, v: (.visible | length)}')" \
	"^\\{\"policy\":false,\"v\":$TOOLS\\}\$"

# --- 6. Measuring -------------------------------------------------------------------
runs_header kind us_nginx us_mcpgate

# kind_run KIND SECONDS FILE: one wrk run of KIND (bench/lib.sh's measure), its output
# in FILE. The CPU groups: nginx (the master and its workers) and mcpgate of the stack
# the kind goes to.
kind_run() {
	local kind=$1 secs=$2 file=$3 s=P path=/mcp envs=()
	case $kind in
	H) envs=(BENCH_TARGET=health) path=/mcp/health ;;
	P | O)
		s=$kind
		envs=(BENCH_TARGET=list "BENCH_TOKEN=${TOK[$s]}" "BENCH_WANT=\"inputSchema\"" "BENCH_WANT_N=$TOOLS")
		[ "$SESSION" = 0 ] || envs+=("BENCH_SESSION=${SID[$s]}" "BENCH_PROTOCOL=$PV")
		;;
	esac
	CPU_PIDS=("$(nginx_pids "${NGINXOF[$s]}")" "${FCGIOF[$s]}")
	measure "$kind" "$secs" "$file" "${BASEOF[$s]}$path" BENCH_EXPECT=200 "${envs[@]}"
}
declare -A NGINXOF=([P]=$NGINX_P [O]=$NGINX_O) FCGIOF=([P]=$FCGI_P [O]=$FCGI_O)
# run KIND SECONDS REP: one measured run (kind_run); appends a row to $RUNS (REP "w" =
# warm-up, not reported, but checked like the others).
run() {
	kind_run "$1" "$2" "$OUT/wrk.$3.$1.out"
	row "$3" "$1"
	said "$3" "$1"
}

run_kinds " (P: stack P, policy on; O: stack O, policy off; H: stack P)"
# BENCH_PERF=1: after the measured runs, P and O once more each (not reported) with
# perf recording their stack's mcpgate processes (cpu-clock samples, no call graphs:
# no frame pointers), and the top symbols in $OUT/perf.P.txt and perf.O.txt.
if [ "$PERF" = 1 ]; then
	need_cmds perf:linux-perf >>"$OUT/install.log" 2>&1 || die "cannot install perf (linux-perf)"
	for k in P O; do
		perf_kind "$k" "${FCGIOF[$k]}" dso,sym
	done
fi
# shellcheck disable=SC2086
runs_done $FCGI_P $FCGI_O
HEALTH_END=$(curl -s --max-time 10 -w ' %{http_code}' "$BASE_P/mcp/health")
# an upstream left out, or a catalog too large for the state file
CATALOG_LOG=$(cat "$ROOT/P/mcpgate.log" "$ROOT/O/mcpgate.log" | grep -Ec 'catalog: .*(what it offers is left out|kept per worker)')

# --- 7. explain ---------------------------------------------------------------------
# `mcpgate explain -c P.conf --claims CLAIMS` (the token's own introspection response)
# EXPLAIN_N times each, interleaved: the whole catalog (list, text), --tool of the
# catalog's last echo tool (tool), --json (json: its decide_us is the time of the
# decisions alone); and for scale: --json on O's configuration (off: policy off, the
# same catalog fetch, no decisions to speak of), `mcpgate -t -c P.conf` (start: the
# process and the configuration, nothing fetched), and what explain waits for, the two
# upstreams' initialize + tools/list by curl (fetch). Wall clock and CPU of the whole
# command: its start, the configuration, the catalog fetched from both upstreams (as
# one gateway worker does: initialize + tools/list each), the decisions, the output.
EXPLAIN_TOOL=b_echo_$((UP_N[b] - 1))
EXPLAIN=$OUT/explain.tsv
tsv variant run rc ms cpu_ms decide_us >"$EXPLAIN"
say "explain: $EXPLAIN_N x (mcpgate -t, the upstreams' catalog by curl, list, --tool $EXPLAIN_TOOL, --json, --json on O's configuration), interleaved"
# timed VARIANT RUN COMMAND...: one row of explain.tsv: the wall clock (bash's time:
# real) and CPU (user + sys) of COMMAND, its stdout and stderr in $OUT/explain.VARIANT.*;
# for --json, its decide_us.
timed() {
	local v=$1 i=$2 rc real user sys dus=- TIMEFORMAT='%R %U %S'
	shift 2
	{ time "$@" >"$OUT/explain.$v.out" 2>"$OUT/explain.$v.err"; } 2>"$OUT/explain.time"
	rc=$?
	read -r real user sys <"$OUT/explain.time"
	case $v in json | off | snap) dus=$(jq -r .decide_us "$OUT/explain.$v.out" 2>/dev/null) ;; esac
	tsv "$v" "$i" "$rc" "$(awk -v r="$real" 'BEGIN { printf "%.1f", r * 1000 }')" \
		"$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", (u + s) * 1000 }')" "${dus:--}" >>"$EXPLAIN"
}
# fetch RUN: what explain waits for, straight from the upstreams with curl: initialize
# and tools/list (the whole list: the fixtures do not page) of a, then of b; the time
# is the sum of curl's time_total of the four requests (without curl's own start).
timed_post() { # URL BODY [HEADER...] → "BODY STATUS SECONDS" (post_to with curl's time_total)
	local url=$1 body=$2
	shift 2
	curl -s --max-time 20 -D "$ROOT/headers" -w ' %{http_code} %{time_total}' -X POST "$url" \
		-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "$@" --data "$body"
}
fetch() {
	local u got total=0 rc=0
	for u in $UPSTREAMS; do
		got=$(timed_post "${UP_URL[$u]}" "$INIT")
		[[ $got =~ \ 200\ ([0-9.]+)$ ]] || rc=1
		total=$(awk -v a="$total" -v b="${BASH_REMATCH[1]:-0}" 'BEGIN { print a + b }')
		got=$(timed_post "${UP_URL[$u]}" "$LIST" -H "Mcp-Session-Id: $(sid)" -H "MCP-Protocol-Version: $PV")
		[[ $got =~ \"inputSchema\".*\ 200\ ([0-9.]+)$ ]] || rc=1
		total=$(awk -v a="$total" -v b="${BASH_REMATCH[1]:-0}" 'BEGIN { print a + b }')
	done
	tsv fetch "$1" "$rc" "$(awk -v t="$total" 'BEGIN { printf "%.1f", t * 1000 }')" - - >>"$EXPLAIN"
}
# snap: --json from a saved catalog (--catalog, what an operator's CI job without the
# upstreams runs): the decisions without the fetch
"$BIN" explain -c "$CONF_P" --claims "$CLAIMS" --json --save-catalog "$OUT/catalog.json" >/dev/null 2>&1 ||
	die "explain --save-catalog failed"
for i in $(seq 1 "$EXPLAIN_N"); do
	timed start "$i" "$BIN" -t -c "$CONF_P"
	timed snap "$i" "$BIN" explain -c "$CONF_P" --claims "$CLAIMS" --json --catalog "$OUT/catalog.json"
	fetch "$i"
	timed list "$i" "$BIN" explain -c "$CONF_P" --claims "$CLAIMS"
	timed tool "$i" "$BIN" explain -c "$CONF_P" --claims "$CLAIMS" --tool "$EXPLAIN_TOOL"
	timed json "$i" "$BIN" explain -c "$CONF_P" --claims "$CLAIMS" --json
	timed off "$i" "$BIN" explain -c "$CONF_O" --claims "$CLAIMS_O" --json
done
# the last output of each is right: 1000 visible (text), the tool visible, --json as checked
{ grep -q "^visible ($TOOLS):" "$OUT/explain.list.out" && grep -q "^hidden (0):" "$OUT/explain.list.out"; } ||
	die "explain (text): not '$TOOLS visible, 0 hidden': $(head -n 3 "$OUT/explain.list.out")"
grep -q "^$EXPLAIN_TOOL: visible" "$OUT/explain.tool.out" || die "explain --tool $EXPLAIN_TOOL: not visible: $(cat "$OUT/explain.tool.out")"
for v in json off snap; do
	[ "$(jq '.visible | length' "$OUT/explain.$v.out")" = "$TOOLS" ] || die "explain --json ($v): not $TOOLS visible"
done
[ "$(jq -c '.visible' "$OUT/explain.snap.out")" = "$(jq -c '.visible' "$OUT/explain.json.out")" ] ||
	die "explain --catalog: not the visible tools of the live explain"
EXPLAIN_BAD=$(awk -F'\t' 'NR > 1 && $3 != 0 { n++ } END { print n + 0 }' "$EXPLAIN")
# median / max of column COL of VARIANT (ms with one decimal, µs whole)
efmt() { awk -v c="$1" '{ printf (c == 6 ? "%.0f" : "%.1f"), $1 }'; }
emed() { awk -F'\t' -v v="$1" -v c="$2" 'NR > 1 && $1 == v { print $c }' "$EXPLAIN" | medlist | efmt "$2"; }
emax() { awk -F'\t' -v v="$1" -v c="$2" 'NR > 1 && $1 == v { if ($c + 0 > m) m = $c + 0 } END { print m }' "$EXPLAIN" | efmt "$2"; }
lt50() { awk -v x="$1" 'BEGIN { print (x < 50 ? "PASS" : "FAIL") }'; }

# --- 8. Report ----------------------------------------------------------------------
ratio_medians P/O P/H O/H

# correctness over every run, warm-ups included
bad=$(awk -F'\t' '$1 != "rep" && ($6 > 0 || $8 > 0 || $9 > 0 || $5 != $4) { printf "%s/%s ", $1, $2 }' "$RUNS")
intro=$(awk -F'\t' '$1 != "rep" { s += $12 } END { print s + 0 }' "$RUNS")
[[ $HEALTH_END =~ '"status":"ok"'.*' 200'$ ]] || bad="$bad health-after:${HEALTH_END// /_} "
[ "$CATALOG_LOG" = 0 ] || bad="$bad catalog-log-lines:$CATALOG_LOG "
[ "$EXPLAIN_BAD" = 0 ] || bad="$bad explain-exit-not-0:$EXPLAIN_BAD "

kindname() {
	case $1 in
	P) echo "P tools/list, policy on ($NGROUPS groups, $N_RULES rules), $TOOLS tools in one page ($((LIST_BYTES / 1024)) KiB)" ;;
	O) echo "O tools/list, policy off (no [tenant]), the same answer" ;;
	H) echo "H GET /mcp/health (stack P)" ;;
	esac
}
table() {
	# shellcheck disable=SC2086
	rates_table request "nginx, mcpgate (of the stack measured), wrk" $KINDS
	ratio_row P/O "P / O (tools/list with the policy vs without)" "≥ 0.9" 0.9
	ratio_row P/H "P / H (for scale)"
	ratio_row O/H "O / H (for scale)"
	echo
	echo "| CPU per tools/list (medians, µs) | nginx | mcpgate |"
	echo "|---|---:|---:|"
	echo "| P (policy) | $(med P 13) | $(med P 14) |"
	echo "| O (no policy) | $(med O 13) | $(med O 14) |"
	echo "| P − O | $(awk -v a="$(med P 13)" -v b="$(med O 13)" 'BEGIN { print a - b }') | $(awk -v a="$(med P 14)" -v b="$(med O 14)" 'BEGIN { print a - b }') |"
	echo
	echo "\`mcpgate explain -c P.conf --claims '<the token's introspection response>'\` ($EXPLAIN_N runs each, interleaved, after the wrk runs; wall clock and CPU of the whole command, which fetches the $TOOLS-tool catalog from the two upstreams itself; ms):"
	echo
	echo "| explain (P's configuration) | wall median ms | wall max ms | CPU (user + sys) median ms | decisions alone (decide_us, median / max µs) | target (wall median) | result |"
	echo "|---|---:|---:|---:|---:|---|---|"
	echo "| all $TOOLS tools, text | **$(emed list 4)** | $(emax list 4) | $(emed list 5) | — | < 50 ms | $(lt50 "$(emed list 4)") |"
	echo "| --tool $EXPLAIN_TOOL | **$(emed tool 4)** | $(emax tool 4) | $(emed tool 5) | — | < 50 ms | $(lt50 "$(emed tool 4)") |"
	echo "| --json, all $TOOLS tools | **$(emed json 4)** | $(emax json 4) | $(emed json 5) | $(emed json 6) / $(emax json 6) | < 50 ms | $(lt50 "$(emed json 4)") |"
	echo "| --json, all $TOOLS tools, from a saved catalog (\`--catalog\`: no upstream asked) | **$(emed snap 4)** | $(emax snap 4) | $(emed snap 5) | $(emed snap 6) / $(emax snap 6) | < 50 ms | $(lt50 "$(emed snap 4)") |"
	echo "| for scale: --json on O's configuration (policy off: the same catalog fetch, no decisions) | $(emed off 4) | $(emax off 4) | $(emed off 5) | $(emed off 6) / $(emax off 6) | — | |"
	echo "| for scale: \`mcpgate -t -c P.conf\` (the process's start and the configuration, nothing fetched) | $(emed start 4) | $(emax start 4) | $(emed start 5) | — | — | |"
	echo "| for scale: the catalog straight from the two upstreams with curl (initialize + tools/list of a, then of b: what explain waits for; curl's time_total, summed) | $(emed fetch 4) | $(emax fetch 4) | — | — | — | |"
	echo
	echo "Correctness during every run (warm-ups included):"
	echo "- status codes: every answer 200 with the expected body (health \"status\"; tools/list $TOOLS \"inputSchema\"), no socket errors; /mcp/health still ok after the runs; no upstream left out and the catalog in the state file (both stacks' logs); every explain exited 0: $([ -z "$bad" ] && echo yes || echo "NO: $bad (see bench/out/policy/runs.tsv, explain.tsv)")"
	echo "- checked once before: both stacks' tools/list answer exactly $TOOLS tools ($want_counts: tools, nextCursor, per prefix) and the same result ($SAME_BYTES); \`mcpgate -t\` accepts both configurations; explain on P's says policy on, tenant acme, $TOOLS visible, 0 hidden (the same names as P's tools/list), on O's policy off"
	echo "- introspections at the IdP during the runs (the tokens were cached before; 0 expected): $intro"
}
report
[ -z "$bad" ] || die "some answers were not 200 with the expected body, sockets failed, or explain failed ($bad): not a measurement; nothing appended (see $RUNS, $EXPLAIN and $OUT/wrk.*.out)"

append_results policy "" \
	"one client_credentials token of oidc-provider $(oidc_version) per stack (machine-acme: tenant acme, groups engineering ops, scope mcp:tools), cached (cache-ttl = $CACHE_TTL); two stacks (P with the policy, O without) sharing the IdP and the upstreams" kind "$KINDS" \
	"- upstreams: 2 × tests/upstream/fixture.mjs --json (SDK $(jq -r .version "$top/tests/node_modules/@modelcontextprotocol/sdk/package.json"), node $(node -v)), --tools $(for u in $UPSTREAMS; do printf '%s/' "${UP_N[$u]}"; done | sed 's,/$,,') + their $OWN_TOOLS own = $TOOLS tools, prefixes a_ b_; page-size = $TOOLS (one tools/list answers the whole catalog, $LIST_BYTES bytes), catalog-ttl = $CATALOG_TTL (cached for the whole run)" \
	"- policy of P: $NGROUPS [group]s ($N_GROUP_GLOBS tools globs: each group a slice of the echo tools by their last two digits, one glob per upstream, three groups a third glob for the rest; members ops / engineering ops / engineering, every third scopes = mcp:tools, every tenth a feature), [tenant \"acme\"] with the $NGROUPS groups, 5 features and $N_RULES rules (10 deny globs matching no tool, 10 allow globs: 8 narrow, then a_* b_*); the caller passes every group, so P and O answer the same tools; O: the same [upstream]s, no [tenant] (policy off)" \
	"- requests: POST /mcp tools/list with \`Content-Type: application/json\`, \`Accept: application/json, text/event-stream\`, \`Authorization: Bearer\`$([ "$SESSION" = 0 ] && echo ", no session" || echo ", the \`Mcp-Session-Id\` of one initialize with that stack and \`MCP-Protocol-Version: $PV\`"); H: GET /mcp/health on stack P; explain: \`mcpgate explain -c P.conf --claims <the introspection response of P's token>\` [\`--tool $EXPLAIN_TOOL\` | \`--json\`], and \`--json\` on O.conf for scale, $EXPLAIN_N runs each, interleaved, after the wrk runs"
exit 0
}
