#!/usr/bin/env bash
# tests/fronts/demo.sh — the README's `deploy/demo` stays true:
#   1. deploy/demo --check with the built binary answers every endpoint, shows who sees
#      which tools (acme, acme with mcp:admin, the read-only tenant beta), and its
#      step-up, read-only and rate-limit commands give the 403s, the result and the 429;
#   2. deploy/demo (interactive), run as printed: nothing it starts listens beyond
#      127.0.0.1 (the gateway, the upstream, the authorization server: ss); its
#      step-up, read-only, rate-limit, explain and MCP Inspector commands, pasted as
#      printed, do what it says; Ctrl-C
#      (SIGINT to its whole process group, as a terminal sends it) says it is stopping,
#      exits 0 and stops everything it started; so does `kill -INT PID` when it was
#      started in the background without job control (SIGINT ignored on entry), and
#      `kill -TERM PID`;
#   3. deploy/demo --check in a fresh copy of the tree (the files git would
#      commit) builds mcpgate itself and passes.
# Prints TAP; exits non-zero on failure. Env: MCPGATE_BIN (default src/mcpgate).
# The Inspector command is run as printed (npx, the version pinned): the first run on a
# machine fetches that package from the npm registry; later runs take it from npm's cache.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"

mg_init || exit 1
if [ ! -x "$MCPGATE_BIN" ]; then
	fail "mcpgate binary at $MCPGATE_BIN (build it, or set MCPGATE_BIN)"
	tap_done
	exit 1
fi

# flat_out TEXT: its lines joined by " | ".
flat_out() { sed ':a;N;$!ba;s/\n/ | /g' <<<"$1"; }
# codes TEXT: the HTTP status codes of its HTTP/ lines, blank-separated.
codes() { grep -o '^HTTP/[0-9.]* [0-9]*' <<<"$1" | cut -d' ' -f2 | paste -sd' '; }
LIMITED='HTTP/[0-9.]+ 429 [^|]*\| Retry-After: [0-9]+ \| RateLimit-Policy: "token";q=5;w=60 \| RateLimit: "token";r=0;t=[0-9]+'
EXPLAINED='  token: 5/60 s \(from [^ ]*mcpgate.conf:[0-9]+: \[tenant "beta"\] limit-token\); keyed by this token'

# 1. --check with the binary under test (no build: the tree may be a VPATH
#    build's source, which must stay unconfigured).
port=$(free_port)
if DEMO_PORT=$port DEMO_NO_BUILD=1 MCPGATE_BIN=$MCPGATE_BIN timeout 300 \
	"$top/deploy/demo" --check >"$MG_DIR/check.out" 2>&1; then
	pass "deploy/demo --check exits 0"
else
	fail "deploy/demo --check exits 0" "$(tail -n 30 "$MG_DIR/check.out")"
fi
out=$(cat "$MG_DIR/check.out")
like "deploy/demo --check prints the health curl line" "$out" "curl -s http://127.0.0.1:$port/mcp/health"
like "deploy/demo --check shows the 401 challenge" "$out" 'WWW-Authenticate: Bearer resource_metadata='
n_acme=$(sed -n 's/^  acme, scope mcp:tools  *\([0-9]*\): .*/\1/p' <<<"$out")
n_admin=$(sed -n 's/^  acme, scope mcp:tools mcp:admin  *\([0-9]*\): .*/\1/p' <<<"$out")
n_beta=$(sed -n 's/^  beta (read-only tenant)  *\([0-9]*\): .*/\1/p' <<<"$out")
like "who sees which tools: beta (read-only) fewer than acme, acme fewer than with mcp:admin" \
	"beta=$n_beta acme=$n_acme admin=$n_admin" '^beta=[0-9]+ acme=[0-9]+ admin=[0-9]+$'
