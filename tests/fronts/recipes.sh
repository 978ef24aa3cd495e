#!/usr/bin/env bash
# tests/fronts/recipes.sh — the deploy/ files that no front suite runs whole:
# every template fills (deploy/subst), the example configuration passes
# mcpgate -t, the systemd units verify, and the spawn-fcgi script starts,
# reports, serves and stops. Prints TAP; exits non-zero on failure.
# Env: MCPGATE_BIN (default src/mcpgate).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"

if ! need_cmds spawn-fcgi:spawn-fcgi cgi-fcgi:libfcgi-bin >"${TMPDIR:-/tmp}/mcpgate-recipes.$$" 2>&1; then
	fail "install spawn-fcgi and cgi-fcgi" "$(tail -n 20 "${TMPDIR:-/tmp}/mcpgate-recipes.$$")"
fi
rm -f "${TMPDIR:-/tmp}/mcpgate-recipes.$$"
mg_init || exit 1
if [ ! -x "$MCPGATE_BIN" ]; then
	fail "mcpgate binary at $MCPGATE_BIN (build it, or set MCPGATE_BIN)"
	tap_done
	exit 1
fi

# Templates.
vals=(MCPGATE_BIN=/usr/local/bin/mcpgate MCPGATE_CONF=/usr/local/etc/mcpgate/mcpgate.conf
	MCPGATE_SOCKET=/run/mcpgate.sock MCPGATE_WWW=/usr/local/share/mcpgate/www)
n=0
while IFS= read -r t; do
	n=$((n + 1))
	rel=${t#"$top"/}
	if "$top/deploy/subst" "${vals[@]}" <"$t" >"$MG_DIR/filled" 2>"$MG_DIR/filled.err"; then
		if grep -q '@MCPGATE_' "$MG_DIR/filled"; then
			fail "$rel: every placeholder filled" "$(grep '@MCPGATE_' "$MG_DIR/filled" | head -3)"
		else
			pass "$rel: every placeholder filled"
		fi
	else
		fail "$rel: every placeholder filled" "$(cat "$MG_DIR/filled.err")"
	fi
done < <(find "$top/deploy" -name '*.in' -type f | sort)
check "deploy/ has the templates (nginx, lighttpd, 2 apache, 2 systemd, spawn-fcgi)" test "$n" -ge 7
if "$top/deploy/subst" MCPGATE_SOCKET=/x <"$top/deploy/nginx/mcpgate.conf.in" >/dev/null 2>"$MG_DIR/err"; then
	fail "deploy/subst fails when a placeholder has no value"
else
	like "deploy/subst fails when a placeholder has no value" "$(cat "$MG_DIR/err")" 'no value for @MCPGATE_WWW@'
fi
printf 'a @MCPGATE_WWW@ b\n' | "$top/deploy/subst" 'MCPGATE_WWW=/p|q&r\s' >"$MG_DIR/lit" 2>&1
is "deploy/subst takes values literally" "$(cat "$MG_DIR/lit")" 'a /p|q&r\s b'

# The example configuration: `mcpgate -t -c deploy/mcpgate.conf.example` passes as it
# is (the README runs it so); its keys naming secret files are commented out.
out=$("$MCPGATE_BIN" -t -c "$top/deploy/mcpgate.conf.example" 2>&1)
like "mcpgate -t -c deploy/mcpgate.conf.example passes as it is" "rc=$? $out" '^rc=0 .*mcpgate.conf.example: ok '
# Those keys uncommented, and the files they name made — in the temp dir, where a
# real host has /etc/mcpgate/ — it passes too.
mkdir -p "$MG_DIR/etc"
sed -e "s|/etc/mcpgate/|$MG_DIR/etc/|g; s|/run/mcpgate/|$MG_DIR/run/|g; s|/var/log/mcpgate/|$MG_DIR/log/|g" \
	-e 's/^#\(client-secret-file\|auth-header-file\|session-key-file\) = /\1 = /' \
	"$top/deploy/mcpgate.conf.example" >"$MG_DIR/etc/mcpgate.conf"
files=$(sed -n 's/^\(client-secret-file\|auth-header-file\|session-key-file\) = //p' "$MG_DIR/etc/mcpgate.conf")
is "… the example names three secret files" "$(wc -w <<<"$files")" 3
for f in $files; do
	case $f in
	*.header) echo 'Authorization: Bearer placeholder' >"$f" ;;	# one header line
	*.key) head -c 32 /dev/urandom >"$f" ;;	# 32 bytes
	*) echo 'placeholder' >"$f" ;;
	esac
	chmod 640 "$f"	# as the example's comments say: root's (or the gateway's), others may not read
done
out=$("$MCPGATE_BIN" -t -c "$MG_DIR/etc/mcpgate.conf" 2>&1)
is "mcpgate -t accepts deploy/mcpgate.conf.example with its secret files (0640), no warning" \
	"rc=$? warnings=$(grep -c '^warning' <<<"$out")" "rc=0 warnings=0"

