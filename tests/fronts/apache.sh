#!/usr/bin/env bash
# tests/fronts/apache.sh — mcpgate behind Apache httpd (event MPM), both
# recipes at once on one loopback port:
#   deploy/apache/mcpgate-fcgi.conf.in: mod_proxy_fcgi to spawn-fcgi
#     (2 processes x 2 workers), exact paths;
#   deploy/apache/mcpgate-cgi.conf.in: mcpgate as a CGI program at
#     /cgi-bin/mcpgate/ (PATH_INFO routing), one process per request.
# Prints TAP; exits non-zero on failure. Env: MCPGATE_BIN.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
. "$here/common.bash"

front_prepare apache apache2:apache2 || exit 1

# Apache runs its children, and so the CGI program, as www-data: give that
# user its own copies of the docs, the binary and a configuration, and a
# directory for the CGI processes' shared state file.
# (front_prepare published the docs in $MG_DIR/www, readable by all.)
mkdir -p "$MG_DIR/cgi" "$MG_DIR/cgi-state"
cp "$MCPGATE_BIN" "$MG_DIR/cgi/mcpgate"
chmod 755 "$MG_DIR/cgi/mcpgate"
# shellcheck disable=SC2034 # read by deploy/lib.sh
MG_CGI_BIN=$MG_DIR/cgi/mcpgate
MG_CGI_CONF=$MG_DIR/cgi.conf
gen_config "$MG_CGI_CONF" "$MG_BASE" /cgi-bin/mcpgate/mcp "$MG_DIR/cgi-state/state"
chmod 644 "$MG_CGI_CONF"
[ "$(id -u)" -ne 0 ] || chown www-data "$MG_DIR/cgi-state"

# A configuration of an attacker's choosing, readable by www-data (any readable file
# would do), naming another title.
gen_config "$MG_DIR/evil.conf" "$MG_BASE" /cgi-bin/mcpgate/mcp "$MG_DIR/cgi-state/evil-state"
printf '[gateway]\ntitle = ATTACKER-CHOSEN\n' >>"$MG_DIR/evil.conf"
chmod 644 "$MG_DIR/evil.conf"

# Test-only routes: to mcpgate for a path it does not know (404); and the CGI program
# at /mcpgate-test/cgi without the recipe's refusal of query strings without '=', so
# that Apache hands such a query string to it as its command line.
cat >"$MG_DIR/apache-extra.conf" <<CONF
ProxyPassMatch "^/mcpgate-test/unknown\$" "unix:$MG_SOCK|fcgi://mcpgate"
ScriptAlias "/mcpgate-test/cgi" "$MG_CGI_BIN"
<Location "/mcpgate-test/cgi">
    Require all granted
    SetEnv MCPGATE_CONFIG "$MG_CGI_CONF"
</Location>
CONF
start_ok "Apache starts with deploy/apache/mcpgate-fcgi.conf and mcpgate-cgi.conf" \
	start_apache "$MG_PORT" "$MG_DIR/apache-extra.conf"
if [ -z "$MG_FRONT_PID" ] || ! mg_alive "$MG_FRONT_PID"; then
	tap_done
	exit 1
fi

echo "# mod_proxy_fcgi"
front_checks "$MG_BASE" "" /mcpgate-test/unknown "$MG_LOG"
fc_exact
gone=
for pid in $FC_PIDS_BEFORE; do
	mg_alive "$pid" || gone="$gone $pid"
done
is "the mcpgate processes survived every request" "$gone" ""

echo "# CGI"
# mcpgate's stderr (the request log) goes to Apache's error log.
front_checks "$MG_BASE" /cgi-bin/mcpgate /cgi-bin/mcpgate/no-such-path "$MG_FRONT_LOG"
req GET /cgi-bin/mcpgate
is "GET /cgi-bin/mcpgate (no PATH_INFO): 404" "$R_STATUS" 404

echo "# CGI: the query string is not a command line"
q="-c+$MG_DIR/evil.conf"
req GET "/cgi-bin/mcpgate/.well-known/mcp?$q"
is "the recipe: GET /cgi-bin/mcpgate/.well-known/mcp?-c+FILE is refused (403)" "$R_STATUS" 403
req POST "/cgi-bin/mcpgate/mcp?$q" -H 'Content-Type: application/json' --data-binary '{}'
is "… and POST /cgi-bin/mcpgate/mcp?-c+FILE (403)" "$R_STATUS" 403
req GET "/.well-known/oauth-authorization-server?$q"
is "… and the root metadata path run as CGI (403)" "$R_STATUS" 403
req GET "/cgi-bin/mcpgate/.well-known/mcp?a=b"
is "a query string with '=' is served (200)" "$R_STATUS" 200
req GET "/mcpgate-test/cgi/.well-known/mcp?$q"
jcheck "without the recipe's rule (Apache passes -c FILE as arguments): served under MCPGATE_CONFIG's configuration, not the one named" \
	"$(cat "$R_B")" '.title == "Example gateway"'
for q in explain+--claims+%7B%7D --version -t+-c+/etc/passwd; do
	req GET "/mcpgate-test/cgi/.well-known/mcp?$q"
	if [ "$R_STATUS" = 200 ] && jq -e '.title == "Example gateway"' "$R_B" >/dev/null 2>&1; then
		pass "?$q: the discovery document, nothing the arguments would print"
	else
		fail "?$q: the discovery document, nothing the arguments would print" "$R_STATUS $(head -c 300 "$R_B")"
	fi
