#!/usr/bin/env bash
# bench/malloc.sh — what mcpgate's malloc settings cost: one arena for the worker threads
# (mallopt M_ARENA_MAX 1, src/front/front.c) and no per-thread cache of freed blocks
# (GLIBC_TUNABLES=glibc.malloc.tcache_count=0, set by the deploy recipes), against
# glibc's defaults (an arena per thread, a tcache of 7 blocks per size).
#
# Two gateway stacks in the same run, sharing the authorization server (tests/idp), each
# its own nginx + spawn-fcgi + mcpgate, the same binary and configuration:
#
#   stack M   as shipped: deploy/spawn-fcgi.sh.in sets the tunable, mcpgate the arena
#   stack G   glibc's defaults: GLIBC_TUNABLES=glibc.malloc.tcache_count=7 and
#             MALLOC_ARENA_MAX=8 in the environment (mcpgate and the recipe keep an
#             administrator's own settings)
#
# Requests per second of, through each stack, with a cached bearer token:
#
#   PM, PG   POST /mcp ping, in a session (one initialize's Mcp-Session-Id)
#   BM, BG   POST /mcp a batch of BENCH_BATCH (10) pings, same session: many blocks
#            allocated and freed per request, by every worker at once
#
# Targets: PM / PG >= 0.97 and BM / BG >= 0.97 (the medians of the per-repetition
# ratios). After the runs and a rest of 3 s (mcpgate gives back what it freed once no
# request began for a second), the RssAnon of each stack's processes. Every answer's
# status and body are checked (wrk.lua): a run with any other answer is not a
# measurement, and nothing is appended then. The memory over tens of minutes is
# tests/soak's. A benchmark, not a timed test: nothing here fails a build.
#
# Usage: bench/malloc.sh         (as root on Debian 12: installs what it lacks)
# Settings (environment):
#   BENCH_DURATION=10   seconds per measured run      BENCH_REPS=3    repetitions
#   BENCH_WARMUP=3      seconds per warm-up run       BENCH_THREADS=2 BENCH_CONNS=8  (wrk -t -c)
#   BENCH_PROCS=2 BENCH_WORKERS=2   mcpgate processes (spawn-fcgi -F) x threads (-w)
#   BENCH_BATCH=10      pings per batch
#   BENCH_G_ENV="GLIBC_TUNABLES=glibc.malloc.tcache_count=7 MALLOC_ARENA_MAX=8"
#                       stack G's environment (another setting to compare with M's)
#   BENCH_SRC=worktree  build from the working tree (default), or HEAD (git archive)
#   BENCH_RESULTS=bench/RESULTS.md  where the dated section is appended ("" = nowhere)
#   MG_KEEP=1           keep the temp dir (configs, logs) after the run
# Everything goes to bench/out/malloc/ (gitignored). What it shares with the other
# scripts is in bench/lib.sh.
# The whole script is one brace group: bash reads it completely before running it, so
# editing this file while it runs cannot derail the run.
{
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$here/out/malloc
BATCH=${BENCH_BATCH:-10}
CACHE_TTL=3600
KINDS="PM PG BM BG"
NKINDS=4
# shellcheck disable=SC2016 # the quotes are literal, around the expanded value
KNOBS="BENCH_BATCH=$BATCH BENCH_SRC=$SRC${BENCH_G_ENV:+ BENCH_G_ENV='$BENCH_G_ENV'}"
read -r -a GLIBC_DEFAULTS <<<"${BENCH_G_ENV:-GLIBC_TUNABLES=glibc.malloc.tcache_count=7 MALLOC_ARENA_MAX=8}"
[ $((REPS * NKINDS * (DURATION + 2) + NKINDS * WARMUP)) -lt 3300 ] ||
	die "a run this long outlives the token (1 h); fewer BENCH_REPS or a shorter BENCH_DURATION"

setup
build_mcpgate

# --- The two stacks ------------------------------------------------------------------
mkdir -p "$OUT/tmp"
TMPDIR=$OUT/tmp bench_root '*/mcpgate.log' '*/nginx/error.log' idp.log
read -r PORT_M PORT_G <<<"$(two_ports)" || die "no free ports"
declare -A BASEOF=([M]=http://127.0.0.1:$PORT_M [G]=http://127.0.0.1:$PORT_G) FCGIOF=() NGINXOF=() TOK=() SID=()
start_idp "${BASEOF[M]}/mcp" "${BASEOF[G]}/mcp"
say "starting nginx + spawn-fcgi ($PROCS x $WORKERS) twice: as shipped on $PORT_M, glibc's defaults on $PORT_G"
mkdir -p "$ROOT/M" "$ROOT/G"
unset GLIBC_TUNABLES MALLOC_ARENA_MAX
start_stack "$ROOT/M" "$BIN" "$PORT_M" || die "stack M did not start"
FCGIOF[M]=$STACK_FCGI NGINXOF[M]=$STACK_NGINX
export "${GLIBC_DEFAULTS[@]}"
start_stack "$ROOT/G" "$BIN" "$PORT_G" || die "stack G did not start"
FCGIOF[G]=$STACK_FCGI NGINXOF[G]=$STACK_NGINX
unset GLIBC_TUNABLES MALLOC_ARENA_MAX
# what each stack's processes were started with
env_of() { tr '\0' '\n' <"/proc/$1/environ" | grep -E '^(GLIBC_TUNABLES|MALLOC_ARENA_MAX)=' | sort | tr '\n' ' '; }
declare -A ENVOF=()
for s in M G; do ENVOF[$s]=$(env_of "${FCGIOF[$s]%% *}"); done
check "stack M runs with the recipe's tunable" "${ENVOF[M]}" '^GLIBC_TUNABLES=glibc.malloc.tcache_count=0 $'
[ -n "${BENCH_G_ENV:-}" ] || check "stack G runs with glibc's defaults" "${ENVOF[G]}" '^GLIBC_TUNABLES=glibc.malloc.tcache_count=7 MALLOC_ARENA_MAX=8 $'

open_sessions M G

# --- Measuring -----------------------------------------------------------------------
runs_header kind us_nginx us_mcpgate
run() { # KIND SECONDS REP
	local kind=$1 s=${1:1:1} target
	case $kind in B*) target='batch' ;; *) target='ping' ;; esac
	CPU_PIDS=("$(nginx_pids "${NGINXOF[$s]}")" "${FCGIOF[$s]}")
	measure "$kind" "$2" "$OUT/wrk.$3.$kind.out" "${BASEOF[$s]}/mcp" BENCH_EXPECT=200 BENCH_TARGET=$target \
		"BENCH_BATCH=$BATCH" "BENCH_TOKEN=${TOK[$s]}" "BENCH_SESSION=${SID[$s]}" "BENCH_PROTOCOL=$PV"
	row "$3" "$kind"
	said "$3" "$kind"
}
run_kinds " (PM, BM: stack M, as shipped; PG, BG: stack G, glibc's defaults)"
# shellcheck disable=SC2086
runs_done ${FCGIOF[M]} ${FCGIOF[G]}
sleep 3	# a rest: each process trims once no request began for a second
rss_of() { for p in "$@"; do awk '/^RssAnon/ { printf "%d ", $2 }' "/proc/$p/status"; done; }
declare -A RSS=()
# shellcheck disable=SC2086
for s in M G; do RSS[$s]=$(rss_of ${FCGIOF[$s]}); done