# systemd units (systemd-analyze comes with systemd; not installed for this).
if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir -p "$MG_DIR/units"
	for u in mcpgate.socket mcpgate.service; do
		"$top/deploy/subst" MCPGATE_BIN="$MCPGATE_BIN" MCPGATE_CONF="$MG_DIR/etc/mcpgate.conf" \
			MCPGATE_SOCKET=/run/mcpgate.sock <"$top/deploy/systemd/$u.in" >"$MG_DIR/units/$u"
	done
	out=$(cd "$MG_DIR/units" && SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no ./mcpgate.socket ./mcpgate.service 2>&1)
	is "systemd-analyze verify: mcpgate.socket and mcpgate.service" "$out" ""
else
	pass "systemd-analyze verify # SKIP systemd-analyze not installed"
fi
check "mcpgate.service takes the socket as fd 0" grep -qx 'StandardInput=socket' "$top/deploy/systemd/mcpgate.service.in"

# The spawn-fcgi script: start, status, a request, stop.
port=$(free_port)
gen_config "$MG_DIR/mcpgate.conf" "http://127.0.0.1:$port" /mcp "$MG_DIR/state"
"$top/deploy/subst" MCPGATE_BIN=/nonexistent MCPGATE_CONF=/nonexistent MCPGATE_SOCKET=/nonexistent \
	<"$top/deploy/spawn-fcgi.sh.in" >"$MG_DIR/spawn" && chmod 755 "$MG_DIR/spawn"
spawn() {
	MCPGATE_BIN=$MCPGATE_BIN MCPGATE_CONF=${conf:-$MG_DIR/mcpgate.conf} MCPGATE_SOCKET=$MG_DIR/s.sock \
		MCPGATE_PROCESSES=2 MCPGATE_WORKERS=2 MCPGATE_PIDFILE=$MG_DIR/s.pid MCPGATE_LOG=$MG_DIR/log/s.log \
		MCPGATE_USER='' MCPGATE_SOCKET_USER='' MCPGATE_STATE_DIR=$MG_DIR/run "$MG_DIR/spawn" "$@"
}
check "spawn-fcgi script: start" spawn start
if [ -s "$MG_DIR/s.pid" ]; then
	# shellcheck disable=SC2046
	mg_track $(cat "$MG_DIR/s.pid")
fi
is "spawn-fcgi script: 2 pids in the pid file" "$(wc -w <"$MG_DIR/s.pid" 2>/dev/null | tr -d ' ')" 2
like "spawn-fcgi script: status" "$(spawn status)" '^mcpgate running: [0-9]+ [0-9]+'
check "spawn-fcgi script: start again refuses" test "$(spawn start >/dev/null 2>&1; echo $?)" -ne 0
out=$(SCRIPT_NAME=/mcp/health REQUEST_METHOD=GET timeout 10 cgi-fcgi -bind -connect "$MG_DIR/s.sock" 2>&1)
like "spawn-fcgi script: mcpgate answers on the socket (cgi-fcgi)" "$out" '^Status: 200'
for _ in $(seq 1 100); do grep -q '"path":"/mcp/health"' "$MG_DIR/log/s.log" 2>/dev/null && break; sleep 0.1; done
like "spawn-fcgi script: the request log reaches MCPGATE_LOG" "$(cat "$MG_DIR/log/s.log" 2>/dev/null)" '"path":"/mcp/health"'
pids=$(cat "$MG_DIR/s.pid" 2>/dev/null)
check "spawn-fcgi script: stop" spawn stop
left=
for pid in $pids; do mg_alive "$pid" && left="$left $pid"; done
is "spawn-fcgi script: stop ends every process" "$left" ""
check "spawn-fcgi script: stop removes the socket and pid file" test ! -e "$MG_DIR/s.sock" -a ! -e "$MG_DIR/s.pid"
check "spawn-fcgi script: status after stop is 3" test "$(spawn status >/dev/null; echo $?)" -eq 3
printf '[gateway]\nresource = not a url\n' >"$MG_DIR/bad.conf"
out=$(conf=$MG_DIR/bad.conf spawn start 2>&1)
rc=$?
check "spawn-fcgi script: a broken configuration does not start" test "$rc" -ne 0 -a ! -e "$MG_DIR/s.pid"
like "spawn-fcgi script: ... and says where" "$out" 'bad.conf:2'

# Scripts lint clean (tests/run installs shellcheck).
check "shellcheck: deploy/ and tests/fronts/ scripts" shellcheck -S warning -x -e SC1091 \
	"$top/deploy/demo" "$top/deploy/subst" "$top/deploy/spawn-fcgi.sh.in" \
	"$top"/tests/fronts/*.sh
check "shellcheck: deploy/lib.sh, tests/fronts/common.bash" shellcheck -S warning -s bash -e SC1091,SC2034 \
	"$top/deploy/lib.sh" "$top/tests/fronts/common.bash"
tap_done
