#!/usr/bin/env bash
# Prometheus metrics ([metrics], docs/ARCHITECTURE.md §3, §9) through real nginx (the
# deploy/ recipe routes /metrics) in front of mcpgate under spawn-fcgi (2 processes x 2
# threads), and as CGI runs with the same configuration, so the same state file, with an
# oidc-provider token and the SDK fixture upstream:
#
#  - a scrape is valid Prometheus text: `promtool check metrics` (Debian's prometheus);
#  - host totals: known traffic, some through nginx, some as CGI runs, moves each series
#    by exactly what was sent — requests by route and status, JSON-RPC methods, tool
#    calls by tool and outcome (allowed, denied by the policy or by a tool limit, a tool
#    the catalog lacks as "other"), token cache hits and misses, the introspection and
#    upstream histograms, rate-limit refusals by class — whichever process answers the
#    scrape: repeated scrapes through nginx and a scrape of a CGI run agree;
#  - the label space is bounded: a tool the catalog lacks is "other", never its name;
#  - access: an address [metrics] allow does not name gets 403 with an HttpError body,
#    through nginx (X-Forwarded-For from a trusted proxy) and as CGI; without [metrics]
#    the path is 404.
# Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq promtool:prometheus \
	--node @modelcontextprotocol/sdk/package.json

# --- the fixture, the IdP, the gateway ------------------------------------------------------
fixture_and_idp fx --port 0 --name fx --quiet

gateway_conf "$T/gw.conf" "$GW_URL" 'trusted-proxies = 127.0.0.1'
cat >> "$T/gw.conf" <<CONF
[metrics]
allow = 127.0.0.1 ::1
[upstream "fx"]
url = ${FIXTURE_URL[fx]}
prefix = fx_
[group "all"]
tools = *
[group "rare"]
tools = fx_test_simple_text
limit-tool = 2/3600
[tenant "acme"]
groups = all rare
deny = fx_test_error_handling
CONF
start_gateway "$GW_PORT" "nginx + spawn-fcgi (2 processes x 2 threads) + mcpgate with [metrics]"
WARM=$(mint --client machine-acme --scope mcp:tools --resource "$GW_URL")
TOKEN=$(mint --client machine-acme --scope mcp:tools --resource "$GW_URL")
if [ -z "$TOKEN" ] || [ "$TOKEN" = null ] || [ "$WARM" = "$TOKEN" ]; then
	bail "two tokens for $GW_URL" "$(tail -n 5 "$T/idp.log")"
fi

