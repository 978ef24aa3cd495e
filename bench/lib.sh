# shellcheck shell=bash
# bench/lib.sh — what bench/auth.sh, bench/mcp.sh and bench/fed.sh share: the settings
# they take, the set-up (what is missing installed, the binaries built from a copy of the
# sources), the stack (the temp dir, the authorization server, nginx + spawn-fcgi +
# mcpgate from deploy/lib.sh), one measured wrk run and its row in runs.tsv, the medians
# and ratios of the report, and the dated section of RESULTS.md. Sourced by the scripts
# first:
#
#   . "$(dirname "$0")/lib.sh"       # the settings below, deploy/lib.sh; sets here, top
#   OUT=$here/out/NAME               # where this benchmark's files go
#   setup                            # $OUT, START_LOAD, what is missing installed
#   build WHAT INTO PRODUCT...       # with the script's build_trees SRC
#   build_mcpgate                    # or that, for src/mcpgate alone: $BIN
#   build_mcpgate_with PROG          # src/mcpgate and bench/PROG: $BIN, $PROG_BIN
#   prog_run WHAT ARG...             # bench/PROG run alone; pb KEY: its results
#   bench_root LOG...                # $ROOT, the exit trap
#   start_idp RESOURCE...            # $IDP, $IDP_PID
#   start_stack DIR BIN PORT [CONF]  # $STACK_FCGI, $STACK_NGINX
#   one_stack BIN                    # start_idp + start_stack in $ROOT: $PORT, $BASE, $FCGI, $NGINX
#   start_upstreams TOOLS NAME...    # fixture upstreams: UP_URL, UP_PID, UP_N
#   free_ports N, token_for RESOURCE # ports, tokens
#   post_to URL BODY, hdr, sid, body # one request, its answer
#   up_session URL                   # a session of a fixture upstream's own: UP_SID
#   proc_mem PID                     # VmRSS ... Pss of a process
#   runs_header NAME COLUMN...       # then, per run: CPU_PIDS=(...); measure ...; row ...
#   run_kinds [NOTE]                 # the warm-ups and REPS x KINDS, by the script's run
#   runs_done PID...                 # END_LOAD
#   ratio_medians A/B...             # RATIOS[A/B], MEDIAN[A/B]
#   report                           # prints the script's table (rates_table + its own rows)
#   append_results TITLE ...         # the dated section of RESULTS.md
#
# What the scripts set for it: OUT; KNOBS (their own settings, for the "command:" line of
# RESULTS.md); CACHE_TTL and, when they want one, NEGATIVE_TTL (the auth section of the
# configuration); when they need more configuration, CONF_GATEWAY (lines added to the
# [gateway] section) and CONF_MORE (sections after [auth]); and the functions
# build_trees SRC (configure + make), run KIND SECONDS REP (one measured run, for
# run_kinds), kindname KIND
# (the name of a row of the rates table) and table (the report). Like the scripts, it is
# read completely (by the . command) before anything of it runs.

