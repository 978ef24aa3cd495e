#!/usr/bin/env bash
# bench/cgi.sh — what one CGI run of mcpgate costs, and what a FastCGI process holds.
#
# The programs, each run by hand as a CGI program with the environment Apache mod_cgid
# gives it (bench/run's G and E) and the request body on stdin:
#   G   mcpgate answering tools/list of BENCH_TOOLS (50) tools from its cache: the token
#       and the catalog already in the state file (a run needs no network)
#   B   the same with mcpgate built from the git revision BENCH_BASE (when set: before and
#       after in one run; its own configuration and state file, primed the same way)
#   E   bench/hello_cgi.c writing the bytes G answered (the hello-world CGI program)
#   V   mcpgate --version (the process start alone); BV the same of B
#   T   /bin/true (a fork and an exec, the floor of this machine)
# For each: the shared objects a run maps (LD_DEBUG=files: the dynamic loader's link
# maps, those loaded with dlopen included), whether libcurl is one of them, the
# instructions of one run (valgrind --tool=callgrind: the whole process, the dynamic
# loader's included; its top functions in $OUT/callgrind.KIND.txt), the largest resident
# size (GNU time), and the CPU and the time of a run (perf stat's task-clock and elapsed
# time over BENCH_RUNS runs in a row from sh, a fork and an exec each as mod_cgid's;
# BENCH_REPS repetitions, the programs interleaved, medians). Every answer is checked:
# G's and B's are 200 with the BENCH_TOOLS tools, and no run asks the IdP.
#
# Then the memory of a FastCGI process (BENCH_PROCS processes × BENCH_WORKERS threads
# under spawn-fcgi, requests from cgi-fcgi, the same configuration and state file):
# VmRSS, RssAnon, RssFile and Pss at rest, after BENCH_REQUESTS cached tools/list, and
# after a request that needs the network (an unknown token: one introspection), then
# BENCH_REQUESTS more; each figure 1.5 s after the last request (the idle trim).
#
# Usage: bench/cgi.sh                (as root on Debian 12: installs what it lacks)
# Settings (environment):
#   BENCH_REPS=5  BENCH_RUNS=20      repetitions; runs per task-clock measurement
#   BENCH_TOOLS=50                   tools in the catalog (at least 19: the fixture's own)
#   BENCH_BASE=REV                   also measure mcpgate built from git revision REV
#   BENCH_CALLGRIND=1                count instructions (0: skip)
#   BENCH_PROCS=2 BENCH_WORKERS=2 BENCH_REQUESTS=200   the FastCGI processes (PROCS=0: none)
#   BENCH_SRC=worktree               build from the working tree (default), or HEAD
#   BENCH_RESULTS=bench/RESULTS.md   where the dated section is appended ("" = nowhere)
#   MG_KEEP=1                        keep the temp dir
# Everything goes to bench/out/cgi/ (gitignored).
{
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$here/out/cgi
RUNS_N=${BENCH_RUNS:-20}
REPS=${BENCH_REPS:-5}
TOOLS=${BENCH_TOOLS:-50}
BASE_REV=${BENCH_BASE:-}
CALLGRIND=${BENCH_CALLGRIND:-1}
REQUESTS=${BENCH_REQUESTS:-200}
CACHE_TTL=3600
T0=$SECONDS
if ! [[ $TOOLS =~ ^[0-9]+$ ]] || [ "$TOOLS" -lt "$OWN_TOOLS" ]; then
	die "BENCH_TOOLS must be a number, at least $OWN_TOOLS (the fixture's own tools)"
fi

# --- What it needs, the binaries ------------------------------------------------------
setup
need_sdk
need_pkgs valgrind time linux-perf >>"$OUT/install.log" 2>&1 || die "cannot install valgrind, time, linux-perf (see $OUT/install.log)"
build_mcpgate
mkdir -p "$OUT/bin"
cc -O2 -Wall -Wextra -o "$OUT/bin/hello.cgi" "$here/hello_cgi.c" || die "cc bench/hello_cgi.c failed"
BASE_BIN=
if [ -n "$BASE_REV" ]; then
	rev=$(git -C "$top" rev-parse --verify "$BASE_REV^{commit}") || die "BENCH_BASE=$BASE_REV: no such revision"
	BASE_BIN=$OUT/base/build/src/mcpgate
	if [ "$(cat "$OUT/base/rev" 2>/dev/null)" != "$rev" ] || [ ! -x "$BASE_BIN" ]; then
		say "building mcpgate at $BASE_REV ($rev) into $OUT/base"
		rm -rf "$OUT/base"
		mkdir -p "$OUT/base/src" "$OUT/base/build"
		{
			git -C "$top" archive "$rev" | tar -xf - -C "$OUT/base/src" &&
				(cd "$OUT/base/src" && autoreconf -fi) &&
				(cd "$OUT/base/build" && ../src/configure -q && make -j"$(nproc)" src/mcpgate)
		} >"$OUT/base/build.log" 2>&1 || { tail -n 20 "$OUT/base/build.log" >&2; die "the build of $BASE_REV failed"; }
		echo "$rev" >"$OUT/base/rev"
	fi
fi

# --- The upstream, the authorization server, the configurations ----------------------
mkdir -p "$OUT/tmp"
TMPDIR=$OUT/tmp bench_root '*/mcpgate.log' '*/mcpgate.conf' idp.log 'up-*.log' 'fcgi.log'
start_upstreams "$TOOLS" a
PORT=8080	# nothing listens: the resource is only the audience of the token
RESOURCE=http://127.0.0.1:$PORT/cgi-bin/mcpgate/mcp
start_idp "$RESOURCE"
TOKEN=$(token_for "$RESOURCE") || die "cannot mint a token"
(umask 077 && printf '%s\n' "$TOKEN" >"$ROOT/token")	# for runs by hand in a kept temp dir (MG_KEEP=1)
LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
printf '%s' "$LIST" >"$ROOT/body"
# conf DIR: DIR/mcpgate.conf (its state file in DIR): one page of every tool, the
# catalog and the token cached for an hour
conf() {
	mkdir -p "$1"
	CONF_GATEWAY="page-size = $TOOLS
catalog-ttl = 3600" CONF_MORE=$(printf '[upstream "a"]\nurl = %s\nprefix = a_\ntimeout-ms = 5000\n' "${UP_URL[a]}") \
		write_conf "$1" "http://127.0.0.1:$PORT/cgi-bin/mcpgate"
}
conf "$ROOT/G"
[ -z "$BASE_BIN" ] || conf "$ROOT/B"
declare -A PROG=([G]=$BIN [V]=$BIN [E]=$OUT/bin/hello.cgi [T]=/bin/true) CONFOF=([G]=$ROOT/G [E]=$ROOT/G [V]=$ROOT/G [T]=$ROOT/G)
KINDS="G E V T"
if [ -n "$BASE_BIN" ]; then
	PROG[B]=$BASE_BIN PROG[BV]=$BASE_BIN CONFOF[B]=$ROOT/B CONFOF[BV]=$ROOT/B
	KINDS="G B E V BV T"
fi
args_of() { case $1 in V | BV) echo --version ;; esac; }

