#!/usr/bin/env bash
# bench/auth.sh — the authentication benchmark.
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
# What it shares with bench/mcp.sh (set-up, build, stack, measuring, report) is in
# bench/lib.sh.
# The whole script is one brace group: bash reads it completely before running it, so
# editing this file while it runs cannot derail the run.
{
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$here/out
PIN=${BENCH_PIN:-0}
CACHE_TTL=300
NEGATIVE_TTL=10
KNOBS="BENCH_SRC=$SRC BENCH_PIN=$PIN"

# --- 1. What it needs -------------------------------------------------------------
setup

# --- 2. The two binaries ----------------------------------------------------------
# A copy of the sources, autoreconf'd once, built twice out of tree (bench/lib.sh's
# build): normal, and the no-auth baseline.
build_trees() { # SRC
	rm -rf "$OUT/build-auth" "$OUT/build-noauth"
	mkdir -p "$OUT/build-auth" "$OUT/build-noauth"
	(cd "$OUT/build-auth" && "$1/configure" -q && make -j"$(nproc)") || return 1
	(cd "$OUT/build-noauth" && "$1/configure" -q CPPFLAGS=-DMCPGATE_BENCH_NO_AUTH && make -j"$(nproc)")
}
BIN_AUTH=$OUT/build-auth/src/mcpgate
BIN_NOAUTH=$OUT/build-noauth/src/mcpgate
build "mcpgate twice" "$OUT/" "$BIN_AUTH" "$BIN_NOAUTH"

# --- 3. The stack -------------------------------------------------------------------
# Two stacks, each in a directory of its own under $ROOT.
bench_root '*/mcpgate.log' '*/nginx/error.log' idp.log '*.conf' '*/mcpgate.conf'
ports=$(two_ports) || exit 1
read -r PORT_A PORT_B <<<"$ports"
BASE_A=http://127.0.0.1:$PORT_A
BASE_B=http://127.0.0.1:$PORT_B
start_idp "$BASE_B/mcp" "$BASE_A/mcp"

say "starting nginx + spawn-fcgi ($PROCS x $WORKERS) twice: baseline on $PORT_A, auth on $PORT_B"
start_stack "$ROOT/A" "$BIN_NOAUTH" "$PORT_A" || die "baseline stack did not start"
FCGI_A=$STACK_FCGI NGINX_A=$STACK_NGINX
start_stack "$ROOT/B" "$BIN_AUTH" "$PORT_B" || die "auth stack did not start"
FCGI_B=$STACK_FCGI NGINX_B=$STACK_NGINX
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
VALID=$(one_token) || die "cannot mint a token"
BOGUS=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' | cut -c1-43)
BASIC="Basic $(printf 'mcpgate:mcpgate-secret' | base64)"
LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'

post() { # BASE [TOKEN] → "STATUS BODY"
	local auth=()
	[ -z "${2:-}" ] || auth=(-H "Authorization: Bearer $2")
	curl -s --max-time 10 -w ' %{http_code}' -X POST "$1/mcp" -H 'Content-Type: application/json' \
		"${auth[@]}" --data "$LIST"
}
check "baseline without a token: 200 tools/list" "$(post "$BASE_A")" '"tools".* 200$'
check "auth stack without a token: 401" "$(post "$BASE_B")" ' 401$'
check "auth stack, valid token: 200 tools/list" "$(post "$BASE_B" "$VALID")" '"tools".* 200$'
check "auth stack, bogus token: 401" "$(post "$BASE_B" "$BOGUS")" ' 401$'
check "introspection as mcpgate: active" \
	"$(curl -s --max-time 10 -H "Authorization: $BASIC" --data "token=$VALID&token_type_hint=access_token" "$IDP/token/introspection")" \
	'"active":true'

# --- 5. Measuring -------------------------------------------------------------------
runs_header scen exhausted pool_used us_nginx us_mcpgate us_idp

# run SCEN SECONDS REP [POOLFILE]: one wrk run (bench/lib.sh's measure); appends a row
# to $RUNS (REP "w" = warm-up, not reported) and sets LAST_RPS, LAST_EXHAUSTED.
run() {
	local scen=$1 secs=$2 rep=$3 pool=${4:-} url envs=() ng mc
	case $scen in
	A) url=$BASE_A/mcp envs=(BENCH_EXPECT=200) ng=$NGINX_A mc=$FCGI_A ;;
	B) url=$BASE_B/mcp envs=(BENCH_EXPECT=200 "BENCH_TOKEN=$VALID") ng=$NGINX_B mc=$FCGI_B ;;
	C) url=$BASE_B/mcp envs=(BENCH_EXPECT=200 "BENCH_POOL=$pool") ng=$NGINX_B mc=$FCGI_B ;;
	C0) url=$IDP/token/introspection envs=(BENCH_EXPECT=200 BENCH_TARGET=introspect "BENCH_POOL=$pool" BENCH_CYCLE=1 "BENCH_BASIC=$BASIC") ng='' mc='' ;;
	D) url=$BASE_B/mcp envs=(BENCH_EXPECT=401 "BENCH_TOKEN=$BOGUS") ng=$NGINX_B mc=$FCGI_B ;;
	esac
	# the CPU of nginx (the master and its workers), mcpgate, the IdP
	CPU_PIDS=("$([ -z "$ng" ] || nginx_pids "$ng")" "$mc" "$IDP_PID")
	measure "$scen" "$secs" "$OUT/wrk.$rep.$scen.out" "$url" "${envs[@]}"
	row "$rep" "$scen" "$(kv exhausted)" "$(kv pool_used)"
	LAST_RPS=$(kv rps)
	LAST_EXHAUSTED=$(kv exhausted)
	say "$(printf '  %-3s %-2s %9s req/s  %s answers %s, other %s, introspections %s%s' "$rep" "$scen" "$LAST_RPS" \
		"$(kv n_expect)" "$(kv expect)" "$(kv n_other)" "$INTRO" \
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
# shellcheck disable=SC2086
runs_done $FCGI_A $FCGI_B

