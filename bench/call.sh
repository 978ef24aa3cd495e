#!/usr/bin/env bash
# bench/call.sh — bench/run's row 4 alone, with what the upstream saw: a relayed
# tools/call through the gateway against the same call straight to the upstream.
#
# One upstream (tests/upstream/fixture.mjs, official SDK, --json, BENCH_TOOLS (50)
# tools: bench/run's upstream a) behind nginx + spawn-fcgi + mcpgate (BENCH_PROCS x
# BENCH_WORKERS, max-workers as shipped), a token already cached (tests/idp):
#
#   C    tools/call a_echo through the gateway, in a gateway session (its Mcp-Session-Id:
#        the caller's own session at the upstream, opened by its initialize)
#   C0   the same without a gateway session (the caller's calls go on a session the
#        worker's pool holds for that caller)
#   D    tools/call echo straight to the upstream, in a session of its own
#   D4   D with 4 connections (wrk -c4): the upstream as loaded as through the gateway,
#        whose BENCH_PROCS x BENCH_WORKERS threads carry 4 calls at once
#   S0   tools/call a_slow (BENCH_SLOW_MS (1100) each) without a gateway session: calls
#        that hold their thread a second and more, so extra threads start and stop
#        whatever the machine does (with C0 between them, quick calls of the same caller)
#   Cb, C0b, S0b  with BENCH_BASE=COMMIT: C and C0 through a second stack of the same kind
#        whose mcpgate is built from COMMIT (git archive), beside the first: a before
#        and after in the same run (its ratios to D, and the first's to it)
#
# Per run, besides the rate, latency and CPU µs per call of nginx, mcpgate and the
# upstream: what arrived at the upstream (its GET /_traffic before and after, per call:
# POSTs, initialize, notifications/initialized, DELETEs, sessions opened) and the
# mcpgate processes' threads after the run (extra workers come and go with the load).
# The kinds run interleaved (C C0 D, REPS times, after a warm-up of each); every answer
# is checked (wrk.lua). Nothing is appended to RESULTS.md unless BENCH_RESULTS is set.
#
# Usage: bench/call.sh           (as root on Debian 12: installs what it lacks)
# Settings (environment): BENCH_DURATION=10 BENCH_REPS=3 BENCH_WARMUP=3
#   BENCH_THREADS=1 BENCH_CONNS=16 (wrk -t -c, bench/run's) BENCH_PROCS=2 BENCH_WORKERS=2
#   BENCH_TOOLS=50  BENCH_KINDS="C C0 D" (with BENCH_BASE: "C C0 Cb C0b D")
#   BENCH_BASE=     a commit to build the second stack's mcpgate from (none: one stack)
#   BENCH_SRC=worktree  MG_KEEP=1
# Everything goes to bench/out/call/ (gitignored).
{
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$here/out/call
THREADS=${BENCH_THREADS:-1}
CONNS=${BENCH_CONNS:-16}
TOOLS=${BENCH_TOOLS:-50}
BASE_REV=${BENCH_BASE:-}
if [ -n "$BASE_REV" ]; then KINDS=${BENCH_KINDS:-C C0 Cb C0b D}; else KINDS=${BENCH_KINDS:-C C0 D}; fi
RESULTS=${BENCH_RESULTS:-}
CACHE_TTL=3600
KNOBS="BENCH_TOOLS=$TOOLS BENCH_KINDS='$KINDS' BENCH_BASE=$BASE_REV BENCH_SRC=$SRC"
ECHO_ARG=call-bench-echo
SLOW=${BENCH_SLOW_MS:-1100}

setup
need_sdk
build_mcpgate
# the base: mcpgate built from BASE_REV's tree in $OUT/base (again when BASE_REV moved)
BASE_BIN=$OUT/base/build/src/mcpgate
if [ -n "$BASE_REV" ]; then
	rev=$(git -C "$top" rev-parse --verify "$BASE_REV^{commit}") || die "BENCH_BASE: no commit $BASE_REV"
	if [ "$(cat "$OUT/base/rev" 2>/dev/null)" != "$rev" ] || [ ! -x "$BASE_BIN" ]; then
		say "building mcpgate from $BASE_REV ($rev) into $OUT/base"
		rm -rf "$OUT/base"
		mkdir -p "$OUT/base/src" "$OUT/base/build" || die "cannot make $OUT/base"
		{ git -C "$top" archive "$rev" | tar -xf - -C "$OUT/base/src" && (cd "$OUT/base/src" && autoreconf -fi) &&
			(cd "$OUT/base/build" && "$OUT/base/src/configure" -q && make -j"$(nproc)" src/mcpgate); } \
			>"$OUT/base/build.log" 2>&1 || die "the build of $BASE_REV failed ($OUT/base/build.log)"
		echo "$rev" >"$OUT/base/rev"
	fi
fi
mkdir -p "$OUT/tmp"
TMPDIR=$OUT/tmp bench_root '*/mcpgate.log' '*/nginx/error.log' idp.log 'up-*.log'
start_upstreams "$TOOLS" a
read -r PORT PORT_B <<<"$(two_ports)" || die "no free ports"
BASE=http://127.0.0.1:$PORT BASE_B=http://127.0.0.1:$PORT_B
start_idp "$BASE/mcp" "$BASE_B/mcp"
CONF_GATEWAY="page-size = $TOOLS
catalog-ttl = 3600"
CONF_MORE=$(printf '[upstream "a"]\nurl = %s\nprefix = a_\ntimeout-ms = 5000\n' "${UP_URL[a]}")
ARGS='{"text":"'$ECHO_ARG'"}'
call() { printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":%s}}' "$1" "$ARGS"; }
# stack S DIR BIN PORT: nginx + spawn-fcgi + BIN on PORT in DIR, its token and a gateway
# session, both kinds of call checked; sets FCGIOF[S], NGINXOF[S], TOK[S], SID[S], URLOF[S]
declare -A FCGIOF=() NGINXOF=() TOK=() SID=() URLOF=()
stack() {
	local s=$1 url=http://127.0.0.1:$4/mcp
	mkdir -p "$2"
	say "starting stack $s: nginx + spawn-fcgi ($PROCS x $WORKERS $3) on $4"
	start_stack "$2" "$3" "$4" || die "stack $s did not start"
	FCGIOF[$s]=$STACK_FCGI NGINXOF[$s]=$STACK_NGINX URLOF[$s]=$url
	TOK[$s]=$(token_for "$url") || die "cannot mint a token for stack $s"
	check "$s: gateway initialize: 200" "$(post_to "$url" "$INIT" -H "Authorization: Bearer ${TOK[$s]}")" "\"protocolVersion\":\"$PV\".* 200\$"
	SID[$s]=$(sid)
	[ -n "${SID[$s]}" ] || die "$s: the gateway's initialize gave no Mcp-Session-Id"
	check "$s: tools/call a_echo in the session" "$(post_to "$url" "$(call a_echo)" -H "Authorization: Bearer ${TOK[$s]}" \
		-H "Mcp-Session-Id: ${SID[$s]}" -H "MCP-Protocol-Version: $PV")" "$ECHO_ARG.* 200\$"
	check "$s: tools/call a_echo without a session" "$(post_to "$url" "$(call a_echo)" -H "Authorization: Bearer ${TOK[$s]}" \
		-H "MCP-Protocol-Version: $PV")" "$ECHO_ARG.* 200\$"
}
stack new "$ROOT/new" "$BIN" "$PORT"
[ -z "$BASE_REV" ] || stack base "$ROOT/base" "$BASE_BIN" "$PORT_B"
up_session "${UP_URL[a]}"
check "tools/call echo straight to the upstream" "$(post_to "${UP_URL[a]}" "$(call echo)" "${UP_SESS[@]}")" "$ECHO_ARG.* 200\$"

# traffic: the upstream's counters, one line: posts initialize initialized calls deletes sessions
traffic() {
	curl -s --max-time 5 "${UP_URL[a]%/mcp}/_traffic" | jq -r '[.posts, (.byMethod.initialize // 0),
		(.byMethod["notifications/initialized"] // 0), (.byMethod["tools/call"] // 0), .deletes, .sessionsOpened] | @tsv'
}
# tcp_opens: the machine's TCP connections opened so far (wrk's to nginx are opened once
# a run, nginx reaches mcpgate on a unix socket: the rest are mcpgate's to the upstream)
tcp_opens() { awk '$1 == "Tcp:" && $2 ~ /^[0-9]+$/ { print $6 }' /proc/net/snmp; }
threads() { # S
	local p n=0
	for p in ${FCGIOF[$1]}; do n=$((n + $(awk '/^Threads:/ { print $2 }' "/proc/$p/status"))); done
	echo "$n"
}

runs_header kind posts_pc init_pc initialized_pc calls_pc deletes_pc sessions_per_min tcp_opens_pc threads_after upstream_rss_mb us_nginx us_mcpgate us_upstream
run() { # KIND SECONDS REP
	local kind=$1 s=new url envs t0 t1 o0 o1
	case $kind in *b) s=base ;; esac
	url=${URLOF[$s]}
	case $kind in
	C | Cb) envs=(BENCH_TOOL=a_echo "BENCH_TOKEN=${TOK[$s]}" "BENCH_SESSION=${SID[$s]}" "BENCH_PROTOCOL=$PV") ;;
	C0 | C0b) envs=(BENCH_TOOL=a_echo "BENCH_TOKEN=${TOK[$s]}" "BENCH_PROTOCOL=$PV") ;;
	S0 | S0b) envs=(BENCH_TOOL=a_slow "BENCH_TOKEN=${TOK[$s]}" "BENCH_PROTOCOL=$PV") ;;
	D | D4) url=${UP_URL[a]} envs=(BENCH_TOOL=echo "BENCH_SESSION=$UP_SID" "BENCH_PROTOCOL=$PV") ;;
	esac
	if [ "${kind#S}" != "$kind" ]; then
		envs+=("BENCH_ARGS={\"ms\":$SLOW}" "BENCH_WANT=slept $SLOW ms")
	else
		envs+=("BENCH_ARGS=$ARGS" "BENCH_WANT=$ECHO_ARG")
	fi
	if [ "${kind#D}" != "$kind" ]; then
		CPU_PIDS=("" "" "${UP_PID[a]}")
	else
		CPU_PIDS=("$(nginx_pids "${NGINXOF[$s]}")" "${FCGIOF[$s]}" "${UP_PID[a]}")
	fi
	t0=$(traffic)
	o0=$(tcp_opens)
	local CONNS=$CONNS WRK_TIMEOUT=$WRK_TIMEOUT
	[ "$kind" != D4 ] || CONNS=4
	[ "${kind#S}" = "$kind" ] || WRK_TIMEOUT=$((CONNS * SLOW / 1000 + 10))
	measure "$kind" "$2" "$OUT/wrk.$3.$kind.out" "$url" BENCH_EXPECT=200 BENCH_TARGET=call "${envs[@]}"
	o1=$(tcp_opens)
	t1=$(traffic)
	# shellcheck disable=SC2046 # the per-call columns, one word each
	row "$3" "$kind" $(awk -v a="$t0" -v b="$t1" -v r="$REQ" -v s="$2" 'BEGIN { split(a, x, "\t"); split(b, y, "\t");
		for (i = 1; i <= 5; i++) printf "%.3f ", (r > 0 ? (y[i] - x[i]) / r : 0); printf "%.0f", (y[6] - x[6]) * 60 / s }') \
		"$(awk -v a="$o0" -v b="$o1" -v r="$REQ" 'BEGIN { printf "%.4f", (r > 0 ? (b - a) / r : 0) }')" "$(if [ "${kind#D}" != "$kind" ]; then echo -; else threads "$s"; fi)" \
		"$(awk '/^VmRSS:/ { printf "%.0f", $2 / 1024 }' "/proc/${UP_PID[a]}/status")"
	said "$3" "$kind"
}
run_kinds " ($KINDS)"
# shellcheck disable=SC2086
runs_done ${FCGIOF[new]} ${FCGIOF[base]:-}