check "… counted: 0 < beta < acme < admin" test "${n_beta:-0}" -gt 0 -a "${n_beta:-0}" -lt "${n_acme:-0}" -a "${n_acme:-0}" -lt "${n_admin:-0}"
like "… beta's list lacks the tool that is not read-only" "$(grep '^  beta (read-only tenant)' <<<"$out")" '^[^|]*ev_echo'
unlike "… (ev_toggle-simulated-logging)" "$(grep '^  beta (read-only tenant)' <<<"$out")" 'ev_toggle-simulated-logging'
stepped=$(sed -n '/^\$ curl ... tools\/call ev_get-env (acme, mcp:tools)$/,/^$/p' <<<"$out" | tr -d '\r')
like "step-up: acme's mcp:tools token gets 403 insufficient_scope naming mcp:admin" "$(flat_out "$stepped")" \
	'HTTP/[0-9.]+ 403 [^|]*\| WWW-Authenticate: Bearer .*scope="mcp:tools mcp:admin", error="insufficient_scope"'
like "… and the mcp:admin token gets the result" "$(sed -n '/ev_get-env (acme, mcp:tools mcp:admin)$/{n;p}' <<<"$out")" '"result":\{"content"'
like "read-only: beta's call of a tool that is not read-only is 403 read_only_mode" \
	"$(flat_out "$(sed -n '/ev_toggle-simulated-logging (beta)$/,/^$/p' <<<"$out")")" 'HTTP/[0-9.]+ 403 .*"error":"read_only_mode"'
limited=$(sed -n '/^\$ for i in 1 2 3 4 5 6/,/^$/p' <<<"$out" | tr -d '\r')
is "deploy/demo --check: its rate-limit loop: five 200s, then a 429" "$(codes "$limited")" "200 200 200 200 200 429"
like "… the 429 with Retry-After and RateLimit headers of beta's token limit" "$(flat_out "$limited")" "$LIMITED"
like "… and explain's word on it: 5/60 s from [tenant \"beta\"] limit-token" "$out" "$EXPLAINED"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/mcp/health")
is "after --check nothing listens on its port" "$code" 000

# start_demo OUT [setsid|bg]: starts the interactive demo (DEMO_PORT=$port) → $demo.
# Default: with job control (its own process group, SIGINT at its default, as in a
# terminal); bg: in the background without job control (SIGINT ignored on entry).
start_demo() {
	local out=$1 how=${2:-}
	if [ "$how" = bg ]; then
		DEMO_PORT=$port DEMO_NO_BUILD=1 MCPGATE_BIN=$MCPGATE_BIN "$top/deploy/demo" >"$out" 2>&1 &
		demo=$!
	else
		set -m
		DEMO_PORT=$port DEMO_NO_BUILD=1 MCPGATE_BIN=$MCPGATE_BIN "$top/deploy/demo" >"$out" 2>&1 &
		demo=$!
		set +m
	fi
	mg_track "$demo"
	for _ in $(seq 1 1200); do	# 120 s: an IdP, an upstream and nginx on a loaded machine
		grep -q 'Press Ctrl-C' "$out" && break
		mg_alive "$demo" || break
		sleep 0.1
	done
	grep -q 'Press Ctrl-C' "$out"
}

# stopped_by LABEL OUT PIDS: the demo ($demo) is gone within 30 s, exited 0 saying it
# was stopping, and PIDS and its port are gone too.
stopped_by() {
	local label=$1 out=$2 pids=$3 rc left pid
	for _ in $(seq 1 300); do
		mg_alive "$demo" || break
		sleep 0.1
	done
	if mg_alive "$demo"; then
		fail "deploy/demo exits on $label"
		return
	fi
	wait "$demo" 2>/dev/null
	rc=$?
	is "deploy/demo exits 0 on $label" "$rc" 0
	like "… saying it is stopping" "$(cat "$out")" "^demo: SIG(INT|TERM): stopping "
	unlike "… not that nginx exited" "$(cat "$out")" 'nginx exited'
	# (a process killed a moment ago may take that moment to go on a loaded machine)
	for _ in $(seq 1 100); do
		left=
		for pid in $pids; do
			mg_alive "$pid" && left="$left $pid"
		done
		[ -n "$left" ] || break
		sleep 0.1
	done
	is "$label stopped nginx and every mcpgate process" "$left" ""
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/mcp/health")
	is "after $label nothing listens on its port" "$code" 000
}

