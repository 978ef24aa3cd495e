#!/usr/bin/env bash
# tests/fed/connect-register.sh — connected accounts ([upstream] credentials = user-oauth)
# with no client-id: the gateway becomes a client of the third party's authorization
# server by itself (src/access/upreg.c), behind nginx + spawn-fcgi + mcpgate. The
# organisation's authorization server ($IDP, tests/idp, headless) signs people in; three
# third parties (tests/idp, each on a loopback address of its own so that a browser's
# cookies stay apart), each with a tracker (tests/upstream/fixture.mjs --require-bearer
# at that third party, --public-list so that the gateway's catalog, fetched with no token,
# lists its tools):
#
#  - dcr  (open registration, no --cimd): mcpgate -t says the gateway registers there
#    (RFC 7591); alice's call → input_required → her browser (curl and a cookie jar, signing in
#    as her by login_hint at both servers) follows the link to "Connected" → her call is
#    alice's at the tracker, as the client registered there; exactly one registration;
#    bob connects too: still one; the gateway restarted on the same state file and carol
#    connecting: still one;
#  - cimd (--cimd): the same flow with client_id = <origin>/mcp/connect/client, the
#    gateway's Client ID Metadata Document, which the third party fetched and no
#    registration at all; GET /mcp/connect/client through nginx answers the document,
#    field by field;
#  - none (--no-registration, no --cimd): the call sends the person to connect (the
#    gateway learns only there that it has no way to be a client), the connect page then
#    says that this service cannot be connected (500, not "try again"), and the gateway's
#    log says to set client-id.
#
# nginx runs the recipe (deploy/nginx/mcpgate.conf.in); when the recipe does not route
# connect-path/client yet, a test-only location for it is added (start_nginx's extra file).
# Prints TAP. Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq \
	--node oidc-provider/package.json @modelcontextprotocol/sdk/package.json

GW_PORT=$(free_port)
BASE=http://127.0.0.1:$GW_PORT
GW_URL=$BASE/mcp
CONNECT=$BASE/mcp/connect
DOC=$CONNECT/client
NAMES=(dcr cimd none)
declare -A TP_HOST=([dcr]=127.0.0.2 [cimd]=127.0.0.3 [none]=127.0.0.4)
declare -A TP_OPTS=([dcr]='' [cimd]=--cimd [none]=--no-registration)
declare -A PREFIX=([dcr]=d_ [cimd]=c_ [none]=n_)
declare -A TP=() TP_PID=() UP_URL=() UP_PORT=()

# --- the authorization servers and the trackers, all starting at once -----------------------
for n in "${NAMES[@]}"; do
	UP_PORT[$n]=$(free_port)
	UP_URL[$n]=http://127.0.0.1:${UP_PORT[$n]}/mcp
	p=$(free_port)
	TP[$n]=http://${TP_HOST[$n]}:$p
	rm -f "$T/tp-$n.ready"
	# shellcheck disable=SC2086 # the options, word by word
	node "$top/tests/idp/server.mjs" --host "${TP_HOST[$n]}" --port "$p" --resource "${UP_URL[$n]}" ${TP_OPTS[$n]} \
		--ready-file "$T/tp-$n.ready" > /dev/null 2> "$T/tp-$n.log" &
	TP_PID[$n]=$!
	mg_track "${TP_PID[$n]}"
	start_fixture "up-$n" --port "${UP_PORT[$n]}" --name "tracker-$n" --require-bearer "${TP[$n]}" \
		--resource "${UP_URL[$n]}" --public-list
done
start_idp "$GW_URL"
for n in "${NAMES[@]}"; do
	wait_until 120 ready_or_gone "$T/tp-$n.ready" "${TP_PID[$n]}"	# four servers start at once on a loaded machine
	[ "$(sed -n 's/^ready //p' "$T/tp-$n.ready" 2>/dev/null)" = "${TP[$n]}" ] \
		|| bail "the third party $n's authorization server started" "$(tail -n 5 "$T/tp-$n.log")"
	wait_fixture "up-$n" || bail "the tracker of $n started" "$(tail -n 5 "$T/up-$n.log")"
