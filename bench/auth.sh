#!/usr/bin/env bash
# bench/auth.sh — the authentication benchmark of issue #3.
#
# Requests per second of POST /mcp (tools/list) through real nginx + spawn-fcgi +
# mcpgate, with the real authorization server (tests/idp, oidc-provider), in four
# scenarios, each reported as a ratio taken in the same run:
#
#   A   baseline: the same request without auth (a binary built with
#       -DMCPGATE_BENCH_NO_AUTH, which skips the token check of POST /mcp)
#   B   cached: one valid token, already in the shared cache
#   C   fresh: a different, never used token on every request (one introspection each)
#   C0  the authorization server's own introspection rate, asked directly by wrk over
#       kept-alive connections, with the same concurrency
#   D   invalid: one bogus token repeated (introspected once, then the negative cache)
#
# Targets: B/A >= 0.9; C/C0 >= 0.8; D served at the cached rate (D/B >= 0.9).
# The scenarios run interleaved (A B C C0 D, A B C C0 D, ...) and the medians are
# reported; a benchmark, not a timed test: nothing here fails a build.
#
# Usage: bench/auth.sh            (as root on Debian 12: installs what it lacks)
# Settings (environment):
#   BENCH_DURATION=10   seconds per measured run      BENCH_REPS=3    repetitions
#   BENCH_WARMUP=3      seconds per warm-up run       BENCH_THREADS=2 BENCH_CONNS=8  (wrk -t -c)
#   BENCH_PROCS=2 BENCH_WORKERS=2   mcpgate processes (spawn-fcgi -F) x threads (-w)
#   BENCH_SRC=worktree  build from the working tree (default), or HEAD (git archive)
#   BENCH_PIN=1         pin the authorization server to CPU 1 and nginx, mcpgate and wrk
#                       to CPU 0 (models an authorization server with a CPU of its own)
#   BENCH_RESULTS=bench/RESULTS.md  where the dated section is appended ("" = nowhere)
#   MG_KEEP=1           keep the temp dir (configs, logs) after the run
# Builds go to bench/out/ (gitignored): bench/out/build-auth, bench/out/build-noauth.
# The whole script is one brace group: bash reads it completely before running it, so
# editing this file while it runs cannot derail the run.
{
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
OUT=$here/out
DURATION=${BENCH_DURATION:-10}
WARMUP=${BENCH_WARMUP:-3}
REPS=${BENCH_REPS:-3}
THREADS=${BENCH_THREADS:-2}
CONNS=${BENCH_CONNS:-8}
PROCS=${BENCH_PROCS:-2}
WORKERS=${BENCH_WORKERS:-2}
SRC=${BENCH_SRC:-worktree}
PIN=${BENCH_PIN:-0}
RESULTS=${BENCH_RESULTS-$here/RESULTS.md}
CACHE_TTL=300
NEGATIVE_TTL=10
CMDLINE="BENCH_DURATION=$DURATION BENCH_REPS=$REPS BENCH_WARMUP=$WARMUP BENCH_THREADS=$THREADS BENCH_CONNS=$CONNS BENCH_PROCS=$PROCS BENCH_WORKERS=$WORKERS BENCH_SRC=$SRC BENCH_PIN=$PIN bench/auth.sh"

say() { printf '%s\n' "$*" >&2; }
die() { say "bench/auth.sh: $*"; exit 1; }

# shellcheck disable=SC2034 # read by deploy/lib.sh
MG_TOP=$top
. "$top/deploy/lib.sh"

mkdir -p "$OUT"
START_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)

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

