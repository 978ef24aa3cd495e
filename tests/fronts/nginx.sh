#!/usr/bin/env bash
# tests/fronts/nginx.sh — mcpgate (spawn-fcgi, 2 processes x 2 workers) behind
# nginx configured with deploy/nginx/mcpgate.conf.in, on a loopback port.
# Prints TAP; exits non-zero on failure. Env: MCPGATE_BIN (default src/mcpgate).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
. "$here/common.bash"

front_prepare nginx nginx:nginx-light || exit 1

# A test-only location: the recipe hands mcpgate only known paths, and the
# 404 of an unknown one is part of what must not leak between requests.
cat >"$MG_DIR/nginx-extra.conf" <<CONF
location = /mcpgate-test/unknown {
    include fastcgi_params;
    fastcgi_pass unix:$MG_SOCK;
}
CONF
start_ok "nginx starts with deploy/nginx/mcpgate.conf" start_nginx "$MG_PORT" "$MG_DIR/nginx-extra.conf"
front_run /mcpgate-test/unknown