# --- Report --------------------------------------------------------------------------
ratio_medians PM/PG BM/BG
bad=$(awk -F'\t' '$1 != "rep" && ($6 > 0 || $8 > 0 || $9 > 0 || $5 != $4) { printf "%s/%s ", $1, $2 }' "$RUNS")
kindname() {
	case $1 in
	PM) echo "PM ping, in a session (stack M: one arena, tcache 0)" ;;
	PG) echo "PG the same through stack G (glibc's defaults)" ;;
	BM) echo "BM batch of $BATCH pings (stack M)" ;;
	BG) echo "BG the same through stack G" ;;
	esac
}
table() {
	# shellcheck disable=SC2086
	rates_table request "nginx, mcpgate, wrk" $KINDS
	ratio_row PM/PG "PM / PG (ping: as shipped vs glibc's defaults)" "≥ 0.97" 0.97
	ratio_row BM/BG "BM / BG (batch of $BATCH)" "≥ 0.97" 0.97
	echo
	echo "RssAnon per process after the runs and a 3 s rest (kB): M $(tr ' ' / <<<"${RSS[M]% }"), G $(tr ' ' / <<<"${RSS[G]% }")."
	echo
	echo "Correctness during every run (warm-ups included): every answer 200 with its \"result\" (a batch, $BATCH of them), no socket errors: $([ -z "$bad" ] && echo yes || echo "NO: $bad")"
}
report
[ -z "$bad" ] || die "some answers were not right ($bad): not a measurement; nothing appended (see $RUNS)"
# shellcheck disable=SC2016 # the backquotes are Markdown
append_results malloc "" "one client_credentials token of oidc-provider $(oidc_version) per stack, cached (cache-ttl = $CACHE_TTL); two stacks, M as shipped (\`${ENVOF[M]% }\` from deploy/spawn-fcgi.sh.in, \`mallopt(M_ARENA_MAX, 1)\`), G with \`${ENVOF[G]% }\` (glibc's defaults, kept by mcpgate)" \
	kind "$KINDS" \
	"- requests: POST /mcp with \`Authorization: Bearer\`, the \`Mcp-Session-Id\` of one initialize and \`MCP-Protocol-Version: $PV\`: ping, or a batch of $BATCH pings"
exit 0
}