# --- 2. The two binaries ----------------------------------------------------------
# A copy of the sources (so that edits going on in the tree do not race the build),
# autoreconf'd once, built twice out of tree: normal, and the no-auth baseline.
build() {
	local src=$OUT/src stamp new
	if [ "$SRC" = HEAD ]; then
		new=$(git -C "$top" rev-parse HEAD) || return 1
	else
		# tracked and untracked-but-not-ignored files: the sources, no build products
		new=$(cd "$top" && git ls-files -co --exclude-standard -z | grep -zv '^bench/' |
			xargs -0 stat -c '%n %s %Y' 2>/dev/null | sha256sum | cut -c1-16) || return 1
	fi
	stamp=$(cat "$OUT/build.stamp" 2>/dev/null)
	if [ "$stamp" = "$new" ] && [ -x "$OUT/build-auth/src/mcpgate" ] && [ -x "$OUT/build-noauth/src/mcpgate" ]; then
		say "binaries up to date ($SRC $new)"
		return 0
	fi
	say "building mcpgate twice from the $SRC sources into $OUT/"
	rm -rf "$src" "$OUT/build-auth" "$OUT/build-noauth" "$OUT/build.stamp"
	mkdir -p "$src" "$OUT/build-auth" "$OUT/build-noauth"
	if [ "$SRC" = HEAD ]; then
		git -C "$top" archive HEAD | tar -xf - -C "$src" || return 1
	else
		(cd "$top" && git ls-files -co --exclude-standard -z | grep -zv '^bench/' |
			tar --null -T - -cf -) | tar -xf - -C "$src" || return 1
	fi
	(cd "$src" && autoreconf -fi) >"$OUT/build.log" 2>&1 || return 1
	(cd "$OUT/build-auth" && "$src/configure" -q && make -j"$(nproc)") >>"$OUT/build.log" 2>&1 || return 1
	(cd "$OUT/build-noauth" && "$src/configure" -q CPPFLAGS=-DMCPGATE_BENCH_NO_AUTH && make -j"$(nproc)") \
		>>"$OUT/build.log" 2>&1 || return 1
	echo "$new" >"$OUT/build.stamp"
}
build || { tail -n 30 "$OUT/build.log" >&2; die "build failed (full log: $OUT/build.log)"; }
BIN_AUTH=$OUT/build-auth/src/mcpgate
BIN_NOAUTH=$OUT/build-noauth/src/mcpgate