done
md() { curl -s --max-time 10 "${TP[$1]}/.well-known/oauth-authorization-server"; }
jcheck "the third parties' metadata: dcr registers (no metadata documents), cimd takes metadata documents, none neither" \
	"$(jq -n --argjson d "$(md dcr)" --argjson c "$(md cimd)" --argjson x "$(md none)" '{d: $d, c: $c, x: $x}')" \
	"(.d.registration_endpoint == \"${TP[dcr]}/reg\" and (.d | has(\"client_id_metadata_document_supported\") | not))
	 and .c.client_id_metadata_document_supported == true
	 and ((.x | has(\"registration_endpoint\")) or .x.client_id_metadata_document_supported | not)"
tp_stats() { curl -s --max-time 5 "${TP[$1]}/_stats"; }

# The gateway's client at the organisation, for signing people in (as tests/www/connect.sh).
ORG_REG=$(curl -s --max-time 30 -H 'Content-Type: application/json' --data-binary \
	"$(jq -nc --arg r "$CONNECT" '{client_name: "mcpgate: sign-in before connecting", redirect_uris: [$r],
		response_types: ["code"], grant_types: ["authorization_code"], token_endpoint_auth_method: "client_secret_basic"}')" \
	"$IDP/reg")
ORG_CLIENT=$(jq -r '.client_id // empty' <<<"$ORG_REG")
[ -n "$ORG_CLIENT" ] || bail "the gateway's sign-in client registered at the organisation" "$ORG_REG"
(umask 077 && jq -r .client_secret <<<"$ORG_REG" > "$T/org-connect.secret")
ALICE=$(mint --user alice --resource "$GW_URL")
BOB=$(mint --user bob --resource "$GW_URL")
CAROL=$(mint --user carol --resource "$GW_URL")
for t in "$ALICE" "$BOB" "$CAROL"; do case $t in '' | null) bail "alice's, bob's and carol's tokens" "$(tail -n 5 "$T/idp.log")" ;; esac; done
pass "the organisation at $IDP, the third parties dcr ${TP[dcr]}, cimd ${TP[cimd]} (--cimd), none ${TP[none]} (--no-registration), each with its tracker; the callers' tokens"

# --- the gateway -------------------------------------------------------------------------------
(umask 077 && head -c 32 /dev/urandom > "$T/session.key")
gateway_conf "$T/gw.conf" "$GW_URL" "session-key-file = $T/session.key" \
	"connect-client-id = $ORG_CLIENT" "connect-client-secret-file = $T/org-connect.secret"
for n in "${NAMES[@]}"; do
	printf '[upstream "%s"]\nurl = %s\nprefix = %s\ncredentials = user-oauth\nuser-scopes = mcp:tools\n' \
		"$n" "${UP_URL[$n]}" "${PREFIX[$n]}" >> "$T/gw.conf"
done
if out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1); then
	like "mcpgate -t: with no client-id, the gateway is its metadata document where the server takes one, else registers there (RFC 7591)" \
		"$(grep '^upstream "dcr"' <<<"$out")" "consent at .* as the gateway.s Client ID Metadata Document where that server takes one, else a client it registers there \(RFC 7591\)"
else
	bail "mcpgate -t accepts user-oauth upstreams without client-id" "$out"
fi
# The recipe routes connect-path; connect-path/client too once it is there, else a
# test-only location (start_nginx's extra file).
extra=
if ! grep -q '^location = /mcp/connect/client {' "$top/deploy/nginx/mcpgate.conf.in"; then
	extra=$T/nginx-extra.conf
	printf 'location = /mcp/connect/client {\n    include fastcgi_params;\n    fastcgi_pass unix:%s;\n}\n' "$T/mcpgate.sock" > "$extra"
	echo "# the nginx recipe has no location = /mcp/connect/client yet: a test-only one added"
fi
start_gw() {
	start_mcpgate_fcgi "$T/mcpgate.sock" "$T/gw.conf" 2 2 >> "$T/start.out" 2>&1
}
if start_gw && start_nginx "$GW_PORT" "$extra" >> "$T/start.out" 2>&1; then
	pass "spawn-fcgi (2 x 2) + mcpgate behind nginx at $BASE"
else
	bail "the gateway started" "$(tail -n 20 "$T/start.out")"
fi

# call TOKEN TOOL: a stateless 2026-07-28 tools/call that declares URL-mode elicitation:
# the JSON-RPC answer (compact).
call() {
	curl -s --max-time 60 -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		-H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H "Mcp-Name: $2" -H "Authorization: Bearer $1" --data-binary \
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":{},
		  \"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{\"elicitation\":{\"url\":{}}}}}}" "$GW_URL" \
		| sed -n 's/^data: //p; /^{/p' | head -1 | jq -c .
}
# the connect link of an input_required result's URL elicitation (2026-07-28)
link_of() { jq -r '.result | select(.resultType == "input_required") | .inputRequests.mcpgate_connect.params
	| select(.mode == "url") | .url // empty'; }
whoami_of() { jq -c '(.result.content[0].text | fromjson?) // .'; }

# browse USER URL: USER's browser (curl, a cookie jar of USER's) following URL to its end,
# signing in as USER at every authorization server it is sent to (login_hint added to each
# /auth the gateway redirects to: the headless login takes it); prints the last status and
# the page's title. The hops (status, then the location's scheme, host and path) in $T/hops.USER.
browse() {
	local user=$1 url=$2 hop out st loc
	: > "$T/hops.$user"
	for hop in $(seq 1 20); do
		out=$(curl -sS --max-time 30 -b "$T/jar.$user" -c "$T/jar.$user" -o "$T/page.$user" \
			-w '%{http_code} %{redirect_url}' "$url" 2>> "$T/curl.err")
		st=${out%% *}
		loc=${out#* }
		echo "$hop $st ${loc%%\?*}" >> "$T/hops.$user"
		case $st in 30[1237]) [ -n "$loc" ] || break ;; *) break ;; esac
		case $loc in */auth\?*) loc="$loc&login_hint=$user" ;; esac
		url=$loc
	done
	echo "$st $(sed -n 's:.*<h1>\([^<]*\)</h1>.*:\1:p' "$T/page.$user" | head -1)"
}
# connect USER TOKEN TOOL: the call answered input_required with a link of connect-path, the link
# followed to "Connected" (one TAP line each, named by DESC).
connect() {
	local user=$1 token=$2 tool=$3 out url
	out=$(call "$token" "$tool")
	url=$(link_of <<<"$out")
	jcheck "$user's $tool, not connected: input_required with a URL elicitation of $CONNECT?ticket=…" "$out" \
		".result.resultType == \"input_required\" and (.result.inputRequests.mcpgate_connect.params.url | startswith(\"$CONNECT?ticket=\"))"
	[ -n "$url" ] || return 1
	is "$user's browser follows the link, signs in at the organisation and consents at the third party: 200 Connected" \
		"$(browse "$user" "$url")" "200 Connected"
}