# --- requests ------------------------------------------------------------------------------
rpc() { jq -nc --arg m "$1" --argjson p "${2:-{\}}" '{jsonrpc: "2.0", id: 1, method: $m, params: $p}'; }
call() { rpc tools/call "$(jq -nc --arg n "$1" '{name: $n, arguments: {}}')"; }
# ngx BODY [TOKEN]: POST through nginx; prints the status, the body in $T/b.
ngx() {
	curl -sS --max-time 30 -o "$T/b" -w '%{http_code}' -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H "Authorization: Bearer ${2:-$TOKEN}" \
		--data-binary "$1" "$GW_URL" 2>> "$T/curl.err"
}
# cgi METHOD PATH [BODY [REMOTE_ADDR [CONF]]]: one CGI run; prints the status, the body in $T/b
# (HTTP_ORIGIN_CGI: an Origin header).
cgi() {
	local body=${3:-} env=(PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 SERVER_PROTOCOL=HTTP/1.1 SERVER_NAME=127.0.0.1
		SERVER_PORT="$GW_PORT" REMOTE_ADDR="${4:-127.0.0.1}" REQUEST_METHOD="$1" SCRIPT_NAME="$2" PATH_INFO=
		QUERY_STRING= HTTP_HOST="127.0.0.1:$GW_PORT" HTTP_ACCEPT='application/json, text/event-stream'
		HTTP_AUTHORIZATION="Bearer $TOKEN" ${HTTP_ORIGIN_CGI:+HTTP_ORIGIN="$HTTP_ORIGIN_CGI"})
	[ "$1" != POST ] || env+=(CONTENT_TYPE=application/json CONTENT_LENGTH="$(printf '%s' "$body" | wc -c)")
	printf '%s' "$body" | timeout -k 2 60 env -i "${env[@]}" MCPGATE_CONFIG="${5:-$T/gw.conf}" "$MCPGATE_BIN" > "$T/cgi.out" 2>> "$T/cgi.err"
	sed '1,/^\r$/d' "$T/cgi.out" > "$T/b"
	st=$(sed -n '1,/^\r$/p' "$T/cgi.out" | sed -n 's/^Status: \([0-9]*\).*/\1/p')
	echo "${st:-200}"
}
# scrape_ngx OUT / scrape_cgi OUT: the metrics text; the status is checked.
scrape_ngx() { curl -sS --max-time 10 -o "$1" -w '%{http_code}' "http://127.0.0.1:$GW_PORT/metrics" 2>> "$T/curl.err"; }
scrape_cgi() { local st; st=$(cgi GET /metrics); cp "$T/b" "$1"; echo "$st"; }
# v FILE SERIES: a sample's value (0 when absent), SERIES as written, labels and all.
v() { awk -v s="$2" '$1 == s { print $2; f = 1 } END { if (!f) print 0 }' "$1"; }
# d SERIES: its growth from scrape A to scrape B.
d() { echo $(( $(v "$T/B" "$1") - $(v "$T/A" "$1") )); }

# Warm-up with another token: the catalog is fetched, the health route seen.
st=$(ngx "$(rpc tools/list)" "$WARM")
jcheck "warm-up: tools/list through nginx lists the fixture's tools" "$(cat "$T/b")" '.result.tools | map(.name) | index("fx_echo") != null'

st=$(scrape_ngx "$T/A")
is "scrape A through nginx: 200" "$st" 200
if promtool check metrics < "$T/A" > "$T/promtool.A" 2>&1; then pass "scrape A: promtool check metrics"; else fail "scrape A: promtool check metrics" "$(head -20 "$T/promtool.A")"; fi

# The known traffic (the token's first use is its one miss: one introspection).
for i in 1 2 3 4; do st=$(ngx "$(call fx_echo)"); [ "$st" = 200 ] || fail "echo $i through nginx: 200" "$st $(cat "$T/b")"; done
for i in 1 2 3; do st=$(cgi POST /mcp "$(call fx_echo)"); [ "$st" = 200 ] || fail "echo $i as CGI: 200" "$st $(cat "$T/b")"; done
for i in 1 2; do st=$(ngx "$(call fx_test_error_handling)"); is "a denied tool through nginx: 403" "$st" 403; done
sts=
for i in 1 2 3; do sts="$sts $(cgi POST /mcp "$(call fx_test_simple_text)")"; done
is "a tool limited to 2 an hour, as CGI: 200 200 429" "$sts" " 200 200 429"
st=$(cgi POST /mcp "$(call no_such_tool)")
jcheck "a tool the catalog lacks, as CGI: 200, -32602" "$(jq -c --arg st "$st" '. + {st: $st}' "$T/b" 2>/dev/null)" \
	'.st == "200" and .error.code == -32602'
st=$(ngx "$(rpc ping)"); is "ping through nginx: 200" "$st" 200
for i in 1 2; do st=$(ngx "$(rpc tools/list)"); [ "$st" = 200 ] || fail "tools/list through nginx: 200" "$st"; done
for i in 1 2 3; do curl -sS --max-time 10 -o /dev/null "http://127.0.0.1:$GW_PORT/mcp/health"; done
st=$(cgi GET /nope); is "an unknown path as CGI: 404" "$st" 404

