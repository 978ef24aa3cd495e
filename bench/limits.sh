#!/usr/bin/env bash
# bench/limits.sh — the benchmark of rate limits.
#
# Four gateway stacks in the same run, sharing the authorization server (tests/idp) and
# one session-key-file (32 random bytes), each its own nginx + spawn-fcgi + mcpgate, the
# same binary and configuration but [limits]:
#
#   stack L   all five limits on (gateway, ip, tenant, token, tool: BENCH_LIMIT each,
#             6000000/60 by default — 100,000 a second, far above what the machine
#             serves, so none is ever exceeded), in the host's state file (store = shm)
#   stack R   the same five limits in Redis (store = redis://127.0.0.1:PORT/0,
#             redis-timeout-ms = BENCH_REDIS_TIMEOUT_MS, redis-fail = closed: a Redis
#             that fails is a 503, which spoils the run): a redis-server this script
#             starts on a free loopback port and a unix socket, nothing kept on disk
#             (--save '' --appendonly no, its dir under the temp dir), stopped with the
#             rest
#   stack U   the same as R, but over the same redis-server's unix socket
#             (store = unix://ROOT/redis/redis.sock?db=0): Redis on the same host
#   stack O   no [limits]: limits off (the router takes no bucket at all)
#
# Requests per second of:
#
#   L   POST /mcp ping (JSON-RPC) with a cached bearer token through stack L: four
#       buckets taken per request (gateway and ip before authentication, tenant and
#       token after it; tool only for tools/call), and the RateLimit headers
#   R   the same ping through stack R: the four buckets, and with a session the check
#       of its tombstone, in one call of the limit script (EVALSHA): one Redis round trip
#   U   the same ping through stack U: the same round trip over the unix socket
#   O   the same ping through stack O
#   H   GET /mcp/health on stack L (no token, no limit): for scale
#
# Targets: L / O >= 0.95, R / O >= 0.8 and U / O >= 0.8 (the medians of the
# per-repetition ratios). The kinds run interleaved (L R U O H, L R U O H, ...). The CPU
# columns: nginx and mcpgate of the stack measured, and redis-server's for R and U (part
# of their cost). Redis round trips per ping: over R's (U's) measured runs, the top-level
# commands Redis ran (INFO commandstats before and after each run: EVALSHA, EXISTS and
# any other, but not the bench's own INFO nor the commands the limit script runs
# itself, TIME, MGET, SET) divided by R's (U's) requests; 1 expected, with a session or
# without; and Redis's own time in them (commandstats usec) against redis-server's CPU.
# Every answer's status and body are checked (wrk.lua's response(): 200 with a
# "result"): a run with any other answer (a 429 or a 503 above all) or a socket error is
# not a measurement, and nothing is appended then; nor when a stack's log has a
# rate_limited line or R's or U's a Redis outage, when a kind but R and U made Redis run
# a command, or when Redis holds no mcpgate:rl:* key during their runs. A benchmark, not
# a timed test: nothing here fails a build.
#
# Usage: bench/limits.sh         (as root on Debian 12: installs what it lacks)
# Settings (environment):
#   BENCH_DURATION=10   seconds per measured run      BENCH_REPS=3    repetitions
#   BENCH_WARMUP=3      seconds per warm-up run       BENCH_THREADS=2 BENCH_CONNS=8  (wrk -t -c)
#   BENCH_PROCS=2 BENCH_WORKERS=2   mcpgate processes (spawn-fcgi -F) x threads (-w)
#   BENCH_LIMIT=6000000/60  the rate of each of the five limits of stacks L and R
#   BENCH_REDIS_TIMEOUT_MS=200  stack R's and U's redis-timeout-ms (the gateway's default is 20:
#                       more here, so that a busy shared machine's scheduling stall is
#                       not taken for an outage, which would spoil the run)
#   BENCH_PERF=0        1: L, R, U and O once more after the measured runs, with perf
#                       recording the stack's mcpgate processes, and redis-server for R
#                       and U (top symbols: out/limits/perf.*.txt)
#   BENCH_PERF_CALLS=   with BENCH_PERF=1: dwarf (or fp) records call graphs too, and
#                       where the top symbols are called from: out/limits/perf.*.calls.txt
#   BENCH_SESSION=1     ping carries the Mcp-Session-Id and MCP-Protocol-Version of an
#                       initialize with that stack, as a client does (0: no session)
#   BENCH_SRC=worktree  build from the working tree (default), or HEAD (git archive)
#   BENCH_RESULTS=bench/RESULTS.md  where the dated section is appended ("" = nowhere)
#   MG_KEEP=1           keep the temp dir (configs, logs) after the run
# Everything goes to bench/out/limits/ (gitignored): the build, the temp dir of the
# stacks and of redis-server, runs.tsv, the raw wrk output, the last run's logs.
# What it shares with the other scripts is in bench/lib.sh.
# The whole script is one brace group: bash reads it completely before running it, so
# editing this file while it runs cannot derail the run.
{
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$here/out/limits
LIMIT=${BENCH_LIMIT:-6000000/60}
RTMO=${BENCH_REDIS_TIMEOUT_MS:-200}
PERF=${BENCH_PERF:-0}
CACHE_TTL=3600
KINDS="L R U O H"
NKINDS=5
KNOBS="BENCH_LIMIT=$LIMIT BENCH_REDIS_TIMEOUT_MS=$RTMO BENCH_SESSION=$SESSION BENCH_PERF=$PERF BENCH_SRC=$SRC"
CLASSES="gateway ip tenant token tool"
# the token (tests/idp: 3600 s) must outlive the run
[ $((REPS * NKINDS * (DURATION + 2) + NKINDS * WARMUP)) -lt 3300 ] ||
	die "a run this long outlives the token (1 h); fewer BENCH_REPS or a shorter BENCH_DURATION"
[[ $LIMIT =~ ^[0-9]+/[0-9]+$ ]] || die "BENCH_LIMIT must be N/SECONDS"
[[ $RTMO =~ ^[1-9][0-9]*$ ]] || die "BENCH_REDIS_TIMEOUT_MS must be a number of milliseconds"

# --- 1. What it needs -------------------------------------------------------------
setup
need_cmds redis-server:redis-server redis-cli:redis-tools >>"$OUT/install.log" 2>&1 ||
	die "cannot install redis-server, redis-cli (see $OUT/install.log)"

# --- 2. The binary ------------------------------------------------------------------
# A copy of the sources, built out of tree: src/mcpgate (bench/lib.sh's build_mcpgate);
# the same binary serves the four stacks.
build_mcpgate

# --- 3. Redis and the four stacks --------------------------------------------------
# Each in a directory of its own under the temp dir (bench/out/limits/tmp), redis-server
# too. No upstream and no [tenant]: ping is answered by the gateway, and the policy is
# off in the four. One session-key-file for all (a Redis store needs one; L and O have
# it too, so that the stacks differ in [limits] alone). R and U share one redis-server,
# R over TCP, U over its unix socket.
mkdir -p "$OUT/tmp"
TMPDIR=$OUT/tmp bench_root '*/mcpgate.log' '*/nginx/error.log' idp.log '*/mcpgate.conf' redis/redis.log
ports=$(free_ports 5) || die "no free ports"
read -r PORT_L PORT_R PORT_U PORT_O PORT_REDIS <<<"$ports"
BASE_L=http://127.0.0.1:$PORT_L
BASE_R=http://127.0.0.1:$PORT_R
BASE_U=http://127.0.0.1:$PORT_U
BASE_O=http://127.0.0.1:$PORT_O
REDIS_URL=redis://127.0.0.1:$PORT_REDIS/0
REDIS_SOCK=$ROOT/redis/redis.sock
REDIS_UNIX_URL="unix://$REDIS_SOCK?db=0"
rcli() { redis-cli -h 127.0.0.1 -p "$PORT_REDIS" "$@"; }
say "starting redis-server ($(redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')) on 127.0.0.1:$PORT_REDIS and $REDIS_SOCK"
mkdir -p "$ROOT/redis"
redis-server --port "$PORT_REDIS" --bind 127.0.0.1 --unixsocket "$REDIS_SOCK" --unixsocketperm 700 \
	--save '' --appendonly no --dir "$ROOT/redis" --daemonize no >"$ROOT/redis/redis.log" 2>&1 &
REDIS_PID=$!
mg_track "$REDIS_PID"
for _ in $(seq 1 100); do [ "$(rcli ping 2>/dev/null)" = PONG ] && break; sleep 0.1; done
[ "$(rcli ping 2>/dev/null)" = PONG ] || die "redis-server did not start: $(tail -n 5 "$ROOT/redis/redis.log")"
[ "$(redis-cli -s "$REDIS_SOCK" ping 2>/dev/null)" = PONG ] || die "redis-server does not answer on $REDIS_SOCK"
start_idp "$BASE_L/mcp" "$BASE_R/mcp" "$BASE_U/mcp" "$BASE_O/mcp"
(umask 077 && head -c 32 /dev/urandom >"$ROOT/session.key")
CONF_GATEWAY="session-key-file = $ROOT/session.key"
limits_conf() { # STORE → the [limits] section: the five limits in STORE
	printf '[limits]\nstore = %s\n' "$1"
	for c in $CLASSES; do printf '%s = %s\n' "$c" "$LIMIT"; done
}
declare -A CONFMORE=([L]=$(limits_conf shm)
	[R]=$(limits_conf "$REDIS_URL"; printf 'redis-timeout-ms = %s\nredis-fail = closed\n' "$RTMO")
	[U]=$(limits_conf "$REDIS_UNIX_URL"; printf 'redis-timeout-ms = %s\nredis-fail = closed\n' "$RTMO") [O]='')
declare -A PORTOF=([L]=$PORT_L [R]=$PORT_R [U]=$PORT_U [O]=$PORT_O)
declare -A BASEOF=([L]=$BASE_L [R]=$BASE_R [U]=$BASE_U [O]=$BASE_O)
declare -A FCGIOF=() NGINXOF=() CONFOF=()
# each stack's configuration checked before anything starts on it (by mcpgate -t, with
# its reason when refused)
for s in L R U O; do
	mkdir -p "$ROOT/$s"
	CONF_MORE=${CONFMORE[$s]} write_conf "$ROOT/$s" "${BASEOF[$s]}"
	CONFOF[$s]=$ROOT/$s/mcpgate.conf
	out=$("$BIN" -t -c "${CONFOF[$s]}" 2>&1) || die "mcpgate -t refuses stack $s's configuration: $out"
done
say "starting nginx + spawn-fcgi ($PROCS x $WORKERS) four times: limits in shm on $PORT_L, in Redis over TCP on $PORT_R and over its unix socket on $PORT_U, off on $PORT_O"
for s in L R U O; do
	CONF_MORE=${CONFMORE[$s]}
	start_stack "$ROOT/$s" "$BIN" "${PORTOF[$s]}" || die "stack $s did not start"
	FCGIOF[$s]=$STACK_FCGI NGINXOF[$s]=$STACK_NGINX
done
CONF_MORE=

# --- 4. Tokens, sessions, and a correctness check ------------------------------------
# One token per stack (each stack's resource is its own URL: the audience differs).
declare -A TOK=() SID=() POLICY_HDR=()
for s in L R U O; do
	TOK[$s]=$(token_for "${BASEOF[$s]}/mcp") || die "cannot mint a token for stack $s"
done
BASIC="Basic $(printf 'mcpgate:mcpgate-secret' | base64)"
CLAIMS=$(curl -s --max-time 10 -H "Authorization: $BASIC" --data "token=${TOK[L]}&token_type_hint=access_token" "$IDP/token/introspection" | jq -c .)
check "introspection of L's token: active, tenant acme" "$(jq -c '{active, tenant}' <<<"$CLAIMS")" '"active":true,"tenant":"acme"'

PING='{"jsonrpc":"2.0","id":1,"method":"ping"}'

for s in L R U O; do
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
# L's, R's and U's answers carry the RateLimit headers of the tightest class met; O's none
LIM_N=${LIMIT%/*} LIM_W=${LIMIT#*/}
for s in L R U; do
	check "stack $s: ping answers with RateLimit-Policy" "${POLICY_HDR[$s]}" "^\"(gateway|ip|tenant|token)\";q=$LIM_N;w=$LIM_W\$"
	# explain on its configuration: the five limits on, each from its [limits] line
	got=$("$BIN" explain -c "${CONFOF[$s]}" --claims "$CLAIMS" --tool bench_tool --json 2>"$ROOT/explain.err")
	check "explain --tool on $s's configuration: the five limits on at $LIMIT, from [limits]" \
		"$(jq -c '[.limits[] | [.limit, .on, "\(.n)/\(.per)", .section]]' <<<"$got" 2>/dev/null)" \
		"^\\[$(for c in $CLASSES; do printf '\\["%s",true,"%s","limits"\\],' "$c" "$LIMIT"; done | sed 's/,$//')\\]\$"
done
[ -z "${POLICY_HDR[O]}" ] || die "check failed: stack O (limits off) answers with RateLimit-Policy: ${POLICY_HDR[O]}"

# --- 5. Measuring -------------------------------------------------------------------
# redis_calls: the calls Redis has run so far (INFO commandstats), "EVALSHA EXISTS OTHER
# TIME MGET SET EVALSHA_US EXISTS_US": EVALSHA (the limit script), EXISTS (tombstone
# checks of their own), every other command but INFO and SCAN (the bench's own) and TIME,
# MGET and SET, which the limit script runs itself (TIME and MGET once, SET once a
# bucket: not round trips; counted to show it); then the µs Redis spent in EVALSHA and
# in EXISTS.
redis_calls() {
	rcli info commandstats | tr -d '\r' | awk -F'[:,]' '/^cmdstat_/ {
		c = substr($1, 9); n = $2; sub(/^calls=/, "", n); n += 0; u = $3; sub(/^usec=/, "", u); u += 0
		if (c == "evalsha") { e += n; eu += u } else if (c == "exists") { x += n; xu += u }
		else if (c == "time") t += n; else if (c == "mget") g += n; else if (c == "set") z += n
		else if (c != "info" && c != "scan") o += n }
		END { print e + 0, x + 0, o + 0, t + 0, g + 0, z + 0, eu + 0, xu + 0 }'
}
runs_header kind r_evalsha r_exists r_other r_time r_mget r_set r_evalsha_us r_exists_us r_keys r_badkeys \
	us_nginx us_mcpgate us_redis

