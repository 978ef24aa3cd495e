# tests/cgi/lib.sh — drive the binary as CGI (cgit's tests/setup.sh idea).
# Needs MCPGATE_BIN; gives: $T (temp dir), write_conf, cgi, status, header, body, jf.
. "$(dirname "$0")/../lib/tap.sh"

: "${MCPGATE_BIN:?MCPGATE_BIN must name the built src/mcpgate}"
T=$(mktemp -d /tmp/mcpgate-cgi.XXXXXX)
trap 'rm -rf "$T"' EXIT

write_conf() {	# [TITLE=…] [ISSUER=…] [RESOURCE=…] write_conf [extra lines...] → $T/gw.conf, replaced atomically
	{
		printf '%s\n' '[gateway]' "resource = ${RESOURCE:-http://127.0.0.1:8080/mcp}" 'name = com.example/gateway' \
			"title = ${TITLE:-Example gateway}" 'description = Test gateway' 'version = 1.2.3' \
			'website-url = https://example.com' 'max-body = 4096' "state = $T/state" \
			'[auth]' "issuer = ${ISSUER:-http://127.0.0.1:8081}" 'required-scopes = mcp:tools' \
			'scopes-supported = mcp:tools mcp:admin'
		printf '%s\n' "$@"
	} > "$T/gw.conf.new" && mv "$T/gw.conf.new" "$T/gw.conf"
}

# cgi METHOD PATH [VAR=value ...] [< body] — runs one CGI request; the raw answer goes
# to $T/out, the log to $T/err; headers to $T/head, body to $T/body.
cgi() {
	local method=$1 path=$2; shift 2
	env -i PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 SERVER_PROTOCOL=HTTP/1.1 \
		SERVER_NAME=127.0.0.1 SERVER_PORT=8080 REMOTE_ADDR=127.0.0.1 \
		REQUEST_METHOD="$method" SCRIPT_NAME="$path" PATH_INFO= QUERY_STRING= "$@" \
		${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"} ${UBSAN_OPTIONS:+UBSAN_OPTIONS="$UBSAN_OPTIONS"} \
		MCPGATE_CONFIG="${CONF:-$T/gw.conf}" "$MCPGATE_BIN" > "$T/out" 2> "$T/err"
	local rc=$?
	sed -n '1,/^\r$/p' "$T/out" | tr -d '\r' > "$T/head"
	sed '1,/^\r$/d' "$T/out" > "$T/body"
	return $rc
}

status() { sed -n 's/^Status: \([0-9]*\).*/\1/p' "$T/head"; }
header() { grep -i "^$1: " "$T/head" | head -n 1 | sed 's/^[^:]*: //'; }
jf() { jq -r "$1" < "$T/body" 2>/dev/null; }	# jf FILTER: a field of the JSON body
