#!/usr/bin/env bash
# The log file on a full disk: log-file = /dev/full, where every write fails with ENOSPC.
# Requests are still answered (FastCGI under spawn-fcgi, and CGI), at every log level the
# requests reach (a 200, a 4xx, a refused token, an authorization server that fails); a
# SIGHUP reopens the file and the process goes on; SIGTERM still stops it cleanly.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../cgi/lib.sh"
. "$here/../lib/wait.sh"
command -v spawn-fcgi >/dev/null && command -v cgi-fcgi >/dev/null \
	|| { echo "Bail out! spawn-fcgi and cgi-fcgi (libfcgi-bin) are required"; exit 1; }
[ -w /dev/full ] || { echo "Bail out! /dev/full is not writable"; exit 1; }
# The issuer is a closed port: a token costs a failed introspection (an error line).
write_conf '[gateway]' 'workers = 2' 'log-file = /dev/full' '[auth]' 'timeout-ms = 2000'
SOCK=$T/fcgi.sock
spawn-fcgi -s "$SOCK" -P "$T/pid" -- "$MCPGATE_BIN" -c "$T/gw.conf" > /dev/null 2>&1
pid=$(cat "$T/pid")
trap 'kill "$pid" 2>/dev/null; rm -rf "$T"' EXIT
wait_until 30 test -S "$SOCK" || { echo "Bail out! no socket $SOCK"; exit 1; }

fcgi() {	# fcgi METHOD PATH [VAR=value...] [< body] → $T/head, $T/body
	local method=$1 path=$2; shift 2
	env -i PATH="$PATH" REQUEST_METHOD="$method" SCRIPT_NAME="$path" SERVER_PROTOCOL=HTTP/1.1 "$@" \
		timeout 30 cgi-fcgi -bind -connect "$SOCK" > "$T/out" 2>/dev/null
	sed -n '1,/^\r$/p' "$T/out" | tr -d '\r' > "$T/head"
	sed '1,/^\r$/d' "$T/out" > "$T/body"
}
LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'

bad=0
for i in $(seq 1 25); do
	fcgi GET /mcp/health; [ "$(status)" = 200 ] || bad=$((bad + 1))
	fcgi GET /nope; [ "$(status)" = 404 ] || bad=$((bad + 1))
	fcgi POST /mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#LIST} <<< "$LIST"
	[ "$(status)" = 401 ] || bad=$((bad + 1))
	fcgi POST /mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#LIST} HTTP_AUTHORIZATION="Bearer bad-$i" <<< "$LIST"
	[ "$(status)" = 500 ] && [ -n "$(header Retry-After)" ] || bad=$((bad + 1))
done
is "FastCGI, log on a full disk: 100 requests answered (200, 404, 401, 500 + Retry-After for an unreachable AS)" "$bad" 0
kill -0 "$pid" 2>/dev/null && pass "FastCGI: the process is still serving" || fail "FastCGI: the process is still serving"
kill -HUP "$pid"
bad=0
for i in 1 2 3 4 5; do fcgi GET /mcp/health; [ "$(status)" = 200 ] || bad=$((bad + 1)); done
is "FastCGI: after SIGHUP (the log reopened on the full disk): health 200, 5 times" "$bad" 0
fcgi GET /.well-known/oauth-protected-resource/mcp
is "FastCGI: documents still served" "$(jf .resource)" "http://127.0.0.1:8080/mcp"

# CGI: the same configuration; a failed log write changes no answer, no exit status.
cgi GET /mcp/health
rc=$?
is "CGI, log on a full disk: health 200, exit 0" "$(status) $rc" "200 0"
cgi POST /mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#LIST} HTTP_AUTHORIZATION="Bearer bad-cgi" <<< "$LIST"
is "CGI: an unreachable AS: 500 + Retry-After" "$(status) $(header Retry-After | grep -c .)" "500 1"
cgi GET /mcp
is "CGI: GET /mcp: 405" "$(status)" 405

kill -TERM "$pid"
wait_until 60 eval '! kill -0 "$pid" 2>/dev/null'
kill -0 "$pid" 2>/dev/null && fail "SIGTERM stops the process" || pass "SIGTERM stops the process"
tap_done