# 2a. Ctrl-C: the commands it prints, then SIGINT to its process group.
port=$(free_port)
out=$MG_DIR/demo-int.out
if start_demo "$out"; then
	pass "deploy/demo starts and waits"
	printed=$(cat "$out")
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$port/mcp/health")
	is "deploy/demo serves /mcp/health on DEMO_PORT" "$code" 200
	pids=$(sed -n 's/^ *processes *mcpgate \(.*\), nginx \([0-9]*\)$/\1 \2/p' <<<"$printed")
	like "deploy/demo names its processes" "$pids" '^[0-9]+( [0-9]+)+$'
	like "it says how to stop it: Ctrl-C or kill -INT of its pid" "$printed" "Press Ctrl-C to stop \\(or kill -INT $demo\\)\\."
	# Nothing listens beyond loopback: the listening sockets of the gateway's port, the
	# upstream's and the authorization server's are on 127.0.0.1 (ss -ltn), and every
	# socket the upstream's process listens on (ss -ltnp) too.
	ev_port=$(sed -n 's|^  upstream  *server-everything at http://127\.0\.0\.1:\([0-9]*\)/mcp (pid [0-9]*).*|\1|p' <<<"$printed")
	ev_pid=$(sed -n 's|^  upstream  *server-everything at .* (pid \([0-9]*\)).*|\1|p' <<<"$printed")
	idp_port=$(sed -n 's|^  authorization  *http://127\.0\.0\.1:\([0-9]*\).*|\1|p' <<<"$printed")
	like "it names the upstream's port and pid and the authorization server's port" "$ev_port $ev_pid $idp_port" '^[0-9]+ [0-9]+ [0-9]+$'
	listening=$(ss -ltnH | awk '{ print $4 }')
	wide=
	for p in $port $ev_port $idp_port; do
		addrs=$(grep -E ":$p\$" <<<"$listening" | sort -u | paste -sd' ')
		[ "$addrs" = "127.0.0.1:$p" ] || wide="$wide $p=[$addrs]"
	done
	is "the gateway, the upstream and the authorization server listen on 127.0.0.1 only" "${wide# }" ""
	ev_socks=$(ss -ltnpH | grep -F "pid=$ev_pid," | awk '{ print $4 }' | sort -u | paste -sd' ')
	is "… and the upstream's process listens on 127.0.0.1:$ev_port and nothing else" "$ev_socks" "127.0.0.1:$ev_port"
	# the step-up pair, the read-only call, the rate-limit loop and explain, as printed
	cmd=$(grep -m1 "^  curl -si .*ev_get-env" <<<"$printed")
	like "the printed step-up call: 403 insufficient_scope naming mcp:admin" "$(flat_out "$(bash -c "$cmd" 2>&1 | tr -d '\r')")" \
		'HTTP/[0-9.]+ 403 [^|]*\| WWW-Authenticate: Bearer .*scope="mcp:tools mcp:admin", error="insufficient_scope"'
	cmd=$(grep -m1 "^  curl -s -X POST .*ev_get-env" <<<"$printed")
	like "… the printed call with the mcp:admin token: the result" "$(bash -c "$cmd" 2>&1)" '"result":\{"content"'
	cmd=$(grep -m1 "^  curl -si .*ev_toggle-simulated-logging" <<<"$printed")
	like "the printed read-only call: 403 read_only_mode" "$(flat_out "$(bash -c "$cmd" 2>&1 | tr -d '\r')")" \
		'HTTP/[0-9.]+ 403 .*"error":"read_only_mode"'
	cmd=$(grep -m1 '^  for i in 1 2 3 4 5 6; do curl ' <<<"$printed")
	limited=$(bash -c "$cmd" 2>&1 | tr -d '\r')
	is "the printed rate-limit loop: five 200s, then a 429" "$(codes "$limited")" "200 200 200 200 200 429"
	like "… with Retry-After and the RateLimit headers" "$(flat_out "$limited")" "$LIMITED"
	cmd=$(grep -m1 '^  [^ ]*mcpgate explain -c ' <<<"$printed")
	like "the printed explain command: beta's token limit, from its line" "$(bash -c "$cmd" 2>&1)" "$EXPLAINED"
	acme=$(sed -n "s/^ *-H 'Authorization: Bearer \([^']*\)' .*/\1/p" <<<"$printed" | head -n 1)
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X POST "http://127.0.0.1:$port/mcp" \
		-H 'Content-Type: application/json' -H "Authorization: Bearer $acme" \
		--data '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}')
	is "… and the printed acme token still lists the tools (200)" "$code" 200
	# the MCP Inspector's command line, as printed (pinned version)
	cmd=$(grep -m1 '^  npx -y @modelcontextprotocol/inspector@[0-9.]* --cli ' <<<"$printed")
	like "it prints the MCP Inspector's command line, its version pinned" "$cmd" \
		"--cli http://127.0.0.1:$port/mcp --transport http --method tools/list --header 'Authorization: Bearer "
	like "… and its web UI's" "$printed" "npx -y @modelcontextprotocol/inspector@[0-9.]+ --web --server-url http://127.0.0.1:$port/mcp --transport http --header 'Authorization: Bearer "
	insp=$(cd "$MG_DIR" && npm_config_prefer_offline=true timeout -k 5 300 bash -c "$cmd" 2>"$MG_DIR/inspector.err")
	rc=$?
	like "… run as printed: exit 0, every tool of the mcp:admin token listed (ev_get-env too)" \
		"rc=$rc $(tr -d '\n ' <<<"$insp" | head -c 100000)" '^rc=0 \{"tools":\[.*"name":"ev_get-env"'
	[ "$rc" -eq 0 ] || sed "s/^/# /" "$MG_DIR/inspector.err" | tail -n 5
	like "it prints a Claude Code command for the gateway" "$printed" \
		"claude mcp add --transport http mcpgate-demo http://127.0.0.1:$port/mcp --header 'Authorization: Bearer "
	like "… and a VS Code mcp.json" "$printed" "\"type\": \"http\", \"url\": \"http://127.0.0.1:$port/mcp\""
	kill -INT -- "-$demo"	# a terminal's Ctrl-C: the whole foreground process group
	stopped_by "Ctrl-C (SIGINT to its process group)" "$out" "$pids"