# cgi_env KIND CMD...: CMD with the environment Apache gives the CGI program for the
# tools/list (its body on stdin from the caller), the token (TOK, default TOKEN) and the
# session (SID[KIND's configuration], when it has one)
declare -A SID=()
# (but GATEWAY_INTERFACE for --version: a CGI run takes no arguments, it would serve)
cgi_env() {
	local k=$1 s=() gi=(GATEWAY_INTERFACE=CGI/1.1)
	shift
	[ -z "${SID[${CONFOF[$k]}]:-}" ] || s=("HTTP_MCP_SESSION_ID=${SID[${CONFOF[$k]}]}")
	case $k in V | BV) gi=() ;; esac
	env -i PATH=/usr/local/bin:/usr/bin:/bin "${gi[@]}" SERVER_PROTOCOL=HTTP/1.1 \
		REQUEST_METHOD=POST SCRIPT_NAME=/cgi-bin/mcpgate PATH_INFO=/mcp REQUEST_URI=/cgi-bin/mcpgate/mcp QUERY_STRING= \
		REQUEST_SCHEME=http SERVER_SOFTWARE=Apache SERVER_NAME=127.0.0.1 SERVER_ADDR=127.0.0.1 SERVER_PORT="$PORT" \
		REMOTE_ADDR=127.0.0.1 REMOTE_PORT=40000 HTTP_HOST="127.0.0.1:$PORT" CONTENT_TYPE=application/json \
		CONTENT_LENGTH="${LEN:-${#LIST}}" HTTP_ACCEPT='application/json, text/event-stream' \
		HTTP_AUTHORIZATION="Bearer ${TOK:-$TOKEN}" HTTP_MCP_PROTOCOL_VERSION="$PV" "${s[@]}" \
		MCPGATE_CONFIG="${CONFOF[$k]}/mcpgate.conf" BENCH_ANSWER="$ROOT/answer.G" "$@"
}
# answer_body FILE: the body of a CGI answer (after the blank line)
answer_body() { sed '1,/^\r$/d' "$1"; }
# prime KIND: initialize (introspects the token: cached), then tools/list twice (the
# catalog fetched once, then from the state file); the second must not reach the IdP
prime() {
	local k=$1 i0 out=$ROOT/prime.$1
	printf '%s' "$INIT" | LEN=${#INIT} cgi_env "$k" "${PROG[$k]}" >"$out.init" 2>"$out.log" || die "$k: initialize failed"
	head -n 1 "$out.init" | grep -q '^Status: 200' || die "$k: initialize: $(head -n 1 "$out.init")"
	SID[${CONFOF[$k]}]=$(tr -d '\r' <"$out.init" | sed -n 's/^Mcp-Session-Id: *//Ip')
	cgi_env "$k" "${PROG[$k]}" <"$ROOT/body" >"$out.1" 2>>"$out.log" || die "$k: tools/list failed"
	i0=$(idp_count)
	cgi_env "$k" "${PROG[$k]}" <"$ROOT/body" >"$out.2" 2>>"$out.log" || die "$k: tools/list failed"
	[ "$(idp_count)" = "$i0" ] || die "check failed: $k: a cached tools/list asked the IdP"
	answer_ok "$k" "$out.2"
}
# answer_ok KIND FILE: a 200 with TOOLS tools
answer_ok() {
	local n
	head -n 1 "$2" | grep -q '^Status: 200' || die "check failed: $1: $(head -n 1 "$2")"
	n=$(answer_body "$2" | jq '.result.tools | length' 2>/dev/null)
	[ "$n" = "$TOOLS" ] || die "check failed: $1: $n tools, not $TOOLS"
}
prime G
cp "$ROOT/prime.G.2" "$ROOT/answer.G"
[ -z "$BASE_BIN" ] || prime B
cgi_env E "${PROG[E]}" <"$ROOT/body" >"$ROOT/answer.E" || die "hello.cgi failed"
cmp -s "$ROOT/answer.E" "$ROOT/answer.G" || die "check failed: hello.cgi's answer is not mcpgate's"
say "primed: the token and the catalog of $TOOLS tools cached in the state file"

# --- One run of each, by hand ---------------------------------------------------------
declare -A LIBS=() CURL=() IR=() MAXRSS=()
for k in $KINDS; do
	# shellcheck disable=SC2046
	cgi_env "$k" env LD_DEBUG=files "${PROG[$k]}" $(args_of "$k") <"$ROOT/body" >"$ROOT/out.$k" 2>"$OUT/ld.$k.log"
	LIBS[$k]=$(grep -c 'generating link map' "$OUT/ld.$k.log")
	CURL[$k]=$(grep -q 'file=libcurl.*generating link map' "$OUT/ld.$k.log" && echo yes || echo no)
	# shellcheck disable=SC2046
	MAXRSS[$k]=$(cgi_env "$k" /usr/bin/time -f '%M' -o "$OUT/time.$k" "${PROG[$k]}" $(args_of "$k") <"$ROOT/body" >/dev/null 2>&1; cat "$OUT/time.$k")
	IR[$k]=n/a
	if [ "$CALLGRIND" != 0 ]; then
		rm -f "$OUT/callgrind.$k.out"
		# shellcheck disable=SC2046
		cgi_env "$k" valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.$k.out" "${PROG[$k]}" $(args_of "$k") \
			<"$ROOT/body" >"$ROOT/out.cg.$k" 2>"$OUT/callgrind.$k.log" || say "valgrind on $k failed (see $OUT/callgrind.$k.log)"
		if [ -s "$OUT/callgrind.$k.out" ]; then
			IR[$k]=$(awk '/^(summary|totals):/ { print $2; exit }' "$OUT/callgrind.$k.out")
			callgrind_annotate --inclusive=no "$OUT/callgrind.$k.out" 2>/dev/null | head -n 45 >"$OUT/callgrind.$k.txt"
		fi
	fi
	case $k in G | B) answer_ok "$k" "$ROOT/out.$k"; [ "$CALLGRIND" = 0 ] || answer_ok "$k (callgrind)" "$ROOT/out.cg.$k" ;; esac
	say "  $k: ${LIBS[$k]} shared objects (libcurl: ${CURL[$k]}), ${IR[$k]} instructions, largest RSS ${MAXRSS[$k]} kB"