# --- dcr: registered once, kept ------------------------------------------------------------------
is "dcr: nothing registered before anyone connects" "$(tp_stats dcr | jq -c .registrations)" 0
connect alice "$ALICE" d_whoami
REGISTERED=$(tp_stats dcr | jq -r '.registered_clients[0] // empty')
jcheck "dcr: the third party registered exactly one client" "$(tp_stats dcr)" '.registrations == 1 and (.registered_clients | length) == 1'
jcheck "dcr: alice's call now succeeds: alice at the tracker, as the client registered there ($REGISTERED)" \
	"$(call "$ALICE" d_whoami | whoami_of)" ".sub == \"alice\" and .client_id == \"$REGISTERED\" and .aud == \"${UP_URL[dcr]}\""
grep -q "the gateway registered as a client at ${TP[dcr]} (RFC 7591)" "$T/gw.log" \
	&& pass "dcr: the gateway's log says it registered there" \
	|| fail "dcr: the gateway's log says it registered there" "$(grep -i regist "$T/gw.log" | tail -n 3)"
connect bob "$BOB" d_whoami
jcheck "dcr: bob's call is bob, as the same client" "$(call "$BOB" d_whoami | whoami_of)" \
	".sub == \"bob\" and .client_id == \"$REGISTERED\""
is "dcr: bob connecting registered nothing more" "$(tp_stats dcr | jq -c .registrations)" 1