# --- 6. Report ----------------------------------------------------------------------
ratio_medians B/A C/C0 D/B D/A

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

kindname() {
	case $1 in
	A) echo "A baseline (no auth)" ;; B) echo "B cached token" ;; C) echo "C fresh token per request" ;;
	C0) echo "C0 IdP introspection, direct" ;; D) echo "D invalid token" ;;
	esac
}
table() {
	rates_table scenario "nginx, mcpgate, IdP, wrk" A B C C0 D
	echo "| B / A (cached vs no auth) | ${RATIOS[B/A]# } | **${MEDIAN[B/A]}** | ≥ 0.9 | $(passfail "${MEDIAN[B/A]}" 0.9) |"
	echo "| C / C0 (fresh vs the IdP's own rate) | ${RATIOS[C/C0]# } | **${MEDIAN[C/C0]}** | ≥ 0.8 | $(passfail "${MEDIAN[C/C0]}" 0.8) |"
	echo "| D / B (invalid vs cached) | ${RATIOS[D/B]# } | **${MEDIAN[D/B]}** | ≥ 0.9 (\"at the cached rate\") | $(passfail "${MEDIAN[D/B]}" 0.9) |"
	echo "| D / A (invalid vs no auth) | ${RATIOS[D/A]# } | ${MEDIAN[D/A]} | (≥ 0.9, as B) | $(passfail "${MEDIAN[D/A]}" 0.9) |"
	echo
	echo "Correctness during the measured runs:"
	echo "- status codes: every answer as expected (200 for A, B, C, C0; 401 for D), no socket errors, no token pool exhausted: $([ -z "$bad" ] && echo yes || echo "NO: $bad (see bench/out/runs.tsv)")"
	echo "- introspections at the IdP during B (cached; 0 expected): ${introB% } — $([ "$okB" = yes ] && echo ok || echo NOT OK)"
	echo "- introspections during D (negative cache, negative-ttl = $NEGATIVE_TTL s; ≤ $maxD expected): ${introD% } — $([ "$okD" = yes ] && echo ok || echo NOT OK)"
	echo "- introspections / requests during C (one each expected): ${introC% } — $([ "$okC" = yes ] && echo ok || echo NOT OK)"
}
report

lines=()
[ "$PIN" != 1 ] || lines+=("- pinned (BENCH_PIN=1): the IdP alone on CPU 1; nginx, mcpgate and wrk share CPU 0")
lines+=("- auth config: cache-ttl = $CACHE_TTL, negative-ttl = $NEGATIVE_TTL, cache-entries default; C used $POOL never-reused tokens per repetition")
append_results auth "; baseline with CPPFLAGS=-DMCPGATE_BENCH_NO_AUTH" \
	"oidc-provider $(oidc_version) on node $(node -v)" scenario "A B C C0 D" "${lines[@]}"
exit 0
}
