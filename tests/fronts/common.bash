# tests/fronts/common.bash — checks shared by the front suites (nginx.sh,
# lighttpd.sh, apache.sh): every public endpoint of mcpgate, reached through a
# real web server, answers per the contract; many requests in a row and in
# parallel; nothing leaks from one request into the next; the request log.
# Sourced, not run. The caller has sourced deploy/lib.sh and tests/lib/tap.sh,
# started mcpgate and the front, and calls front_checks.
#
# Every request goes through `req`, which records the response's X-Request-Id,
# so the log can be compared with what was answered: one line per request.

FC_TOKEN=secret-token-xyz

# fc_setup BASE PREFIX UNKNOWN_PATH: BASE = http://127.0.0.1:PORT; PREFIX = ""
# behind FastCGI, /cgi-bin/mcpgate for CGI; UNKNOWN_PATH = a path the front
# hands to mcpgate that no route has (404).
fc_setup() {
	FC_BASE=$1
	FC_P=$2
	FC_UNKNOWN=$3
	# a directory of its own for each battery: no file of an earlier one
	# can stand in for a response that never came
	FC_RUN=$((${FC_RUN:-0} + 1))
	FC_D=$MG_DIR/checks.$FC_RUN
	FC_N=0
	mkdir -p "$FC_D"
	: >"$FC_D/ids"
}

# hdr NAME FILE: the value of the last NAME header in FILE (empty if none).
hdr() {
	grep -i "^$1:" "$2" 2>/dev/null | tail -n 1 | cut -d: -f2- | sed 's/^ *//' | tr -d '\r'
}