# kind_run KIND SECONDS FILE: one wrk run of KIND (bench/lib.sh's measure), its output
# in FILE; RCALLS: the calls Redis ran meanwhile (redis_calls, the differences), then,
# for R and U, the most mcpgate:rl:* keys one of five SCANs over the middle of the run saw (a
# bucket expires about a millisecond after its last request at BENCH_LIMIT, so after
# the run there is none left to see, and a stall of the machine empties Redis for a
# moment) and how many keys seen are not named by a digest ("-" for the other kinds).
# The CPU groups: nginx (the master and its workers) and mcpgate of the stack the kind
# goes to, and for R and U redis-server.
redis_kind() { [ "$1" = R ] || [ "$1" = U ]; }
kind_run() {
	local kind=$1 secs=$2 file=$3 s=L path=/mcp envs=() c0 c1 scan='' keys
	case $kind in
	H) envs=(BENCH_TARGET=health) path=/mcp/health ;;
	L | R | U | O)
		s=$kind
		envs=(BENCH_TARGET=ping "BENCH_TOKEN=${TOK[$s]}")
		[ "$SESSION" = 0 ] || envs+=("BENCH_SESSION=${SID[$s]}" "BENCH_PROTOCOL=$PV")
		;;
	esac
	CPU_PIDS=("$(nginx_pids "${NGINXOF[$s]}")" "${FCGIOF[$s]}" "$(! redis_kind "$kind" || echo "$REDIS_PID")")
	c0=$(redis_calls)
	if redis_kind "$kind"; then
		rm -f "$file.keys"
		(
			sleep "$(awk -v s="$secs" 'BEGIN { print s / 4 }')"
			for _ in 1 2 3 4 5; do
				rcli --scan --pattern 'mcpgate:rl:*' | tr '\n' ' '
				echo
				sleep "$(awk -v s="$secs" 'BEGIN { print s / 10 }')"
			done >"$file.keys"
		) &
		scan=$!
	fi
	measure "$kind" "$secs" "$file" "${BASEOF[$s]}$path" BENCH_EXPECT=200 "${envs[@]}"
	[ -z "$scan" ] || wait "$scan"
	c1=$(redis_calls)
	read -r -a RCALLS <<<"$(awk -v a="$c0" -v b="$c1" 'BEGIN { n = split(a, x, " "); split(b, y, " ");
		for (i = 1; i <= n; i++) printf "%d ", y[i] - x[i] }')"
	if redis_kind "$kind"; then
		read -r -a keys < <(awk '{ n = 0; for (i = 1; i <= NF; i++)
			if ($i ~ /^mcpgate:rl:[0-9a-f]+$/ && length($i) == 43) n++; else b++
			if (n > m) m = n } END { print m + 0, b + 0 }' "$file.keys")
		RCALLS+=("${keys[@]}")
	else
		RCALLS+=(- -)
	fi
}
# run KIND SECONDS REP: one measured run (kind_run); appends a row to $RUNS (REP "w" =
# warm-up, not reported, but checked like the others).
run() {
	kind_run "$1" "$2" "$OUT/wrk.$3.$1.out"
	row "$3" "$1" "${RCALLS[@]}"
	said "$3" "$1"
}