st=$(scrape_ngx "$T/B")
is "scrape B through nginx: 200" "$st" 200
if promtool check metrics < "$T/B" > "$T/promtool.B" 2>&1; then pass "scrape B: promtool check metrics (no problem reported)"; else fail "scrape B: promtool check metrics" "$(head -20 "$T/promtool.B")"; fi
like "scrape B: the Prometheus text content type" "$(curl -sS -o /dev/null -D - "http://127.0.0.1:$GW_PORT/metrics" | tr -d '\r' | grep -i '^content-type:')" \
	'text/plain; version=0.0.4'

# --- exact growth, host totals ----------------------------------------------------------------
T_='mcpgate_tool_calls_total'
got="echo allowed $(d "$T_{tool=\"fx_echo\",outcome=\"allowed\"}")"
got="$got, error_handling denied $(d "$T_{tool=\"fx_test_error_handling\",outcome=\"denied\"}")"
got="$got, simple_text allowed $(d "$T_{tool=\"fx_test_simple_text\",outcome=\"allowed\"}") denied $(d "$T_{tool=\"fx_test_simple_text\",outcome=\"denied\"}")"
got="$got, other error $(d "$T_{tool=\"other\",outcome=\"error\"}")"
is "tool calls by tool and outcome: 4 + 3 echo (nginx + CGI), 2 denied by the policy, 2 allowed and 1 denied by the tool limit, 1 unknown as other" \
	"$got" "echo allowed 7, error_handling denied 2, simple_text allowed 2 denied 1, other error 1"
unlike "the unknown tool's name is no label value" "$(cat "$T/B")" 'no_such_tool'
R='mcpgate_jsonrpc_requests_total'
is "JSON-RPC requests by method: 13 tools/call, 1 ping, 2 tools/list" \
	"$(d "$R{method=\"tools/call\"}") $(d "$R{method=\"ping\"}") $(d "$R{method=\"tools/list\"}")" "13 1 2"
H='mcpgate_http_requests_total'
is "requests by route and status: /mcp 200 13, 403 2, 429 1; /mcp/health 200 3; none 404 1" \
	"$(d "$H{route=\"/mcp\",status=\"200\"}") $(d "$H{route=\"/mcp\",status=\"403\"}") $(d "$H{route=\"/mcp\",status=\"429\"}") $(d "$H{route=\"/mcp/health\",status=\"200\"}") $(d "$H{route=\"none\",status=\"404\"}")" \
	"13 2 1 3 1"
is "… and scrape A itself: /metrics 200 one more" "$(d "$H{route=\"/metrics\",status=\"200\"}")" 1
is "rate-limit refusals by class: tool 1" "$(d 'mcpgate_rate_limited_total{class="tool"}')" 1
is "token cache: 16 checks, 1 miss (the token's first use), 15 hits" \
	"$(d mcpgate_token_cache_misses_total) $(d mcpgate_token_cache_hits_total)" "1 15"
is "introspection: one, no error" "$(d mcpgate_introspection_duration_seconds_count) $(d mcpgate_introspection_errors_total)" "1 0"
U='mcpgate_upstream_request_duration_seconds'
is "upstream calls of fx: 9 (7 echo, 2 simple_text), no error; its +Inf bucket is its count" \
	"$(d "${U}_count{upstream=\"fx\"}") $(d "${U}_bucket{upstream=\"fx\",le=\"+Inf\"}") $(d 'mcpgate_upstream_errors_total{upstream="fx"}')" "9 9 0"
is "upstream fx is up" "$(v "$T/B" 'mcpgate_upstream_up{upstream="fx"}')" 1
like "the token cache holds entries" "$(v "$T/B" mcpgate_token_cache_entries)" '^[1-9][0-9]*$'

