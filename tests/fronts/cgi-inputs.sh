#!/usr/bin/env bash
# tests/fronts/cgi-inputs.sh — what the web servers hand mcpgate from a client besides
# the request itself, through the real servers: mcpgate as a CGI program under
# lighttpd's mod_cgi and under nginx with fcgiwrap (ways a site may run it; Apache's
# mod_cgid is tests/fronts/apache.sh), and mcpgate under spawn-fcgi behind the nginx,
# lighttpd and Apache recipes.
#
#  - A query string without '=' (RFC 3875 §4.4): neither lighttpd's mod_cgi nor fcgiwrap
#    makes it a command line (Apache does; apache.sh): ?-c+FILE is served under
#    MCPGATE_CONFIG's configuration, and mcpgate has no argument to ignore.
#  - A "Proxy:" request header (httpoxy): nginx with fcgiwrap hands it to the CGI program
#    as HTTP_PROXY (lighttpd drops it); mcpgate's outgoing request of that run does not go
#    through the client's proxy.
#  - A header named X-Forwarded-For with other punctuation (X_Forwarded_For,
#    X.Forwarded.For): nginx and Apache drop it; lighttpd hands it to mcpgate as
#    X-Forwarded-For, joined to the real one, so behind lighttpd a client a trusted proxy
#    passes it for can name an allowed address for /metrics (deploy/README.md says so);
#    with lighttpd's mod_extforward reading the client and trusted-proxies empty, the
#    real header alone counts.
# Prints TAP; exits non-zero on failure. Env: MCPGATE_BIN.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"

suite_begin spawn-fcgi:spawn-fcgi curl:curl jq:jq python3:python3 nginx:nginx-light lighttpd:lighttpd \
	apache2:apache2 fcgiwrap:fcgiwrap
# Apache runs as www-data: the FastCGI socket is 0666 (start_mcpgate_fcgi). The CGI
# programs run as this user (lighttpd and fcgiwrap here run as it).
cp "$MCPGATE_BIN" "$T/mcpgate"
chmod 755 "$T/mcpgate"

# --- configurations ---------------------------------------------------------------------
# gw.conf: the operator's (its resource names the nginx port); trusted-proxies is this
# host (curl stands in for a proxy), and /metrics is for 127.0.0.1 and 10.9.9.9 only.
NGX_PORT=$(free_port)
gen_config "$T/gw.conf" "http://127.0.0.1:$NGX_PORT" /mcp "$T/state"
sed -i 's|^workers = 4$|workers = 4\ntrusted-proxies = 127.0.0.1|' "$T/gw.conf"
printf '\n[metrics]\nallow = 127.0.0.1 10.9.9.9\n' >> "$T/gw.conf"
# plain.conf: the same without trusted-proxies (the client is REMOTE_ADDR).
sed '/^trusted-proxies = /d' "$T/gw.conf" > "$T/plain.conf"
# cgi.conf and op.conf: gw.conf with state files of their own, for the CGI runs under
# fcgiwrap without and with the operator's proxy (a failed metadata fetch is not tried
# again within 10 s for a state file: each is its file's first).
sed "s|^state = .*|state = $T/state-cgi|" "$T/gw.conf" > "$T/cgi.conf"
sed "s|^state = .*|state = $T/state-op|" "$T/gw.conf" > "$T/op.conf"
# evil.conf: a configuration of a client's choosing.
gen_config "$T/evil.conf" http://attacker.example /mcp "$T/state"
for c in gw plain cgi op evil; do
	check "mcpgate -t accepts $c.conf" "$MCPGATE_BIN" -t -c "$T/$c.conf"
done

# A listener standing in for a client's proxy: it records every connection.
python3 -c '
import os, socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1] + ".new", "w").write(str(s.getsockname()[1])); os.rename(sys.argv[1] + ".new", sys.argv[1])
while True:
    c, _ = s.accept()
    with open(sys.argv[2], "a") as f: f.write("connection\n")
    c.close()
' "$T/proxy.port" "$T/proxy.hits" &
mg_track $!
wait_until 30 test -s "$T/proxy.port" || bail "the proxy listener started"
PROXY=http://127.0.0.1:$(cat "$T/proxy.port")

# A CGI program that prints what it was given: its arguments and HTTP_PROXY.
cat > "$T/env.cgi" <<'CGI'
#!/bin/sh
printf 'Content-Type: text/plain\r\n\r\n'
printf 'argc=%s\n' "$#"
printf 'HTTP_PROXY=%s\n' "${HTTP_PROXY:-}"
CGI
chmod 755 "$T/env.cgi"