run_kinds " (L: stack L, five limits in shm; R: stack R, in Redis over TCP; U: stack U, in Redis over its unix socket; O: stack O, limits off; H: stack L)"
# BENCH_PERF=1: after the measured runs, L, R, U and O once more each (not reported)
# with perf recording their stack's mcpgate processes, and redis-server for R and U
# (cpu-clock samples, no call graphs: no frame pointers), and the top symbols in
# $OUT/perf.L.txt, perf.R.txt, perf.U.txt, perf.O.txt.
if [ "$PERF" = 1 ]; then
	need_cmds perf:linux-perf >>"$OUT/install.log" 2>&1 || die "cannot install perf (linux-perf)"
	for k in L R U O; do
		perf_kind "$k" "${FCGIOF[$k]} $(! redis_kind "$k" || echo "$REDIS_PID")" comm,dso,sym
	done
fi
# shellcheck disable=SC2086
runs_done ${FCGIOF[L]} ${FCGIOF[R]} ${FCGIOF[U]} ${FCGIOF[O]}
mg_alive "$REDIS_PID" || die "redis-server died during the run: $(tail -n 5 "$ROOT/redis/redis.log")"
# after the runs: a ping on L, R and U still passes, with the RateLimit header of a
# bucket it took (fewer remaining than the quota); no request was refused, and neither
# R nor U ever lost Redis
declare -A PING_END=() RL_END=()
for s in L R U; do
	SESS=()
	[ "$SESSION" = 0 ] || SESS=(-H "Mcp-Session-Id: ${SID[$s]}" -H "MCP-Protocol-Version: $PV")
	PING_END[$s]=$(post_to "${BASEOF[$s]}/mcp" "$PING" -H "Authorization: Bearer ${TOK[$s]}" "${SESS[@]}")
	RL_END[$s]=$(hdr RateLimit)
