#!/usr/bin/env bash
# Ring (c), without a web server: spawn-fcgi + cgi-fcgi. Many requests on one process,
# worker threads, reload on change and SIGHUP (a broken file keeps the old config),
# clean stop on SIGTERM. Every wait is for a condition, bounded generously (an ASan or
# valgrind build on a loaded machine is many times slower).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../lib/wait.sh"
command -v spawn-fcgi >/dev/null && command -v cgi-fcgi >/dev/null \
	|| { echo "Bail out! spawn-fcgi and cgi-fcgi (libfcgi-bin) are required"; exit 1; }
write_conf "[gateway]" "workers = 3" "log-file = $T/log"
SOCK=$T/fcgi.sock
# spawn-fcgi sends a forked child's stderr to /dev/null: hence log-file.
spawn-fcgi -s "$SOCK" -P "$T/pid" -- "$MCPGATE_BIN" -c "$T/gw.conf" > /dev/null 2>&1
pid=$(cat "$T/pid")
trap 'kill "$pid" 2>/dev/null; rm -rf "$T"' EXIT

fcgi() {	# fcgi METHOD PATH [VAR=value...] → $T/head, $T/body
	local method=$1 path=$2; shift 2
	env -i PATH="$PATH" REQUEST_METHOD="$method" SCRIPT_NAME="$path" SERVER_PROTOCOL=HTTP/1.1 "$@" \
		timeout 30 cgi-fcgi -bind -connect "$SOCK" > "$T/out" 2>/dev/null
	sed -n '1,/^\r$/p' "$T/out" | tr -d '\r' > "$T/head"
	sed '1,/^\r$/d' "$T/out" > "$T/body"
}

wait_until 30 test -S "$SOCK"
fcgi GET /mcp/health
is "FastCGI: health 200" "$(status)" 200

# 120 requests in a row, alternating routes, methods, errors: nothing leaks between them.
bad=0; ids=$T/ids; : > "$ids"
t0=$(now_ms)
for i in $(seq 1 40); do
	fcgi GET /mcp/health;  [ "$(status)" = 200 ] && [ -z "$(header Allow)" ] || bad=$((bad + 1)); header X-Request-Id >> "$ids"
	fcgi GET /mcp;         [ "$(status)" = 405 ] && [ "$(header Allow)" = "POST, DELETE, OPTIONS" ] || bad=$((bad + 1)); header X-Request-Id >> "$ids"
	fcgi GET /nope;        [ "$(status)" = 404 ] && [ -z "$(header Allow)" ] && [ -z "$(header WWW-Authenticate)" ] || bad=$((bad + 1)); header X-Request-Id >> "$ids"
done
per_req=$(( ($(now_ms) - t0) / 120 ))
is "120 mixed requests, each answered on its own ($per_req ms each)" "$bad" 0
is "request ids never repeat" "$(sort "$ids" | uniq -d | wc -l)" 0
kill -0 "$pid" && pass "same process still serving" || fail "same process still serving"

# The params are found wherever they are: among the first 128 (indexed by their names'
# lengths), past them, and after others of the same length.
many=()
for i in $(seq 1 140); do many+=("HTTP_X_FILLER_$i=x"); done
fcgi GET /mcp/health HTTP_X_REQUEST_ID=early-request-id-0001 "${many[@]}"
is "a param before 140 others is found" "$(header X-Request-Id)" early-request-id-0001
fcgi GET /mcp/health "${many[@]}" HTTP_X_REQUEST_ID=late-request-id-0002
is "a param past the 128th is found" "$(header X-Request-Id)" late-request-id-0002
fcgi GET /mcp/health HTTP_X_REQUEST_IX=nope HTTP_X_REQUEST_ID=third-request-id-0003
is "a param after another name of its length is found" "$(header X-Request-Id)" third-request-id-0003

# A stalled client holds one worker; the others keep serving.
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')	# a free one
spawn-fcgi -a 127.0.0.1 -p "$PORT" -P "$T/pid2" -- "$MCPGATE_BIN" -c "$T/gw.conf" -w 2 > /dev/null 2>> "$T/log"
pid2=$(cat "$T/pid2" 2>/dev/null)
trap 'kill "$pid" "$pid2" 2>/dev/null; rm -rf "$T"' EXIT
exec 3<>"/dev/tcp/127.0.0.1/$PORT"	# connects, sends nothing
limit=$(( 3000 + 10 * per_req ))	# a request's time as measured above, with room
start=$(date +%s%N)
env -i PATH="$PATH" REQUEST_METHOD=GET SCRIPT_NAME=/mcp/health timeout 30 cgi-fcgi -bind -connect "127.0.0.1:$PORT" > "$T/out" 2>/dev/null
ms=$(( ($(date +%s%N) - start) / 1000000 ))
grep -q '^Status: 200' "$T/out" && [ "$ms" -lt "$limit" ] && pass "a stalled connection does not stall other requests (${ms} ms < $limit)" \
	|| fail "a stalled connection does not stall other requests" "$(head -1 "$T/out") after ${ms} ms (limit $limit)"
exec 3>&-
kill "$pid2"

# Reload on change: the new title is served within about a second.
fcgi GET /.well-known/mcp
is "before reload: title" "$(jf .title)" "Example gateway"
sleep 1.1	# mtime granularity on some file systems
TITLE="Reloaded gateway" write_conf "[gateway]" "workers = 3" "log-file = $T/log"
reloaded() { fcgi GET /.well-known/mcp; [ "$(jf .title)" = "$1" ]; }
wait_until 60 reloaded "Reloaded gateway"
is "changed file: reloaded" "$(jf .title)" "Reloaded gateway"

