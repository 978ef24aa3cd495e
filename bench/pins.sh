#!/usr/bin/env bash
# bench/pins.sh — the benchmark of tool pinning: is a tools/list's cost unchanged with
# the pins on? (The digests are taken when the catalog is fetched, not per request.)
#
# Two upstream MCP servers (tests/upstream/fixture.mjs, official SDK, --json, with echo
# tools added so that the two expose BENCH_TOOLS (1000) tools together, prefixes a_ and
# b_) behind three gateway stacks in the same run, sharing the authorization server
# (tests/idp) and the upstreams, each its own nginx + spawn-fcgi + mcpgate:
#
#   stack K   every [upstream] with pin = hold, and a pins file approving every tool
#             (`mcpgate pins -c K.conf approve --all-new --by bench` before the stack
#             starts; `mcpgate pins status` then exits 0: all pinned)
#   stack O   every [upstream] with pin = off: no pinning at all
#   stack W   the default, pin = warn, and no pins file: every tool is new, so the
#             catalog document holds a pending entry per tool (a first deployment)
#
# The caller (the IdP's client machine-acme, scope mcp:tools) sees the same BENCH_TOOLS
# tool names through the three stacks (checked before measuring). Requests per second of:
#
#   K   POST /mcp tools/list through stack K: the whole catalog in one page (page-size =
#       the catalog's size, catalog-ttl longer than the run), every tool pinned
#   O   the same tools/list through stack O (pinning off)
#   W   the same tools/list through stack W (every tool pending as new)
#   H   GET /mcp/health on stack K (no token): for scale
#
# Targets: K / O >= 0.97 (the median of the per-repetition ratios); W / O reported
# (target >= 0.95: what the pending entries cost a tools/list).
#
# The kinds run interleaved, the three lists' order rotated each repetition (K O W H,
# O W K H, W K O H, ...), and the medians are reported. Every
# answer's status and body are checked (wrk.lua's response(): K, O and W must hold
# BENCH_TOOLS "inputSchema"): a run with any other answer or a socket error is not a
# measurement, and nothing is appended then. A benchmark, not a timed test: nothing
# here fails a build.
#
# Usage: bench/pins.sh           (as root on Debian 12: installs what it lacks)
# Settings (environment):
#   BENCH_DURATION=10   seconds per measured run      BENCH_REPS=3    repetitions (a multiple of 3: each list kind first as often)
#   BENCH_WARMUP=3      seconds per warm-up run       BENCH_THREADS=2 BENCH_CONNS=8  (wrk -t -c)
#   BENCH_PROCS=2 BENCH_WORKERS=2   mcpgate processes (spawn-fcgi -F) x threads (-w)
#   BENCH_TOOLS=1000    tools in the catalog, from the two upstreams together
#   BENCH_SESSION=1     tools/list carries the Mcp-Session-Id and MCP-Protocol-Version of
#                       an initialize with that stack, as a client does (0: no session)
#   BENCH_SRC=worktree  build from the working tree (default), or HEAD (git archive)
#   BENCH_RESULTS=bench/RESULTS.md  where the dated section is appended ("" = nowhere)
#   MG_KEEP=1           keep the temp dir (configs, pins, logs) after the run
# Everything goes to bench/out/pins/ (gitignored): the build, the temp dir of the
# stacks, runs.tsv, the raw wrk output, the last run's logs.
# What it shares with the other scripts is in bench/lib.sh; its model is bench/policy.sh.
# The whole script is one brace group: bash reads it completely before running it, so
# editing this file while it runs cannot derail the run.
{
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$here/out/pins
TOOLS=${BENCH_TOOLS:-1000}
CACHE_TTL=3600
CATALOG_TTL=3600
KINDS="K O W H"
NKINDS=4
KNOBS="BENCH_TOOLS=$TOOLS BENCH_SESSION=$SESSION BENCH_SRC=$SRC"
UPSTREAMS="a b"
STACKS="K O W"
# the token (tests/idp: 3600 s) and the catalog (catalog-ttl) must outlive the run
[ $((REPS * NKINDS * (DURATION + 2) + NKINDS * WARMUP)) -lt 3300 ] ||
	die "a run this long outlives the token and the catalog (1 h); fewer BENCH_REPS or a shorter BENCH_DURATION"
[ "$TOOLS" -ge $((2 * OWN_TOOLS + 2)) ] || die "BENCH_TOOLS must be at least $((2 * OWN_TOOLS + 2)) (the fixture's own tools, twice, and an echo tool each)"

# --- 1. What it needs -------------------------------------------------------------
setup
need_sdk

# --- 2. The binary ------------------------------------------------------------------
# A copy of the sources, built out of tree: src/mcpgate (bench/lib.sh's build_mcpgate);
# the same binary serves the three stacks and runs `mcpgate pins`.
build_mcpgate

# --- 3. The upstreams ---------------------------------------------------------------
# Three stacks, each in a directory of its own under the temp dir (bench/out/pins/tmp);
# the two fixtures first, their tools split so that the two expose TOOLS together.
mkdir -p "$OUT/tmp"
TMPDIR=$OUT/tmp bench_root '*/mcpgate.log' '*/nginx/error.log' idp.log '*/mcpgate.conf' 'up-*.log' pins.*
# shellcheck disable=SC2086 # the names, one word each
start_upstreams "$TOOLS" $UPSTREAMS

# --- 4. The three stacks ------------------------------------------------------------
# The same [gateway] additions for all; the [upstream]s differ only in their pin line
# (none in W: the default, warn).
CONF_GATEWAY="page-size = $TOOLS
catalog-ttl = $CATALOG_TTL"
upstream_conf() { # PIN ("" = the default)
	local u
	for u in $UPSTREAMS; do
		printf '[upstream "%s"]\nurl = %s\nprefix = %s_\ntimeout-ms = 5000\n' "$u" "${UP_URL[$u]}" "$u"
		[ -z "$1" ] || echo "pin = $1"
	done
}
declare -A PINOF=([K]=hold [O]=off [W]='') PORTOF=() BASEOF=() CONFOF=() FCGIOF=() NGINXOF=()
ports=$(free_ports 3) || die "no free ports"
read -r "PORTOF[K]" "PORTOF[O]" "PORTOF[W]" <<<"$ports"
for s in $STACKS; do
	BASEOF[$s]=http://127.0.0.1:${PORTOF[$s]}
	CONFOF[$s]=$ROOT/$s/mcpgate.conf
done
start_idp "${BASEOF[K]}/mcp" "${BASEOF[O]}/mcp" "${BASEOF[W]}/mcp"
# The configurations first (write_conf, as start_stack would), so that K's pins are
# written before its gateway reads them: `mcpgate pins approve` fetches the catalog from
# the upstreams itself, and the pins file is the configuration's path with .pins.
for s in $STACKS; do
	mkdir -p "$ROOT/$s"
	CONF_MORE=$(upstream_conf "${PINOF[$s]}")
	write_conf "$ROOT/$s" "${BASEOF[$s]}"
	out=$("$BIN" -t -c "${CONFOF[$s]}" 2>&1) || die "mcpgate -t -c ${CONFOF[$s]} refuses the configuration: $out"
done
PINS_K=$ROOT/K/mcpgate.pins
"$BIN" pins -c "${CONFOF[K]}" approve --all-new --by bench >"$ROOT/pins.approve" 2>&1 ||
	die "mcpgate pins approve --all-new on K's configuration failed: $(tail -n 5 "$ROOT/pins.approve")"
# every record is pinned: the tools, and the fixtures' prompts and resource templates
APPROVED=$(grep -c '^approved ' "$ROOT/pins.approve")
APPROVED_TOOLS=$(grep -Ec '^approved [^ ]+ tool ' "$ROOT/pins.approve")
[ "$APPROVED_TOOLS" = "$TOOLS" ] || die "mcpgate pins approve --all-new wrote $APPROVED_TOOLS tool pins, not $TOOLS"
"$BIN" pins -c "${CONFOF[K]}" status >"$ROOT/pins.status" 2>&1 ||
	die "mcpgate pins status on K's configuration: not all pinned (exit $?): $(grep -v '^pinned ' "$ROOT/pins.status" | head -n 5)"
[ "$(grep -Ec '^pinned [^ ]+ tool ' "$ROOT/pins.status")" = "$TOOLS" ] || die "mcpgate pins status on K's configuration: not $TOOLS tools pinned"
PINS_BYTES=$(wc -c <"$PINS_K")
# W has no pins file: every tool new (status exits 1, every line "new")
"$BIN" pins -c "${CONFOF[W]}" status >"$ROOT/pins.status.W" 2>&1
rc=$?
{ [ "$rc" = 1 ] && [ "$(grep -Ec '^new [^ ]+ tool ' "$ROOT/pins.status.W")" = "$TOOLS" ]; } ||
	die "mcpgate pins status on W's configuration: want exit 1 and $TOOLS tools new, got exit $rc and $(grep -Ec '^new [^ ]+ tool ' "$ROOT/pins.status.W")"
say "pins: $APPROVED approved for K ($APPROVED_TOOLS tools; $PINS_BYTES bytes); W: every record new; O: pin = off"
say "starting nginx + spawn-fcgi ($PROCS x $WORKERS) three times: K (pinned) on ${PORTOF[K]}, O (off) on ${PORTOF[O]}, W (all new) on ${PORTOF[W]}"
for s in $STACKS; do
	start_stack "$ROOT/$s" "$BIN" "${PORTOF[$s]}" "${CONFOF[$s]}" || die "stack $s did not start"
	FCGIOF[$s]=$STACK_FCGI NGINXOF[$s]=$STACK_NGINX
done

# --- 5. Tokens, sessions, and a correctness check ------------------------------------
# One token per stack (each stack's resource is its own URL: the audience differs).
LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
declare -A SID=() TOK=() LISTBODY=() LISTBYTES=() HEALTH=()
want_counts="$TOOLS none $(for u in $UPSTREAMS; do printf '%s:%s,' "$u" $((OWN_TOOLS + UP_N[$u])); done | sed 's/,$//')"
for s in $STACKS; do
	TOK[$s]=$(token_for "${BASEOF[$s]}/mcp") || die "cannot mint a token for stack $s"
	HEALTH[$s]=$(curl -s --max-time 10 -w ' %{http_code}' "${BASEOF[$s]}/mcp/health")
	check "stack $s: GET /mcp/health: 200" "${HEALTH[$s]}" ' 200$'
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
	LISTBYTES[$s]=$(printf '%s' "${LISTBODY[$s]}" | wc -c)
	counts=$(jq -r '[(.result.tools | length), (.result.nextCursor // "none"),
		(.result.tools | map(.name | split("_")[0]) | group_by(.) | map("\(.[0]):\(length)") | join(","))] | join(" ")' <<<"${LISTBODY[$s]}")
	[ "$counts" = "$want_counts" ] || die "check failed: stack $s: tools/list: want '$want_counts' (tools, nextCursor, per prefix), got '$counts'"
	[ "$(grep -o '"inputSchema"' <<<"${LISTBODY[$s]}" | wc -l)" = "$TOOLS" ] || die "check failed: stack $s: tools/list: not $TOOLS \"inputSchema\""
done
names() { jq -c '[.result.tools[].name] | sort' <<<"${LISTBODY[$1]}"; }
for s in K W; do
	[ "$(names "$s")" = "$(names O)" ] || die "check failed: stacks $s and O answer different tool names"
done
# the same result, or how they differ (reported, not a failure: what W's flag adds)
same() {
	if [ "${LISTBODY[$1]}" = "${LISTBODY[O]}" ]; then echo "byte for byte"
	elif [ "$(jq -cS .result <<<"${LISTBODY[$1]}")" = "$(jq -cS .result <<<"${LISTBODY[O]}")" ]; then echo "as JSON (not byte for byte)"
	else echo "the same names, other results"; fi
}
SAME_K=$(same K) SAME_W=$(same W)
# what /mcp/health says of the pins on stack S (after the runs): its status, and the
# records pending over its upstreams ("pins" on each upstream that has some: W's new)
health_pins() {
	body "${HEALTH[$1]}" | jq -r '"\(.status), " + ([.. | objects | select(has("pins")) | .pins] |
		if length == 0 then "nothing pending" else "pending: \(map(.new) | add) new, \(map(.changed) | add) changed, \(map(.held) | add) held" end)' 2>/dev/null
}
say "tools/list: K $SAME_K as O, W $SAME_W; bytes K ${LISTBYTES[K]}, O ${LISTBYTES[O]}, W ${LISTBYTES[W]}"

