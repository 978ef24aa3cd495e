#!/usr/bin/env bash
# tests/fronts/demo.sh — the README's `deploy/demo` stays true:
#   1. deploy/demo --check with the built binary answers every endpoint, and its
#      rate-limit loop gets a 429 (Retry-After, RateLimit headers);
#   2. deploy/demo (interactive) stops everything it started on Ctrl-C / TERM; the
#      rate-limit loop and the explain command it prints, pasted as printed, give the
#      429 and beta's limit, and the acme token it prints is not limited by them;
#   3. deploy/demo --check in a fresh copy of the tree (the files git would
#      commit) builds mcpgate itself and passes.
# Prints TAP; exits non-zero on failure. Env: MCPGATE_BIN (default src/mcpgate).
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

# 1. --check with the binary under test (no build: the tree may be a VPATH
#    build's source, which must stay unconfigured).
port=$(free_port)
if DEMO_PORT=$port DEMO_NO_BUILD=1 MCPGATE_BIN=$MCPGATE_BIN timeout 300 \
	"$top/deploy/demo" --check >"$MG_DIR/check.out" 2>&1; then
	pass "deploy/demo --check exits 0"
else
	fail "deploy/demo --check exits 0" "$(tail -n 30 "$MG_DIR/check.out")"
fi
like "deploy/demo --check prints the health curl line" "$(cat "$MG_DIR/check.out")" "curl -s http://127.0.0.1:$port/mcp/health"
like "deploy/demo --check shows the 401 challenge" "$(cat "$MG_DIR/check.out")" 'WWW-Authenticate: Bearer resource_metadata='
limited=$(sed -n '/^\$ for i in 1 2 3 4 5 6/,/^$/p' "$MG_DIR/check.out" | tr -d '\r')
is "deploy/demo --check: its rate-limit loop: five 200s, then a 429" \
	"$(grep -o '^HTTP/[0-9.]* [0-9]*' <<<"$limited" | cut -d' ' -f2 | paste -sd' ')" "200 200 200 200 200 429"
like "… the 429 with Retry-After and RateLimit headers of beta's token limit" "$(flat_out "$limited")" \
	'HTTP/[0-9.]+ 429 [^|]*\| Retry-After: [0-9]+ \| RateLimit-Policy: "token";q=5;w=60 \| RateLimit: "token";r=0;t=[0-9]+'
like "… and explain's word on it: 5/60 s from [tenant \"beta\"] limit-token" "$(cat "$MG_DIR/check.out")" \
	'  token: 5/60 s \(from [^ ]*mcpgate.conf:[0-9]+: \[tenant "beta"\] limit-token\); keyed by this token'
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/mcp/health")
is "after --check nothing listens on its port" "$code" 000

# 2. Interactive: runs until a signal, then stops nginx and mcpgate.
for sig in INT TERM; do
	port=$(free_port)
	out=$MG_DIR/demo-$sig.out
	# job control: the demo is not started with SIGINT ignored
	set -m
	DEMO_PORT=$port DEMO_NO_BUILD=1 MCPGATE_BIN=$MCPGATE_BIN "$top/deploy/demo" >"$out" 2>&1 &
	demo=$!
	set +m
	mg_track "$demo"
	for _ in $(seq 1 1200); do	# 120 s: an IdP, an upstream and nginx on a loaded machine
		grep -q 'Press Ctrl-C' "$out" && break
		mg_alive "$demo" || break
		sleep 0.1
	done
	if ! grep -q 'Press Ctrl-C' "$out"; then
		fail "deploy/demo starts and waits ($sig)" "$(tail -n 20 "$out")"
		continue
	fi
	pass "deploy/demo starts and waits ($sig)"
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$port/mcp/health")
	is "deploy/demo serves /mcp/health on DEMO_PORT" "$code" 200
	pids=$(sed -n 's/^ *processes *mcpgate \(.*\), nginx \([0-9]*\)$/\1 \2/p' "$out")
	like "deploy/demo names its processes" "$pids" '^[0-9]+( [0-9]+)+$'
	if [ "$sig" = INT ]; then
		# the rate-limit loop and the explain command, pasted as printed
		limit_cmd=$(grep -m1 '^  for i in 1 2 3 4 5 6; do curl ' "$out")
		limited=$(bash -c "$limit_cmd" 2>&1 | tr -d '\r')
		is "the printed rate-limit loop: five 200s, then a 429" \
			"$(grep -o '^HTTP/[0-9.]* [0-9]*' <<<"$limited" | cut -d' ' -f2 | paste -sd' ')" "200 200 200 200 200 429"
		like "… with Retry-After and the RateLimit headers" "$(flat_out "$limited")" \
			'HTTP/[0-9.]+ 429 [^|]*\| Retry-After: [0-9]+ \| RateLimit-Policy: "token";q=5;w=60 \| RateLimit: "token";r=0;t=[0-9]+'
		explain_cmd=$(grep -m1 '^  [^ ]*mcpgate explain -c ' "$out")
		like "the printed explain command: beta's token limit, from its line" "$(bash -c "$explain_cmd" 2>&1)" \
			'  token: 5/60 s \(from [^ ]*mcpgate.conf:[0-9]+: \[tenant "beta"\] limit-token\); keyed by this token'
		acme=$(sed -n "s/^ *-H 'Authorization: Bearer \([^']*\)' .*/\1/p" "$out" | head -n 1)
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X POST "http://127.0.0.1:$port/mcp" \
			-H 'Content-Type: application/json' -H "Authorization: Bearer $acme" \
			--data '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}')
		is "… and the printed acme token still lists the tools (200)" "$code" 200
	fi
	kill -"$sig" "$demo"
	for _ in $(seq 1 300); do
		mg_alive "$demo" || break
		sleep 0.1
	done
	if mg_alive "$demo"; then
		fail "deploy/demo exits on SIG$sig"
		continue
	fi
	pass "deploy/demo exits on SIG$sig"
	# (a process killed a moment ago may take that moment to go on a loaded machine)
	for _ in $(seq 1 100); do
		left=
		for pid in $pids; do
			mg_alive "$pid" && left="$left $pid"
		done
		[ -n "$left" ] || break
		sleep 0.1
	done
	is "SIG$sig stopped nginx and every mcpgate process" "$left" ""
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/mcp/health")
	is "after SIG$sig nothing listens on its port" "$code" 000
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