# --- 3. The stack -------------------------------------------------------------------
mg_init || die "no temp dir"
ROOT=$MG_DIR
save_logs() {
	local d=$OUT/last-run
	rm -rf "$d"
	mkdir -p "$d"
	for f in "$ROOT"/*/mcpgate.log "$ROOT"/*/nginx/error.log "$ROOT"/idp.log "$ROOT"/*.conf "$ROOT"/*/mcpgate.conf; do
		[ -f "$f" ] || continue
		tail -n 200 "$f" >"$d/$(echo "${f#"$ROOT"/}" | tr / _)"
	done
}
trap 'MG_DIR=$ROOT; save_logs; stop_all' EXIT

PORT_A=$(free_port) && PORT_B=$(free_port) || die "no free port"
[ "$PORT_A" != "$PORT_B" ] || PORT_B=$(free_port)
BASE_A=http://127.0.0.1:$PORT_A
BASE_B=http://127.0.0.1:$PORT_B

say "starting the authorization server (oidc-provider)"
rm -f "$ROOT/idp.ready"
node "$top/tests/idp/server.mjs" --port 0 --resource "$BASE_B/mcp" --resource "$BASE_A/mcp" \
	--ready-file "$ROOT/idp.ready" --quiet >/dev/null 2>"$ROOT/idp.log" &
IDP_PID=$!
mg_track "$IDP_PID"
for _ in $(seq 1 100); do [ -s "$ROOT/idp.ready" ] && break; sleep 0.1; done
IDP=$(sed -n 's/^ready //p' "$ROOT/idp.ready" 2>/dev/null)
[ -n "$IDP" ] || die "the authorization server did not start: $(tail -n 5 "$ROOT/idp.log")"
printf 'mcpgate-secret\n' >"$ROOT/secret"

# conf_for DIR BASE: the same configuration for both stacks but for the resource
# and the state file.
conf_for() {
	cat >"$1/mcpgate.conf" <<CONF
# generated by bench/auth.sh
[gateway]
resource = $2/mcp
name = com.example/gateway
title = Bench gateway
description = bench/auth.sh
version = 1.0.0
website-url = https://example.com
state = $1/state
workers = $WORKERS
[auth]
issuer = $IDP
client-id = mcpgate
client-secret-file = $ROOT/secret
required-scopes = mcp:tools
scopes-supported = mcp:tools
cache-ttl = $CACHE_TTL
negative-ttl = $NEGATIVE_TTL
timeout-ms = 3000
CONF
}

# start_stack NAME BIN PORT: spawn-fcgi (PROCS x WORKERS) + nginx (deploy/ recipes,
# FastCGI keep-alive off) in $ROOT/NAME. deploy/lib.sh keeps one stack per MG_DIR, so
# MG_DIR points at the stack's own directory while it starts.
start_stack() {
	local name=$1 bin=$2 port=$3
	MG_DIR=$ROOT/$name
	mkdir -p "$MG_DIR/tmp" "$MG_DIR/empty"
	chmod 755 "$MG_DIR"
	conf_for "$MG_DIR" "http://127.0.0.1:$port"
	# shellcheck disable=SC2034 # read by deploy/lib.sh
	MG_LOG=$MG_DIR/mcpgate.log
	# shellcheck disable=SC2034
	MCPGATE_BIN=$bin
	start_mcpgate_fcgi "$MG_DIR/mcpgate.sock" "$MG_DIR/mcpgate.conf" "$PROCS" "$WORKERS" || return 1
	declare -g "FCGI_$name=$MG_FCGI_PIDS"
	start_nginx "$port" || return 1
	declare -g "NGINX_$name=$MG_FRONT_PID"
	MG_DIR=$ROOT
}
say "starting nginx + spawn-fcgi ($PROCS x $WORKERS) twice: baseline on $PORT_A, auth on $PORT_B"
start_stack A "$BIN_NOAUTH" "$PORT_A" || die "baseline stack did not start"
start_stack B "$BIN_AUTH" "$PORT_B" || die "auth stack did not start"
MG_DIR=$ROOT
WRK_PIN=()
if [ "$PIN" = 1 ]; then
	[ "$(nproc)" -ge 2 ] || die "BENCH_PIN=1 needs 2 CPUs"
	say "pinning: the IdP on CPU 1; nginx, mcpgate, wrk on CPU 0"
	taskset -a -p -c 1 "$IDP_PID" >/dev/null || die "taskset failed"
	# shellcheck disable=SC2086
	for p in $NGINX_A $(pgrep -P "$NGINX_A") $NGINX_B $(pgrep -P "$NGINX_B") $FCGI_A $FCGI_B; do
		taskset -a -p -c 0 "$p" >/dev/null || die "taskset failed"
	done
	WRK_PIN=(taskset -c 0)
fi

# --- 4. Tokens and a correctness check ----------------------------------------------
VALID=$(node "$top/tests/idp/token.mjs" --issuer "$IDP" --client machine-acme --scope mcp:tools | jq -r .access_token)
[ -n "$VALID" ] && [ "$VALID" != null ] || die "cannot mint a token"
BOGUS=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' | cut -c1-43)
BASIC="Basic $(printf 'mcpgate:mcpgate-secret' | base64)"
LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'

post() { # BASE [TOKEN] → "STATUS BODY"
	local auth=()
	[ -z "${2:-}" ] || auth=(-H "Authorization: Bearer $2")
	curl -s --max-time 10 -w ' %{http_code}' -X POST "$1/mcp" -H 'Content-Type: application/json' \
		"${auth[@]}" --data "$LIST"
}
check() { # DESC GOT REGEX
	[[ $2 =~ $3 ]] || die "check failed: $1: got '$2'"
}
check "baseline without a token: 200 tools/list" "$(post "$BASE_A")" '"tools".* 200$'
check "auth stack without a token: 401" "$(post "$BASE_B")" ' 401$'
check "auth stack, valid token: 200 tools/list" "$(post "$BASE_B" "$VALID")" '"tools".* 200$'
check "auth stack, bogus token: 401" "$(post "$BASE_B" "$BOGUS")" ' 401$'
check "introspection as mcpgate: active" \
	"$(curl -s --max-time 10 -H "Authorization: $BASIC" --data "token=$VALID&token_type_hint=access_token" "$IDP/token/introspection")" \
	'"active":true'
idp_count() { curl -s --max-time 5 "$IDP/_stats" | jq -r .introspections; }

# --- 5. Measuring -------------------------------------------------------------------
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
# nginx: the master and its workers
nginx_pids() { echo "$1 $(pgrep -P "$1" | tr '\n' ' ')"; }
sys_ticks() { awk '/^cpu /{ idle = $5 + $6; t = 0; for (i = 2; i <= NF; i++) t += $i; print t, idle }' /proc/stat; }

RUNS=$OUT/runs.tsv
printf 'rep\tscen\trps\trequests\tn_expect\tn_other\tother_codes\tbad_body\tsock_err\tp50_us\tp99_us\tintrospections\texhausted\tpool_used\tus_nginx\tus_mcpgate\tus_idp\tus_wrk\tbusy_pct\tother_pct\n' >"$RUNS"

# run SCEN SECONDS REP [POOLFILE]: one wrk run; appends a row to $RUNS (REP "w" = warm-up,
# not reported) and sets LAST_RPS, LAST_EXHAUSTED.
run() {
	local scen=$1 secs=$2 rep=$3 pool=${4:-} url envs=() f line ng mc i0 i1 c0 c1 s0 s1 w0 w1 busy req cn cm ci
	case $scen in
	A) url=$BASE_A/mcp envs=(BENCH_EXPECT=200) ng=$NGINX_A mc=$FCGI_A ;;
	B) url=$BASE_B/mcp envs=(BENCH_EXPECT=200 "BENCH_TOKEN=$VALID") ng=$NGINX_B mc=$FCGI_B ;;
	C) url=$BASE_B/mcp envs=(BENCH_EXPECT=200 "BENCH_POOL=$pool") ng=$NGINX_B mc=$FCGI_B ;;
	C0) url=$IDP/token/introspection envs=(BENCH_EXPECT=200 BENCH_TARGET=introspect "BENCH_POOL=$pool" BENCH_CYCLE=1 "BENCH_BASIC=$BASIC") ng='' mc='' ;;
	D) url=$BASE_B/mcp envs=(BENCH_EXPECT=401 "BENCH_TOKEN=$BOGUS") ng=$NGINX_B mc=$FCGI_B ;;
	esac
	f=$OUT/wrk.$rep.$scen.out
	# shellcheck disable=SC2086
	ng=$( [ -z "$ng" ] || nginx_pids $ng )
	i0=$(idp_count)
	# shellcheck disable=SC2086
	c0="$(cpu_ticks $ng) $(cpu_ticks $mc) $(cpu_ticks "$IDP_PID")"
	read -r s0 w0 < <(sys_ticks)
	# bash's time keyword: wrk's own CPU (user + system seconds)
	local TIMEFORMAT='%U %S' wt
	{ time env BENCH_THREADS="$THREADS" "${envs[@]}" "${WRK_PIN[@]}" wrk -t"$THREADS" -c"$CONNS" -d"${secs}s" --timeout 5s \
		-s "$here/wrk.lua" "$url" >"$f" 2>&1; } 2>"$f.time"
	wt=$(awk '{ printf "%.0f", ($1 + $2) * '"$TCK"' }' "$f.time")
	read -r s1 w1 < <(sys_ticks)
	# shellcheck disable=SC2086
	c1="$(cpu_ticks $ng) $(cpu_ticks $mc) $(cpu_ticks "$IDP_PID")"
	i1=$(idp_count)
	line=$(grep '^BENCH ' "$f") || die "wrk ($scen): no result: $(tail -n 5 "$f")"
	kv() { sed -n "s/.* $1=\\([^ ]*\\).*/\\1/p" <<<"$line"; }
	req=$(kv requests)
	busy=$(awk -v s="$s1" -v s0="$s0" -v w="$w1" -v w0="$w0" 'BEGIN { d = s - s0; printf "%.0f", (d > 0 ? 100 * (d - (w - w0)) / d : 0) }')
	read -r cn cm ci <<<"$(awk -v a="$c0" -v b="$c1" -v r="$req" -v t="$TCK" 'BEGIN {
		split(a, x, " "); split(b, y, " ");
		for (i = 1; i <= 3; i++) printf "%.0f ", (r > 0 ? (y[i] - x[i]) * 1e6 / t / r : 0) }')"
	local cw other
	cw=$(awk -v w="$wt" -v r="$req" -v t="$TCK" 'BEGIN { printf "%.0f", (r > 0 ? w * 1e6 / t / r : 0) }')
	# CPU used by processes that are not ours (other work on the machine), in % of it
	other=$(awk -v a="$c0" -v b="$c1" -v wt="$wt" -v s="$s1" -v s0="$s0" -v w="$w1" -v w0="$w0" 'BEGIN {
		split(a, x, " "); split(b, y, " "); ours = wt;
		for (i = 1; i <= 3; i++) ours += y[i] - x[i];
		d = s - s0; o = (d > 0 ? 100 * (d - (w - w0) - ours) / d : 0);
		printf "%.0f", (o < 0 ? 0 : o) }')
	[ -n "$ng" ] || cn=-
	[ -n "$mc" ] || cm=-
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$rep" "$scen" "$(kv rps)" "$req" "$(kv n_expect)" "$(kv n_other)" "$(kv other_codes)" "$(kv bad_body)" \
		"$(($(kv err_connect) + $(kv err_read) + $(kv err_write) + $(kv err_timeout)))" \
		"$(kv p50_us)" "$(kv p99_us)" "$((i1 - i0))" "$(kv exhausted)" "$(kv pool_used)" \
		"$cn" "$cm" "$ci" "$cw" "$busy" "$other" >>"$RUNS"
	LAST_RPS=$(kv rps)
	LAST_EXHAUSTED=$(kv exhausted)
	say "$(printf '  %-3s %-2s %9s req/s  %s answers %s, other %s, introspections %s%s' "$rep" "$scen" "$LAST_RPS" \
		"$(kv n_expect)" "$(kv expect)" "$(kv n_other)" "$((i1 - i0))" \
		"$([ "$LAST_EXHAUSTED" = 0 ] || echo ', POOL EXHAUSTED')")"
}