# Settings (environment): each script lists them in its usage.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
ME=bench/${0##*/}
DURATION=${BENCH_DURATION:-10}
WARMUP=${BENCH_WARMUP:-3}
REPS=${BENCH_REPS:-3}
THREADS=${BENCH_THREADS:-2}
CONNS=${BENCH_CONNS:-8}
PROCS=${BENCH_PROCS:-2}
WORKERS=${BENCH_WORKERS:-2}
SRC=${BENCH_SRC:-worktree}
# BENCH_SESSION=0: requests without a session (mcp.sh, fed.sh, policy.sh). wrk.lua
# reads BENCH_SESSION as the Mcp-Session-Id to send: the knob must not reach it.
# shellcheck disable=SC2034 # read by the scripts
SESSION=${BENCH_SESSION:-1}
unset BENCH_SESSION
RESULTS=${BENCH_RESULTS-$here/RESULTS.md}
# a command wrk runs under (bench/auth.sh's BENCH_PIN=1: taskset -c 0)
WRK_PIN=()
# how long wrk waits for an answer before it counts a timeout (seconds; a script's run
# of long calls may set more for that run)
WRK_TIMEOUT=5

say() { printf '%s\n' "$*" >&2; }
die() { say "$ME: $*"; exit 1; }

# shellcheck disable=SC2034 # read by deploy/lib.sh
MG_TOP=$top
# shellcheck source-path=SCRIPTDIR source=../deploy/lib.sh
. "$top/deploy/lib.sh"

# --- What it needs ------------------------------------------------------------------
# setup: makes $OUT, notes the load average before (START_LOAD), and installs what is
# missing (as root on Debian 12: apt-get; npm ci --prefix tests for oidc-provider); the
# log: $OUT/install.log.
setup() {
	mkdir -p "$OUT"
	START_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
	need_pkgs build-essential autoconf automake libtool pkg-config \
		libfcgi-dev libfcgi-bin libjansson-dev libsodium-dev libcurl4-openssl-dev libhiredis-dev libcjose-dev redis-server \
		>"$OUT/install.log" 2>&1 || { cat "$OUT/install.log" >&2; die "cannot install the build dependencies"; }
	need_cmds wrk:wrk strace:strace nginx:nginx-light spawn-fcgi:spawn-fcgi cgi-fcgi:libfcgi-bin curl:curl jq:jq \
		node:nodejs npm:npm >>"$OUT/install.log" 2>&1 || { cat "$OUT/install.log" >&2; die "cannot install wrk, nginx, spawn-fcgi, curl, jq, node"; }
	# npm ci only when the installed packages are not the lock file's (by content, as
	# tests/run: a newer lock file of the same packages is no reason), and never through a
	# tests/node_modules that links to another tree's: npm ci would empty that tree's
	if [ ! -d "$top/tests/node_modules/oidc-provider" ] ||
		[ "$(jq -cS '.packages | del(.[""])' "$top/tests/package-lock.json" 2>/dev/null)" != \
			"$(jq -cS '.packages' "$top/tests/node_modules/.package-lock.json" 2>/dev/null)" ]; then
		[ ! -L "$top/tests/node_modules" ] ||
			die "tests/node_modules links to $(readlink "$top/tests/node_modules"), whose packages may not be those of tests/package-lock.json; not touching them (remove the link, or install there)"
		say "npm ci --prefix tests"
		npm ci --prefix "$top/tests" --no-audit --no-fund --loglevel=error >>"$OUT/install.log" 2>&1 ||
			die "npm ci --prefix tests failed (see $OUT/install.log)"
	fi
}

# --- The binaries -------------------------------------------------------------------
# build WHAT INTO PRODUCT...: a copy of the sources in $OUT/src (so that edits going on
# in the tree do not race the build), autoreconf'd once, then built out of tree by the
# script's build_trees SRC, which makes its build dirs under $OUT afresh. The sources:
# the working tree's tracked and untracked-but-not-ignored files but bench/ (the
# default), or HEAD's (BENCH_SRC=HEAD: git archive); and, always from the working tree,
# the bench/ files named in BUILD_FILES (the benchmark's own). Skipped when none of
# them changed since the last build ($OUT/build.stamp) and every PRODUCT is there.
# WHAT and INTO: what the "building" line says. The log: $OUT/build.log; on failure,
# its end and BUILD_HINT go with the error.
BUILD_FILES=
BUILD_HINT=
sources() { # the files to copy (NUL-separated): the sources, no build products, no bench/
	(cd "$top" && git ls-files -co --exclude-standard -z | grep -zv '^bench/')
}
build_sources() {
	local what=$1 into=$2 src=$OUT/src stamp new p f missing=''
	shift 2
	if [ "$SRC" = HEAD ]; then
		new=$(git -C "$top" rev-parse HEAD) || return 1
	else
		new=$(cd "$top" && sources | xargs -0 stat -c '%n %s %Y' 2>/dev/null | sha256sum | cut -c1-16) || return 1
	fi
	for f in $BUILD_FILES; do new="$new $(sha256sum <"$here/$f" | cut -c1-16)"; done
	stamp=$(cat "$OUT/build.stamp" 2>/dev/null)
	for p in "$@"; do [ -x "$p" ] || missing=1; done
	if [ "$stamp" = "$new" ] && [ -z "$missing" ]; then
		say "binaries up to date ($SRC $new)"
		return 0
	fi
	say "building $what from the $SRC sources into $into"
	rm -rf "$src" "$OUT/build.stamp"
	mkdir -p "$src"
	if [ "$SRC" = HEAD ]; then
		git -C "$top" archive HEAD | tar -xf - -C "$src" || return 1
	else
		sources | (cd "$top" && tar --null -T - -cf -) | tar -xf - -C "$src" || return 1
	fi
	for f in $BUILD_FILES; do
		mkdir -p "$src/bench" && cp "$here/$f" "$src/bench/" || return 1
	done
	(cd "$src" && autoreconf -fi) >"$OUT/build.log" 2>&1 || return 1
	build_trees "$src" >>"$OUT/build.log" 2>&1 || return 1
	echo "$new" >"$OUT/build.stamp"
}
build() {
	build_sources "$@" || { tail -n 30 "$OUT/build.log" >&2; die "build failed (full log: $OUT/build.log$BUILD_HINT)"; }
}

# build_mcpgate: for a script whose only binary is src/mcpgate: build_trees configures
# and makes that alone in $OUT/build (the default CFLAGS, as installed); sets BIN.
build_mcpgate() {
	# shellcheck disable=SC2317 # called by build
	build_trees() { # SRC
		rm -rf "$OUT/build"
		mkdir -p "$OUT/build"
		(cd "$OUT/build" && "$1/configure" -q && make -j"$(nproc)" src/mcpgate)
	}
	BIN=$OUT/build/src/mcpgate
	build "mcpgate" "$OUT/build" "$BIN"
}
# build_mcpgate_with PROG: the same, and bench/PROG (an EXTRA_PROGRAMS of Makefile.am,
# built from bench/FILE.c and the bench/bench.h it includes, which are the benchmark's
# own: always the working tree's, BUILD_FILES); sets BIN and PROG_BIN.
build_mcpgate_with() {
	BUILD_FILES="${1%_bench}.c bench.h"
	BUILD_HINT="; BENCH_SRC=HEAD needs a commit whose Makefile.am has bench/$1"
	# shellcheck disable=SC2317 # called by build
	build_trees() { # SRC
		rm -rf "$OUT/build"
		mkdir -p "$OUT/build"
		(cd "$OUT/build" && "$1/configure" -q && make -j"$(nproc)" src/mcpgate && make "bench/$PROG")
	}
	PROG=$1
	BIN=$OUT/build/src/mcpgate
	PROG_BIN=$OUT/build/bench/$1
	build "mcpgate and bench/$1" "$OUT/build" "$BIN" "$PROG_BIN"
}
# prog_run WHAT ARG...: runs bench/PROG (build_mcpgate_with) with ARGs before anything
# else competes with it, shows its output, and keeps its "BENCH key=value ..." line for
# pb KEY.
prog_run() {
	say "bench/$PROG ${*:2} ($1, the gateway's code)"
	"$PROG_BIN" "${@:2}" >"$OUT/$PROG.out" 2>&1 || die "$PROG failed: $(tail -n 5 "$OUT/$PROG.out")"
	cat "$OUT/$PROG.out" >&2
	PB=$(grep '^BENCH ' "$OUT/$PROG.out") || die "$PROG: no result line"
}
pb() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$PB"; }
# need_sdk: dies unless tests/node_modules has the MCP SDK (the fixture upstreams).
need_sdk() {
	[ -f "$top/tests/node_modules/@modelcontextprotocol/sdk/package.json" ] ||
		die "tests/node_modules has no @modelcontextprotocol/sdk (npm ci --prefix tests)"
}

# --- The stack ----------------------------------------------------------------------
# bench_root LOG...: the temp dir of the stack(s), $ROOT (deploy/lib.sh's mg_init, under
# $TMPDIR); on exit, the last 200 lines of each LOG (globs under $ROOT: logs, configs)
# go to $OUT/last-run, everything started is stopped, and bench_cleanup runs.
bench_root() {
	mg_init || die "no temp dir"
	ROOT=$MG_DIR
	SAVE_LOGS=("$@")
	trap 'MG_DIR=$ROOT; save_logs; stop_all; bench_cleanup' EXIT
}
# bench_cleanup: what a script undoes on exit once everything it started is stopped
# (it defines its own)
bench_cleanup() { :; }
# shellcheck disable=SC2317 # called by the EXIT trap
save_logs() {
	local d=$OUT/last-run g f
	rm -rf "$d"
	mkdir -p "$d"
	for g in "${SAVE_LOGS[@]}"; do
		for f in "$ROOT"/$g; do
			[ -f "$f" ] || continue
			tail -n 200 "$f" >"$d/$(echo "${f#"$ROOT"/}" | tr / _)"
		done
	done
}

# start_idp RESOURCE...: the authorization server (tests/idp/server.mjs, oidc-provider)
# on a port of its own, for the resources RESOURCE...: sets IDP (its issuer URL) and
# IDP_PID, and writes mcpgate's client secret to $ROOT/secret.
start_idp() {
	local args=() r
	for r in "$@"; do args+=(--resource "$r"); done
	say "starting the authorization server (oidc-provider)"
	rm -f "$ROOT/idp.ready"
	node "$top/tests/idp/server.mjs" --port 0 "${args[@]}" \
		--ready-file "$ROOT/idp.ready" --quiet >/dev/null 2>"$ROOT/idp.log" &
	IDP_PID=$!
	mg_track "$IDP_PID"
	for _ in $(seq 1 100); do [ -s "$ROOT/idp.ready" ] && break; sleep 0.1; done
	IDP=$(sed -n 's/^ready //p' "$ROOT/idp.ready" 2>/dev/null)
	[ -n "$IDP" ] || die "the authorization server did not start: $(tail -n 5 "$ROOT/idp.log")"
	(umask 077 && printf 'mcpgate-secret\n' >"$ROOT/secret")
}
# one_token: prints a client_credentials token (machine-acme, mcp:tools) of the IdP;
# fails when there is none.
one_token() {
	local t
	t=$(node "$top/tests/idp/token.mjs" --issuer "$IDP" --client machine-acme --scope mcp:tools | jq -r .access_token)
	[ -n "$t" ] && [ "$t" != null ] && echo "$t"
}
# token_for RESOURCE: the same, for RESOURCE (one of start_idp's) as its audience
token_for() {
	local t
	t=$(node "$top/tests/idp/token.mjs" --issuer "$IDP" --client machine-acme --scope mcp:tools --resource "$1" | jq -r .access_token)
	[ -n "$t" ] && [ "$t" != null ] && echo "$t"
}
# the IdP's introspections so far
idp_count() { curl -s --max-time 5 "$IDP/_stats" | jq -r .introspections; }
oidc_version() { jq -r .version "$top/tests/node_modules/oidc-provider/package.json"; }

# write_conf DIR BASE: DIR/mcpgate.conf, for a gateway at BASE (http://127.0.0.1:PORT)
# with its state file in DIR, verifying tokens at the IdP as the client mcpgate, its
# answers cached CACHE_TTL s (and the negative ones NEGATIVE_TTL s, when set); the
# script's CONF_GATEWAY and CONF_MORE, when set.
write_conf() {
	{
		cat <<CONF
# generated by $ME
[gateway]
resource = $2/mcp
name = com.example/gateway
title = Bench gateway
description = $ME
version = 1.0.0
website-url = https://example.com
state = $1/state
workers = $WORKERS
CONF
		[ -z "${CONF_GATEWAY:-}" ] || echo "$CONF_GATEWAY"
		cat <<CONF
[auth]
issuer = $IDP
client-id = mcpgate
client-secret-file = $ROOT/secret
required-scopes = mcp:tools
scopes-supported = mcp:tools
cache-ttl = $CACHE_TTL
CONF
		[ -z "${NEGATIVE_TTL:-}" ] || echo "negative-ttl = $NEGATIVE_TTL"
		echo "timeout-ms = 3000"
		[ -z "${CONF_MORE:-}" ] || echo "$CONF_MORE"
	} >"$1/mcpgate.conf"
}

# start_stack DIR BIN PORT [CONF]: spawn-fcgi (PROCS x WORKERS of BIN) + nginx on PORT
# (deploy/ recipes, FastCGI keep-alive off) in DIR, configured by write_conf, or given
# CONF as its -c instead (another FastCGI program taking mcpgate's -c, -w and -t: bench/run's
# null responder); sets STACK_FCGI (the FastCGI pids) and STACK_NGINX (nginx's master).
# deploy/lib.sh keeps one stack per MG_DIR, so MG_DIR points at DIR while it starts.
start_stack() {
	local dir=$1 bin=$2 port=$3 conf=${4:-}
	MG_DIR=$dir
	mkdir -p "$MG_DIR/tmp" "$MG_DIR/empty"
	chmod 755 "$MG_DIR"
	if [ -z "$conf" ]; then
		write_conf "$MG_DIR" "http://127.0.0.1:$port"
		conf=$MG_DIR/mcpgate.conf
	fi
	# shellcheck disable=SC2034 # read by deploy/lib.sh
	MG_LOG=$MG_DIR/mcpgate.log
	# shellcheck disable=SC2034
	MCPGATE_BIN=$bin
	start_mcpgate_fcgi "$MG_DIR/mcpgate.sock" "$conf" "$PROCS" "$WORKERS" || return 1
	# shellcheck disable=SC2034 # read by the scripts
	STACK_FCGI=$MG_FCGI_PIDS
	start_nginx "$port" || return 1
	# shellcheck disable=SC2034
	STACK_NGINX=$MG_FRONT_PID
	MG_DIR=$ROOT
}

# one_stack BIN: the authorization server and one stack of BIN (start_stack) in $ROOT
# itself, on a free port: sets PORT, BASE (http://127.0.0.1:PORT), FCGI (the mcpgate
# pids) and NGINX (nginx's master).
one_stack() {
	PORT=$(free_port) || die "no free port"
	BASE=http://127.0.0.1:$PORT
	start_idp "$BASE/mcp"
	say "starting nginx + spawn-fcgi ($PROCS x $WORKERS) on $PORT"
	start_stack "$ROOT" "$1" "$PORT" || die "the stack did not start"
	# shellcheck disable=SC2034 # read by the scripts
	FCGI=$STACK_FCGI
	# shellcheck disable=SC2034
	NGINX=$STACK_NGINX
}

# start_upstreams TOOLS NAME...: one fixture upstream MCP server (tests/upstream/fixture.mjs,
# official SDK, --json) per NAME, in $ROOT, with echo tools added so that together they
# expose TOOLS tools (OWN_TOOLS of their own each, the rest split evenly): sets UP_URL,
# UP_PID and UP_N (the tools added), keyed by NAME (a later call adds its NAMEs to
# those); dies when one does not start. UP_ARGS: more options for each (an array set by
# the script; bench/mrtr.sh's --modern), none by default.
OWN_TOOLS=19	# the fixture's own tools (tests/upstream/README.md); --tools N adds N
UP_ARGS=()
start_upstreams() {
	local total=$1 u i=0 n extra
	shift
	n=$#
	extra=$((total - n * OWN_TOOLS))
	declare -gA UP_URL UP_PID UP_N
	for u in "$@"; do
		UP_N[$u]=$((extra / n + (i < extra % n ? 1 : 0)))
		i=$((i + 1))
		node "$top/tests/upstream/fixture.mjs" --port 0 --ready-file "$ROOT/up-$u.ready" --name "upstream-$u" \
			--tools "${UP_N[$u]}" --json "${UP_ARGS[@]}" --quiet >/dev/null 2>"$ROOT/up-$u.log" &
		UP_PID[$u]=$!
		mg_track "${UP_PID[$u]}"
	done
	for u in "$@"; do
		for _ in $(seq 1 100); do [ -s "$ROOT/up-$u.ready" ] && break; sleep 0.1; done
		UP_URL[$u]=$(sed -n 's/^ready //p' "$ROOT/up-$u.ready" 2>/dev/null)
		[ -n "${UP_URL[$u]}" ] || die "upstream $u did not start: $(tail -n 5 "$ROOT/up-$u.log")"
	done
	say "upstreams: $(for u in "$@"; do printf '%s %s (%s tools) ' "$u" "${UP_URL[$u]}" $((OWN_TOOLS + UP_N[$u])); done)"
}

# two_ports: two distinct free ports, "P1 P2", for a script running two stacks.
two_ports() {
	local a b
	a=$(free_port) || die "no free port"
	b=$(free_port) || die "no free port"
	[ "$a" != "$b" ] || b=$(free_port) || die "no free port"
	echo "$a $b"
}

# free_ports N: N distinct free ports on loopback, one line
free_ports() {
	local -A seen=()
	local p list=()
	for _ in $(seq 1 $(($1 * 10))); do
		[ "${#list[@]}" -lt "$1" ] || break
		p=$(free_port) || return 1
		[ -z "${seen[$p]:-}" ] || continue
		seen[$p]=1
		list+=("$p")
	done
	[ "${#list[@]}" = "$1" ] && echo "${list[*]}"
}

# check DESC GOT REGEX: dies unless GOT matches
check() {
	[[ $2 =~ $3 ]] || die "check failed: $1: got '$2'"
}

# --- Measuring ----------------------------------------------------------------------
TCK=$(getconf CLK_TCK)
cpu_ticks() { # PID... → utime+stime of those processes (clock ticks); g:DIR → the CPU
	local p s=0 f u	# of cgroup (v2) DIR, every process that was ever in it (CGI programs)
	for p in "$@"; do
		if [ "${p#g:}" != "$p" ]; then
			u=$(awk '$1 == "usage_usec" { print $2 }' "${p#g:}/cpu.stat" 2>/dev/null) || continue
			s=$((s + ${u:-0} * TCK / 1000000))
			continue
		fi
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
# the CPU ticks of each group of CPU_PIDS, one word each
group_ticks() {
	local g
	# shellcheck disable=SC2086
	for g in "${CPU_PIDS[@]}"; do printf '%s ' "$(cpu_ticks $g)"; done
}
tsv() { local IFS=$'\t'; printf '%s\n' "$*"; }

# runs_header NAME COLUMN...: starts $OUT/runs.tsv ($RUNS), one row a run (measure,
# row): rep (REP "w" = warm-up), NAME (the scenario or kind), what every run records,
# the script's own COLUMNs (its CPU groups' µs per request: us_nginx, ... last), then
# wrk's µs per request and how busy the machine was.
runs_header() {
	RUNS=$OUT/runs.tsv
	tsv rep "$1" rps requests n_expect n_other other_codes bad_body sock_err p50_us p99_us introspections \
		"${@:2}" us_wrk busy_pct other_pct >"$RUNS"
}

# measure LABEL SECONDS FILE URL ENV...: one wrk run of SECONDS against URL (bench/wrk.lua
# with the settings ENV..., wrk -t$THREADS -c$CONNS, under WRK_PIN), its output in FILE;
# and around it the CPU time of each group of processes in CPU_PIDS (an array: a string
# of pids a group, "" for none), of the machine, and the IdP's introspections. Sets LINE
# (wrk.lua's "BENCH key=value ..." line, read with kv KEY), and what row writes: REQ,
# INTRO, CPU_US (each group's CPU µs per request, "-" for an empty one), CPU_WRK, BUSY
# (% of the machine) and OTHER (% of it used by processes that are not ours).
measure() {
	local label=$1 secs=$2 out=$3 url=$4 i0 i1 c0 c1 s0 s1 w0 w1 wt g i=0
	shift 4
	i0=$(idp_count)
	c0=$(group_ticks)
	read -r s0 w0 < <(sys_ticks)
	# bash's time keyword: wrk's own CPU (user + system seconds)
	local TIMEFORMAT='%U %S'
	{ time env BENCH_THREADS="$THREADS" "$@" "${WRK_PIN[@]}" wrk -t"$THREADS" -c"$CONNS" -d"${secs}s" --timeout "${WRK_TIMEOUT}s" \
		-s "$here/wrk.lua" "$url" >"$out" 2>&1; } 2>"$out.time"
	wt=$(awk '{ printf "%.0f", ($1 + $2) * '"$TCK"' }' "$out.time")
	read -r s1 w1 < <(sys_ticks)
	c1=$(group_ticks)
	i1=$(idp_count)
	LINE=$(grep '^BENCH ' "$out") || die "wrk ($label): no result: $(tail -n 5 "$out")"
	REQ=$(kv requests)
	INTRO=$((i1 - i0))
	BUSY=$(awk -v s="$s1" -v s0="$s0" -v w="$w1" -v w0="$w0" 'BEGIN { d = s - s0; printf "%.0f", (d > 0 ? 100 * (d - (w - w0)) / d : 0) }')
	read -r -a CPU_US <<<"$(awk -v a="$c0" -v b="$c1" -v r="$REQ" -v t="$TCK" 'BEGIN {
		n = split(a, x, " "); split(b, y, " ");
		for (i = 1; i <= n; i++) printf "%.0f ", (r > 0 ? (y[i] - x[i]) * 1e6 / t / r : 0) }')"
	for g in "${CPU_PIDS[@]}"; do
		[ -n "$g" ] || CPU_US[i]=-
		i=$((i + 1))
	done
	CPU_WRK=$(awk -v w="$wt" -v r="$REQ" -v t="$TCK" 'BEGIN { printf "%.0f", (r > 0 ? w * 1e6 / t / r : 0) }')
	# CPU used by processes that are not ours (other work on the machine), in % of it
	OTHER=$(awk -v a="$c0" -v b="$c1" -v wt="$wt" -v s="$s1" -v s0="$s0" -v w="$w1" -v w0="$w0" 'BEGIN {
		n = split(a, x, " "); split(b, y, " "); ours = wt;
		for (i = 1; i <= n; i++) ours += y[i] - x[i];
		d = s - s0; o = (d > 0 ? 100 * (d - (w - w0) - ours) / d : 0);
		printf "%.0f", (o < 0 ? 0 : o) }')
}
# kv KEY: the value of KEY in the last run's BENCH line
kv() { sed -n "s/.* $1=\\([^ ]*\\).*/\\1/p" <<<"$LINE"; }
# row REP NAME VALUE...: the last run's row in $RUNS, the script's own VALUEs (its
# COLUMNs but the CPU groups) after what every run records.
row() {
	tsv "$1" "$2" "$(kv rps)" "$REQ" "$(kv n_expect)" "$(kv n_other)" "$(kv other_codes)" "$(kv bad_body)" \
		"$(($(kv err_connect) + $(kv err_read) + $(kv err_write) + $(kv err_timeout)))" \
		"$(kv p50_us)" "$(kv p99_us)" "$INTRO" "${@:3}" "${CPU_US[@]}" "$CPU_WRK" "$BUSY" "$OTHER" >>"$RUNS"
}

# said REP KIND: the progress line of the last run: its rate, p50 latency, and how many
# answers had the status expected and a bad body.
said() {
	say "$(printf '  %-3s %-2s %9s req/s  p50 %6s µs  %s answers %s, other %s%s, bad bodies %s' "$1" "$2" "$(kv rps)" \
		"$(kv p50_us)" "$(kv n_expect)" "$(kv expect)" "$(kv n_other)" \
		"$([ "$(kv n_other)" = 0 ] || echo " ($(kv other_codes))")" "$(kv bad_body)")"
}
# run_kinds [NOTE]: the warm-up of each of KINDS (WARMUP s), then REPS repetitions of
# them all, interleaved, by the script's run KIND SECONDS REP (REP "w": a warm-up);
# NOTE: what the "measuring" line adds.
run_kinds() {
	local k r
	say "warm-up ($WARMUP s each)"
	for k in $KINDS; do run "$k" "$WARMUP" w; done
	say "measuring: $REPS x ($KINDS), $DURATION s each, wrk -t$THREADS -c$CONNS${1:-}"
	for r in $(seq 1 "$REPS"); do
		for k in $KINDS; do run "$k" "$DURATION" "$r"; done
	done
}

# runs_done PID...: after the runs, the mcpgate processes PID... must still be there;
# notes the load average after (END_LOAD).
runs_done() {
	local p
	for p in "$@"; do
		mg_alive "$p" || die "mcpgate $p died during the run"
	done
	END_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
}

# --- Report -------------------------------------------------------------------------
# median of column COL (1-based) for NAME over the measured repetitions ("-" when the
# column is "-" in all of them: a CPU group without processes)
med() { awk -F'\t' -v s="$1" -v c="$2" '$1 != "w" && $1 != "rep" && $2 == s { print $c }' "$RUNS" | sort -g |
	awk '$1 == "-" { d++; next } { v[++n] = $1 } END { if (n == 0) print (d ? "-" : "nan"); else if (n % 2) print v[(n + 1) / 2]; else print (v[n / 2] + v[n / 2 + 1]) / 2 }'; }
val() { awk -F'\t' -v r="$1" -v s="$2" -v c="$3" '$1 == r && $2 == s { print $c }' "$RUNS"; }
ratio() { awk -v a="$1" -v b="$2" -v m="${3:-1}" 'BEGIN { printf "%.3f", (b > 0 ? m * a / b : 0) }'; }
# ratio_medians PAIR...: for each PAIR, NAME1/NAME2 or NAME1/NAME2/FACTOR: RATIOS[PAIR],
# the per-repetition ratios of their rates (neighbours in time; times FACTOR), each " "
# first, and MEDIAN[PAIR], their median (pass/fail is judged on it).
ratio_medians() {
	local pair a b m r l
	declare -gA RATIOS MEDIAN
	# shellcheck disable=SC2034 # read by the scripts
	for pair in "$@"; do
		IFS=/ read -r a b m <<<"$pair"
		l=''
		for r in $(seq 1 "$REPS"); do l="$l $(ratio "$(val "$r" "$a" 3)" "$(val "$r" "$b" 3)" "${m:-1}")"; done
		RATIOS[$pair]=$l
		MEDIAN[$pair]=$(medlist <<<"$l")
	done
}
medlist() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
passfail() { awk -v x="$1" -v t="$2" 'BEGIN { if (x + 0 >= t + 0) print "PASS"; else print "FAIL" }'; }
us() { awk -v x="$1" 'BEGIN { printf "%.2f", x / 1000 }'; }

# rates_table NOUN CPU NAME...: the table of the rates, one row a NAME (its name: the
# script's kindname NAME): per repetition, median, latency, CPU per request of the
# runs.tsv columns us_* (CPU: what they are, "nginx, mcpgate, wrk"), how busy the
# machine was; then the head of the table of ratios, whose rows the script writes.
rates_table() {
	local noun=$1 cpu=$2 k r c cols=() busy
	shift 2
	for c in $(head -n 1 "$RUNS" | tr '\t' '\n' | grep -n '^us_' | cut -d: -f1); do cols+=("$c"); done
	busy=$((${cols[-1]} + 1))
	printf '| %s | %s | median req/s | p50 / p99 ms (median) | CPU µs/request: %s (median) | machine busy %%, of it others %% (median) |\n' \
		"$noun" "$(for r in $(seq 1 "$REPS"); do printf 'rep %s | ' "$r"; done | sed 's/ | $//')" "$cpu"
	printf '|---|%s---:|---|---|---:|\n' "$(for _ in $(seq 1 "$REPS"); do printf -- '---:|'; done)"
	for k in "$@"; do
		printf '| %s | %s | **%s** | %s / %s | %s | %s, %s |\n' "$(kindname "$k")" \
			"$(for r in $(seq 1 "$REPS"); do printf '%s | ' "$(val "$r" "$k" 3)"; done | sed 's/ | $//')" \
			"$(med "$k" 3)" "$(us "$(med "$k" 10)")" "$(us "$(med "$k" 11)")" \
			"$(for c in "${cols[@]}"; do printf '%s, ' "$(med "$k" "$c")"; done | sed 's/, $//')" \
			"$(med "$k" "$busy")" "$(med "$k" $((busy + 1)))"
	done
	echo
	echo "| ratio | per repetition | median | target | result |"
	echo "|---|---|---:|---|---|"
}

# ratio_row PAIR TEXT [TARGET THRESHOLD]: a row of the table of ratios (ratio_medians
# PAIR): TEXT, the ratio per repetition, the median; with a THRESHOLD, the median in bold,
# the TARGET's text and PASS when the median is at least THRESHOLD.
ratio_row() {
	if [ $# -gt 2 ]; then
		echo "| $2 | ${RATIOS[$1]# } | **${MEDIAN[$1]}** | $3 | $(passfail "${MEDIAN[$1]}" "$4") |"
	else
		echo "| $2 | ${RATIOS[$1]# } | ${MEDIAN[$1]} | — | |"
	fi
}

# report: prints the script's table (kept in TABLE for append_results)
report() {
	TABLE=$(table)
	printf '\n%s\n\n' "$TABLE"
	say "raw rows: $RUNS"
}

# append_results TITLE BUILT IDP NOUN ORDER [LINE...]: appends the dated section of this
# run to $RESULTS (none when BENCH_RESULTS=""): TITLE and the settings in its heading;
# the machine; the sources (BUILT: what follows the default CFLAGS); the stack (IDP:
# what it says of the authorization server); the script's LINEs ("- ..."); the command
# (NOUN: what each warm-up was per; ORDER: the order of a repetition); the table.
append_results() {
	local title=$1 built=$2 idp=$3 noun=$4 order=$5 commit dirty
	shift 5
	[ -n "$RESULTS" ] || return 0
	# shellcheck disable=SC2016 # the backquotes are Markdown
	[ -f "$RESULTS" ] || printf '# Benchmark results\n\nDated sections, appended by the benchmark scripts; the notes under a section are\nwritten by hand. How to run and the caveats: `bench/README.md`.\n' >"$RESULTS"
	commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null)
	dirty=$(git -C "$top" status --porcelain -- src 2>/dev/null | grep -q . && echo " + uncommitted changes in src/")
	{
		echo
		echo "## $(date -u '+%Y-%m-%d %H:%M UTC') — $title, $REPS × ${DURATION} s"
		echo
		echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(uname -sr), load average before $START_LOAD, after $END_LOAD"
		echo "- sources: $SRC at $commit$dirty; built with the default CFLAGS (-g -O2)$built"
		echo "- stack: $(nginx -v 2>&1 | sed 's/.*: //') (1 worker, deploy/nginx recipe, FastCGI keep-alive off) → unix socket → spawn-fcgi, mcpgate $PROCS processes × $WORKERS threads; $idp; $(wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2)"
		[ $# = 0 ] || printf '%s\n' "$@"
		echo "- command: \`BENCH_DURATION=$DURATION BENCH_REPS=$REPS BENCH_WARMUP=$WARMUP BENCH_THREADS=$THREADS BENCH_CONNS=$CONNS BENCH_PROCS=$PROCS BENCH_WORKERS=$WORKERS $KNOBS $ME\` (wrk -t$THREADS -c$CONNS -d${DURATION}s --timeout 5s -s bench/wrk.lua; warm-up ${WARMUP} s per $noun; order $order per repetition)"
		echo
		echo "$TABLE"
	} >>"$RESULTS"
	say "appended to $RESULTS"
}

# post_to URL BODY [HEADER...]: POSTs BODY as JSON (Accept: JSON or an event stream);
# prints "BODY STATUS", the headers in $ROOT/headers.
post_to() {
	local url=$1 body=$2
	shift 2
	curl -s --max-time 20 -D "$ROOT/headers" -w ' %{http_code}' -X POST "$url" \
		-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "$@" --data "$body"
}

# The protocol version the requests name, and a client's initialize
PV=2025-11-25
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"'$PV'","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
# hdr NAME: header NAME of post_to's last answer; sid: its Mcp-Session-Id
hdr() { tr -d '\r' <"$ROOT/headers" | sed -n "s/^$1: *//Ip"; }
sid() { hdr Mcp-Session-Id; }
# body ANSWER: post_to's printout without the status
body() { printf '%s\n' "${1% *}"; }

# open_sessions S...: for each stack S (its base URL BASEOF[S]), a token of its own in
# TOK[S] and the Mcp-Session-Id of one initialize with it in SID[S] (both declared -A by
# the caller).
# shellcheck disable=SC2004 # TOK and SID are the caller's associative arrays
open_sessions() {
	local s
	for s in "$@"; do
		TOK[$s]=$(token_for "${BASEOF[$s]}/mcp") || die "cannot mint a token for stack $s"
		check "stack $s: initialize: 200" "$(post_to "${BASEOF[$s]}/mcp" "$INIT" -H "Authorization: Bearer ${TOK[$s]}")" \
			"\"protocolVersion\":\"$PV\".* 200\$"
		SID[$s]=$(sid)
		[ -n "${SID[$s]}" ] || die "stack $s: initialize gave no Mcp-Session-Id"
	done
}

# up_session URL: a session of its own with the fixture upstream at URL, as a client
# opens it (initialize, then notifications/initialized: the fixture is stateful); sets
# UP_SID and UP_SESS (its Mcp-Session-Id and MCP-Protocol-Version headers, for curl).
up_session() {
	check "upstream $1: initialize: 200" "$(post_to "$1" "$INIT")" ' 200$'
	UP_SID=$(sid)
	[ -n "$UP_SID" ] || die "upstream $1: initialize gave no Mcp-Session-Id"
	UP_SESS=(-H "Mcp-Session-Id: $UP_SID" -H "MCP-Protocol-Version: $PV")
	check "upstream $1: notifications/initialized: 202" \
		"$(post_to "$1" '{"jsonrpc":"2.0","method":"notifications/initialized"}' "${UP_SESS[@]}")" ' 202$'
}

# proc_mem PID: the memory of process PID, tab-separated: VmRSS, RssAnon, RssFile,
# RssShmem (kB, /proc/PID/status), Pss (kB, /proc/PID/smaps_rollup: shared pages split
# among the processes that map them) and its threads
proc_mem() {
	# shellcheck disable=SC2046 # four words
	tsv $(awk '/^(VmRSS|RssAnon|RssFile|RssShmem):/ { printf "%s ", $2 }' "/proc/$1/status") \
		"$(awk '/^Pss:/ { print $2 }' "/proc/$1/smaps_rollup")" "$(awk '/^Threads:/ { print $2 }' "/proc/$1/status")"
}

# perf_kind KIND PIDS SORT: one more run of KIND (the script's kind_run; not reported)
# with perf recording PIDS (blank-separated), its top symbols by SORT in
# $OUT/perf.KIND.txt. BENCH_PERF_CALLS=dwarf (or fp): with call graphs, and where each
# of the top symbols is called from in $OUT/perf.KIND.calls.txt (dwarf unwinds the
# programs built without frame pointers: mcpgate, and redis-server's own frames as far
# as its symbols go; fp is enough for the kernel's).
perf_kind() {
	local k=$1 pids=$2 sort=$3 perf_pid calls=${BENCH_PERF_CALLS:-}
	perf record -q -F 1999 ${calls:+--call-graph "$calls"} -o "$OUT/perf.$k.data" \
		-p "$(tr -s ' ' ',' <<<"$pids" | sed 's/^,//; s/,$//')" -- sleep "$DURATION" >"$OUT/perf.$k.log" 2>&1 &
	perf_pid=$!
	sleep 0.3
	kind_run "$k" "$DURATION" "$OUT/wrk.perf.$k.out"
	wait "$perf_pid"
	say "  perf $k $(kv rps) req/s under perf: $OUT/perf.$k.txt"
	perf report -i "$OUT/perf.$k.data" --no-children --sort "$sort" -g none --stdio 2>/dev/null | grep -v '^#' | grep . |
		head -n 40 >"$OUT/perf.$k.txt"
	[ -z "$calls" ] || perf report -i "$OUT/perf.$k.data" --no-children --sort "$sort" --percent-limit 1 \
		-g caller,1,callee,function,percent --stdio 2>/dev/null | grep -v '^#' | grep . >"$OUT/perf.$k.calls.txt"
}