# --- 6. Measuring -------------------------------------------------------------------
runs_header kind us_nginx us_mcpgate

# kind_run KIND SECONDS FILE: one wrk run of KIND (bench/lib.sh's measure), its output
# in FILE. The CPU groups: nginx (the master and its workers) and mcpgate of the stack
# the kind goes to.
kind_run() {
	local kind=$1 secs=$2 file=$3 s=K path=/mcp envs=()
	case $kind in
	H) envs=(BENCH_TARGET=health) path=/mcp/health ;;
	K | O | W)
		s=$kind
		envs=(BENCH_TARGET=list "BENCH_TOKEN=${TOK[$s]}" "BENCH_WANT=\"inputSchema\"" "BENCH_WANT_N=$TOOLS")
		[ "$SESSION" = 0 ] || envs+=("BENCH_SESSION=${SID[$s]}" "BENCH_PROTOCOL=$PV")
		;;
	esac
	CPU_PIDS=("$(nginx_pids "${NGINXOF[$s]}")" "${FCGIOF[$s]}")
	measure "$kind" "$secs" "$file" "${BASEOF[$s]}$path" BENCH_EXPECT=200 "${envs[@]}"
}
# run KIND SECONDS REP: one measured run (kind_run); appends a row to $RUNS (REP "w" =
# warm-up, not reported, but checked like the others).
run() {
	kind_run "$1" "$2" "$OUT/wrk.$3.$1.out"
	row "$3" "$1"
	said "$3" "$1"
}

