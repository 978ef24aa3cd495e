#!/usr/bin/env bash
# bench/mcp.sh — the benchmark of the MCP exchange (issue #4).
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
# The whole script is one brace group: bash reads it completely before running it, so
# editing this file while it runs cannot derail the run.
{
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
OUT=$here/out/mcp
DURATION=${BENCH_DURATION:-10}
WARMUP=${BENCH_WARMUP:-3}
REPS=${BENCH_REPS:-3}
THREADS=${BENCH_THREADS:-2}
CONNS=${BENCH_CONNS:-8}
PROCS=${BENCH_PROCS:-2}
WORKERS=${BENCH_WORKERS:-2}
BATCH=${BENCH_BATCH:-10}
SESSION=${BENCH_SESSION:-1}
SESSION_N=${BENCH_SESSION_N:-20000}
SRC=${BENCH_SRC:-worktree}
RESULTS=${BENCH_RESULTS-$here/RESULTS.md}
CACHE_TTL=3600
KINDS="H I P B"
CMDLINE="BENCH_DURATION=$DURATION BENCH_REPS=$REPS BENCH_WARMUP=$WARMUP BENCH_THREADS=$THREADS BENCH_CONNS=$CONNS BENCH_PROCS=$PROCS BENCH_WORKERS=$WORKERS BENCH_BATCH=$BATCH BENCH_SESSION=$SESSION BENCH_SESSION_N=$SESSION_N BENCH_SRC=$SRC bench/mcp.sh"

say() { printf '%s\n' "$*" >&2; }
die() { say "bench/mcp.sh: $*"; exit 1; }

# shellcheck disable=SC2034 # read by deploy/lib.sh
MG_TOP=$top
. "$top/deploy/lib.sh"

mkdir -p "$OUT/tmp"
START_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
# the token (tests/idp: 3600 s) must outlive the run
[ $((REPS * 4 * (DURATION + 2) + 4 * WARMUP)) -lt 3300 ] || die "a run this long outlives the token (1 h); fewer BENCH_REPS or a shorter BENCH_DURATION"

# --- 1. What it needs -------------------------------------------------------------
need_pkgs build-essential autoconf automake libtool pkg-config \
	libfcgi-dev libfcgi-bin libjansson-dev libsodium-dev libcurl4-openssl-dev \
	>"$OUT/install.log" 2>&1 || { cat "$OUT/install.log" >&2; die "cannot install the build dependencies"; }
need_cmds wrk:wrk nginx:nginx-light spawn-fcgi:spawn-fcgi cgi-fcgi:libfcgi-bin curl:curl jq:jq \
	node:nodejs npm:npm >>"$OUT/install.log" 2>&1 || { cat "$OUT/install.log" >&2; die "cannot install wrk, nginx, spawn-fcgi, curl, jq, node"; }
if [ ! -d "$top/tests/node_modules/oidc-provider" ] ||
	[ "$top/tests/package-lock.json" -nt "$top/tests/node_modules/.package-lock.json" ]; then
	say "npm ci --prefix tests"
	npm ci --prefix "$top/tests" --no-audit --no-fund --loglevel=error >>"$OUT/install.log" 2>&1 ||
		die "npm ci --prefix tests failed (see $OUT/install.log)"
fi

# --- 2. The binaries ----------------------------------------------------------------
# A copy of the sources (so that edits going on in the tree do not race the build),
# built out of tree: src/mcpgate (the default CFLAGS, as installed), and
# bench/session_bench (make bench/session_bench, an EXTRA_PROGRAMS of Makefile.am).
# bench/session.c is the benchmark's own: always the working tree's.
sources() { # the files to copy (NUL-separated): the sources, no build products, no bench/
	(cd "$top" && git ls-files -co --exclude-standard -z | grep -zv '^bench/')
}
build() {
	local src=$OUT/src stamp new
	if [ "$SRC" = HEAD ]; then
		new=$(git -C "$top" rev-parse HEAD) || return 1
	else
		new=$(cd "$top" && sources | xargs -0 stat -c '%n %s %Y' 2>/dev/null | sha256sum | cut -c1-16) || return 1
	fi
	new="$new $(sha256sum <"$here/session.c" | cut -c1-16)"
	stamp=$(cat "$OUT/build.stamp" 2>/dev/null)
	if [ "$stamp" = "$new" ] && [ -x "$OUT/build/src/mcpgate" ] && [ -x "$OUT/build/bench/session_bench" ]; then
		say "binaries up to date ($SRC $new)"
		return 0
	fi
	say "building mcpgate and bench/session_bench from the $SRC sources into $OUT/build"
	rm -rf "$src" "$OUT/build" "$OUT/build.stamp"
	mkdir -p "$src/bench" "$OUT/build"
	if [ "$SRC" = HEAD ]; then
		git -C "$top" archive HEAD | tar -xf - -C "$src" || return 1
	else
		sources | (cd "$top" && tar --null -T - -cf -) | tar -xf - -C "$src" || return 1
	fi
	cp "$here/session.c" "$src/bench/" || return 1
	(cd "$src" && autoreconf -fi) >"$OUT/build.log" 2>&1 || return 1
	(cd "$OUT/build" && "$src/configure" -q && make -j"$(nproc)" src/mcpgate &&
		make bench/session_bench) >>"$OUT/build.log" 2>&1 || return 1
	echo "$new" >"$OUT/build.stamp"
}
build || { tail -n 30 "$OUT/build.log" >&2; die "build failed (full log: $OUT/build.log; BENCH_SRC=HEAD needs a commit whose Makefile.am has bench/session_bench)"; }
BIN=$OUT/build/src/mcpgate

# --- 3. Session seal + open, alone ----------------------------------------------------
# Before the stack starts, so that nothing of ours competes with it.
say "bench/session_bench -n $SESSION_N -r 7 (session seal + open, the gateway's code)"
"$OUT/build/bench/session_bench" -n "$SESSION_N" -r 7 >"$OUT/session.out" 2>&1 ||
	die "session_bench failed: $(tail -n 5 "$OUT/session.out")"
cat "$OUT/session.out" >&2
SB=$(grep '^BENCH ' "$OUT/session.out") || die "session_bench: no result line"
sb() { sed -n "s/.* $1=\\([^ ]*\\).*/\\1/p" <<<"$SB"; }

# --- 4. The stack -------------------------------------------------------------------
# The temp dir (configs, sockets, state file, logs) under bench/out/mcp/tmp.
TMPDIR=$OUT/tmp mg_init || die "no temp dir"
ROOT=$MG_DIR
# shellcheck disable=SC2317 # called by the EXIT trap
save_logs() {
	local d=$OUT/last-run f
	rm -rf "$d"
	mkdir -p "$d"
	for f in "$ROOT"/mcpgate.log "$ROOT"/nginx/error.log "$ROOT"/idp.log "$ROOT"/mcpgate.conf; do
		[ -f "$f" ] || continue
		tail -n 200 "$f" >"$d/$(echo "${f#"$ROOT"/}" | tr / _)"
	done
}
trap 'MG_DIR=$ROOT; save_logs; stop_all' EXIT

PORT=$(free_port) || die "no free port"
BASE=http://127.0.0.1:$PORT

say "starting the authorization server (oidc-provider)"
rm -f "$ROOT/idp.ready"
node "$top/tests/idp/server.mjs" --port 0 --resource "$BASE/mcp" \
	--ready-file "$ROOT/idp.ready" --quiet >/dev/null 2>"$ROOT/idp.log" &
IDP_PID=$!
mg_track "$IDP_PID"
for _ in $(seq 1 100); do [ -s "$ROOT/idp.ready" ] && break; sleep 0.1; done
IDP=$(sed -n 's/^ready //p' "$ROOT/idp.ready" 2>/dev/null)
[ -n "$IDP" ] || die "the authorization server did not start: $(tail -n 5 "$ROOT/idp.log")"
printf 'mcpgate-secret\n' >"$ROOT/secret"

cat >"$ROOT/mcpgate.conf" <<CONF
# generated by bench/mcp.sh
[gateway]
resource = $BASE/mcp
name = com.example/gateway
title = Bench gateway
description = bench/mcp.sh
version = 1.0.0
website-url = https://example.com
state = $ROOT/state
workers = $WORKERS
[auth]
issuer = $IDP
client-id = mcpgate
client-secret-file = $ROOT/secret
required-scopes = mcp:tools
scopes-supported = mcp:tools
cache-ttl = $CACHE_TTL
timeout-ms = 3000
CONF
# shellcheck disable=SC2034 # read by deploy/lib.sh
MG_LOG=$ROOT/mcpgate.log
# shellcheck disable=SC2034
MCPGATE_BIN=$BIN
say "starting nginx + spawn-fcgi ($PROCS x $WORKERS) on $PORT"
start_mcpgate_fcgi "$ROOT/mcpgate.sock" "$ROOT/mcpgate.conf" "$PROCS" "$WORKERS" || die "mcpgate did not start"
FCGI=$MG_FCGI_PIDS
start_nginx "$PORT" || die "nginx did not start"
NGINX=$MG_FRONT_PID

# --- 5. The token, the session, and a correctness check ------------------------------
TOKEN=$(node "$top/tests/idp/token.mjs" --issuer "$IDP" --client machine-acme --scope mcp:tools | jq -r .access_token)
[ -n "$TOKEN" ] && [ "$TOKEN" != null ] || die "cannot mint a token"
PV=2025-11-25
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"'$PV'","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
PING='{"jsonrpc":"2.0","id":1,"method":"ping"}'
BATCHBODY=$(for i in $(seq 1 "$BATCH"); do printf '{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' "$i"; done | paste -sd, | sed 's/^/[/; s/$/]/')

post() { # BODY [HEADER...] → "STATUS BODY" (and the headers in $ROOT/headers)
	local body=$1
	shift
	curl -s --max-time 10 -D "$ROOT/headers" -w ' %{http_code}' -X POST "$BASE/mcp" \
		-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "$@" --data "$body"
}
check() { # DESC GOT REGEX
	[[ $2 =~ $3 ]] || die "check failed: $1: got '$2'"
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
idp_count() { curl -s --max-time 5 "$IDP/_stats" | jq -r .introspections; }

# --- 6. Measuring -------------------------------------------------------------------
TCK=$(getconf CLK_TCK)
cpu_ticks() { # PID... → utime+stime of those processes (clock ticks)
	local p s=0 f
	for p in "$@"; do
		# after "(comm) ": the state is field 3 of stat, so utime (14) and stime (15)
		# are the 12th and 13th words here
		read -r -a f < <(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null) || continue
		[ "${#f[@]}" -gt 13 ] || continue
		s=$((s + f[11] + f[12]))
	done
	echo "$s"
}
NGINX_PIDS="$NGINX $(pgrep -P "$NGINX" | tr '\n' ' ')"
sys_ticks() { awk '/^cpu /{ idle = $5 + $6; t = 0; for (i = 2; i <= NF; i++) t += $i; print t, idle }' /proc/stat; }

RUNS=$OUT/runs.tsv
printf 'rep\tkind\trps\trequests\tn_expect\tn_other\tother_codes\tbad_body\tsock_err\tp50_us\tp99_us\tintrospections\tus_nginx\tus_mcpgate\tus_wrk\tbusy_pct\tother_pct\n' >"$RUNS"

# run KIND SECONDS REP: one wrk run; appends a row to $RUNS (REP "w" = warm-up, not
# reported, but checked like the others).
run() {
	local kind=$1 secs=$2 rep=$3 url=$BASE/mcp envs f line i0 i1 c0 c1 s0 s1 w0 w1 busy req cn cm
	case $kind in
	H) url=$BASE/mcp/health envs=(BENCH_TARGET=health) ;;
	I) envs=(BENCH_TARGET=initialize "BENCH_TOKEN=$TOKEN") ;;
	P) envs=(BENCH_TARGET=ping "BENCH_TOKEN=$TOKEN") ;;
	B) envs=(BENCH_TARGET=batch "BENCH_TOKEN=$TOKEN" "BENCH_BATCH=$BATCH") ;;
	esac
	[ "$SESSION" = 0 ] || [ "$kind" = H ] || [ "$kind" = I ] || envs+=("BENCH_SESSION=$SID" "BENCH_PROTOCOL=$PV")
	f=$OUT/wrk.$rep.$kind.out
	i0=$(idp_count)
	# shellcheck disable=SC2086
	c0="$(cpu_ticks $NGINX_PIDS) $(cpu_ticks $FCGI)"
	read -r s0 w0 < <(sys_ticks)
	# bash's time keyword: wrk's own CPU (user + system seconds)
	local TIMEFORMAT='%U %S' wt
	{ time env BENCH_THREADS="$THREADS" BENCH_EXPECT=200 "${envs[@]}" wrk -t"$THREADS" -c"$CONNS" -d"${secs}s" --timeout 5s \
		-s "$here/wrk.lua" "$url" >"$f" 2>&1; } 2>"$f.time"
	wt=$(awk '{ printf "%.0f", ($1 + $2) * '"$TCK"' }' "$f.time")
	read -r s1 w1 < <(sys_ticks)
	# shellcheck disable=SC2086
	c1="$(cpu_ticks $NGINX_PIDS) $(cpu_ticks $FCGI)"
	i1=$(idp_count)
	line=$(grep '^BENCH ' "$f") || die "wrk ($kind): no result: $(tail -n 5 "$f")"
	kv() { sed -n "s/.* $1=\\([^ ]*\\).*/\\1/p" <<<"$line"; }
	req=$(kv requests)
	busy=$(awk -v s="$s1" -v s0="$s0" -v w="$w1" -v w0="$w0" 'BEGIN { d = s - s0; printf "%.0f", (d > 0 ? 100 * (d - (w - w0)) / d : 0) }')
	read -r cn cm <<<"$(awk -v a="$c0" -v b="$c1" -v r="$req" -v t="$TCK" 'BEGIN {
		split(a, x, " "); split(b, y, " ");
		for (i = 1; i <= 2; i++) printf "%.0f ", (r > 0 ? (y[i] - x[i]) * 1e6 / t / r : 0) }')"
	local cw other
	cw=$(awk -v w="$wt" -v r="$req" -v t="$TCK" 'BEGIN { printf "%.0f", (r > 0 ? w * 1e6 / t / r : 0) }')
	# CPU used by processes that are not ours (other work on the machine), in % of it
	other=$(awk -v a="$c0" -v b="$c1" -v wt="$wt" -v s="$s1" -v s0="$s0" -v w="$w1" -v w0="$w0" 'BEGIN {
		split(a, x, " "); split(b, y, " "); ours = wt;
		for (i = 1; i <= 2; i++) ours += y[i] - x[i];
		d = s - s0; o = (d > 0 ? 100 * (d - (w - w0) - ours) / d : 0);
		printf "%.0f", (o < 0 ? 0 : o) }')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$rep" "$kind" "$(kv rps)" "$req" "$(kv n_expect)" "$(kv n_other)" "$(kv other_codes)" "$(kv bad_body)" \
		"$(($(kv err_connect) + $(kv err_read) + $(kv err_write) + $(kv err_timeout)))" \
		"$(kv p50_us)" "$(kv p99_us)" "$((i1 - i0))" "$cn" "$cm" "$cw" "$busy" "$other" >>"$RUNS"
	say "$(printf '  %-3s %-2s %9s req/s  %s answers 200, other %s%s, bad bodies %s' "$rep" "$kind" "$(kv rps)" \
		"$(kv n_expect)" "$(kv n_other)" "$([ "$(kv n_other)" = 0 ] || echo " ($(kv other_codes))")" "$(kv bad_body)")"
}