# A broken new file: logged with file:line, the old configuration keeps serving.
printf '[gateway]\nresource = http://127.0.0.1:8080/mcp\ntitle = Broken\nbogus = 1\nlog-file = /nonexistent/x.log\n' > "$T/gw.conf.new"
mv "$T/gw.conf.new" "$T/gw.conf"
wait_until 60 grep -q 'gw.conf:4: bogus' "$T/log"
like "broken file: error logged with file:line" "$(cat "$T/log")" 'gw.conf:4: bogus: unknown key'
like "broken file: says the old config stays" "$(cat "$T/log")" 'keeping the previous configuration'
fcgi GET /.well-known/mcp
is "broken file: old config still served" "$(jf .title)" "Reloaded gateway"
n1=$(grep -c 'gw.conf:4: bogus' "$T/log"); sleep 2.2; n2=$(grep -c 'gw.conf:4: bogus' "$T/log")
is "broken file: not re-parsed every second while unchanged" "$n2" "$n1"
kill -HUP "$pid"
hup_logged() { [ "$(grep -c 'gw.conf:4: bogus' "$T/log")" -gt "$n1" ]; }
wait_until 30 hup_logged
is "SIGHUP: forces a retry (still broken, logged again)" "$(grep -c 'gw.conf:4: bogus' "$T/log")" $((n1 + 1))
mv "$T/log" "$T/log.1"	# logrotate: the next SIGHUP reopens the file
TITLE="After HUP" write_conf "[gateway]" "log-file = $T/log"
kill -HUP "$pid"
wait_until 60 reloaded "After HUP"
is "SIGHUP: fixed file loaded" "$(jf .title)" "After HUP"
[ -s "$T/log" ] && pass "SIGHUP: log file reopened after rotation" || fail "SIGHUP: log file reopened after rotation"

# The log: one JSON line per request.
n=$(cat "$T/log.1" "$T/log" | grep -c '"path":"/mcp/health"')
[ "$n" -ge 42 ] && pass "every request logged ($n health lines)" || fail "every request logged" "$n"
cat "$T/log.1" "$T/log" | grep -v '^{' | head -3 > "$T/nonjson"
is "every log line is JSON" "$(wc -l < "$T/nonjson" | tr -d ' ')" 0

# An include naming a FIFO: refused at once with file:line and the old configuration
# stays; the thread that reloads, which also takes the signals, is not stuck in it.
mkfifo "$T/fifo"
TITLE="With a FIFO" write_conf "[gateway]" "log-file = $T/log" "include = $T/fifo"
for i in $(seq 1 150); do grep -q 'fifo: not a regular file' "$T/log" && break; sleep 0.2; done
like "FIFO include: refused with file:line" "$(cat "$T/log")" "gw.conf:[0-9]+: include: $T/fifo: not a regular file"
fcgi GET /.well-known/mcp
is "FIFO include: old config still served" "$(jf .title)" "After HUP"
TITLE="After the FIFO" write_conf "[gateway]" "log-file = $T/log"
kill -HUP "$pid"
for i in $(seq 1 150); do fcgi GET /.well-known/mcp; [ "$(jf .title)" = "After the FIFO" ] && break; sleep 0.2; done
is "FIFO include: the reload thread is free (SIGHUP, next file loaded)" "$(jf .title)" "After the FIFO"

# A secret file anyone may write: refused on reload with file:line, the old configuration
# stays; a configuration file made writable by others is refused too, and its chmod back
# (a mode changes, not the contents) is noticed as a change.
head -c 32 /dev/urandom > "$T/session.key"
chmod 666 "$T/session.key"
TITLE="World-writable key" write_conf "[gateway]" "log-file = $T/log" "session-key-file = $T/session.key"
wait_until 60 grep -q 'session.key: writable by group or others' "$T/log"
like "a world-writable session-key-file on reload: refused with file:line" "$(cat "$T/log")" \
	"gw.conf:[0-9]+: session-key-file: $T/session.key: writable by group or others \\(mode 0666\\)"
fcgi GET /.well-known/mcp
is "… the old configuration still served" "$(jf .title)" "After the FIFO"
chmod 600 "$T/session.key"
TITLE="Key fixed" write_conf "[gateway]" "log-file = $T/log" "session-key-file = $T/session.key"
wait_until 60 reloaded "Key fixed"
is "… the key made 0600 and the file rewritten: loaded" "$(jf .title)" "Key fixed"
chmod 646 "$T/gw.conf"
wait_until 60 grep -q "gw.conf: writable by group or others (mode 0646)" "$T/log"
like "the configuration file made writable by others: noticed and refused" "$(cat "$T/log")" \
	"gw.conf: writable by group or others \\(mode 0646\\)"
fcgi GET /.well-known/mcp
is "… the configuration loaded before still served" "$(jf .title)" "Key fixed"
n=$(grep -c 'keeping the previous configuration' "$T/log")
chmod 644 "$T/gw.conf"
reload_ok() { [ "$(grep -c 'config: reloaded' "$T/log")" -gt "$1" ]; }
wait_until 60 reload_ok "$(grep -c 'config: reloaded' "$T/log")"
is "… chmod back alone: noticed, loaded again (no new refusal)" "$(grep -c 'keeping the previous configuration' "$T/log")" "$n"

# SIGTERM: stops within the grace period.
kill -TERM "$pid"
wait_until 60 eval '! kill -0 "$pid" 2>/dev/null'
kill -0 "$pid" 2>/dev/null && fail "SIGTERM stops the process" || pass "SIGTERM stops the process"
like "SIGTERM: logged" "$(tail -3 "$T/log")" 'fastcgi: stopped'

tap_done
