#!/usr/bin/env bash
# Ring (b): the limits decided before authentication (gateway, ip) as CGI: each CGI run
# is its own process, so this is the host-shared state file's exactness; the client
# address from X-Forwarded-For only behind a trusted proxy; the 429 answer (HttpError,
# Retry-After, RateLimit-Policy / RateLimit), and 2026-07-28's JSON-RPC body.
. "$(dirname "$0")/lib.sh"

# post [VAR=value ...]: a POST /mcp ping without a token (the limits come first: 401
# when they pass, 429 when they do not).
post() {
	printf '{"jsonrpc":"2.0","id":7,"method":"ping"}' > "$T/ping.json"
	cgi POST /mcp CONTENT_TYPE=application/json HTTP_ACCEPT=application/json \
		CONTENT_LENGTH="$(wc -c < "$T/ping.json")" "$@" < "$T/ping.json"
}

# --- the gateway limit: 40 concurrent CGI runs, exactly 10 pass -----------------------
write_conf '[limits]' 'gateway = 10/3600'
for i in $(seq 1 40); do
	(
		printf '{"jsonrpc":"2.0","id":7,"method":"ping"}' |
		env -i PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 SERVER_PROTOCOL=HTTP/1.1 REMOTE_ADDR=127.0.0.1 \
			REQUEST_METHOD=POST SCRIPT_NAME=/mcp CONTENT_TYPE=application/json HTTP_ACCEPT=application/json \
			CONTENT_LENGTH=40 MCPGATE_CONFIG="$T/gw.conf" "$MCPGATE_BIN" 2>/dev/null |
		sed -n 's/^Status: \([0-9]*\).*/\1/p' > "$T/par.$i"
	) &
done
wait
is "gateway = 10/3600, 40 concurrent CGI runs: 10 pass (401), 30 are limited (429)" \
	"$(cat "$T"/par.* | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}')" "401:10 429:30 "
post
is "the next one: 429" "$(status)" 429
is "… an HttpError rate_limited" "$(jf .error)" rate_limited
is "… naming the class and its window" "$(jf .error_description)" "gateway limit 10 per 3600 s exceeded"
like "… with the request id" "$(jf .request_id)" '^[0-9a-f]{16}$'
ra=$(header Retry-After)
check "… Retry-After in whole seconds, one interval (360 s) or less: $ra" test "${ra:-0}" -ge 1 -a "${ra:-0}" -le 360
is "… RateLimit-Policy" "$(header RateLimit-Policy)" '"gateway";q=10;w=3600'
like "… RateLimit: none remain, the same wait" "$(header RateLimit)" "^\"gateway\";r=0;t=$ra\$"
is "… not cached" "$(header Cache-Control)" no-store
post HTTP_MCP_PROTOCOL_VERSION=2026-07-28
is "2026-07-28: 429" "$(status)" 429
is "2026-07-28: a JSON-RPC error body" "$(jf '.jsonrpc + " " + (.error.code|tostring)')" "2.0 -32029"
is "2026-07-28: its data names the class and limit" "$(jf '.error.data | "\(.class) \(.limit)/\(.window)"')" "gateway 10/3600"
cgi GET /mcp/health
is "the health check is not limited" "$(status)" 200

# --- the ip limit, and X-Forwarded-For ------------------------------------------------
write_conf '[limits]' 'ip = 3/3600'
sed -i 's|^\[auth\]$|trusted-proxies = 127.0.0.1 10.0.0.0/8\n[auth]|' "$T/gw.conf"
codes() {	# codes N VAR=value...: N posts, their statuses
	local i out=
	for i in $(seq 1 "$1"); do post "${@:2}"; out="$out$(status) "; done
	echo "$out"
}
is "ip = 3/3600: the fourth request of an address is limited" "$(codes 4 REMOTE_ADDR=192.0.2.1)" "401 401 401 429 "
is "… another address has its own bucket" "$(codes 1 REMOTE_ADDR=192.0.2.2)" "401 "
is "… its RateLimit-Policy" "$(header RateLimit-Policy)" '"ip";q=3;w=3600'
is "behind a trusted proxy: the right-most untrusted X-Forwarded-For address is the client" \
	"$(codes 4 REMOTE_ADDR=127.0.0.1 HTTP_X_FORWARDED_FOR='198.51.100.9, 10.1.2.3')" "401 401 401 429 "
is "… the same client through another trusted hop shares its bucket" \
	"$(codes 1 REMOTE_ADDR=10.9.9.9 HTTP_X_FORWARDED_FOR='198.51.100.9')" "429 "
is "… and the proxy itself was not charged" "$(codes 1 REMOTE_ADDR=127.0.0.1)" "401 "
is "from an untrusted peer, X-Forwarded-For is ignored (a fresh forged address does not help)" \
	"$(codes 4 REMOTE_ADDR=192.0.2.7 HTTP_X_FORWARDED_FOR='203.0.113.1')" "401 401 401 429 "
is "… nor does another forged one" "$(codes 1 REMOTE_ADDR=192.0.2.7 HTTP_X_FORWARDED_FOR='203.0.113.2')" "429 "
is "IPv6 clients are limited by their /64" \
	"$(codes 2 REMOTE_ADDR=2001:db8:1:2::1)$(codes 2 REMOTE_ADDR=2001:db8:1:2::ffff)" "401 401 401 429 "
is "… another /64 is another client" "$(codes 1 REMOTE_ADDR=2001:db8:1:3::1)" "401 "
is "an IPv4-mapped address is its IPv4 address" "$(codes 1 REMOTE_ADDR=::ffff:192.0.2.1)" "429 "

# --- 0 is unlimited --------------------------------------------------------------------
write_conf '[limits]' 'gateway = 0' 'ip = 0/60'
is "gateway = 0, ip = 0/60: unlimited" "$(codes 12 REMOTE_ADDR=192.0.2.1 | tr ' ' '\n' | grep . | sort -u | tr '\n' ' ')" "401 "
is "… and no RateLimit headers" "$(header RateLimit-Policy)" ""

tap_done