# Whichever process answers: three more scrapes through nginx (two FastCGI processes) and
# one of a CGI run show the same tool and method totals.
series='mcpgate_tool_calls_total|mcpgate_jsonrpc_requests_total|mcpgate_rate_limited_total|mcpgate_token_cache_(hits|misses)_total'
grep -E "^($series)" "$T/B" > "$T/B.sel"
same=1
for i in 1 2 3; do
	scrape_ngx "$T/C$i" > /dev/null
	grep -E "^($series)" "$T/C$i" | cmp -s - "$T/B.sel" || { same=0; diff "$T/B.sel" <(grep -E "^($series)" "$T/C$i") > "$T/diff.$i"; }
done
is "three more scrapes through nginx: the same totals" "$same" 1
st=$(scrape_cgi "$T/G")
is "a scrape of a CGI run: 200" "$st" 200
if grep -E "^($series)" "$T/G" | cmp -s - "$T/B.sel"; then pass "… the same totals as through nginx (one state file for the host)"
else fail "… the same totals as through nginx" "$(diff "$T/B.sel" <(grep -E "^($series)" "$T/G") | head -20)"; fi

# --- who may read them ----------------------------------------------------------------------
st=$(curl -sS --max-time 10 -o "$T/b" -w '%{http_code}' -H 'X-Forwarded-For: 192.0.2.7' "http://127.0.0.1:$GW_PORT/metrics")
jcheck "through nginx, a client that [metrics] allow does not name (X-Forwarded-For from a trusted proxy): 403 HttpError" \
	"$(jq -c --arg st "$st" '. + {st: $st}' "$T/b" 2>/dev/null)" '.st == "403" and .error == "forbidden_address" and (.request_id | length) > 0'
st=$(cgi GET /metrics "" 192.0.2.8)
jcheck "as CGI, REMOTE_ADDR 192.0.2.8: 403 HttpError" "$(jq -c --arg st "$st" '. + {st: $st}' "$T/b" 2>/dev/null)" \
	'.st == "403" and .error == "forbidden_address"'
unlike "… and no metric in it" "$(cat "$T/b")" 'mcpgate_'
# Not for web pages: a page opened in a browser on an allowed address must not read them.
for o in https://evil.example "http://127.0.0.1:$GW_PORT"; do
	st=$(curl -sS --max-time 10 -o "$T/b" -D "$T/h" -w '%{http_code}' -H "Origin: $o" "http://127.0.0.1:$GW_PORT/metrics")
	jcheck "through nginx, GET /metrics with Origin $o: 403 forbidden_origin" \
		"$(jq -c --arg st "$st" '. + {st: $st}' "$T/b" 2>/dev/null)" '.st == "403" and .error == "forbidden_origin"'
	unlike "… no Access-Control-Allow-Origin, no metric" "$(cat "$T/h" "$T/b")" '[Aa]ccess-[Cc]ontrol-[Aa]llow-[Oo]rigin|mcpgate_'
done
st=$(curl -sS --max-time 10 -o "$T/b" -D "$T/h" -w '%{http_code}' -X OPTIONS -H 'Origin: https://evil.example' \
	-H 'Access-Control-Request-Method: GET' "http://127.0.0.1:$GW_PORT/metrics")
is "… its preflight: 403" "$st" 403
st=$(curl -sS --max-time 10 -o "$T/b" -D "$T/h" -w '%{http_code}' "http://127.0.0.1:$GW_PORT/metrics")
is "without an Origin: 200" "$st" 200
unlike "… and no CORS header" "$(cat "$T/h")" '[Aa]ccess-[Cc]ontrol-'
st=$(HTTP_ORIGIN_CGI=https://evil.example cgi GET /metrics)
jcheck "as CGI with HTTP_ORIGIN: 403 forbidden_origin, no metric" "$(jq -c --arg st "$st" '. + {st: $st}' "$T/b" 2>/dev/null)" \
	'.st == "403" and .error == "forbidden_origin"'
sed '/^\[metrics\]$/,/^allow = /d' "$T/gw.conf" > "$T/nometrics.conf"
st=$(cgi GET /metrics "" 127.0.0.1 "$T/nometrics.conf")
is "without [metrics]: /metrics is 404" "$st" 404

tap_done
