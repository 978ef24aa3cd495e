#!/usr/bin/env bash
# Ring (b): bad input gets a clear 4xx and changes nothing; the log never holds a token.
. "$(dirname "$0")/lib.sh"
write_conf

for p in / /mcp/ /nope /.well-known /.well-known/mcp/ '/server.json%00' /cgi-bin; do
	cgi GET "$p"
	is "GET $p: 404" "$(status)" 404
	is "GET $p: HttpError not_found" "$(jf .error)" not_found
done
cgi GET /nope
is "404: body request_id = X-Request-Id" "$(jf .request_id)" "$(header X-Request-Id)"
jq -e 'has("error") and has("error_description") and has("message") and has("request_id")' "$T/body" >/dev/null \
	&& pass "404: all HttpError members" || fail "404: all HttpError members" "$(cat "$T/body")"

for m in GET PUT PATCH; do
	cgi "$m" /mcp
	is "$m /mcp: 405" "$(status)" 405
	is "$m /mcp: Allow" "$(header Allow)" "POST, DELETE, OPTIONS"
done
cgi POST /mcp/health
is "POST /mcp/health: 405" "$(status)" 405
is "POST /mcp/health: Allow" "$(header Allow)" "GET, HEAD, OPTIONS"

# 413 before the body is read: an endless stdin must not be consumed.
timeout 30 bash -c 'cat /dev/zero | env -i REQUEST_METHOD=POST SCRIPT_NAME=/mcp CONTENT_TYPE=application/json \
	CONTENT_LENGTH=100000000 "$0" -c "$1" > "$2/out" 2>/dev/null' "$MCPGATE_BIN" "$T/gw.conf" "$T"
rc=$?
is "oversized body: answered without reading it (exit $rc)" "$rc" 0
grep -q '^Status: 413' "$T/out" && pass "oversized body: 413" || fail "oversized body: 413" "$(head -1 "$T/out")"
grep -q '"error":"payload_too_large"' "$T/out" && pass "oversized body: HttpError" || fail "oversized body: HttpError"

# An answer that needs no body still reads (discards) it, so the web server can finish
# writing it: a CGI server that gets EPIPE on the body breaks the answer (Apache mod_cgid).
for path in /mcp /mcp/health /nope; do
	head -c 200000 /dev/zero | env -i REQUEST_METHOD=POST SCRIPT_NAME=$path CONTENT_TYPE=application/json \
		CONTENT_LENGTH=200000 "$MCPGATE_BIN" -c "$T/gw.conf" > "$T/out" 2>/dev/null
	rcs=("${PIPESTATUS[@]}")
	is "unread body on POST $path: drained, the writer never gets EPIPE" "${rcs[0]}/${rcs[1]}" 0/0
done
cgi POST /mcp CONTENT_LENGTH=abc
is "unreadable Content-Length: 400" "$(status)" 400

cgi POST /mcp HTTP_ORIGIN=https://evil.example CONTENT_LENGTH=0
is "foreign Origin: 403" "$(status)" 403
is "foreign Origin: reason" "$(jf .error)" forbidden_origin
cgi POST /mcp HTTP_ORIGIN=http://127.0.0.1:8080 CONTENT_LENGTH=0
is "own Origin: on to auth (401)" "$(status)" 401

cgi POST /mcp HTTP_AUTHORIZATION="Bearer secret-token-xyz" CONTENT_LENGTH=0
is "authorization server unreachable: 500, never 401" "$(status)" 500
is "authorization server unreachable: Retry-After" "$(header Retry-After)" 5
like "authorization server unreachable: logged with the reason" "$(cat "$T/err")" 'authorization server failed: .*(onnect|refused)'
like "… naming the host and port it tried" "$(cat "$T/err")" 'authorization server metadata 127\.0\.0\.1:8081: .*(onnect|refused)'
ISSUER=http://nonexistent.invalid:8081 write_conf
sed -i "s|^state = .*|state = $T/state-nores|" "$T/gw.conf"	# not the recent failure above
cgi POST /mcp HTTP_AUTHORIZATION="Bearer secret-token-xyz" CONTENT_LENGTH=0
is "authorization server that does not resolve: 500" "$(status)" 500
like "… logged naming its host and port" "$(cat "$T/err")" 'authorization server failed: authorization server metadata nonexistent\.invalid:8081: .*resolve'
write_conf
grep -q secret-token-xyz "$T/err" "$T/head" "$T/body" && fail "token never logged nor echoed" || pass "token never logged nor echoed"
cgi POST /mcp HTTP_AUTHORIZATION="Basic c2VjcmV0LXRva2VuLXh5eg==" CONTENT_LENGTH=0
like "Basic credentials: invalid_token" "$(header WWW-Authenticate)" 'error="invalid_token"'

# The log: one JSON line per request with the contract's fields.
cgi GET /mcp/health
is "one log line per request" "$(wc -l < "$T/err" | tr -d ' ')" 1
jq -e --arg id "$(header X-Request-Id)" \
	'.request_id == $id and .method == "GET" and .path == "/mcp/health" and .status == 200 and (.duration_us|type) == "number" and (.ts|type) == "string"' \
	"$T/err" >/dev/null && pass "log line fields" || fail "log line fields" "$(cat "$T/err")"
cgi GET "/x$(printf '\xff')y"
jq -e '.path == "/x?y"' "$T/err" >/dev/null && pass "non-UTF-8 path logged safely" || fail "non-UTF-8 path logged safely" "$(cat "$T/err")"
cgi GET /mcp/health QUERY_STRING="access_token=secret-token-xyz"
grep -q secret-token-xyz "$T/err" && fail "query string never logged" || pass "query string never logged"
cgi GET /mcp/health HTTP_X_REQUEST_ID=abcdef0123456789-nginx
is "a tame incoming X-Request-Id is kept" "$(header X-Request-Id)" abcdef0123456789-nginx
cgi GET /mcp/health HTTP_X_REQUEST_ID="$(printf 'evil\r\nX: y')"
like "a header-splitting X-Request-Id is replaced" "$(header X-Request-Id)" '^[0-9a-f]{16}$'

# A broken configuration: CGI still answers, 500 HttpError, the error names file:line.
printf '[gateway]\nresource = http://127.0.0.1:8080/mcp\nbogus = 1\n[auth]\nissuer = http://i\n' > "$T/broken.conf"
CONF=$T/broken.conf cgi GET /mcp/health
is "broken config: CGI answers 500" "$(status)" 500
like "broken config: logged with file:line" "$(cat "$T/err")" 'broken.conf:3: bogus: unknown key'
CONF=$T/missing.conf cgi GET /mcp/health
is "missing config: 500" "$(status)" 500

tap_done