# req METHOD PATH [curl args...]: one request. Sets R_STATUS, R_H (headers
# file), R_B (body file), R_SIZE (body bytes received), R_ID (X-Request-Id).
# HEAD uses curl -I (no body is read).
req() {
	local method=$1 path=$2 out rc
	shift 2
	FC_N=$((FC_N + 1))
	R_H=$FC_D/$FC_N.h
	R_B=$FC_D/$FC_N.b
	rm -f "$R_H" "$R_B"
	if [ "$method" = HEAD ]; then
		out=$(curl -sS -I --max-time 10 -o /dev/null -D "$R_H" -w '%{http_code} %{size_download}' "$@" "$FC_BASE$path" 2>"$R_B.err")
		rc=$?
		: >"$R_B"
	else
		out=$(curl -sS --max-time 10 -X "$method" -o "$R_B" -D "$R_H" -w '%{http_code} %{size_download}' "$@" "$FC_BASE$path" 2>"$R_B.err")
		rc=$?
	fi
	R_STATUS=${out%% *}
	R_SIZE=${out##* }
	# a transfer that failed (reset, timeout) is not a good answer, whatever came
	[ "$rc" -eq 0 ] || R_STATUS="$R_STATUS ($(head -c 200 "$R_B.err"))"
	R_ID=$(hdr X-Request-Id "$R_H")
	[ -z "$R_ID" ] || echo "$R_ID" >>"$FC_D/ids"
}

# jget FILTER FILE: jq -r on a file, empty on a parse error.
jget() { jq -r "$1" "$2" 2>/dev/null; }

# is_http_error: the last body is an HttpError whose request_id is the
# X-Request-Id header.
is_http_error() {
	[ -n "$R_ID" ] && jq -e --arg id "$R_ID" '(.error | strings | length > 0) and
		(.error_description | strings | length > 0) and (.message | strings | length > 0) and
		.request_id == $id' "$R_B" >/dev/null 2>&1
}

check_http_error() { # DESC
	if is_http_error; then pass "$1"; else fail "$1" "X-Request-Id: $R_ID; body: $(head -c 400 "$R_B")"; fi
}

check_json_ct() { # DESC
	like "$1" "$(hdr Content-Type "$R_H")" '^application/json'
}

fc_endpoints() {
	local p etag path www=${MG_WWW:-$MG_TOP/www}

	# Health.
	req GET "$FC_P/mcp/health"
	is "GET /mcp/health: 200" "$R_STATUS" 200
	check_json_ct "GET /mcp/health: JSON"
	is "GET /mcp/health: Cache-Control no-store" "$(hdr Cache-Control "$R_H")" no-store
	is "GET /mcp/health: status, service, version, timestamp" \
		"$(jget '[.status, .service, .version, .timestamp] | map(strings | length > 0) | length' "$R_B")" 4
	like "GET /mcp/health: X-Request-Id" "$R_ID" '^[A-Za-z0-9_-]{8,}$'
	req HEAD "$FC_P/mcp/health"
	is "HEAD /mcp/health: 200, no body" "$R_STATUS $R_SIZE" "200 0"

	# Discovery documents: cacheable, with an ETag that If-None-Match honours.
	for path in /.well-known/mcp /.well-known/oauth-protected-resource \
		/.well-known/oauth-protected-resource/mcp /server.json; do
		p=$FC_P$path
		req GET "$p"
		is "GET $path: 200" "$R_STATUS" 200
		check_json_ct "GET $path: JSON"
		check "GET $path: a JSON object" jq -e 'type == "object"' "$R_B"
		like "GET $path: Cache-Control" "$(hdr Cache-Control "$R_H")" '.'
		etag=$(hdr ETag "$R_H")
		like "GET $path: ETag" "$etag" '^(W/)?".+"$'
		req GET "$p" -H "If-None-Match: $etag"
		is "GET $path with If-None-Match: 304, no body" "$R_STATUS $R_SIZE" "304 0"
		req GET "$p" -H 'If-None-Match: "not-the-etag"'
		is "GET $path with another If-None-Match: 200" "$R_STATUS" 200
		req HEAD "$p"
		is "HEAD $path: 200, no body" "$R_STATUS $R_SIZE" "200 0"
		is "HEAD $path: same ETag" "$(hdr ETag "$R_H")" "$etag"
	done
	req GET "$FC_P/.well-known/oauth-protected-resource/mcp"
	is "protected-resource metadata: resource is this gateway's /mcp" \
		"$(jget .resource "$R_B")" "$FC_BASE$FC_P/mcp"
	if [ -n "$FC_P" ]; then
		# RFC 9728: the metadata of https://HOST/PREFIX/mcp is at
		# https://HOST/.well-known/oauth-protected-resource/PREFIX/mcp, the
		# URL the 401 challenge names; the recipe must route it to mcpgate.
		req GET "/.well-known/oauth-protected-resource$FC_P/mcp"
		is "GET /.well-known/oauth-protected-resource$FC_P/mcp (host root): 200" "$R_STATUS" 200
		is "protected-resource metadata at the host root: resource is $FC_P/mcp" \
			"$(jget .resource "$R_B")" "$FC_BASE$FC_P/mcp"
	fi
	req GET "$FC_P/server.json"
	check "server.json: name and version" jq -e '(.name | type == "string") and (.version | type == "string")' "$R_B"

	# Authorization-server metadata: no issuer metadata can be fetched here.
	req GET "$FC_P/.well-known/oauth-authorization-server"
	is "GET /.well-known/oauth-authorization-server: 500 (issuer unreachable)" "$R_STATUS" 500
	check_http_error "oauth-authorization-server 500: HttpError"

	# POST /mcp without and with a token.
	req POST "$FC_P/mcp" -H 'Content-Type: application/json' \
		--data '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
	is "POST /mcp without a token: 401" "$R_STATUS" 401
	check_http_error "POST /mcp 401: HttpError with request_id = X-Request-Id"
	like "POST /mcp 401: Bearer challenge with resource_metadata and scope" \
		"$(hdr WWW-Authenticate "$R_H")" \
		"^Bearer .*resource_metadata=\"$FC_BASE/\\.well-known/oauth-protected-resource$FC_P/mcp\".*scope=\"mcp:tools\""
	req POST "$FC_P/mcp" -H 'Content-Type: application/json' -H "Authorization: Bearer $FC_TOKEN" \
		--data '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
	# The issuer is a closed loopback port: a token cannot be verified, which
	# is a 500 with Retry-After, never a 401 (docs/ARCHITECTURE.md §5). That it
	# is not the 401 above shows the front handed the Authorization header to
	# mcpgate.
	is "POST /mcp with a token, issuer unreachable: 500 (the front passed Authorization)" "$R_STATUS" 500
	check_http_error "POST /mcp 500: HttpError"
	like "POST /mcp 500: Retry-After" "$(hdr Retry-After "$R_H")" '^[0-9]+$'

	# Body limits: over max-body (1048576) is mcpgate's 413; just under is read.
	head -c 1048577 /dev/zero | tr '\0' ' ' >"$FC_D/big.json"
	req POST "$FC_P/mcp" -H 'Content-Type: application/json' --data-binary @"$FC_D/big.json"
	is "POST /mcp over max-body: 413" "$R_STATUS" 413
	check_http_error "POST /mcp 413: HttpError"
	head -c 1048000 /dev/zero | tr '\0' ' ' >"$FC_D/large.json"
	req POST "$FC_P/mcp" -H 'Content-Type: application/json' --data-binary @"$FC_D/large.json"
	is "POST /mcp just under max-body: 401 (read, then refused)" "$R_STATUS" 401

	# Methods.
	req GET "$FC_P/mcp"
	is "GET /mcp: 405" "$R_STATUS" 405
	like "GET /mcp 405: Allow lists POST" "$(hdr Allow "$R_H")" 'POST'
	check_http_error "GET /mcp 405: HttpError"
	req POST "$FC_P/mcp/health" --data x
	is "POST /mcp/health: 405" "$R_STATUS" 405
	like "POST /mcp/health 405: Allow lists GET" "$(hdr Allow "$R_H")" 'GET'
	req DELETE "$FC_P/server.json"
	is "DELETE /server.json: 405" "$R_STATUS" 405

	# CORS preflight.
	req OPTIONS "$FC_P/mcp" -H "Origin: $FC_BASE" -H 'Access-Control-Request-Method: POST' \
		-H 'Access-Control-Request-Headers: authorization, content-type, mcp-protocol-version'
	is "OPTIONS /mcp: 204, no body" "$R_STATUS $R_SIZE" "204 0"
	like "OPTIONS /mcp: Access-Control-Allow-Methods has POST" "$(hdr Access-Control-Allow-Methods "$R_H")" 'POST'
	like "OPTIONS /mcp: Access-Control-Allow-Headers has Authorization" "$(hdr Access-Control-Allow-Headers "$R_H")" '[Aa]uthorization'
	like "OPTIONS /mcp: Access-Control-Allow-Origin" "$(hdr Access-Control-Allow-Origin "$R_H")" "^($FC_BASE|\\*)$"
	req OPTIONS "$FC_P/.well-known/mcp" -H 'Origin: https://elsewhere.example' -H 'Access-Control-Request-Method: GET'
	is "OPTIONS /.well-known/mcp: 204" "$R_STATUS" 204

	# The connect page (connect-path, /mcp/connect): the recipe routes it to mcpgate,
	# query string and all. No upstream here is user-oauth, so mcpgate answers its own
	# 404 HttpError, with its X-Request-Id: the web server's 404 would have neither.
	req GET "$FC_P/mcp/connect?ticket=t0&x=1"
	is "GET $FC_P/mcp/connect: 404 (no user-oauth upstream)" "$R_STATUS" 404
	check_http_error "GET $FC_P/mcp/connect: mcpgate's own HttpError (the front routed it)"
	check_json_ct "GET $FC_P/mcp/connect 404: JSON"
	# … and beside it the Client ID Metadata Document (connect-path + /client), routed
	# the same way, exactly: mcpgate's own 404 here too.
	req GET "$FC_P/mcp/connect/client"
	is "GET $FC_P/mcp/connect/client: 404 (no user-oauth upstream)" "$R_STATUS" 404
	check_http_error "GET $FC_P/mcp/connect/client: mcpgate's own HttpError (the front routed it)"
	check_json_ct "GET $FC_P/mcp/connect/client 404: JSON"

	# Unknown paths reaching mcpgate: 404 HttpError.
	req GET "$FC_UNKNOWN"
	is "GET $FC_UNKNOWN: 404" "$R_STATUS" 404
	check_http_error "404: HttpError with request_id = X-Request-Id"
	check_json_ct "404: JSON"

	# /mcp/ is not /mcp, and is never redirected to it (nor /mcp to /mcp/).
	req POST "$FC_P/mcp/" -H 'Content-Type: application/json' --data '{}'
	unlike_redirect "POST $FC_P/mcp/: no redirect"
	req POST "$FC_P/mcp" -H 'Content-Type: application/json' --data '{}'
	unlike_redirect "POST $FC_P/mcp: no redirect"

	# Docs.
	if [ -f "$www/openapi.json" ]; then
		curl -s --max-time 10 -o "$FC_D/openapi.json" -D "$FC_D/openapi.h" "$FC_BASE/docs/openapi.json"
		is "GET /docs/openapi.json: 200" "$(head -n 1 "$FC_D/openapi.h" | awk '{print $2}')" 200
		like "GET /docs/openapi.json: JSON" "$(hdr Content-Type "$FC_D/openapi.h")" '^application/json'
		check "GET /docs/openapi.json: same as the published www/openapi.json" cmp -s "$FC_D/openapi.json" "$www/openapi.json"
		fc_docs_name_gateway
		# The console's page and assets, with the types a browser insists on (module scripts).
		local f want
		for f in "/docs/|^text/html" "/docs/site.css|^text/css" "/docs/js/console.js|^(text|application)/javascript"; do
			want=${f#*|}; f=${f%%|*}
			curl -s --max-time 10 -o /dev/null -D "$FC_D/asset.h" "$FC_BASE$f"
			like "GET $f: 200, $want" "$(head -n 1 "$FC_D/asset.h" | awk '{print $2}') $(hdr Content-Type "$FC_D/asset.h")" "^200 ${want#^}"
		done
		# No other site may frame the console (a <meta> policy cannot forbid it).
		for f in /docs/ /docs/index.html /docs/webmcp.html; do
			curl -s --max-time 10 -o /dev/null -D "$FC_D/frame.h" "$FC_BASE$f"
			like "GET $f: Content-Security-Policy frame-ancestors 'none'" "$(hdr Content-Security-Policy "$FC_D/frame.h")" \
				"frame-ancestors 'none'"
			is "GET $f: X-Frame-Options DENY" "$(hdr X-Frame-Options "$FC_D/frame.h")" DENY
		done
	else
		pass "GET /docs/openapi.json # SKIP www/openapi.json does not exist yet"
	fi
}

unlike_redirect() { # DESC
	local loc
	loc=$(hdr Location "$R_H")
	case $R_STATUS in
	301 | 302 | 303 | 307 | 308) fail "$1" "status $R_STATUS, Location: $loc" ;;
	*) if [ -n "$loc" ]; then fail "$1" "Location: $loc"; else pass "$1"; fi ;;
	esac
}