mint() { # COUNT FILE
	node "$here/mint.mjs" --issuer "$IDP" --count "$1" --out "$2" --concurrency 16 || die "minting failed"
}

say "warm-up ($WARMUP s each)"
mint 3000 "$ROOT/pool.warm"
run A "$WARMUP" w
run B "$WARMUP" w
run C "$WARMUP" w "$ROOT/pool.warm"
rate_c=$LAST_RPS
run C0 "$WARMUP" w "$ROOT/pool.warm"
rate_c0=$LAST_RPS
run D "$WARMUP" w
# A pool per repetition of C: twice the faster of the two warm-up rates (at least
# 1500/s), so that no token is ever sent twice even when the machine gets quieter.
POOL=$(awk -v a="$rate_c" -v b="$rate_c0" -v d="$DURATION" 'BEGIN { m = a > b ? a : b; if (m < 1500) m = 1500; printf "%d", m * d * 2 + 1000 }')
say "minting $REPS x $POOL fresh tokens"
mint $((REPS * POOL)) "$ROOT/pool.all"
for r in $(seq 1 "$REPS"); do
	sed -n "$(((r - 1) * POOL + 1)),$((r * POOL))p" "$ROOT/pool.all" >"$ROOT/pool.$r"
done

say "measuring: $REPS x (A B C C0 D), $DURATION s each, wrk -t$THREADS -c$CONNS"
for r in $(seq 1 "$REPS"); do
	run A "$DURATION" "$r"
	# prime: the fresh tokens of C may have evicted the cached ones
	post "$BASE_B" "$VALID" >/dev/null
	run B "$DURATION" "$r"
	run C "$DURATION" "$r" "$ROOT/pool.$r"
	run C0 "$DURATION" "$r" "$ROOT/pool.$r"
	post "$BASE_B" "$BOGUS" >/dev/null
	run D "$DURATION" "$r"
