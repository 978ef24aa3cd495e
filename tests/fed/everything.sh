#!/usr/bin/env bash
# The official reference server @modelcontextprotocol/server-everything (npm,
# `streamableHttp` transport on PORT) behind the gateway as [upstream "everything"]
# (prefix ev_), reached by the official SDK client (tests/fed/gateway-client.mjs, with
# an oidc-provider token) through the two ways mcpgate runs:
#
#  - nginx + spawn-fcgi (2 processes x 2 threads), deploy/ recipes;
#  - Apache httpd with mcpgate as a plain CGI program (deploy/apache/mcpgate-cgi.conf.in,
#    one process per request, the catalog shared through the state file).
#
# Through each: the tool list equals server-everything's own (asked directly by the same
# client), every name prefixed; echo and get-sum answer as the upstream does; the
# long-running operation's progress notifications arrive before its result; wrong
# arguments give the upstream's error promptly. Prints TAP. Env: MCPGATE_BIN.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi apache2:apache2 curl:curl jq:jq \
	--node @modelcontextprotocol/server-everything/dist/index.js @modelcontextprotocol/sdk/package.json
EVERYTHING=$top/tests/node_modules/@modelcontextprotocol/server-everything/dist/index.js
CLIENT=$here/gateway-client.mjs

# --- server-everything --------------------------------------------------------------------
EV_PORT=$(free_port)
EV_URL=http://127.0.0.1:$EV_PORT/mcp
PORT=$EV_PORT node "$EVERYTHING" streamableHttp > "$T/everything.log" 2>&1 &
EV_PID=$!
mg_track "$EV_PID"
for _ in $(seq 1 600); do
	curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$EV_PORT/" && break
	mg_alive "$EV_PID" || break
	sleep 0.1
done
mg_alive "$EV_PID" || bail "server-everything started" "$(tail -n 5 "$T/everything.log")"
pass "server-everything $(jq -r .version "$top/tests/node_modules/@modelcontextprotocol/server-everything/package.json") (streamableHttp) at $EV_URL"

# --- the gateway: nginx + spawn-fcgi, and Apache with mcpgate as CGI ---------------------
MG_PORT=$(free_port)
MG_BASE=http://127.0.0.1:$MG_PORT
NGX_PORT=$(free_port)
NGX_URL=http://127.0.0.1:$NGX_PORT/mcp
CGI_URL=$MG_BASE/cgi-bin/mcpgate/mcp
start_idp "$NGX_URL" "$CGI_URL"
upstream="[upstream \"everything\"]
url = $EV_URL
prefix = ev_
timeout-ms = 15000"
gateway_conf "$T/gw.conf" "$NGX_URL"
printf '%s\n' "$upstream" >> "$T/gw.conf"
# Apache runs CGI programs as www-data: their own copies of the binary, configuration,
# secret and state directory.
mkdir -p "$T/cgi" "$T/cgi-state" "$T/empty"
cp "$MCPGATE_BIN" "$T/cgi/mcpgate"
chmod 755 "$T/cgi/mcpgate"
cp "$T/secret" "$T/cgi/secret"
sed -e "s|^resource = .*|resource = $CGI_URL|" -e "s|^state = .*|state = $T/cgi-state/state|" \
	-e "s|^log-file = .*|log-file = $T/cgi-state/gw.log|" -e "s|^client-secret-file = .*|client-secret-file = $T/cgi/secret|" \
	"$T/gw.conf" > "$T/cgi/gw.conf"
chmod 644 "$T/cgi/gw.conf"
chmod 640 "$T/cgi/secret"	# a secret: its group reads it, others not (cfgfile_judge)
[ "$(id -u)" -ne 0 ] || { chown -R www-data "$T/cgi-state"; chgrp www-data "$T/cgi/secret"; }
chmod 755 "$T" "$T/cgi"
# (-t judges the files for the user running it: the CGI configuration as www-data, whose
# state directory it is, with the binary Apache runs)
as_cgi=()
[ "$(id -u)" -ne 0 ] || as_cgi=(runuser -u www-data --)
if out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1) && "${as_cgi[@]}" "$T/cgi/mcpgate" -t -c "$T/cgi/gw.conf" > /dev/null 2>&1; then
	pass "mcpgate -t accepts both configurations ([upstream \"everything\"], prefix ev_)"
else
	bail "mcpgate -t accepts the configurations" "$out"
fi
MG_WWW=$top/www
if start_mcpgate_fcgi "$T/mcpgate.sock" "$T/gw.conf" 2 2 >> "$T/start.out" 2>&1 \
	&& start_nginx "$NGX_PORT" >> "$T/start.out" 2>&1 \
	&& MG_CGI_BIN=$T/cgi/mcpgate MG_CGI_CONF=$T/cgi/gw.conf start_apache "$MG_PORT" >> "$T/start.out" 2>&1; then
	pass "spawn-fcgi (2 x 2) + mcpgate behind nginx ($NGX_URL); Apache with mcpgate as CGI ($CGI_URL)"
else
	bail "the fronts started" "$(tail -n 20 "$T/start.out")"
fi
FCGI_PIDS=$MG_FCGI_PIDS
TOKEN_NGX=$(mint --client machine-acme --scope mcp:tools --resource "$NGX_URL")
TOKEN_CGI=$(mint --client machine-acme --scope mcp:tools --resource "$CGI_URL")
[ -n "$TOKEN_NGX" ] && [ "$TOKEN_NGX" != null ] && [ -n "$TOKEN_CGI" ] && [ "$TOKEN_CGI" != null ] \
	|| bail "client_credentials tokens for both resources" "$(tail -n 5 "$T/idp.log")"