# run_kinds, with the three lists' order rotated each repetition (K O W H, O W K H,
# W K O H, ...): on a small machine the first after H runs favoured (a run of K O W H
# against one of O W K H moved K / O from 1.03 to 0.93), so each takes each place in turn
# (BENCH_REPS a multiple of 3 for an even share).
run_kinds() {
	local k r lists=(K O W) i
	say "warm-up ($WARMUP s each)"
	for k in $KINDS; do run "$k" "$WARMUP" w; done
	say "measuring: $REPS x ($KINDS, the first three rotated each repetition), $DURATION s each, wrk -t$THREADS -c$CONNS$1"
	for r in $(seq 1 "$REPS"); do
		for i in 0 1 2; do
			run "${lists[(r - 1 + i) % 3]}" "$DURATION" "$r"
		done
		run H "$DURATION" "$r"
	done
}
run_kinds " (K: pinned, all approved; O: pinning off; W: no pins, all new; H: stack K)"
# shellcheck disable=SC2086
runs_done ${FCGIOF[K]} ${FCGIOF[O]} ${FCGIOF[W]}
# /mcp/health of each stack now that its workers hold the catalog: what it counts of the pins
for s in $STACKS; do
	HEALTH[$s]=$(curl -s --max-time 10 -w ' %{http_code}' "${BASEOF[$s]}/mcp/health")