# --- the servers --------------------------------------------------------------------------
start_ok "spawn-fcgi: mcpgate (trusted-proxies = 127.0.0.1)" \
	start_mcpgate_fcgi "$T/gw.sock" "$T/gw.conf" 1 2 || bail "mcpgate started"
spawn-fcgi -s "$T/fcgiwrap.sock" -P "$T/fcgiwrap.pid" -- /usr/sbin/fcgiwrap > "$T/fcgiwrap.out" 2>&1
[ -s "$T/fcgiwrap.pid" ] && mg_track "$(cat "$T/fcgiwrap.pid")"
wait_until 30 test -S "$T/fcgiwrap.sock" || bail "fcgiwrap started under spawn-fcgi" "$(cat "$T/fcgiwrap.out")"

# nginx: the recipe (to gw.sock), and mcpgate and env.cgi as CGI programs through fcgiwrap
# at /cgi/... and /env, the way fcgiwrap is set up (SCRIPT_FILENAME the program, the
# other params as nginx's fastcgi_params has them).
cat > "$T/nginx-extra.conf" <<CONF
location /cgi/ {
    include fastcgi_params;
    fastcgi_split_path_info ^(/cgi)(/.*)\$;
    fastcgi_param SCRIPT_FILENAME $T/mcpgate;
    fastcgi_param SCRIPT_NAME /cgi;
    fastcgi_param PATH_INFO \$fastcgi_path_info;
    fastcgi_param MCPGATE_CONFIG $T/cgi.conf;
    fastcgi_pass unix:$T/fcgiwrap.sock;
}
# the same with the operator's own proxy set (lower-case http_proxy): the control
location /cgi-op/ {
    include fastcgi_params;
    fastcgi_split_path_info ^(/cgi-op)(/.*)\$;
    fastcgi_param SCRIPT_FILENAME $T/mcpgate;
    fastcgi_param SCRIPT_NAME /cgi-op;
    fastcgi_param PATH_INFO \$fastcgi_path_info;
    fastcgi_param MCPGATE_CONFIG $T/op.conf;
    fastcgi_param http_proxy $PROXY;
    fastcgi_pass unix:$T/fcgiwrap.sock;
}
location = /env {
    include fastcgi_params;
    fastcgi_param SCRIPT_FILENAME $T/env.cgi;
    fastcgi_pass unix:$T/fcgiwrap.sock;
}
CONF
start_ok "nginx: the recipe, and mcpgate as CGI through fcgiwrap" start_nginx "$NGX_PORT" "$T/nginx-extra.conf" \
	|| bail "nginx started"

# lighttpd: the recipe (to gw.sock), and mcpgate and env.cgi as mod_cgi programs.
LTD_PORT=$(free_port)
cat > "$T/lighttpd-extra.conf" <<CONF
server.modules += ( "mod_cgi" )
alias.url += ( "/cgi" => "$T/mcpgate", "/env" => "$T/env.cgi" )
\$HTTP["url"] =~ "^/(cgi|env)(/|\$)" {
    cgi.assign = ( "" => "" )
    setenv.add-environment = ( "MCPGATE_CONFIG" => "$T/gw.conf" )
}
CONF
start_ok "lighttpd: the recipe, and mcpgate as a mod_cgi program" start_lighttpd "$LTD_PORT" "$T/lighttpd-extra.conf" \
	|| bail "lighttpd started"
LTD_PID=$MG_FRONT_PID

APA_PORT=$(free_port)
start_ok "Apache: the recipes" start_apache "$APA_PORT" || bail "Apache started"

# get URL [curl args]: the status; headers in $T/h, body in $T/b.
get() {
	local url=$1
	shift
	curl -sS --max-time 30 -o "$T/b" -D "$T/h" -w '%{http_code}' "$@" "$url" 2>> "$T/curl.err"
}