done

# --- The CPU of a run: RUNS_N runs in a row, REPS times, interleaved -------------------
CPU_TSV=$OUT/cpu.tsv
tsv rep kind task_ms elapsed_ms >"$CPU_TSV"
i0=$(idp_count)
for r in $(seq 1 "$REPS"); do
	for k in $KINDS; do
		pf=$OUT/perf.$k.$r
		# shellcheck disable=SC2016,SC2046 # sh's own variables
		cgi_env "$k" perf stat -x, -e task-clock -o "$pf" -- \
			sh -c 'n=$1 body=$2 i=0; shift 2; while [ $i -lt "$n" ]; do "$@" <"$body" >/dev/null 2>&1 || exit 1; i=$((i + 1)); done' \
			sh "$RUNS_N" "$ROOT/body" "${PROG[$k]}" $(args_of "$k") || die "$k: a run failed"
		t0=$EPOCHREALTIME
		# shellcheck disable=SC2016,SC2046
		cgi_env "$k" sh -c 'n=$1 body=$2 i=0; shift 2; while [ $i -lt "$n" ]; do "$@" <"$body" >/dev/null 2>&1 || exit 1; i=$((i + 1)); done' \
			sh "$RUNS_N" "$ROOT/body" "${PROG[$k]}" $(args_of "$k") || die "$k: a run failed"
		t1=$EPOCHREALTIME
		tsv "$r" "$k" "$(awk -F, -v n="$RUNS_N" '$3 == "task-clock" { printf "%.2f", $1 / n; exit }' "$pf")" \
			"$(awk -v a="$t0" -v b="$t1" -v n="$RUNS_N" 'BEGIN { printf "%.2f", (b - a) * 1000 / n }')" >>"$CPU_TSV"
	done
	say "  rep $r: $(awk -F'\t' -v r="$r" '$1 == r { printf "%s %s ms  ", $2, $3 }' "$CPU_TSV")"