# The request mix for the sequence and parallel runs: one line per kind,
# "METHOD|PATH|WANT_STATUS|curl args". Errors and successes alternate, so
# that a header or body of one kind would show in the next if it leaked.
fc_mix() {
	local etag_sj etag_wk
	etag_sj=$(curl -s -D - -o /dev/null --max-time 10 "$FC_BASE$FC_P/server.json" | tr -d '\r' | grep -i '^etag:' | cut -d' ' -f2-)
	etag_wk=$(curl -s -D - -o /dev/null --max-time 10 "$FC_BASE$FC_P/.well-known/mcp" | tr -d '\r' | grep -i '^etag:' | cut -d' ' -f2-)
	head -c 4000 /dev/zero | tr '\0' ' ' >"$FC_D/mid.json"
	cat <<EOF
GET|$FC_P/mcp/health|200|
GET|$FC_P/mcp|405|
GET|$FC_UNKNOWN|404|
GET|$FC_P/mcp/connect|404|
GET|$FC_P/mcp/connect/client|404|
POST|$FC_P/mcp|500|-H|Authorization: Bearer $FC_TOKEN|-H|Content-Type: application/json|--data|{"jsonrpc":"2.0","id":7,"method":"ping"}
GET|$FC_P/.well-known/mcp|200|
GET|$FC_P/server.json|304|-H|If-None-Match: $etag_sj
OPTIONS|$FC_P/mcp|204|-H|Origin: $FC_BASE|-H|Access-Control-Request-Method: POST
GET|$FC_P/.well-known/oauth-protected-resource|200|-H|Authorization: Bearer $FC_TOKEN
POST|$FC_P/mcp/health|405|--data|x
GET|$FC_P/.well-known/oauth-authorization-server|500|
POST|$FC_P/mcp|401|-H|Content-Type: application/json|--data-binary|@$FC_D/mid.json
GET|$FC_P/.well-known/mcp|304|-H|If-None-Match: $etag_wk
GET|$FC_P/server.json|200|
POST|$FC_P/mcp|413|-H|Content-Type: application/json|--data-binary|@$FC_D/big.json
GET|$FC_P/.well-known/oauth-protected-resource/mcp|200|
EOF
}

