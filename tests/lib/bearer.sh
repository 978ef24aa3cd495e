# shellcheck shell=bash
# tests/lib/bearer.sh — what the suites of an upstream that takes only its own bearer
# tokens share (tests/upstream/fixture.mjs --require-bearer, which records the SHA-256
# of every token it is shown at /_seen): calls through the gateway, the upstream's
# record, and a detector of tokens written in clear. Source after tests/lib/suite.sh;
# uses T, top, IDP, GW_URL, UP_URL and UP_PORT.
#   sha TOKEN                  its SHA-256, hex (as /_seen names tokens)
#   rpc TOKEN METHOD PARAMS    one JSON-RPC request to GW_URL (2025-11-25, no session):
#                              the HTTP status on line 1, the JSON-RPC answer on line 2;
#                              headers in $T/h
#   whoami TOKEN [TOOL]        the upstream's whoami (or TOOL) as TOKEN's caller: its
#                              JSON, or the JSON-RPC answer
#   cgi_rpc CONF TOKEN METHOD PARAMS
#                              the same request as one CGI run of MCPGATE_BIN with CONF
#                              (GW_PORT its server's port): the JSON-RPC answer
#   text_of                    a tools/call answer (stdin): its first text as JSON when it
#                              is, else the whole answer (a JSON-RPC error: the error)
#   exchanges SUBJECT          token exchanges the authorization server made for SUBJECT
#   seen FILE                  the upstream's record (/_seen) into FILE
#   in_clear FILE SEEN         how many tokens the upstream accepted (SEEN: a record)
#                              FILE holds in clear: every 43-character window (a token of
#                              the authorization server's) of every base64url run
#   detector_control SUBJECT   the detector shown to work: a token exchanged by the test
#                              for SUBJECT's, shown to the upstream, written between
#                              random bytes into $T/control; $T/seen.json the record
#                              after it; prints in_clear of $T/control (1 when it works)

sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }

rpc() {
	local st
	st=$(curl -s --max-time 30 -o "$T/b" -D "$T/h" -w '%{http_code}' -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H "Authorization: Bearer $1" \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$2\",\"params\":$3}" "$GW_URL")
	echo "$st"
	sed -n 's/^data: //p; /^{/p' "$T/b" | head -1
}

text_of() { jq -c '(.result.content[0].text | fromjson?) // .'; }

whoami() {
	rpc "$1" tools/call "{\"name\":\"${2:-whoami}\",\"arguments\":{}}" | sed -n 2p | text_of
}

cgi_rpc() {
	local body="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$3\",\"params\":$4}"
	printf '%s' "$body" | timeout -k 2 60 env -i PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 SERVER_PROTOCOL=HTTP/1.1 \
		SERVER_NAME=127.0.0.1 SERVER_PORT="$GW_PORT" REMOTE_ADDR=127.0.0.1 REQUEST_METHOD=POST SCRIPT_NAME=/mcp \
		PATH_INFO= QUERY_STRING= HTTP_HOST="127.0.0.1:$GW_PORT" HTTP_ACCEPT='application/json, text/event-stream' \
		HTTP_AUTHORIZATION="Bearer $2" CONTENT_TYPE=application/json CONTENT_LENGTH=${#body} \
		${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"} ${UBSAN_OPTIONS:+UBSAN_OPTIONS="$UBSAN_OPTIONS"} \
		MCPGATE_CONFIG="$1" "$MCPGATE_BIN" 2>> "$T/cgi.err" | sed '1,/^\r$/d' | sed -n 's/^data: //p; /^{/p' | head -1
}

exchanges() { curl -s --max-time 5 "$IDP/_stats" | jq -c ".exchanges_by_subject.${1} // 0"; }

seen() { curl -s --max-time 5 "http://127.0.0.1:$UP_PORT/_seen" > "$1"; }

in_clear() {
	local run i n=0
	while IFS= read -r run; do
		for ((i = 0; i + 43 <= ${#run}; i++)); do
			grep -q "$(sha "${run:i:43}")" "$2" && n=$((n + 1))
		done
	done < <(grep -aoE '[A-Za-z0-9_-]{43,}' "$1" | sort -u | head -300)
	echo "$n"
}

detector_control() {
	local own
	own=$(node "$top/tests/idp/token.mjs" --issuer "$IDP" --exchange "$1" --as gateway-exchange \
		--resource "$UP_URL" | jq -r .access_token)
	curl -s --max-time 10 -o /dev/null -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H "Authorization: Bearer $own" \
		--data-binary '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
		"$UP_URL"
	seen "$T/seen.json"
	{ head -c 5000 /dev/urandom; printf 'x%sy' "$own"; head -c 5000 /dev/urandom; } > "$T/control"
	in_clear "$T/control" "$T/seen.json"
}