# --- what server-everything offers, asked directly by the same client ----------------------
WATCHDOG_MS=90000 run_bounded 100 "$T/direct.out" "$T/direct.err" node "$CLIENT" "$EV_URL" '{"op":"list","auth":false}' \
	'{"op":"call","name":"echo","arguments":{"message":"héllo ✓"},"auth":false}'
direct=$(cat "$T/direct.out")
D_TOOLS=$(jq -sc '.[0].tools | map(.name) | sort' <<<"$direct" 2>/dev/null)
D_ECHO=$(jq -sc '.[1].result' <<<"$direct" 2>/dev/null)
jcheck "server-everything's own tools/list (directly, SDK client): its tools, echo among them" \
	"$(jq -nc --argjson t "${D_TOOLS:-null}" --argjson e "${D_ECHO:-null}" '{n: ($t | length), echo: ($t | index("echo")), e: $e}')" \
	'.n >= 10 and .echo != null and .e.content[0].text != null'

# --- the SDK client through each front -------------------------------------------------------
for front in nginx cgi; do
	if [ "$front" = nginx ]; then url=$NGX_URL tok=$TOKEN_NGX; else url=$CGI_URL tok=$TOKEN_CGI; fi
	t0=$(date +%s%N)
	MCP_BEARER_TOKEN=$tok WATCHDOG_MS=120000 run_bounded 130 "$T/$front.client.out" "$T/$front.client.err" node "$CLIENT" "$url" \
		'{"op":"list","tag":"list"}' \
		'{"op":"call","tag":"echo","name":"ev_echo","arguments":{"message":"héllo ✓"}}' \
		'{"op":"call","tag":"sum","name":"ev_get-sum","arguments":{"a":19,"b":23}}' \
		'{"op":"call","tag":"long","name":"ev_trigger-long-running-operation","arguments":{"duration":1.5,"steps":3},"progress":true,"timeout":20000}' \
		'{"op":"call","tag":"bad","name":"ev_get-sum","arguments":{"a":"nineteen"}}'
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	lines=$(cat "$T/$front.client.out")
	op() { jq -c --arg t "$1" 'select(.tag == $t)' <<<"$lines" 2>/dev/null | head -n 1; }
	jcheck "$front: the SDK client lists exactly server-everything's tools, each as ev_<name>" \
		"$(jq -c --argjson d "${D_TOOLS:-null}" '{n: (.tools | length), error, same: ((.tools | map(.name) | sort) == ($d | map("ev_" + .) | sort))}' <<<"$(op list)")" \
		'.error == null and .same'
	jcheck "$front: ev_echo answers what echo answers directly" \
		"$(jq -c --argjson d "${D_ECHO:-null}" '{error, same: (.result.content == $d.content), result}' <<<"$(op echo)")" \
		'.error == null and .same'
	jcheck "$front: ev_get-sum of 19 and 23 says 42" \
		"$(jq -c '{error, text: .result.content[0].text}' <<<"$(op sum)")" \
		'.error == null and (.text | test("42"))'
	jcheck "$front: the long-running operation's progress (3 steps, 0.5 s apart) arrives as it happens, before the result" \
		"$(jq -c '{error, ms, n: (.progress | length), t: [.progress[].t], text: .result.content[0].text}' <<<"$(op long)")" \
		'.error == null and .n == 3 and .t[0] < .ms - 700 and .t[1] < .ms - 300 and .t[2] <= .ms and .ms >= 1400'
	jcheck "$front: wrong arguments give the upstream's error (a tool error or JSON-RPC error), promptly" \
		"$(jq -c '{error, isError: .result.isError, ms}' <<<"$(op bad)")" \
		'(.error != null or .isError == true) and .ms < 10000'
	mcp_n=$(grep -c . <<<"$lines")
	is "$front: the client ran every operation (no watchdog; $ms ms)" "$mcp_n" 5
done

# --- afterwards ------------------------------------------------------------------------------
gone=
for pid in $FCGI_PIDS; do mg_alive "$pid" || gone="$gone $pid"; done
is "the mcpgate FastCGI processes survived the run" "${gone:-none}" none
cgi_lines=$(grep -c '"path":"/mcp"' "$T/cgi-state/gw.log" 2>/dev/null)
if [ "${cgi_lines:-0}" -ge 5 ]; then
	pass "the CGI runs served the client (${cgi_lines} /mcp lines in their log)"
else
	fail "the CGI runs served the client" "${cgi_lines:-0} /mcp lines; $(tail -n 5 "$MG_FRONT_LOG" 2>/dev/null)"
fi
leaks=0
for f in "$T/gw.log" "$T/cgi-state/gw.log" "$T"/nginx/*.log "$T"/apache/*.log "$T/everything.log"; do
	[ -f "$f" ] || continue
	grep -qF -- "${TOKEN_NGX:0:12}" "$f" && leaks=$((leaks + 1))
	grep -qF -- "${TOKEN_CGI:0:12}" "$f" && leaks=$((leaks + 1))
done
is "no caller token in the gateway's, the fronts' or server-everything's logs" "$leaks" 0
tap_done