done
like "… each run says in the error log that it ignored its arguments, not what they were" \
	"$(grep -c 'a CGI run takes no arguments' "$MG_FRONT_LOG")" '^[4-9]$'
unlike "… and never echoes them" "$(cat "$MG_FRONT_LOG")" 'evil\.conf|--claims'
unlike "both recipes in one server: no overlapping Alias (each serves /docs/ alone)" "$(cat "$MG_FRONT_LOG")" 'AH00671'

# The CGI recipe alone, as a host that runs only it has it: the docs the gateway points
# clients to (docs-url: the origin of resource + /docs) are served too.
echo "# the CGI recipe alone: /docs/"
cgi_port=$(free_port)
MG_APACHE_RECIPES=cgi MG_APACHE_DIR=$MG_DIR/apache-cgi start_ok "Apache starts with deploy/apache/mcpgate-cgi.conf alone" \
	start_apache "$cgi_port"
cgi_base=http://127.0.0.1:$cgi_port
for f in "/docs/|^text/html" "/docs/openapi.json|^application/json" "/docs/site.css|^text/css" \
	"/docs/js/console.js|^text/javascript"; do
	want=${f#*|}; f=${f%%|*}
	curl -s --max-time 10 -o "$MG_DIR/cgi-doc" -D "$MG_DIR/cgi-doc.h" "$cgi_base$f"
	like "the CGI recipe: GET $f: 200, $want" \
		"$(head -n 1 "$MG_DIR/cgi-doc.h" | awk '{print $2}') $(hdr Content-Type "$MG_DIR/cgi-doc.h")" "^200 ${want#^}"
done
check "… /docs/js/console.js is www/js/console.js" cmp -s "$MG_DIR/www/js/console.js" "$MG_DIR/cgi-doc"
curl -s --max-time 10 -o /dev/null -D "$MG_DIR/cgi-doc.h" "$cgi_base/docs/"
like "… /docs/: Content-Security-Policy frame-ancestors 'none'" "$(hdr Content-Security-Policy "$MG_DIR/cgi-doc.h")" \
	"frame-ancestors 'none'"
is "… /docs/: X-Frame-Options DENY" "$(hdr X-Frame-Options "$MG_DIR/cgi-doc.h")" DENY
curl -s --max-time 10 -o /dev/null -D "$MG_DIR/cgi-doc.h" "$cgi_base/docs"
like "… /docs: 301 to /docs/" "$(head -n 1 "$MG_DIR/cgi-doc.h" | awk '{print $2}') $(hdr Location "$MG_DIR/cgi-doc.h")" \
	'^301 (http://127\.0\.0\.1:[0-9]+)?/docs/$'
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$cgi_base/cgi-bin/mcpgate/mcp/health")
is "… and the gateway still answers at /cgi-bin/mcpgate/mcp/health (200)" "$code" 200
# The connect page's URL is the origin + connect-path, at the host root: the CGI recipe
# runs the program there too. No upstream is user-oauth here: the program's own 404
# (an HttpError with its X-Request-Id), not Apache's.
curl -s --max-time 10 -o "$MG_DIR/cgi-connect" -D "$MG_DIR/cgi-connect.h" "$cgi_base/mcp/connect?ticket=t0"
is "the CGI recipe: GET /mcp/connect (host root): 404" "$(head -n 1 "$MG_DIR/cgi-connect.h" | awk '{print $2}')" 404
id=$(hdr X-Request-Id "$MG_DIR/cgi-connect.h")
if [ -n "$id" ] && jq -e --arg id "$id" '.request_id == $id' "$MG_DIR/cgi-connect" >/dev/null 2>&1; then
	pass "… the program's own HttpError (the recipe runs it there)"
else
	fail "… the program's own HttpError (the recipe runs it there)" "X-Request-Id: $id; body: $(head -c 300 "$MG_DIR/cgi-connect")"
fi
curl -s --max-time 10 -o /dev/null -D "$MG_DIR/cgi-connect.h" "$cgi_base/mcp/connect?-c+$MG_DIR/evil.conf"
is "… a query string without '=' there is refused (403)" "$(head -n 1 "$MG_DIR/cgi-connect.h" | awk '{print $2}')" 403
# … and its Client ID Metadata Document beside it (connect-path + /client), exactly.
curl -s --max-time 10 -o "$MG_DIR/cgi-connect" -D "$MG_DIR/cgi-connect.h" "$cgi_base/mcp/connect/client"
is "the CGI recipe: GET /mcp/connect/client (host root): 404" "$(head -n 1 "$MG_DIR/cgi-connect.h" | awk '{print $2}')" 404
id=$(hdr X-Request-Id "$MG_DIR/cgi-connect.h")
if [ -n "$id" ] && jq -e --arg id "$id" '.request_id == $id' "$MG_DIR/cgi-connect" >/dev/null 2>&1; then
	pass "… the program's own HttpError (the recipe runs it there)"
else
	fail "… the program's own HttpError (the recipe runs it there)" "X-Request-Id: $id; body: $(head -c 300 "$MG_DIR/cgi-connect")"
fi
for p in /mcp/connectx /mcp/connect/x /mcp/connect/clientx /mcp/connect/client/x; do
	curl -s --max-time 10 -o /dev/null -D "$MG_DIR/cgi-connect.h" "$cgi_base$p"
	is "… $p does not reach the program (no X-Request-Id)" "$(hdr X-Request-Id "$MG_DIR/cgi-connect.h")" ""
done
tap_done