# fc_curl_config N FILE_PREFIX: a curl -K config for N requests cycling
# through the mix; each response's headers and body go to FILE_PREFIX.I.h/.b.
fc_curl_config() {
	local n=$1 pre=$2 i=0 line method path want args a o
	local -a kinds
	mapfile -t kinds < <(fc_mix)
	: >"$pre.want"
	while [ "$i" -lt "$n" ]; do
		line=${kinds[$((i % ${#kinds[@]}))]}
		IFS='|' read -r method path want args <<<"$line"
		[ "$i" -eq 0 ] || echo "next"
		echo "url = \"$FC_BASE$path\""
		echo "request = \"$method\""
		echo "output = \"$pre.$i.b\""
		echo "dump-header = \"$pre.$i.h\""
		echo "max-time = 10"
		echo "silent"
		echo "write-out = \"$i %{http_code}\\n\""
		# the remaining fields pair up as curl option / value
		IFS='|' read -r -a a <<<"$args"
		set -- "${a[@]}"
		while [ $# -ge 2 ]; do
			case $1 in -H) o=header ;; *) o=${1#--} ;; esac
			printf '%s = "%s"\n' "$o" "$(printf '%s' "$2" | sed 's/\\/\\\\/g; s/"/\\"/g')"
			shift 2
		done
		echo "$i $method $path $want" >>"$pre.want"
		i=$((i + 1))
	done
}

# fc_verify_batch PREFIX LABEL: checks every response of a batch against the
# mix: the wanted status; Allow only on 405/204, WWW-Authenticate only on 401,
# ETag only on 200/304 documents; error bodies carry their own request id;
# 204/304 have no body; Content-Length matches the body.
fc_verify_batch() {
	local pre=$1 label=$2 i method path want got h b cl retry allow www etag ids bad_status='' bad_leak='' bad_body='' n=0
	while read -r i method path want; do
		n=$((n + 1))
		h=$pre.$i.h
		b=$pre.$i.b
		# one pass over the headers: the last status line (a 100 Continue may
		# come first), then Allow, WWW-Authenticate, ETag, X-Request-Id,
		# Content-Length ("-" when absent)
		read -r got allow www etag R_ID cl retry < <(tr -d '\r' <"$h" 2>/dev/null | awk '
			BEGIN { st = a = w = e = x = c = r = "-" }
			/^HTTP\// { st = $2; a = w = e = x = c = r = "-"; next }
			{ k = tolower($1) }
			k == "allow:" { a = "y" } k == "www-authenticate:" { w = "y" } k == "etag:" { e = "y" }
			k == "x-request-id:" { x = $2 } k == "content-length:" { c = $2 } k == "retry-after:" { r = "y" }
			END { print st, a, w, e, x, c, r }')
		[ "$got" = "$want" ] || bad_status="$bad_status
#$i $method $path: got '$got', want $want"
		R_H=$h R_B=$b
		[ "$R_ID" = - ] && R_ID=''
		[ -z "$R_ID" ] || echo "$R_ID" >>"$FC_D/ids"
		case $got in
		405 | 204) [ "$allow" = y ] || bad_leak="$bad_leak
#$i $method $path $got: no Allow" ;;
		*) [ "$allow" = - ] || bad_leak="$bad_leak
#$i $method $path $got: Allow: $(hdr Allow "$h")" ;;
		esac
		if [ "$got" = 401 ]; then
			[ "$www" = y ] || bad_leak="$bad_leak
#$i $method $path: 401 without WWW-Authenticate"
		else
			[ "$www" = - ] || bad_leak="$bad_leak
#$i $method $path $got: WWW-Authenticate: $(hdr WWW-Authenticate "$h")"
		fi
		case $got in
		500 | 503 | 429) [ "$retry" = y ] || bad_leak="$bad_leak
#$i $method $path $got: no Retry-After" ;;
		*) [ "$retry" = - ] || bad_leak="$bad_leak
#$i $method $path $got: Retry-After: $(hdr Retry-After "$h")" ;;
		esac
		case "$got:$path" in
		200:*/.well-known/* | 304:*/.well-known/* | 200:*/server.json | 304:*/server.json) ;;
		*) [ "$etag" = - ] || bad_leak="$bad_leak
#$i $method $path $got: ETag: $(hdr ETag "$h")" ;;
		esac
		case $got in
		204 | 304)
			[ ! -s "$b" ] || bad_body="$bad_body
