#!/usr/bin/env bash
# tests/policy/resources.sh — a resource policy cannot be walked around with dot
# segments. nginx + spawn-fcgi + mcpgate in front of the SDK fixture upstream serving
# the files under $T/root as file:///PATH (--files: the URL's path decoded and joined to
# the directory, as a simple file server does), and a policy that grants a tenant only
# `resources = file:///docs/*`. The policy matches a URI as a string; the upstream
# resolves its dot segments and decodes its escapes: so every URI an upstream could
# resolve to another resource than the string names (a dot segment, raw or
# percent-encoded, an encoded '/', a backslash, a control character, an overlong UTF-8
# escape) is refused by the gateway (-32602) before it is routed, for resources/read,
# resources/subscribe and completion/complete alike; nothing outside /docs is read,
# whatever the spelling, and what /docs holds still is.
#
# Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq --node @modelcontextprotocol/sdk/package.json

# --- the files, the upstream, the authorization server, the gateway ------------------------
mkdir -p "$T/root/docs/x" "$T/root/etc" "$T/root/secret" "$T/root/docs..x"
echo 'the docs: readme' > "$T/root/docs/readme.txt"
echo 'root:SECRET-PASSWD:0:0' > "$T/root/etc/passwd"
echo 'SECRET-KEY-MATERIAL' > "$T/root/secret/key.txt"
fixture_and_idp up --port 0 --files "$T/root" --name files
gateway_conf "$T/gw.conf" "$GW_URL" "catalog-ttl = 3600"
cat >> "$T/gw.conf" <<CONF
[upstream "files"]
url = ${FIXTURE_URL[up]}
[group "docs"]
resources = file:///docs/*
[tenant "acme"]
groups = docs
CONF
start_gateway "$GW_PORT" "nginx + spawn-fcgi + mcpgate in front of a file server; tenant acme granted file:///docs/*"
TOKEN=$(mint --client machine-acme --scope mcp:tools --resource "$GW_URL")
[ -n "$TOKEN" ] && [ "$TOKEN" != null ] || bail "a token of tenant acme" "$(tail -n 5 "$T/idp.log")"

# rpc METHOD PARAMS [SESSION]: one request through nginx; the body on stdout.
rpc() {
	curl -s --max-time 30 -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		-H "Authorization: Bearer $TOKEN" ${3:+-H "Mcp-Session-Id: $3"} -H 'MCP-Protocol-Version: 2025-11-25' \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$1\",\"params\":$2}" "$GW_URL" |
		sed -n 's/^data: //p; /^{/p'
}
read_uri() { rpc resources/read "$(jq -nc --arg u "$1" '{uri: $u}')"; }

# --- what the policy grants, and what it does not ------------------------------------------
out=$(read_uri file:///docs/readme.txt)
jcheck "file:///docs/readme.txt is read" "$out" '.result.contents[0].text == "the docs: readme\n"'
out=$(read_uri file:///etc/passwd)
jcheck "file:///etc/passwd is refused by the policy (403 group_forbidden)" "$out" '.error == "group_forbidden"'

# --- the same files, spelled with dot segments and escapes ----------------------------------
for uri in \
	'file:///docs/../etc/passwd' \
	'file:///docs/%2e%2e/etc/passwd' \
	'file:///docs/%2E%2e/etc/passwd' \
	'file:///docs/.%2e/etc/passwd' \
	'file:///docs/x/../../secret/key.txt' \
	'file:///docs//../etc/passwd' \
	'file:///docs/./../secret/key.txt' \
	'file:///docs/..%2fsecret/key.txt' \
	'file:///docs/..%2Fsecret/key.txt' \
	'file:///docs/..\secret\key.txt' \
	'file:///docs/..%5csecret%5ckey.txt' \
	'file:///docs/..;/etc/passwd' \
	'file:///docs/%c0%ae%c0%ae/etc/passwd' \
	'file:///docs/x?/../../etc/passwd'; do
	out=$(read_uri "$uri")
	if jq -e '.error.code == -32602' <<<"$out" >/dev/null && ! grep -q SECRET <<<"$out"; then
		pass "resources/read $uri: refused by the gateway (-32602: $(jq -r .error.message <<<"$out"))"
	else
		fail "resources/read $uri: refused by the gateway (-32602), nothing read" "$out"
	fi
done
# A name with dots that is no dot segment is a name.
echo 'dots in a name' > "$T/root/docs..x/y.txt"
echo 'inside' > "$T/root/docs/x/a..b"
out=$(read_uri 'file:///docs/x/a..b')
jcheck "file:///docs/x/a..b (dots in a name, not a segment) is read" "$out" '.result.contents[0].text == "inside\n"'
out=$(read_uri 'file:///docs..x/y.txt')
jcheck "file:///docs..x/y.txt is outside file:///docs/* (403 group_forbidden)" "$out" '.error == "group_forbidden"'

# --- subscribe and completion take the same check ------------------------------------------
init=$(curl -s --max-time 30 -D "$T/init.h" -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' -H "Authorization: Bearer $TOKEN" \
	--data-binary '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	"$GW_URL" | sed -n 's/^data: //p; /^{/p')
SID=$(tr -d '\r' < "$T/init.h" | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
[ -n "$SID" ] || bail "a session with the gateway" "$init"
out=$(rpc resources/subscribe '{"uri":"file:///docs/readme.txt"}' "$SID")
jcheck "resources/subscribe file:///docs/readme.txt: taken" "$out" '.result == {}'
out=$(rpc resources/subscribe '{"uri":"file:///docs/%2e%2e/secret/key.txt"}' "$SID")
jcheck "resources/subscribe file:///docs/%2e%2e/secret/key.txt: -32602" "$out" '.error.code == -32602'
out=$(rpc completion/complete '{"ref":{"type":"ref/resource","uri":"file:///docs/{+path}/.."},"argument":{"name":"path","value":"e"}}' "$SID")
jcheck "completion/complete of ref/resource file:///docs/{+path}/..: -32602" "$out" '.error.code == -32602'

# --- the upstream never saw them ------------------------------------------------------------
n=$(grep -c 'SECRET' "$T/gw.log" "$MG_DIR/nginx/access.log" 2>/dev/null | awk -F: '{s += $NF} END {print s + 0}')
is "no secret file's content in the gateway's or nginx's logs" "$n" 0
tap_done
