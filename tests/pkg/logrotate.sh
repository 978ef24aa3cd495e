#!/usr/bin/env bash
# tests/pkg/logrotate.sh — deploy/logrotate/mcpgate rotates a running gateway's
# log-file: two mcpgate processes under spawn-fcgi behind nginx write their request
# lines to [gateway] log-file; logrotate -f with the recipe (its paths moved into a
# temp dir: the log directory, the pid file of deploy/spawn-fcgi.sh; the systemd
# branch pointed away, so that no service of this machine is touched) renames the
# file and sends SIGHUP; then every request line goes to the new file and none to the
# old one, and the old one holds the lines from before.
# Prints TAP. Env: MCPGATE_BIN (default src/mcpgate).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin logrotate:logrotate nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl

mkdir -p "$T/log"
port=$(free_port)
gen_config "$T/mcpgate.conf" "http://127.0.0.1:$port" /mcp "$T/state"
sed -i "s|^\\[gateway\\]$|[gateway]\\nlog-file = $T/log/mcpgate.log|" "$T/mcpgate.conf"
start_mcpgate_fcgi "$T/mcpgate.sock" "$T/mcpgate.conf" 2 1 || { echo "Bail out! mcpgate did not start"; exit 1; }
start_nginx "$port" || { echo "Bail out! nginx did not start"; exit 1; }
printf '%s\n' $MG_FCGI_PIDS >"$T/mcpgate.pid"

# hit ID: a health request whose X-Request-Id is ID (8+ characters: the log keeps it).
hit() { curl -s -o /dev/null --max-time 10 -H "X-Request-Id: $1" "http://127.0.0.1:$port/mcp/health"; }
for i in 1 2 3 4 5 6; do hit "before-rotation-$i"; done
in_log() { grep -q "\"request_id\":\"$1\"" "$T/log/mcpgate.log" 2>/dev/null; }
check "log-file holds the request lines (6)" wait_until 10 sh -c "[ \$(grep -c before-rotation '$T/log/mcpgate.log') -eq 6 ]"

# The recipe, its paths moved into the temp dir.
sed -e "s|/var/log/mcpgate/|$T/log/|g" -e "s|/run/mcpgate.pid|$T/mcpgate.pid|g" \
	-e "s|/run/systemd/system|$T/no-systemd|g" \
	-e "s|create 0640 mcpgate adm|create 0640 $(id -un) $(id -gn)|" \
	"$top/deploy/logrotate/mcpgate" >"$T/logrotate.conf"
check "the recipe's paths were all moved (no /var/log, /run left)" sh -c "! grep -qE '/var/log|/run/' '$T/logrotate.conf'"
out=$(logrotate -v -f -s "$T/logrotate.state" "$T/logrotate.conf" 2>&1)
rc=$?
is "logrotate -f with deploy/logrotate/mcpgate: exit 0" "$rc" 0
[ "$rc" -eq 0 ] || echo "$out" | tail -n 15 | sed 's/^/# /'
check "… the old file renamed to mcpgate.log.1 (delaycompress: not yet compressed)" test -f "$T/log/mcpgate.log.1"
is "… holding the 6 lines from before" "$(grep -c before-rotation "$T/log/mcpgate.log.1")" 6
check "… and a new mcpgate.log made (create 0640)" test -f "$T/log/mcpgate.log"
is "… mode 0640" "$(stat -c %a "$T/log/mcpgate.log")" 640

# SIGHUP reaches each process's main thread, which reopens log-file at its next tick:
# requests until one lands in the new file, then every one must.
i=0
first() { i=$((i + 1)); hit "after-rotation-probe-$i"; in_log "after-rotation-probe-$i"; }
check "after the postrotate's SIGHUP, request lines go to the new file" wait_until 20 first
# both processes: once each logged a probe into the new file (or 20 s pass)
both() {
	i=$((i + 1))
	hit "after-rotation-probe-$i"
	[ "$(grep -o '"request_id":"after-rotation-probe-[0-9]*"' "$T/log/mcpgate.log" | wc -l)" -ge 4 ]
}
wait_until 20 both
for n in $(seq 1 20); do hit "after-rotation-$n"; done
wait_until 10 sh -c "[ \$(grep -c '\"request_id\":\"after-rotation-[0-9]' '$T/log/mcpgate.log') -eq 20 ]"
is "20 more requests (both processes): all 20 in the new file" \
	"$(grep -c '"request_id":"after-rotation-[0-9]' "$T/log/mcpgate.log")" 20
is "… none in the old one" "$(grep -c 'after-rotation' "$T/log/mcpgate.log.1")" 0
is "… each of the 2 processes reopened it (its \"config: reloaded\" line is there)" \
	"$(grep -c '"msg":"config: reloaded ' "$T/log/mcpgate.log")" 2
tap_done
