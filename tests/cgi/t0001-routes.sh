#!/usr/bin/env bash
# Ring (b): every public endpoint as CGI, with nginx- and cgi-bin-style paths.
. "$(dirname "$0")/lib.sh"
write_conf

cgi GET /mcp/health
is "health: 200" "$(status)" 200
is "health: JSON" "$(header Content-Type)" application/json
is "health: status ok" "$(jf .status)" ok
is "health: service" "$(jf .service)" mcpgate
like "health: RFC 3339 timestamp" "$(jf .timestamp)" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'
like "health: X-Request-Id" "$(header X-Request-Id)" '^[0-9a-f]{16}$'
is "health: Content-Length matches the body" "$(header Content-Length)" "$(wc -c < "$T/body" | tr -d ' ')"

# cgi-bin style: SCRIPT_NAME is the program, PATH_INFO the route.
env -i PATH="$PATH" REQUEST_METHOD=GET SCRIPT_NAME=/cgi-bin/mcpgate PATH_INFO=/mcp/health \
	"$MCPGATE_BIN" -c "$T/gw.conf" 2>/dev/null | grep -q '^Status: 200' \
	&& pass "cgi-bin PATH_INFO routing" || fail "cgi-bin PATH_INFO routing"

cgi GET /.well-known/mcp
is "mcp metadata: 200" "$(status)" 200
is "mcp metadata: name" "$(jf .name)" com.example/gateway
is "mcp metadata: endpoint" "$(jf .endpoint)" http://127.0.0.1:8080/mcp
is "mcp metadata: version from config" "$(jf .version)" 1.2.3
is "mcp metadata: authorization.resource_metadata" "$(jf .authorization.resource_metadata)" \
	http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp
is "mcp metadata: authorization.issuer" "$(jf .authorization.issuer)" http://127.0.0.1:8081
is "mcp metadata: scopes" "$(jf '.authorization.scopes_supported|join(" ")')" "mcp:tools mcp:admin"

for p in /.well-known/oauth-protected-resource /.well-known/oauth-protected-resource/mcp; do
	cgi GET "$p"
	is "PRM $p: 200" "$(status)" 200
	is "PRM $p: resource" "$(jf .resource)" http://127.0.0.1:8080/mcp
	is "PRM $p: authorization_servers" "$(jf '.authorization_servers|join(" ")')" http://127.0.0.1:8081
	is "PRM $p: bearer_methods_supported" "$(jf '.bearer_methods_supported|join(" ")')" header
	is "PRM $p: resource_documentation" "$(jf .resource_documentation)" http://127.0.0.1:8080/docs
done

cgi GET /server.json
is "server.json: 200" "$(status)" 200
like "server.json: \$schema" "$(jf '."$schema"')" '^https://static.modelcontextprotocol.io/schemas/.*/server.schema.json$'
is "server.json: remotes" "$(jf '.remotes[0].type + " " + .remotes[0].url')" "streamable-http http://127.0.0.1:8080/mcp"
is "server.json: websiteUrl" "$(jf .websiteUrl)" https://example.com
etag=$(header ETag)
like "server.json: ETag" "$etag" '^"[0-9a-f]{32}"$'
is "server.json: Cache-Control" "$(header Cache-Control)" "public, max-age=300"
cgi GET /server.json HTTP_IF_NONE_MATCH="$etag"
is "server.json: If-None-Match → 304" "$(status)" 304
is "server.json: 304 has no body" "$(wc -c < "$T/body" | tr -d ' ')" 0

cgi HEAD /.well-known/mcp
is "HEAD: 200" "$(status)" 200
is "HEAD: no body" "$(wc -c < "$T/body" | tr -d ' ')" 0
like "HEAD: Content-Length of the GET body" "$(header Content-Length)" '^[1-9][0-9]*$'

cgi GET /.well-known/oauth-authorization-server
is "AS metadata (fetch, not mirrored yet): 500" "$(status)" 500
is "AS metadata: HttpError" "$(jf .error)" temporarily_unavailable
printf '{"issuer":"http://127.0.0.1:8081","token_endpoint":"http://127.0.0.1:8081/token"}' > "$T/as.json"
write_conf "[auth]" "as-metadata = $T/as.json"
cgi GET /.well-known/oauth-authorization-server
is "AS metadata from a file: 200" "$(status)" 200
is "AS metadata from a file: issuer" "$(jf .issuer)" http://127.0.0.1:8081
write_conf

cgi OPTIONS /.well-known/mcp
is "OPTIONS: 204" "$(status)" 204
is "OPTIONS: Allow" "$(header Allow)" "GET, HEAD, OPTIONS"
like "OPTIONS: allows MCP headers" "$(header Access-Control-Allow-Headers)" 'MCP-Protocol-Version.*Mcp-Session-Id.*Last-Event-ID'

# A resource below a path (a cgi-bin URL): the challenge names the path-suffixed
# metadata URL (RFC 9728), and that URL is served.
RESOURCE=http://127.0.0.1:8080/cgi-bin/mcpgate/mcp write_conf
cgi POST /mcp CONTENT_TYPE=application/json CONTENT_LENGTH=0
prm=$(header WWW-Authenticate | sed -n 's/.*resource_metadata="http:\/\/127.0.0.1:8080\([^"]*\)".*/\1/p')
is "cgi-bin resource: challenge names the path-suffixed metadata" "$prm" /.well-known/oauth-protected-resource/cgi-bin/mcpgate/mcp
cgi GET "$prm"
is "cgi-bin resource: that metadata URL is served" "$(status)" 200
is "cgi-bin resource: with the resource" "$(jf .resource)" http://127.0.0.1:8080/cgi-bin/mcpgate/mcp
write_conf

cgi POST /mcp CONTENT_TYPE=application/json CONTENT_LENGTH=2 <<< '{}'
is "POST /mcp without token: 401" "$(status)" 401
is "POST /mcp: challenge" "$(header WWW-Authenticate)" \
	'Bearer resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"'
is "POST /mcp: HttpError request_id = X-Request-Id" "$(jf .request_id)" "$(header X-Request-Id)"

tap_done