#$i $method $path $got: has a body" ;;
		4* | 5*)
			is_http_error || bad_body="$bad_body
#$i $method $path $got: not an HttpError with its own request_id: $(head -c 200 "$b")" ;;
		200)
			jq -e 'type == "object"' "$b" >/dev/null 2>&1 || bad_body="$bad_body
#$i $method $path: not a JSON object" ;;
		esac
		if [ "$cl" != - ] && [ "$got" != 304 ] && [ "$cl" != "$(wc -c <"$b")" ]; then
			bad_body="$bad_body
#$i $method $path: Content-Length $cl, body $(wc -c <"$b") bytes"
		fi
	done <"$pre.want"
	ids=$(cat "$pre".*.h 2>/dev/null | tr -d '\r' | grep -ic '^x-request-id:')
	is "$label: $n responses, each with an X-Request-Id" "$ids" "$n"
	if [ -z "$bad_status" ]; then pass "$label: every status as expected"; else fail "$label: every status as expected" "$(echo "$bad_status" | head -20)"; fi
	if [ -z "$bad_leak" ]; then pass "$label: no header of one response in another (Allow, WWW-Authenticate, ETag, Retry-After)"; else fail "$label: no header of one response in another" "$(echo "$bad_leak" | head -20)"; fi
	if [ -z "$bad_body" ]; then pass "$label: bodies match their responses"; else fail "$label: bodies match their responses" "$(echo "$bad_body" | head -20)"; fi
}