done
LIMITED_LOG=$(cat "$ROOT"/[LRUO]/mcpgate.log | grep -c '"event":"rate_limited"')
OUTAGE_LOG=$(cat "$ROOT"/[RU]/mcpgate.log | grep -c 'redis at .* cannot be used')
REDIS_VERSION=$(redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')

# --- 6. Report ----------------------------------------------------------------------
ratio_medians L/O R/O U/O U/R R/L L/H O/H

# correctness over every run, warm-ups included
bad=$(awk -F'\t' '$1 != "rep" && ($6 > 0 || $8 > 0 || $9 > 0 || $5 != $4) { printf "%s/%s ", $1, $2 }' "$RUNS")
intro=$(awk -F'\t' '$1 != "rep" { s += $12 } END { print s + 0 }' "$RUNS")
for s in L R U; do
	[[ ${PING_END[$s]} =~ '"result":{}'.*' 200'$ ]] || bad="$bad ping-after-$s:${PING_END[$s]// /_} "
	[[ ${RL_END[$s]} =~ ^\"(gateway|ip|tenant|token)\"\;r=([0-9]+)\; ]] && [ "${BASH_REMATCH[2]}" -lt "$LIM_N" ] ||
		bad="$bad ratelimit-after-$s:${RL_END[$s]:-none} "
done
[ "$LIMITED_LOG" = 0 ] || bad="$bad rate-limited-log-lines:$LIMITED_LOG "
[ "$OUTAGE_LOG" = 0 ] || bad="$bad redis-outage-log-lines:$OUTAGE_LOG "
# R's and U's buckets in Redis during each of their runs: some, each named by a digest
declare -A RL_KEYS=()
for k in R U; do
	RL_KEYS[$k]=$(awk -F'\t' -v k="$k" '$1 != "rep" && $2 == k { printf "%s%s", (n++ ? "," : ""), $21 }' "$RUNS")
done
no_keys=$(awk -F'\t' '$1 != "rep" && ($2 == "R" || $2 == "U") && ($21 == 0 || $22 > 0) { printf "%s/%s ", $1, $2 }' "$RUNS")
[ -z "$no_keys" ] || bad="$bad no-or-bad-mcpgate:rl:*-keys-in:$no_keys"
# Redis commands of the kinds that do not use it (L, O, H: none expected)
not_r=$(awk -F'\t' '$1 != "rep" && $2 != "R" && $2 != "U" { s += $13 + $14 + $15 + $16 + $17 + $18 } END { print s + 0 }' "$RUNS")
[ "$not_r" = 0 ] || bad="$bad redis-commands-of-L-O-H:$not_r "
# trips KIND: over KIND's measured runs, its requests and the calls of redis_calls
# (summed) as REQ EV EX OT TI MG SE EVU EXU; then the sentence of the report on them.
trips() {
	local k=$1 REQ EV EX OT TI MG SE EVU EXU
	read -r REQ EV EX OT TI MG SE EVU EXU <<<"$(awk -F'\t' -v k="$k" '$1 != "rep" && $1 != "w" && $2 == k {
		q += $4; e += $13; x += $14; o += $15; t += $16; g += $17; z += $18; eu += $19; xu += $20 }
		END { print q + 0, e + 0, x + 0, o + 0, t + 0, g + 0, z + 0, eu + 0, xu + 0 }' "$RUNS")"
	per() { awk -v a="$1" -v b="$REQ" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }
	perev() { awk -v a="$1" -v b="${2:-$EV}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
	echo "$k ($REQ requests): **$(per $((EV + EX + OT)))** round trips per ping (evalsha $(per "$EV"), exists $(per "$EX"), other $(per "$OT")); the limit script's own calls per EVALSHA: TIME $(perev "$TI"), MGET $(perev "$MG"), SET $(perev "$SE"); Redis's time inside the commands (commandstats usec) per EVALSHA $(perev "$EVU") µs, per ping $(per "$((EVU + EXU))" | awk '{ printf "%.1f", $1 }') µs of redis-server's $(med "$k" 25) µs of CPU (the rest: its event loop and the sockets)."
}

kindname() {
	case $1 in
	L) echo "L ping, five limits on ($LIMIT each, store shm)" ;;
	R) echo "R ping, five limits on ($LIMIT each, store Redis over TCP)" ;;
	U) echo "U ping, five limits on ($LIMIT each, store Redis over its unix socket)" ;;
	O) echo "O ping, limits off (no [limits])" ;;
	H) echo "H GET /mcp/health (stack L)" ;;
	esac
}
diff_us() { awk -v a="$1" -v b="$2" 'BEGIN { print a - b }'; }
# sum_us KIND COLUMN...: the sum of the medians of COLUMNs of KIND
sum_us() { local k=$1 c; shift; for c in "$@"; do med "$k" "$c"; done | awk '{ s += $1 } END { print s + 0 }'; }
table() {
	local k
	# shellcheck disable=SC2086
	rates_table request "nginx, mcpgate (of the stack measured), redis-server (R, U), wrk" $KINDS
	ratio_row L/O "L / O (ping with the five limits in shm vs without)" "≥ 0.95" 0.95
	ratio_row R/O "R / O (ping with the five limits in Redis over TCP vs without)" "≥ 0.8" 0.8
	ratio_row U/O "U / O (ping with the five limits in Redis over its unix socket vs without)" "≥ 0.8" 0.8
	ratio_row U/R "U / R (unix socket vs TCP)"
	ratio_row R/L "R / L (Redis over TCP vs shm)"
	ratio_row L/H "L / H (for scale)"
	ratio_row O/H "O / H (for scale)"
	echo
	echo "| CPU per ping (medians, µs) | nginx | mcpgate | redis-server | all three |"
	echo "|---|---:|---:|---:|---:|"
	for k in L R U O; do
		printf '| %s | %s | %s | %s | %s |\n' "$(case $k in L) echo "L (limits, shm)" ;; R) echo "R (limits, Redis over TCP)" ;; U) echo "U (limits, Redis over its unix socket)" ;; O) echo "O (no limits)" ;; esac)" \
			"$(med "$k" 23)" "$(med "$k" 24)" "$(med "$k" 25)" "$(sum_us "$k" 23 24 25)"
	done
	echo "| L − O | $(diff_us "$(med L 23)" "$(med O 23)") | $(diff_us "$(med L 24)" "$(med O 24)") | — | $(diff_us "$(sum_us L 23 24)" "$(sum_us O 23 24)") |"
	for k in R U; do
		echo "| $k − O | $(diff_us "$(med $k 23)" "$(med O 23)") | $(diff_us "$(med $k 24)" "$(med O 24)") | $(med $k 25) | $(diff_us "$(sum_us $k 23 24 25)" "$(sum_us O 23 24)") |"
	done
	echo
	echo "Redis round trips per ping (INFO commandstats before and after each run; 1 expected: the limit script$([ "$SESSION" = 0 ] || echo ", which also looks for the session's tombstone")):"
	echo "- $(trips R)"
	echo "- $(trips U)"
	echo
	echo "Correctness during every run (warm-ups included):"
	echo "- status codes: every answer 200 with a \"result\" (health \"status\"), no socket errors, no rate_limited line in any stack's log, no Redis outage in R's or U's; after the runs a ping on L, R and U still 200 with its RateLimit header (L ${RL_END[L]}, R ${RL_END[R]}, U ${RL_END[U]}); Redis held mcpgate:rl:* keys during each R and U run, all named by a digest (the most one of five SCANs saw, warm-up first: R ${RL_KEYS[R]}; U ${RL_KEYS[U]}); no Redis command during the L, O and H runs: $([ -z "$bad" ] && echo yes || echo "NO: $bad (see bench/out/limits/runs.tsv)")"
	echo "- checked once before: on L a ping answers \`RateLimit-Policy: ${POLICY_HDR[L]}\`, on R \`${POLICY_HDR[R]}\`, on U \`${POLICY_HDR[U]}\`, on O none; \`mcpgate explain --tool\` on L's, R's and U's configurations says the five limits are on at $LIMIT, each from [limits]"
	echo "- introspections at the IdP during the runs (the tokens were cached before; 0 expected): $intro"
}
report
[ -z "$bad" ] || die "some answers were not 200 with a result, sockets failed, a limit refused, or Redis was lost ($bad): not a measurement; nothing appended (see $RUNS and $OUT/wrk.*.out)"