done
[ "$(idp_count)" = "$i0" ] || die "check failed: the timed runs asked the IdP"
# the last answer of each timed mcpgate kind, checked
for k in G B; do
	[ -n "${PROG[$k]:-}" ] || continue
	cgi_env "$k" "${PROG[$k]}" <"$ROOT/body" >"$ROOT/out.last.$k" 2>/dev/null
	answer_ok "$k" "$ROOT/out.last.$k"
done

# --- Memory of a FastCGI process ------------------------------------------------------
MEM=$OUT/mem.tsv
tsv when kind pid vmrss_kb rssanon_kb rssfile_kb rssshmem_kb pss_kb threads libcurl >"$MEM"
declare -A FPIDS=()
# fcgi_req KIND N [PREFIX]: N tools/list to KIND's FastCGI processes (cgi-fcgi); each a 200
# with the tools, or with tokens PREFIX-1 ... PREFIX-N (unknown to the IdP: each one
# introspected) a 401
fcgi_req() {
	local k=$1 n=$2 tok=${3:-} i t out=$ROOT/fcgi.$1.out
	for i in $(seq 1 "$n"); do
		t=${tok:+$tok-$i}
		TOK=${t:-$TOKEN} cgi_env "$k" cgi-fcgi -bind -connect "$ROOT/fcgi-$k/mcpgate.sock" <"$ROOT/body" >"$out" 2>/dev/null
		if [ -n "$tok" ]; then
			head -n 1 "$out" | grep -q '^Status: 401' || die "check failed: $k (FastCGI): an unknown token: $(head -n 1 "$out")"
		else
			answer_ok "$k (FastCGI, request $i)" "$out"
		fi
	done
}
mem_of() { # WHEN KIND
	local p
	sleep 1.5
	for p in ${FPIDS[$2]}; do
		tsv "$1" "$2" "$p" "$(proc_mem "$p")" "$(grep -q libcurl "/proc/$p/maps" && echo yes || echo no)" >>"$MEM"
	done
}
FKINDS=G
[ -z "$BASE_BIN" ] || FKINDS="G B"
if [ "$PROCS" != 0 ]; then
	for k in $FKINDS; do
		mkdir -p "$ROOT/fcgi-$k"
		MG_DIR=$ROOT/fcgi-$k MG_LOG=$ROOT/fcgi.log MCPGATE_BIN=${PROG[$k]} \
			start_mcpgate_fcgi "$ROOT/fcgi-$k/mcpgate.sock" "${CONFOF[$k]}/mcpgate.conf" "$PROCS" "$WORKERS" ||
			die "the FastCGI processes of $k did not start"
		MG_DIR=$ROOT
		FPIDS[$k]=$MG_FCGI_PIDS
	done
	for k in $FKINDS; do mem_of rest "$k"; done
	for k in $FKINDS; do fcgi_req "$k" "$REQUESTS"; done
	for k in $FKINDS; do mem_of cached "$k"; done
	# one unknown token per process (spawn-fcgi's processes take turns unevenly: enough
	# of them that each process likely gets one), then the cached lists again
	for k in $FKINDS; do fcgi_req "$k" $((PROCS * 4)) "bench-unknown-$RANDOM$RANDOM"; fcgi_req "$k" "$REQUESTS"; done
	for k in $FKINDS; do mem_of network "$k"; done