say "warm-up ($WARMUP s each)"
for k in $KINDS; do run "$k" "$WARMUP" w; done
say "measuring: $REPS x ($KINDS), $DURATION s each, wrk -t$THREADS -c$CONNS"
for r in $(seq 1 "$REPS"); do
	for k in $KINDS; do run "$k" "$DURATION" "$r"; done
done
for p in $FCGI; do
	mg_alive "$p" || die "mcpgate $p died during the run"
done
END_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)

# --- 7. Report ----------------------------------------------------------------------
# median of column COL (1-based) for KIND over the measured repetitions
med() { awk -F'\t' -v s="$1" -v c="$2" '$1 != "w" && $1 != "rep" && $2 == s { print $c }' "$RUNS" | sort -g |
	awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
val() { awk -F'\t' -v r="$1" -v s="$2" -v c="$3" '$1 == r && $2 == s { print $c }' "$RUNS"; }
ratio() { awk -v a="$1" -v b="$2" -v m="${3:-1}" 'BEGIN { printf "%.3f", (b > 0 ? m * a / b : 0) }'; }
medlist() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
passfail() { awk -v x="$1" -v t="$2" 'BEGIN { if (x + 0 >= t + 0) print "PASS"; else print "FAIL" }'; }
us() { awk -v x="$1" 'BEGIN { printf "%.2f", x / 1000 }'; }

declare -A M
for k in $KINDS; do M[$k]=$(med "$k" 3); done
# per-repetition ratios (neighbours in time), and their medians
rIH='' rPH='' rBH='' rMH=''
for r in $(seq 1 "$REPS"); do
	rIH="$rIH $(ratio "$(val "$r" I 3)" "$(val "$r" H 3)")"
	rPH="$rPH $(ratio "$(val "$r" P 3)" "$(val "$r" H 3)")"
	rBH="$rBH $(ratio "$(val "$r" B 3)" "$(val "$r" H 3)")"
	rMH="$rMH $(ratio "$(val "$r" B 3)" "$(val "$r" H 3)" "$BATCH")"
done
mIH=$(medlist <<<"$rIH")
mPH=$(medlist <<<"$rPH")
mBH=$(medlist <<<"$rBH")
mMH=$(medlist <<<"$rMH")

# correctness over every run, warm-ups included
bad=$(awk -F'\t' '$1 != "rep" && ($6 > 0 || $8 > 0 || $9 > 0 || $5 != $4) { printf "%s/%s ", $1, $2 }' "$RUNS")
intro=$(awk -F'\t' '$1 != "rep" { s += $12 } END { print s + 0 }' "$RUNS")

# the session micro-benchmark, and what it is worth per request
SEAL_OPEN_NS=$(sb seal_open_ns)
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
	local k
	printf '| request | %s | median req/s | p50 / p99 ms (median) | CPU µs/request: nginx, mcpgate, wrk (median) | machine busy %%, of it others %% (median) |\n' \
		"$(for r in $(seq 1 "$REPS"); do printf 'rep %s | ' "$r"; done | sed 's/ | $//')"
	printf '|---|%s---:|---|---|---:|\n' "$(for _ in $(seq 1 "$REPS"); do printf -- '---:|'; done)"
	for k in $KINDS; do
		printf '| %s | %s | **%s** | %s / %s | %s, %s, %s | %s, %s |\n' "$(kindname "$k")" \
			"$(for r in $(seq 1 "$REPS"); do printf '%s | ' "$(val "$r" "$k" 3)"; done | sed 's/ | $//')" \
			"${M[$k]}" "$(us "$(med "$k" 10)")" "$(us "$(med "$k" 11)")" \
			"$(med "$k" 13)" "$(med "$k" 14)" "$(med "$k" 15)" "$(med "$k" 16)" "$(med "$k" 17)"
	done
	echo
	echo "| ratio | per repetition | median | target | result |"
	echo "|---|---|---:|---|---|"
	echo "| I / H (initialize vs health) | ${rIH# } | **$mIH** | ≥ 0.85 | $(passfail "$mIH" 0.85) |"
	echo "| P / H (ping vs health) | ${rPH# } | **$mPH** | ≥ 0.85 | $(passfail "$mPH" 0.85) |"
	echo "| B / H (batch of $BATCH vs health, requests) | ${rBH# } | $mBH | — | |"
	echo "| $BATCH × B / H (batch, messages/s vs health requests/s) | ${rMH# } | $mMH | — | |"
	echo
	echo "Session seal + open (\`bench/session_bench -n $(sb n) -r $(sb reps)\`: src/session.c, a $(sb id_chars)-character Mcp-Session-Id, $(sb tombs) tombstones in a state file; CPU time, median of $(sb reps)):"
	echo
	echo "| operation | µs | target | result |"
	echo "|---|---:|---|---|"
	echo "| seal (session_who + session_seal: initialize) | $(us "$(sb seal_ns)") | | |"
	echo "| open (session_who + session_open: every request of a session) | $(us "$(sb open_ns)") | | |"
	echo "| **seal + open** | **$US_SEAL_OPEN** (best $(us "$(sb seal_open_best_ns)")) | < 5 | $(awk -v x="$SEAL_OPEN_NS" 'BEGIN { print (x < 5000 ? "PASS" : "FAIL") }') |"
	echo "| pieces: session_open without tombstones; secret_seal; secret_open; the nonce (getrandom) | $(us "$(sb open_notombs_ns)"); $(us "$(sb secret_seal_ns)"); $(us "$(sb secret_open_ns)"); $(us "$(sb random_ns)") | | |"
	echo "| for scale: mcpgate's CPU per health request (H, through nginx) | $US_HEALTH_MG | | seal + open = $(awk -v a="$SEAL_OPEN_NS" -v b="$US_HEALTH_MG" 'BEGIN { printf "%.0f", (b > 0 ? a / 10 / b : 0) }') % of it |"
	echo
	echo "Correctness during every run (warm-ups included):"
	echo "- status codes: every answer 200 with the expected body (health \"status\", initialize \"protocolVersion\" and an Mcp-Session-Id, ping a \"result\", batch $BATCH of them), no socket errors: $([ -z "$bad" ] && echo yes || echo "NO: $bad (see bench/out/mcp/runs.tsv)")"
	echo "- introspections at the IdP during the runs (the token was cached before; 0 expected): $intro"
}