done
for p in $FCGI_A $FCGI_B; do
	mg_alive "$p" || die "mcpgate $p died during the run"
done
END_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)

# --- 6. Report ----------------------------------------------------------------------
# median of column COL (1-based) for SCEN over the measured repetitions
med() { awk -F'\t' -v s="$1" -v c="$2" '$1 != "w" && $1 != "rep" && $2 == s { print $c }' "$RUNS" | sort -g |
	awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
val() { awk -F'\t' -v r="$1" -v s="$2" -v c="$3" '$1 == r && $2 == s { print $c }' "$RUNS"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }
medlist() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
passfail() { awk -v x="$1" -v t="$2" 'BEGIN { if (x + 0 >= t + 0) print "PASS"; else print "FAIL" }'; }

declare -A M
for s in A B C C0 D; do M[$s]=$(med "$s" 3); done
# per-repetition ratios (neighbours in time), and their medians
rBA='' rCC0='' rDB='' rDA=''
for r in $(seq 1 "$REPS"); do
	rBA="$rBA $(ratio "$(val "$r" B 3)" "$(val "$r" A 3)")"
	rCC0="$rCC0 $(ratio "$(val "$r" C 3)" "$(val "$r" C0 3)")"
	rDB="$rDB $(ratio "$(val "$r" D 3)" "$(val "$r" B 3)")"
	rDA="$rDA $(ratio "$(val "$r" D 3)" "$(val "$r" A 3)")"
done
mBA=$(medlist <<<"$rBA")
mCC0=$(medlist <<<"$rCC0")
mDB=$(medlist <<<"$rDB")
mDA=$(medlist <<<"$rDA")

# correctness over the measured runs
bad=$(awk -F'\t' '$1 != "w" && $1 != "rep" && ($6 > 0 || $8 > 0 || $9 > 0 || $13 > 0) { printf "%s/%s ", $1, $2 }' "$RUNS")
introB=$(awk -F'\t' '$1 != "w" && $2 == "B" { printf "%s ", $12 }' "$RUNS")
introD=$(awk -F'\t' '$1 != "w" && $2 == "D" { printf "%s ", $12 }' "$RUNS")
introC=$(awk -F'\t' '$1 != "w" && $2 == "C" { printf "%s/%s ", $12, $4 }' "$RUNS")
maxD=$((DURATION / NEGATIVE_TTL + 1))
okB=$(awk -v l="$introB" 'BEGIN { n = split(l, x, " "); for (i = 1; i <= n; i++) if (x[i] > 0) { print "no"; exit } print "yes" }')
okD=$(awk -v l="$introD" -v m="$maxD" 'BEGIN { n = split(l, x, " "); for (i = 1; i <= n; i++) if (x[i] > m) { print "no"; exit } print "yes" }')
# C: one introspection per request (a few more: requests wrk had in flight at the end)
okC=$(awk -v l="$introC" -v c="$CONNS" 'BEGIN { n = split(l, x, " "); for (i = 1; i <= n; i++) { split(x[i], y, "/"); if (y[1] < y[2] || y[1] > y[2] + c + 1) { print "no"; exit } } print "yes" }')

table() {
	local s name
	printf '| scenario | %s | median req/s | p50 / p99 ms (median) | CPU µs/request: nginx, mcpgate, IdP, wrk (median) | machine busy %%, of it others %% (median) |\n' \
		"$(for r in $(seq 1 "$REPS"); do printf 'rep %s | ' "$r"; done | sed 's/ | $//')"
	printf '|---|%s---:|---|---|---:|\n' "$(for _ in $(seq 1 "$REPS"); do printf -- '---:|'; done)"
	for s in A B C C0 D; do
		case $s in
		A) name="A baseline (no auth)" ;; B) name="B cached token" ;; C) name="C fresh token per request" ;;
		C0) name="C0 IdP introspection, direct" ;; D) name="D invalid token" ;;
		esac
		printf '| %s | %s | **%s** | %s / %s | %s, %s, %s, %s | %s, %s |\n' "$name" \
			"$(for r in $(seq 1 "$REPS"); do printf '%s | ' "$(val "$r" "$s" 3)"; done | sed 's/ | $//')" \
			"${M[$s]}" \
			"$(awk -v x="$(med "$s" 10)" 'BEGIN { printf "%.2f", x / 1000 }')" \
			"$(awk -v x="$(med "$s" 11)" 'BEGIN { printf "%.2f", x / 1000 }')" \
			"$(med "$s" 15)" "$(med "$s" 16)" "$(med "$s" 17)" "$(med "$s" 18)" "$(med "$s" 19)" "$(med "$s" 20)"
	done
	echo
	echo "| ratio | per repetition | median | target | result |"
	echo "|---|---|---:|---|---|"
	echo "| B / A (cached vs no auth) | ${rBA# } | **$mBA** | ≥ 0.9 | $(passfail "$mBA" 0.9) |"
	echo "| C / C0 (fresh vs the IdP's own rate) | ${rCC0# } | **$mCC0** | ≥ 0.8 | $(passfail "$mCC0" 0.8) |"
	echo "| D / B (invalid vs cached) | ${rDB# } | **$mDB** | ≥ 0.9 (\"at the cached rate\") | $(passfail "$mDB" 0.9) |"
	echo "| D / A (invalid vs no auth) | ${rDA# } | $mDA | (≥ 0.9, as B) | $(passfail "$mDA" 0.9) |"
	echo
	echo "Correctness during the measured runs:"
	echo "- status codes: every answer as expected (200 for A, B, C, C0; 401 for D), no socket errors, no token pool exhausted: $([ -z "$bad" ] && echo yes || echo "NO: $bad (see bench/out/runs.tsv)")"
	echo "- introspections at the IdP during B (cached; 0 expected): ${introB% } — $([ "$okB" = yes ] && echo ok || echo NOT OK)"
	echo "- introspections during D (negative cache, negative-ttl = $NEGATIVE_TTL s; ≤ $maxD expected): ${introD% } — $([ "$okD" = yes ] && echo ok || echo NOT OK)"
	echo "- introspections / requests during C (one each expected): ${introC% } — $([ "$okC" = yes ] && echo ok || echo NOT OK)"
}

