#!/usr/bin/env bash
# tests/fronts/lighttpd.sh — mcpgate (spawn-fcgi, 2 processes x 2 workers)
# behind lighttpd configured with deploy/lighttpd/mcpgate.conf.in, on a
# loopback port. Prints TAP; exits non-zero on failure. Env: MCPGATE_BIN.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
. "$here/common.bash"

front_prepare lighttpd lighttpd:lighttpd || exit 1

# A test-only route to mcpgate for a path it does not know (404).
cat >"$MG_DIR/lighttpd-extra.conf" <<CONF
\$HTTP["url"] == "/mcpgate-test/unknown" {
    fastcgi.server = ( "/" => (( "socket" => "$MG_SOCK", "check-local" => "disable", "fix-root-scriptname" => "enable" )) )
}
CONF
start_ok "lighttpd starts with deploy/lighttpd/mcpgate.conf" start_lighttpd "$MG_PORT" "$MG_DIR/lighttpd-extra.conf"
front_run /mcpgate-test/unknown