fi

# --- Report ---------------------------------------------------------------------------
medcol() { awk -F'\t' -v k="$1" -v c="$2" '$1 != "rep" && $2 == k { print $c }' "$CPU_TSV" | medlist; }
spread() { awk -F'\t' -v k="$1" -v c="$2" '$1 != "rep" && $2 == k { print $c }' "$CPU_TSV" | sort -g | sed -n '1p;$p' | tr '\n' ' ' | sed 's/ $//; s/ /–/'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "—" }'; }
kindname() {
	case $1 in
	G) echo "G mcpgate, tools/list from the cache" ;;
	B) echo "B mcpgate at $BASE_REV, the same" ;;
	E) echo "E hello.cgi, the same bytes" ;;
	V) echo "V mcpgate --version" ;;
	BV) echo "BV mcpgate at $BASE_REV --version" ;;
	T) echo "T /bin/true" ;;
	esac
}
mib() { awk -v x="$1" 'BEGIN { printf "%.1f", x / 1024 }'; }
memrow() { # WHEN KIND TEXT: the largest of each column over KIND's processes
	awk -F'\t' -v w="$1" -v k="$2" -v t="$3" '$1 == w && $2 == k {
		for (c = 4; c <= 8; c++) if ($c > m[c]) m[c] = $c; s += $8; n++; cu = cu (cu == "" ? "" : " ") $10 }
		END { if (n) printf "| %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %s |\n", t, n, m[4] / 1024, m[5] / 1024, m[6] / 1024, m[8] / 1024, s / 1024, cu }' "$MEM"
}
table() {
	echo "| program | shared objects mapped (libcurl) | instructions (callgrind, whole process) | ÷ hello.cgi | CPU ms a run (task-clock, median, range) | ms a run, elapsed (median) | largest RSS MiB |"
	echo "|---|---|---:|---:|---:|---:|---:|"
	for k in $KINDS; do
		echo "| $(kindname "$k") | ${LIBS[$k]} (${CURL[$k]}) | ${IR[$k]} | $(div "${IR[$k]}" "${IR[E]}") | $(medcol "$k" 3) ($(spread "$k" 3)) | $(medcol "$k" 4) | $(mib "${MAXRSS[$k]}") |"
	done
	echo
	echo "| ratio (medians; a CGI run's cost, so the ratio of rates it allows) | value |"
	echo "|---|---:|"
	echo "| hello.cgi's CPU ÷ mcpgate's (E / G: bench/run's row 5 measures G / E in requests per second under Apache; target ≥ 0.7) | **$(div "$(medcol E 3)" "$(medcol G 3)")** |"
	echo "| the same, elapsed time | $(div "$(medcol E 4)" "$(medcol G 4)") |"
	if [ -n "$BASE_BIN" ]; then
		echo "| hello.cgi's CPU ÷ mcpgate's at $BASE_REV (E / B) | $(div "$(medcol E 3)" "$(medcol B 3)") |"
		echo "| mcpgate's CPU a run at $BASE_REV ÷ now (B / G) | **$(div "$(medcol B 3)" "$(medcol G 3)")** |"
		echo "| its instructions a run at $BASE_REV ÷ now | **$(div "${IR[B]}" "${IR[G]}")** |"
		echo "| \`--version\`: CPU at $BASE_REV ÷ now (BV / V) | $(div "$(medcol BV 3)" "$(medcol V 3)") |"
	fi
	echo "| mcpgate's CPU a run less /bin/true's (G − T), ms | $(awk -v a="$(medcol G 3)" -v b="$(medcol T 3)" 'BEGIN { printf "%.2f", a - b }') |"
	echo "| hello.cgi's less /bin/true's (E − T), ms | $(awk -v a="$(medcol E 3)" -v b="$(medcol T 3)" 'BEGIN { printf "%.2f", a - b }') |"
	[ "$PROCS" != 0 ] || return 0
	echo
	echo "Memory of each FastCGI process ($PROCS processes × $WORKERS threads; MiB, the largest of the processes; Pss: shared pages split among the processes mapping them):"
	echo
	echo "| FastCGI processes, when | n | VmRSS | RssAnon | RssFile | Pss | Pss, all | libcurl mapped |"
	echo "|---|---:|---:|---:|---:|---:|---:|---|"
	for k in $FKINDS; do
		local who=mcpgate
		[ "$k" = G ] || who="mcpgate at $BASE_REV"
		memrow rest "$k" "$who, at rest (started, no request)"
		memrow cached "$k" "$who, after $REQUESTS cached tools/list"
		memrow network "$k" "$who, after $((PROCS * 4)) introspections (unknown tokens) and $REQUESTS more"
	done
}
TABLE=$(table)
printf '\n%s\n\n' "$TABLE"
say "raw: $CPU_TSV $MEM $OUT/callgrind.*.txt"
if [ -n "$RESULTS" ]; then
	commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null)
	dirty=$(git -C "$top" status --porcelain -- src configure.ac Makefile.am 2>/dev/null | grep -q . && echo " + uncommitted changes")
	{
		echo
		echo "## $(date -u '+%Y-%m-%d %H:%M UTC') — cgi, $REPS × $RUNS_N runs"
		echo
		echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(uname -sr), load average before $START_LOAD, after $(cut -d' ' -f1-3 /proc/loadavg)"
		echo "- sources: $SRC at $commit$dirty; built with the default CFLAGS (-g -O2)$([ -z "$BASE_BIN" ] || echo "; B: $BASE_REV ($(git -C "$top" rev-parse --short "$BASE_REV")), the same way")"
		echo "- request: tools/list of $TOOLS tools ($(wc -c <"$ROOT/answer.G") bytes answered), the environment Apache mod_cgid gives mcpgate (bench/run's G), the body on stdin; the token and the catalog cached in the state file (oidc-provider $(oidc_version), tests/upstream/fixture.mjs --json); no run asked the IdP"
		echo "- command: \`BENCH_REPS=$REPS BENCH_RUNS=$RUNS_N BENCH_TOOLS=$TOOLS${BASE_REV:+ BENCH_BASE=$BASE_REV} BENCH_CALLGRIND=$CALLGRIND BENCH_PROCS=$PROCS BENCH_WORKERS=$WORKERS BENCH_REQUESTS=$REQUESTS BENCH_SRC=$SRC $ME\` (order $KINDS per repetition; $((SECONDS - T0)) s in all)"
		echo
		echo "$TABLE"
	} >>"$RESULTS"
	say "appended to $RESULTS"
fi
exit 0
}