# --- a query string without '=' -------------------------------------------------------------
for front in "nginx + fcgiwrap|$NGX_PORT" "lighttpd mod_cgi|$LTD_PORT"; do
	name=${front%|*}
	port=${front#*|}
	st=$(get "http://127.0.0.1:$port/env?-c+$T/evil.conf")
	is "$name: a query without '=' is no command line (argc 0)" "$st $(sed -n 's/^argc=//p' "$T/b")" "200 0"
	st=$(get "http://127.0.0.1:$port/cgi/.well-known/mcp?-c+$T/evil.conf")
	is "$name: mcpgate ?-c+FILE is served under MCPGATE_CONFIG's configuration" \
		"$st $(jq -r .endpoint "$T/b" 2>/dev/null)" "200 http://127.0.0.1:$NGX_PORT/mcp"
done

# --- a Proxy: header ------------------------------------------------------------------------
st=$(get "http://127.0.0.1:$NGX_PORT/env" -H "Proxy: $PROXY")
is "nginx + fcgiwrap: the Proxy header reaches a CGI program as HTTP_PROXY" \
	"$st $(sed -n 's/^HTTP_PROXY=//p' "$T/b")" "200 $PROXY"
st=$(get "http://127.0.0.1:$LTD_PORT/env" -H "Proxy: $PROXY")
is "lighttpd mod_cgi: the Proxy header does not (lighttpd drops it)" "$st $(sed -n 's/^HTTP_PROXY=//p' "$T/b")" "200 "
# The issuer is a closed port: the metadata fetch fails (500) whichever way it goes; the
# listener would see it if it went through the client's proxy.
st=$(get "http://127.0.0.1:$NGX_PORT/cgi/.well-known/oauth-authorization-server" -H "Proxy: $PROXY")
is "nginx + fcgiwrap, mcpgate with a Proxy header: the issuer asked directly (closed port: 500)" "$st" 500
is "… and nothing reached the client's proxy" "$(cat "$T/proxy.hits" 2>/dev/null | wc -l)" 0
# The control: the operator's http_proxy (which no request header can set) is libcurl's.
get "http://127.0.0.1:$NGX_PORT/cgi-op/.well-known/oauth-authorization-server" > /dev/null
wait_until 30 test -s "$T/proxy.hits"
is "control: with the operator's http_proxy the same fetch reaches the listener" "$(cat "$T/proxy.hits" 2>/dev/null | wc -l)" 1

# --- headers named like X-Forwarded-For -----------------------------------------------------
# curl at 127.0.0.1 is the trusted proxy; the client it forwards for is 192.0.2.7, not
# allowed to read /metrics; the look-alike header names 10.9.9.9, allowed.
spoof() {	# spoof PORT NAME: /metrics with the real header and a look-alike: the status
	get "http://127.0.0.1:$1/metrics" -H 'X-Forwarded-For: 192.0.2.7' -H "$2: 10.9.9.9"
}
for name in X_Forwarded_For X.Forwarded.For; do
	is "nginx drops a header named $name: the client is 192.0.2.7 (403)" "$(spoof "$NGX_PORT" "$name")" 403
	is "Apache drops a header named $name: 403" "$(spoof "$APA_PORT" "$name")" 403
	is "lighttpd hands on a header named $name as X-Forwarded-For: behind a trusted proxy that passes it, 10.9.9.9 (200)" \
		"$(spoof "$LTD_PORT" "$name")" 200
done
is "a client that is no trusted proxy names nothing, through lighttpd either (REMOTE_ADDR is the client)" \
	"$(get "http://127.0.0.1:$LTD_PORT/metrics" -H 'X_Forwarded_For: 10.9.9.9' --interface 127.0.0.2)" 403

# lighttpd reading the client with mod_extforward (the proxy named there), mcpgate without
# trusted-proxies: the look-alike is ignored, the real header is the client.
kill "$LTD_PID" 2>/dev/null
wait_until 30 sh -c "! kill -0 $LTD_PID 2>/dev/null" || fail "the first lighttpd stops"
start_ok "spawn-fcgi: mcpgate without trusted-proxies" \
	start_mcpgate_fcgi "$T/plain.sock" "$T/plain.conf" 1 2 || bail "mcpgate started"
cat > "$T/lighttpd-extforward.conf" <<CONF
server.modules += ( "mod_extforward" )
extforward.forwarder = ( "127.0.0.1" => "trust" )
CONF
LTD_PORT=$(free_port)
start_ok "lighttpd with mod_extforward" start_lighttpd "$LTD_PORT" "$T/lighttpd-extforward.conf" \
	|| bail "lighttpd started"
for name in X_Forwarded_For X.Forwarded.For; do
	is "lighttpd + mod_extforward, trusted-proxies empty: a header named $name is ignored (403)" \
		"$(spoof "$LTD_PORT" "$name")" 403
done
is "lighttpd + mod_extforward: X-Forwarded-For from the proxy is the client (10.9.9.9: 200)" \
	"$(get "http://127.0.0.1:$LTD_PORT/metrics" -H 'X-Forwarded-For: 10.9.9.9')" 200
tap_done