# fc_sequence N: N requests one after the other (one curl, one connection to
# the front; the front opens a FastCGI connection per request).
fc_sequence() {
	local n=$1 pre=$FC_D/seq
	fc_curl_config "$n" "$pre" >"$pre.cfg"
	curl -K "$pre.cfg" >"$pre.out" 2>"$pre.err"
	fc_verify_batch "$pre" "$n requests in a row"
}

# fc_parallel N P: N requests, P at a time, on separate connections.
fc_parallel() {
	local n=$1 p=$2 pre=$FC_D/par
	fc_curl_config "$n" "$pre" >"$pre.cfg"
	curl --parallel --parallel-immediate --parallel-max "$p" -K "$pre.cfg" >"$pre.out" 2>"$pre.err"
	fc_verify_batch "$pre" "$n requests, $p in parallel"
}

# fc_ids_unique: no X-Request-Id was answered twice.
fc_ids_unique() {
	local dup
	dup=$(sort "$FC_D/ids" | uniq -d | head -5)
	if [ -z "$dup" ]; then pass "X-Request-Id unique across all $(wc -l <"$FC_D/ids") responses"; else fail "X-Request-Id unique across all responses" "repeated: $dup"; fi
}

# fc_log LOGFILE: the request log has one JSON line per answered request
# (request_id, method, path, status, duration_us) and never the token.
fc_log() {
	local log=$1 json=$FC_D/log.json missing extra bad
	# CGI: Apache prefixes each stderr line; keep the JSON object. The line
	# that logs a request has its method; other lines (start-up, reload, a
	# failing authorization server) are messages, not counted.
	grep -o '{.*}' "$log" 2>/dev/null | jq -c 'select(has("method"))' >"$json" 2>/dev/null
	bad=$(jq -c 'select((.request_id | type) != "string" or (.method | type) != "string" or (.path | type) != "string" or (.status | type) != "number" or (.duration_us | type) != "number")' "$json" 2>&1 | head -3)
	if [ -z "$bad" ] && [ -s "$json" ]; then
		pass "log: JSON lines with request_id, method, path, status, duration_us"
	else
		fail "log: JSON lines with request_id, method, path, status, duration_us" "${bad:-empty log}"
	fi
	jq -r '.request_id' "$json" 2>/dev/null | sort >"$FC_D/log.ids"
	sort -u "$FC_D/ids" >"$FC_D/answered.ids"
	missing=$(comm -13 "$FC_D/log.ids" "$FC_D/answered.ids" | head -5)
	extra=$(sort "$FC_D/log.ids" | uniq -d | head -5)
	if [ -z "$missing" ] && [ -z "$extra" ]; then
		pass "log: exactly one line for each of the $(wc -l <"$FC_D/answered.ids") answered requests"
	else
		fail "log: exactly one line for each answered request" "not logged: $missing
logged twice: $extra"
	fi
	if grep -rqF "$FC_TOKEN" "$log" "$MG_FRONT_LOG" 2>/dev/null; then
		fail "log: the bearer token sent never appears" "$(grep -F "$FC_TOKEN" "$log" | head -2)"
	else
		pass "log: the bearer token sent never appears"
	fi
}

