# shellcheck shell=bash
# tests/lib/suite.sh — the start of a suite that runs the gateway behind real fronts:
# TAP, deploy/lib.sh, MCPGATE_BIN (default: the in-tree build), suite_need, suite_begin
# and start_ok. Source it after setting $top (the source tree); a suite's start is then
#   suite_begin CMD:PACKAGE... [--node FILE...]
# (below), and what is its own.
: "${top:?set top before sourcing tests/lib/suite.sh}"
. "$top/tests/lib/tap.sh"
# shellcheck disable=SC2034 # read by deploy/lib.sh
MG_TOP=$top
MCPGATE_BIN=${MCPGATE_BIN:-$top/src/mcpgate}
. "$top/deploy/lib.sh"

# suite_need CMD:PACKAGE... [--node FILE...]: installs the commands that are missing and
# checks files under tests/node_modules, or bails out.
suite_need() {
	local cmds=() f
	while [ $# -gt 0 ] && [ "$1" != --node ]; do
		cmds+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	need_cmds "${cmds[@]}" >/dev/null 2>&1 || { echo "Bail out! cannot install ${cmds[*]%%:*}"; exit 1; }
	for f in "$@"; do
		[ -f "$top/tests/node_modules/$f" ] \
			|| { echo "Bail out! tests/node_modules/$f is missing (npm ci --prefix tests)"; exit 1; }
	done
}

# pieces_logged SECRET...: how many 12-character pieces of the SECRETs (tokens, proofs: the
# middle and the end of each) occur in the gateway's, nginx's or the IdP's logs ($T/gw.log,
# $MG_LOG, $MG_FRONT_LOG, nginx's access log, $T/idp.log). A JWT's start is its header,
# the same for many: not a piece.
pieces_logged() {
	local t n found=0 piece
	for t in "$@"; do
		[ -n "$t" ] && [ "$t" != null ] || continue
		n=${#t}
		for piece in "${t:$((n / 2)):12}" "${t: -12}"; do
			grep -qF -- "$piece" "$T/gw.log" "$MG_LOG" "$MG_FRONT_LOG" "$MG_DIR/nginx/access.log" "$T/idp.log" \
				2>/dev/null && found=$((found + 1))
		done
	done
	echo "$found"
}

# gone PID...: those of the processes that are no longer there, or "none".
gone() {
	local pid out=''
	for pid in "$@"; do mg_alive "$pid" || out="$out $pid"; done
	echo "${out:-none}"
}

# mcp_post URL TOKEN BODY [SECS]: the JSON-RPC BODY posted to URL with the bearer TOKEN
# (Accept: application/json); the answer on stdout. SECS: curl's limit (60).
mcp_post() {
	curl -s --max-time "${4:-60}" -H 'Content-Type: application/json' -H 'Accept: application/json' \
		-H "Authorization: Bearer $2" --data-binary "$3" "$1"
}

# start_ok DESC CMD...: runs CMD in this shell (it starts processes that
# stop_all must know about), passes or fails with its output.
start_ok() {
	local desc=$1 out=$MG_DIR/start.$RANDOM.out
	shift
	if "$@" >"$out" 2>&1; then
		pass "$desc"
		return 0
	fi
	fail "$desc" "$(tail -n 30 "$out")"
	return 1
}

# start_gateway PORT DESC [PROCS [WORKERS]]: mcpgate -t on $T/gw.conf, then PROCS x
# WORKERS (2 x 2) mcpgate processes of it under spawn-fcgi on $T/mcpgate.sock behind
# nginx on PORT (deploy/lib.sh); a passing TAP line saying DESC, or a bail-out saying why.
start_gateway() {
	local out
	out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1) || bail "mcpgate -t accepts the configuration" "$out"
	if start_mcpgate_fcgi "$T/mcpgate.sock" "$T/gw.conf" "${3:-2}" "${4:-2}" >> "$T/start.out" 2>&1 \
		&& start_nginx "$1" >> "$T/start.out" 2>&1; then
		pass "$2"
	else
		bail "nginx + spawn-fcgi + mcpgate started" "$(tail -n 20 "$T/start.out")"
	fi
}

# The MCP fixture upstream (tests/upstream/fixture.mjs), as many as a suite starts, each
# under a NAME of the suite's: its ready file $T/NAME.ready, its stderr (the requests it
# logs) $T/NAME.log, its pid FIXTURE_PID[NAME], its URL FIXTURE_URL[NAME].
#   start_fixture NAME ARG...   fixture.mjs ARG... (--port, --name, what it serves) in the
#                               background, stopped by stop_all
#   wait_fixture NAME           waits until it is ready (60 s at most: node on a loaded
#                               machine) and sets FIXTURE_URL[NAME]; fails when it did not start
declare -A FIXTURE_PID=() FIXTURE_URL=()
start_fixture() {
	local name=$1
	shift
	rm -f "$T/$name.ready"
	node "$top/tests/upstream/fixture.mjs" --ready-file "$T/$name.ready" "$@" > /dev/null 2> "$T/$name.log" &
	FIXTURE_PID[$name]=$!
	mg_track "${FIXTURE_PID[$name]}"
	disown "${FIXTURE_PID[$name]}"	# no "Killed" notice when a suite kills one on purpose
}
wait_fixture() {
	wait_until 60 fixture_settled "$1"
	FIXTURE_URL[$1]=$(sed -n 's/^ready //p' "$T/$1.ready" 2>/dev/null)
	[ -n "${FIXTURE_URL[$1]}" ]
}
fixture_settled() { [ -s "$T/$1.ready" ] || ! mg_alive "${FIXTURE_PID[$1]}"; }

# fixture_and_idp NAME ARG...: how most suites begin: the fixture NAME (start_fixture NAME
# ARG...), a free port for the front, GW_PORT, and the gateway's URL behind it, GW_URL
# (http://127.0.0.1:GW_PORT/mcp), the authorization server for that URL (start_idp, with
# IDP_OPTS), then the fixture ready (FIXTURE_URL[NAME]) or a bail-out. The two node
# servers start at the same time.
fixture_and_idp() {
	local name=$1
	start_fixture "$@"
	GW_PORT=$(free_port)
	GW_URL=http://127.0.0.1:$GW_PORT/mcp
	start_idp "$GW_URL"
	wait_fixture "$name" || bail "the fixture upstream started" "$(tail -n 5 "$T/$name.log")"
}

# suite_begin NEED... [--node FILE...]: what a suite with real servers does first:
# suite_need NEED... [--node FILE...]; MCPGATE_BIN must be an executable; a temp dir of
# its own, $T (deploy/lib.sh's mg_init); the authorization server's, node's and the
# waiting helpers (tests/lib/idp.sh, node.sh, wait.sh); and on exit suite_end (a suite
# with more to stop sets an EXIT trap of its own in its place).
suite_begin() {
	suite_need "$@"
	[ -x "$MCPGATE_BIN" ] || { echo "Bail out! $MCPGATE_BIN is not an executable"; exit 1; }
	mg_init || exit 1
	# shellcheck disable=SC2034 # the suite's
	T=$MG_DIR
	. "$top/tests/lib/idp.sh"
	. "$top/tests/lib/node.sh"
	. "$top/tests/lib/wait.sh"
	trap suite_end EXIT
}

# suite_end: stops the node helper, the authorization server and what deploy/lib.sh's
# start_* functions started (each stop does nothing when that was not started).
suite_end() {
	stop_node
	stop_idp
	stop_all
}