# shellcheck disable=SC2016 # the backquotes are Markdown
append_results limits "" \
	"one client_credentials token of oidc-provider $(oidc_version) per stack (machine-acme: tenant acme), cached (cache-ttl = $CACHE_TTL); four stacks (L with the limits in shm, R with them in Redis over TCP, U in the same Redis over its unix socket, O without) sharing the IdP and one \`session-key-file\`" kind "$KINDS" \
	"- limits of L: \`[limits] store = shm\`, $(for c in $CLASSES; do printf '`%s = %s`, ' "$c" "$LIMIT"; done | sed 's/, $//') (a ping takes gateway, ip, tenant and token; tool is a tools/call's); R: the same with \`store = redis://127.0.0.1:PORT/0\`, \`redis-timeout-ms = $RTMO\`, \`redis-fail = closed\` (redis-server $REDIS_VERSION on loopback, \`--save '' --appendonly no\`); U: the same with \`store = unix://ROOT/redis/redis.sock?db=0\` (the same redis-server's \`--unixsocket\`); O: no [limits]; no [tenant] and no upstream in any" \
	"- requests: POST /mcp ping with \`Content-Type: application/json\`, \`Accept: application/json, text/event-stream\`, \`Authorization: Bearer\`$([ "$SESSION" = 0 ] && echo ", no session" || echo ", the \`Mcp-Session-Id\` of one initialize with that stack and \`MCP-Protocol-Version: $PV\`"); H: GET /mcp/health on stack L"
exit 0
}