# front_checks BASE PREFIX UNKNOWN_PATH LOGFILE: the whole battery.
front_checks() {
	fc_setup "$1" "$2" "$3"
	fc_endpoints
	fc_sequence 200
	fc_parallel 60 20
	fc_ids_unique
	fc_log "$4"
}

# front_prepare NAME CMD:PKG...: installs what the suite needs, makes the
# temp dir, a configuration for a free port, and starts mcpgate under
# spawn-fcgi (2 processes x 2 workers). Sets MG_PORT, MG_BASE.
front_prepare() {
	local name=$1
	shift
	MCPGATE_BIN=${MCPGATE_BIN:-$MG_TOP/src/mcpgate}
	if ! need_cmds spawn-fcgi:spawn-fcgi curl:curl jq:jq "$@" >"${TMPDIR:-/tmp}/mcpgate-$name-install.$$" 2>&1; then
		fail "install what the $name suite needs" "$(tail -n 20 "${TMPDIR:-/tmp}/mcpgate-$name-install.$$")"
		rm -f "${TMPDIR:-/tmp}/mcpgate-$name-install.$$"
		tap_done
		return 1
	fi
	rm -f "${TMPDIR:-/tmp}/mcpgate-$name-install.$$"
	if [ ! -x "$MCPGATE_BIN" ]; then
		fail "mcpgate binary at $MCPGATE_BIN (build it, or set MCPGATE_BIN)"
		tap_done
		return 1
	fi
	mg_init || return 1
	MG_PORT=$(free_port)
	MG_BASE=http://127.0.0.1:$MG_PORT
	gen_config "$MG_DIR/mcpgate.conf" "$MG_BASE" /mcp "$MG_DIR/state"
	# Not through check: publish_docs sets MG_WWW, which a subshell would lose.
	if publish_docs "$MG_BASE/mcp" "$MG_BASE/docs" 2>"$MG_DIR/publish-docs.err"; then
		pass "deploy/publish-docs: www/ for this gateway at \$MG_DIR/www"
	else
		fail "deploy/publish-docs: www/ for this gateway at \$MG_DIR/www" "$(cat "$MG_DIR/publish-docs.err")"
	fi
	check "mcpgate -t accepts the generated configuration" "$MCPGATE_BIN" -t -c "$MG_DIR/mcpgate.conf"
	if ! start_ok "spawn-fcgi starts 2 mcpgate processes (deploy/spawn-fcgi.sh.in)" \
		start_mcpgate_fcgi "$MG_DIR/mcpgate.sock" "$MG_DIR/mcpgate.conf" 2 2; then
		tap_done
		return 1
	fi
	FC_PIDS_BEFORE=$MG_FCGI_PIDS
}