# The gateway restarted on the same state file (nginx stays).
# shellcheck disable=SC2086 # one word per pid
kill -TERM $MG_FCGI_PIDS 2>/dev/null
mg_down() { local p; for p in $MG_FCGI_PIDS; do ! mg_alive "$p" || return 1; done; }
wait_until 30 mg_down || bail "the mcpgate processes stopped"
rm -f "$T/mcpgate.sock"
start_gw || bail "the gateway started again on the same state file" "$(tail -n 20 "$T/start.out")"
pass "the gateway restarted on the same state file"
jcheck "dcr: after the restart alice's call is still alice's (the vault kept)" "$(call "$ALICE" d_whoami | whoami_of)" \
	".sub == \"alice\" and .client_id == \"$REGISTERED\""
connect carol "$CAROL" d_whoami
jcheck "dcr: carol, connecting after the restart, is carol as the client registered before it" \
	"$(call "$CAROL" d_whoami | whoami_of)" ".sub == \"carol\" and .client_id == \"$REGISTERED\""
is "dcr: no new registration after the restart" "$(tp_stats dcr | jq -c .registrations)" 1

# --- cimd: the gateway's metadata document ------------------------------------------------------
curl -s --max-time 10 -D "$T/doc.h" -o "$T/doc.json" "$DOC"
jcheck "GET $DOC through nginx: the document: client_id itself, client_name, redirect_uris [the connect page], grant_types authorization_code refresh_token, response_types code, token_endpoint_auth_method none" \
	"$(cat "$T/doc.json")" \
	".client_id == \"$DOC\" and .client_name == \"com.example/gateway\" and .redirect_uris == [\"$CONNECT\"]
	 and .grant_types == [\"authorization_code\", \"refresh_token\"] and .response_types == [\"code\"]
	 and .token_endpoint_auth_method == \"none\" and (has(\"client_secret\") | not)"
like "… as JSON" "$(tr -d '\r' < "$T/doc.h" | grep -i '^content-type:')" '^[Cc]ontent-[Tt]ype: application/json'
connect alice "$ALICE" c_whoami
jcheck "cimd: alice's call now succeeds: alice at the tracker, her token's client the document's URL" \
	"$(call "$ALICE" c_whoami | whoami_of)" ".sub == \"alice\" and .client_id == \"$DOC\""
jcheck "cimd: the third party fetched the document ($DOC) and registered nothing" "$(tp_stats cimd)" \
	".client_documents >= 1 and .client_document_ids == [\"$DOC\"] and .registrations == 0"

# --- none: neither way -----------------------------------------------------------------------------
# The gateway cannot know before it asks the third party's metadata (at the connect page):
# the call sends the person to connect, and the page, once the person is signed in, says
# that this cannot be done here (not "try again"), and the log says to set client-id.
out=$(call "$ALICE" n_whoami)
echo "# none: alice's call answered $(jq -c '{resultType: .result.resultType, code: .error.code, message: .error.message}' <<<"$out")"
url=$(link_of <<<"$out")
if [ -n "$url" ]; then
	is "none: the connect page, after the sign-in: 500 Cannot connect this service" "$(browse alice "$url")" \
		"500 Cannot connect this service"
	like "… saying the gateway has no client at the service's authorization server (tell its administrator)" \
		"$(cat "$T/page.alice")" "has no client at the service(&#39;|.)s authorization server.*administrator"
else
	pass "none: alice's call fails without a link to connect: $(jq -c .error <<<"$out")"
fi
grep -q 'neither Client ID Metadata Documents nor registrations: set client-id' "$T/gw.log" \
	&& pass "none: the gateway's log says to set client-id" \
	|| fail "none: the gateway's log says to set client-id" "$(grep -i 'upstream none' "$T/gw.log" | tail -n 3)"
jcheck "none: nothing registered and no document fetched at that third party" "$(tp_stats none)" \
	'.registrations == 0 and .client_documents == 0'
seen_none=$(curl -s --max-time 5 "http://127.0.0.1:${UP_PORT[none]}/_seen" | jq -c '.accepted | length')
is "none: the tracker accepted no token" "$seen_none" 0

# --- afterwards ------------------------------------------------------------------------------------
# shellcheck disable=SC2086 # one word per pid
is "the mcpgate processes survived the run" "$(gone $MG_FCGI_PIDS)" none
is "no caller's token in any log" "$(pieces_logged "$ALICE" "$BOB" "$CAROL")" 0
tap_done