TABLE=$(table)
printf '\n%s\n\n' "$TABLE"
say "raw rows: $RUNS"
[ -z "$bad" ] || die "some answers were not 200 with the expected body, or sockets failed ($bad): not a measurement; nothing appended (see $RUNS and $OUT/wrk.*.out)"

if [ -n "$RESULTS" ]; then
	# shellcheck disable=SC2016 # the backquotes are Markdown
	[ -f "$RESULTS" ] || printf '# Benchmark results\n\nDated sections, appended by the benchmark scripts; the notes under a section are\nwritten by hand. How to run and the caveats: `bench/README.md`.\n' >"$RESULTS"
	commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null)
	dirty=$(git -C "$top" status --porcelain -- src 2>/dev/null | grep -q . && echo " + uncommitted changes in src/")
	{
		echo
		echo "## $(date -u '+%Y-%m-%d %H:%M UTC') — mcp, $REPS × ${DURATION} s"
		echo
		echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(uname -sr), load average before $START_LOAD, after $END_LOAD"
		echo "- sources: $SRC at $commit$dirty; built with the default CFLAGS (-g -O2)"
		echo "- stack: $(nginx -v 2>&1 | sed 's/.*: //') (1 worker, deploy/nginx recipe, FastCGI keep-alive off) → unix socket → spawn-fcgi, mcpgate $PROCS processes × $WORKERS threads; one client_credentials token of oidc-provider $(jq -r .version "$top/tests/node_modules/oidc-provider/package.json"), cached (cache-ttl = $CACHE_TTL); $(wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2)"
		echo "- requests: POST /mcp with \`Content-Type: application/json\`, \`Accept: application/json, text/event-stream\`, \`Authorization: Bearer\`; $([ "$SESSION" = 0 ] && echo "ping and batch without a session" || echo "ping and batch with the \`Mcp-Session-Id\` of one initialize and \`MCP-Protocol-Version: $PV\`"); initialize asks for $PV"
		echo "- command: \`$CMDLINE\` (wrk -t$THREADS -c$CONNS -d${DURATION}s --timeout 5s -s bench/wrk.lua; warm-up ${WARMUP} s per kind; order $KINDS per repetition)"
		echo
		echo "$TABLE"
	} >>"$RESULTS"
	say "appended to $RESULTS"
fi
exit 0
}