# fc_docs_name_gateway: the documents at /docs/ name this gateway ($FC_BASE, its
# resource $FC_BASE/mcp, its docs-url $FC_BASE/docs), never the example address
# www/ ships with (deploy/publish-docs).
fc_docs_name_gateway() {
	local f
	for f in llms.txt llms-full.txt openapi.json openapi.yaml; do
		curl -s --max-time 10 -o "$FC_D/pub-$f" "$FC_BASE/docs/$f"
		check "GET /docs/$f: names $FC_BASE" grep -qF "$FC_BASE/" "$FC_D/pub-$f"
		unlike "GET /docs/$f: never the example gw.example.com" "$(grep -n 'gw\.example\.com' "$FC_D/pub-$f")" .
	done
	unlike "GET /docs/llms.txt: no example.com address at all" "$(grep -n 'example\.com' "$FC_D/pub-llms.txt")" .
	is "GET /docs/llms.txt: the MCP endpoint is this gateway's" \
		"$(grep -c "(${FC_BASE}/mcp)" "$FC_D/pub-llms.txt")" 1
	is "GET /docs/llms.txt: links to this gateway's openapi.json" \
		"$(grep -cF "(${FC_BASE}/docs/openapi.json)" "$FC_D/pub-llms.txt")" 1
	is "GET /docs/openapi.json: servers, x-service-ai-interfaces name this gateway" \
		"$(jget '[.servers[0].url, ."x-service-ai-interfaces".mcp, ."x-service-ai-interfaces".llms] | join(" ")' "$FC_D/pub-openapi.json")" \
		"$FC_BASE $FC_BASE/mcp $FC_BASE/docs/llms.txt"
}

# fc_exact: paths next to mcpgate's are not handed to it (no X-Request-Id):
# the recipe uses exact locations.
fc_exact() {
	local p code id bad=''
	for p in /mcpx /mcp/x /mcp/health/x /mcp/healthz /mcp/connect/x /mcp/connectx \
		/mcp/connect/clientx /mcp/connect/client/x /server.jsonx /.well-known/mcpx /.well-known/acme-challenge/x \
		/.well-known/oauth-protected-resource/other; do
		code=$(curl -s -o /dev/null -D "$FC_D/exact.h" -w '%{http_code}' --max-time 10 "$MG_BASE$p")
		id=$(hdr X-Request-Id "$FC_D/exact.h")
		[ -z "$id" ] || bad="$bad $p($code)"
	done
	if [ -z "$bad" ]; then pass "only the exact paths reach mcpgate"; else fail "only the exact paths reach mcpgate" "reached mcpgate:$bad"; fi
}

# front_run UNKNOWN_PATH: the battery through a FastCGI front, then the
# process checks; ends the TAP stream and exits.
front_run() {
	local pid gone=''
	if [ -z "$MG_FRONT_PID" ] || ! mg_alive "$MG_FRONT_PID"; then
		tap_done
		exit 1
	fi
	front_checks "$MG_BASE" "" "$1" "$MG_LOG"
	fc_exact
	for pid in $FC_PIDS_BEFORE; do
		mg_alive "$pid" || gone="$gone $pid"
	done
	if [ -z "$gone" ]; then
		pass "the mcpgate processes survived every request (pids $FC_PIDS_BEFORE)"
	else
		fail "the mcpgate processes survived every request" "exited:$gone; log tail: $(tail -n 5 "$MG_LOG")"
	fi
	tap_done
	exit
}