done
HEALTH_END=${HEALTH[K]}
# an upstream left out, or a catalog too large for the state file
CATALOG_LOG=$(cat "$ROOT"/[KOW]/mcpgate.log | grep -Ec 'catalog: .*(what it offers is left out|kept per worker)')
# the pins still all pinned after the run (nothing changed at the upstreams)
"$BIN" pins -c "${CONFOF[K]}" status >"$ROOT/pins.status.end" 2>&1
PINS_END=$?

# --- 7. Report ----------------------------------------------------------------------
ratio_medians K/O W/O W/K K/H O/H

# correctness over every run, warm-ups included
bad=$(awk -F'\t' '$1 != "rep" && ($6 > 0 || $8 > 0 || $9 > 0 || $5 != $4) { printf "%s/%s ", $1, $2 }' "$RUNS")
intro=$(awk -F'\t' '$1 != "rep" { s += $12 } END { print s + 0 }' "$RUNS")
[[ $HEALTH_END =~ ' 200'$ ]] || bad="$bad health-after:${HEALTH_END// /_} "
[ "$CATALOG_LOG" = 0 ] || bad="$bad catalog-log-lines:$CATALOG_LOG "
[ "$PINS_END" = 0 ] || bad="$bad pins-status-after:$PINS_END "

kindname() {
	case $1 in
	K) echo "K tools/list, pin = hold, all $TOOLS approved, in one page ($((LISTBYTES[K] / 1024)) KiB)" ;;
	O) echo "O tools/list, pin = off ($((LISTBYTES[O] / 1024)) KiB)" ;;
	W) echo "W tools/list, pin = warn, no pins file: all $TOOLS new ($((LISTBYTES[W] / 1024)) KiB)" ;;
	H) echo "H GET /mcp/health (stack K)" ;;
	esac
}
cpu_row() { echo "| $1 | $(med "$2" 13) | $(med "$2" 14) |"; }
cpu_diff() { echo "| $1 | $(awk -v a="$(med "$2" 13)" -v b="$(med "$3" 13)" 'BEGIN { print a - b }') | $(awk -v a="$(med "$2" 14)" -v b="$(med "$3" 14)" 'BEGIN { print a - b }') |"; }
table() {
	# shellcheck disable=SC2086
	rates_table request "nginx, mcpgate (of the stack measured), wrk" $KINDS
	ratio_row K/O "K / O (tools/list pinned and all approved vs pinning off)" "≥ 0.97" 0.97
	ratio_row W/O "W / O (tools/list with every tool pending as new vs pinning off)" "≥ 0.95" 0.95
	ratio_row W/K "W / K"
	ratio_row K/H "K / H (for scale)"
	ratio_row O/H "O / H (for scale)"
	echo
	echo "| CPU per tools/list (medians, µs) | nginx | mcpgate |"
	echo "|---|---:|---:|"
	cpu_row "K (pinned)" K
	cpu_row "O (off)" O
	cpu_row "W (all new)" W
	cpu_diff "K − O" K O
	cpu_diff "W − O" W O
	echo
	echo "Correctness during every run (warm-ups included):"
	echo "- status codes: every answer 200 with the expected body (health 200; tools/list $TOOLS \"inputSchema\"), no socket errors; /mcp/health on K still 200 after the runs; no upstream left out and the catalog in the state file (the three stacks' logs); \`mcpgate pins status\` on K still exits 0 after the runs: $([ -z "$bad" ] && echo yes || echo "NO: $bad (see bench/out/pins/runs.tsv)")"
	echo "- checked once before: \`mcpgate pins -c K.conf approve --all-new\` wrote $APPROVED pins ($APPROVED_TOOLS tools, the rest the fixtures' prompts and templates; $PINS_BYTES bytes, definitions included) and \`pins status\` then exits 0 with $TOOLS tools pinned; on W's configuration it exits 1 with $TOOLS tools new; the three stacks' tools/list answer exactly $TOOLS tools ($want_counts: tools, nextCursor, per prefix) with the same names; K's result is O's $SAME_K, W's $SAME_W; /mcp/health after the runs: K $(health_pins K); O $(health_pins O); W $(health_pins W)"
	echo "- introspections at the IdP during the runs (the tokens were cached before; 0 expected): $intro"
}
report
[ -z "$bad" ] || die "some answers were not 200 with the expected body, sockets failed, or the pins changed ($bad): not a measurement; nothing appended (see $RUNS and $OUT/wrk.*.out)"