TABLE=$(table)
printf '\n%s\n\n' "$TABLE"
say "raw rows: $RUNS"

if [ -n "$RESULTS" ]; then
	if [ ! -f "$RESULTS" ]; then
		cat >"$RESULTS" <<'EOF'
# Benchmark results

Dated sections appended by `bench/auth.sh` (issue #3: the cost of authentication,
as ratios measured in the same run). See `bench/README.md` for what each scenario
measures and the caveats; the notes under a section are written by hand.
EOF
	fi
	commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null)
	dirty=$(git -C "$top" status --porcelain -- src 2>/dev/null | grep -q . && echo " + uncommitted changes in src/")
	{
		echo
		echo "## $(date -u '+%Y-%m-%d %H:%M UTC') — auth, $REPS × ${DURATION} s"
		echo
		echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(uname -sr), load average before $START_LOAD, after $END_LOAD"
		echo "- sources: $SRC at $commit$dirty; built with the default CFLAGS (-g -O2); baseline with CPPFLAGS=-DMCPGATE_BENCH_NO_AUTH"
		echo "- stack: $(nginx -v 2>&1 | sed 's/.*: //') (1 worker, deploy/nginx recipe, FastCGI keep-alive off) → unix socket → spawn-fcgi, mcpgate $PROCS processes × $WORKERS threads; oidc-provider $(jq -r .version "$top/tests/node_modules/oidc-provider/package.json") on node $(node -v); $(wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2)"
		[ "$PIN" != 1 ] || echo "- pinned (BENCH_PIN=1): the IdP alone on CPU 1; nginx, mcpgate and wrk share CPU 0"
		echo "- auth config: cache-ttl = $CACHE_TTL, negative-ttl = $NEGATIVE_TTL, cache-entries default; C used $POOL never-reused tokens per repetition"
		echo "- command: \`$CMDLINE\` (wrk -t$THREADS -c$CONNS -d${DURATION}s --timeout 5s -s bench/wrk.lua; warm-up ${WARMUP} s per scenario; order A B C C0 D per repetition)"
		echo
		echo "$TABLE"
	} >>"$RESULTS"
	say "appended to $RESULTS"
fi
exit 0
}