ratio_medians C/D C0/D Cb/D C0b/D C/Cb C0/C0b
bad=$(awk -F'\t' '$1 != "rep" && ($6 > 0 || $8 > 0 || $9 > 0 || $5 != $4) { printf "%s/%s ", $1, $2 }' "$RUNS")
kindname() {
	case $1 in
	C) echo "C tools/call a_echo through the gateway, in a gateway session" ;;
	C0) echo "C0 the same without a gateway session" ;;
	D) echo "D tools/call echo straight to the upstream" ;;
	D4) echo "D4 = D with 4 connections" ;;
	S0) echo "S0 tools/call a_slow ($SLOW ms) through the gateway, without a gateway session" ;;
	S0b) echo "S0b = S0 through the stack of $BASE_REV" ;;
	Cb) echo "Cb = C through the stack of $BASE_REV" ;;
	C0b) echo "C0b = C0 through the stack of $BASE_REV" ;;
	esac
}
table() {
	local k c
	# shellcheck disable=SC2086
	rates_table call "nginx, mcpgate, upstream, wrk" $KINDS
	case " $KINDS " in *" C "*" D "*) ratio_row C/D "C / D (bench/run's row 4)" "≥ 0.85" 0.85 ;; esac
	case " $KINDS " in *" C0 "*" D "*) ratio_row C0/D "C0 / D" ;; esac
	if [ -n "$BASE_REV" ]; then
		ratio_row Cb/D "Cb / D (row 4, $BASE_REV)"
		ratio_row C0b/D "C0b / D ($BASE_REV)"
		ratio_row C/Cb "C / Cb (this tree against $BASE_REV, in a session)"
		ratio_row C0/C0b "C0 / C0b (the same without a session)"
	fi
	echo
	echo "What the upstream saw, per call (GET /_traffic before and after each run; medians):"
	echo
	echo "| kind | POSTs | initialize | notifications/initialized | tools/call | DELETEs | sessions opened a minute | TCP connections opened (the machine's) | mcpgate threads after | upstream VmRSS after (MiB) |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for k in $KINDS; do
		printf '| %s |' "$k"
		for c in 13 14 15 16 17 18 19 20 21; do printf ' %s |' "$(med "$k" "$c")"; done
		echo
	done
	echo
	echo "Correctness during every run (warm-ups included): $([ -z "$bad" ] && echo yes || echo "NO: $bad")"
}
report
[ -z "$bad" ] || die "some answers were not right ($bad): not a measurement"
append_results "call (bench/run's row 4 alone)" "" "one client_credentials token of oidc-provider $(oidc_version), cached; upstream: tests/upstream/fixture.mjs --json" \
	call "$KINDS"
exit 0
}