else
	fail "deploy/demo starts and waits" "$(tail -n 20 "$out")"
fi

# 2b. Started in the background without job control: kill -INT of its pid alone.
# 2c. kill -TERM of its pid.
for how in bg term; do
	port=$(free_port)
	out=$MG_DIR/demo-$how.out
	if [ "$how" = bg ]; then start_demo "$out" bg; else start_demo "$out"; fi
	if ! grep -q 'Press Ctrl-C' "$out"; then
		fail "deploy/demo starts and waits ($how)" "$(tail -n 20 "$out")"
		continue
	fi
	pids=$(sed -n 's/^ *processes *mcpgate \(.*\), nginx \([0-9]*\)$/\1 \2/p' "$out")
	if [ "$how" = bg ]; then
		kill -INT "$demo"
		stopped_by "kill -INT PID (started without job control)" "$out" "$pids"
	else
		kill -TERM "$demo"
		stopped_by "kill -TERM PID" "$out" "$pids"
	fi
done

# 3. A fresh copy: what a clone holds (tracked and new files, not ignored
#    ones), built by the demo itself.
if command -v git >/dev/null 2>&1 && git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	copy=$MG_DIR/fresh
	mkdir -p "$copy"
	(cd "$top" && git ls-files -z -co --exclude-standard | xargs -0 -r sh -c '
		for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
		tar --null -T - -cf -) | tar -C "$copy" -xf -
	port=$(free_port)
	if DEMO_PORT=$port timeout 900 "$copy/deploy/demo" --check >"$MG_DIR/fresh.out" 2>&1; then
		pass "deploy/demo --check in a fresh copy of the tree builds and passes"
	else
		fail "deploy/demo --check in a fresh copy of the tree builds and passes" "$(tail -n 30 "$MG_DIR/fresh.out")"
	fi
	check "the fresh copy's demo built src/mcpgate" test -x "$copy/src/mcpgate"
else
	pass "deploy/demo in a fresh copy # SKIP not a git work tree"
fi
tap_done