append_results pins "" \
	"one client_credentials token of oidc-provider $(oidc_version) per stack (machine-acme, scope mcp:tools), cached (cache-ttl = $CACHE_TTL); three stacks (K pinned, O pinning off, W no pins) sharing the IdP and the upstreams" kind "K O W H, O W K H, W K O H (rotated)" \
	"- upstreams: 2 × tests/upstream/fixture.mjs --json (SDK $(jq -r .version "$top/tests/node_modules/@modelcontextprotocol/sdk/package.json"), node $(node -v)), --tools $(for u in $UPSTREAMS; do printf '%s/' "${UP_N[$u]}"; done | sed 's,/$,,') + their $OWN_TOOLS own = $TOOLS tools, prefixes a_ b_; page-size = $TOOLS (one tools/list answers the whole catalog: K ${LISTBYTES[K]}, O ${LISTBYTES[O]}, W ${LISTBYTES[W]} bytes), catalog-ttl = $CATALOG_TTL (cached for the whole run)" \
	"- pins: K every [upstream] \`pin = hold\`, its pins file written by \`mcpgate pins -c K.conf approve --all-new --by bench\` before the stack started ($APPROVED pins: $APPROVED_TOOLS tools and the fixtures' prompts and templates, $PINS_BYTES bytes); O \`pin = off\`; W no pin line (\`pin = warn\`, \`new-tools = allow\`) and no pins file: every record new, a pending entry each in the catalog document" \
	"- requests: POST /mcp tools/list with \`Content-Type: application/json\`, \`Accept: application/json, text/event-stream\`, \`Authorization: Bearer\`$([ "$SESSION" = 0 ] && echo ", no session" || echo ", the \`Mcp-Session-Id\` of one initialize with that stack and \`MCP-Protocol-Version: $PV\`"); H: GET /mcp/health on stack K"
exit 0
}
