#!/usr/bin/env bash
# The FastCGI ring under valgrind memcheck: tests/cgi/t0004-fastcgi.sh (many requests on
# one process, worker threads, reloads, SIGHUP, SIGTERM) and tests/fault/as.sh (nginx and
# spawn-fcgi -F 2, introspection over libcurl against an authorization server failing
# every way: the error paths), with every mcpgate process they start run by valgrind. spawn-fcgi execs the program and
# sends its stderr to /dev/null, so MCPGATE_BIN becomes a wrapper that execs valgrind
# with a log file per process. Their TAP is relayed here; then one test per process: its
# log says "ERROR SUMMARY: 0 errors" (a definite leak counts as an error). Any error is
# shown. A few minutes on a loaded machine. (tests/auth/cgi.sh is no candidate: its 5 s
# token expires before a CGI run under valgrind has answered.)
#
# Env: MCPGATE_BIN (the release build; an ASan build cannot run under valgrind),
# VALGRIND_SUITES (default: the two above), MG_KEEP=1 keeps the logs.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/tap.sh"
: "${MCPGATE_BIN:?MCPGATE_BIN must name the built src/mcpgate}"
command -v valgrind >/dev/null || { echo "Bail out! valgrind is not installed"; exit 1; }
if nm -D "$MCPGATE_BIN" 2>/dev/null | grep -q __asan_init; then
	echo "Bail out! $MCPGATE_BIN is an ASan build: valgrind needs the release build"; exit 1
fi
T=$(mktemp -d /tmp/mcpgate-vg.XXXXXX)
chmod 755 "$T"
trap '[ "${MG_KEEP:-0}" = 1 ] && echo "# kept $T" || rm -rf "$T"' EXIT
mkdir -p "$T/logs"

# --error-exitcode for the CGI runs (their exit status is the suites' business; the
# logs decide here); definite leaks are errors; child processes are not followed.
cat > "$T/mcpgate" <<WRAP
#!/bin/sh
exec valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
	--show-leak-kinds=definite --num-callers=30 --log-file=$T/logs/vg.%p.log "$MCPGATE_BIN" "\$@"
WRAP
chmod 755 "$T/mcpgate"

suites=${VALGRIND_SUITES:-"tests/cgi/t0004-fastcgi.sh tests/fault/as.sh"}
for s in $suites; do
	start=$SECONDS
	MCPGATE_BIN=$T/mcpgate timeout -k 10 900 "$top/$s" > "$T/suite.tap" 2> "$T/suite.err"
	rc=$?
	echo "# $s under valgrind ($((SECONDS - start)) s, exit $rc)"
	tap_relay "$T/suite.tap"
	[ "$rc" -eq 0 ] || fail "$s under valgrind exited 0" "exit $rc; $(tail -n 5 "$T/suite.err")"
done

# Each process's verdict. A log without a summary: the process did not finish (killed).
n=0
for log in "$T"/logs/vg.*.log; do
	[ -f "$log" ] || continue
	n=$((n + 1))
	cmd=$(sed -n 's/^==[0-9]*== Command: //p' "$log" | head -n 1)
	if grep -q 'ERROR SUMMARY: 0 errors' "$log"; then
		pass "valgrind: $(basename "$log" .log) (${cmd#"$MCPGATE_BIN"}) no error, no definite leak"
	elif grep -q 'ERROR SUMMARY:' "$log"; then
		fail "valgrind: $(basename "$log" .log) (${cmd#"$MCPGATE_BIN"}) no error, no definite leak" \
			"$(grep -v '^==[0-9]*== *$' "$log" | sed -n '/Invalid\|uninitialised\|definitely lost\|Mismatched\|overlap\|ERROR SUMMARY/,+25p' | head -n 60)"
	else
		fail "valgrind: $(basename "$log" .log) (${cmd#"$MCPGATE_BIN"}) finished" "no ERROR SUMMARY: killed? $(tail -n 5 "$log")"
	fi
done
[ "$n" -gt 0 ] || fail "valgrind ran mcpgate at least once" "no log in $T/logs"
echo "# valgrind: $n mcpgate processes"
tap_done
