#!/usr/bin/env bash
# Connected accounts end to end: the gateway as an OAuth client of a third-party MCP
# server's own authorization server, keeping each person's tokens there ([upstream]
# credentials = user-oauth), driven by an MCP SDK client and headless Chromium (Debian's
# chromium, playwright-core from tests/package.json; nothing downloaded) against nginx +
# spawn-fcgi + mcpgate and two authorization servers (tests/idp, each with its own login
# and consent pages):
#
#  - the organisation's ($IDP, resource the gateway): the gateway's callers get their
#    tokens there (alice's and bob's minted headlessly by token.mjs, client cli), and the
#    gateway signs the person in there (a client registered by DCR) before connecting;
#  - a third party's ($TP, resource the tracker): the tracker upstream (the fixture with
#    --require-bearer) takes only its tokens; the gateway's client there (registered by
#    DCR: authorization_code, refresh_token, client_credentials) fetches the shared catalog
#    with its own token and connects each person's account.
#
# The steps are in lib/connect-browser.mjs (-32042 and its URL, the refusals, the happy
# path, what holds afterwards); this script starts and stops everything, checks the
# fixtures before the gateway is involved, relays the browser's TAP, and afterwards checks
# that no ticket, state, code or token reached the gateway's logs, that no token the
# tracker accepted is in clear in the logs or the state file, and that the audit log has
# the one connection made. Screenshots of every state go to $WWW_ARTIFACTS (default
# _build/logs/www-connect). nginx runs the recipe as users install it (its
# `location = /mcp/connect` included).
# Prints TAP. Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq chromium:chromium \
	--node playwright-core/package.json oidc-provider/package.json @modelcontextprotocol/sdk/package.json
. "$top/tests/lib/bearer.sh"
ART=${WWW_ARTIFACTS:-$top/_build/logs/www-connect}
{ rm -rf "$ART" && mkdir -p "$ART"; } || bail "the artifacts directory $ART"

# --- the two authorization servers and the tracker ----------------------------------------
GW_PORT=$(free_port)
BASE=http://127.0.0.1:$GW_PORT
GW_URL=$BASE/mcp
CONNECT=$BASE/mcp/connect
UP_PORT=$(free_port)
UP_URL=http://127.0.0.1:$UP_PORT/mcp
# The third party's server is another host, as it would be: another loopback address, so
# that the browser keeps its cookies apart from the organisation's (cookies ignore ports:
# both servers' session cookies, one name, would otherwise be one host's and overwrite
# each other).
TP_PORT=$(free_port)
TP=http://127.0.0.2:$TP_PORT
# The third party's authorization server and the tracker start while the organisation's does.
rm -f "$T/tp.ready"
node "$top/tests/idp/server.mjs" --host 127.0.0.2 --port "$TP_PORT" --resource "$UP_URL" --login-pages \
	--ready-file "$T/tp.ready" --quiet > /dev/null 2> "$T/tp.log" &
TP_PID=$!
mg_track "$TP_PID"
start_fixture tracker --port "$UP_PORT" --name tracker --require-bearer "$TP" \
	--introspect-client mcpgate:mcpgate-secret --resource "$UP_URL"
IDP_OPTS="--login-pages --headless-client cli" start_idp "$GW_URL"
wait_until 30 ready_or_gone "$T/tp.ready" "$TP_PID"
[ "$(sed -n 's/^ready //p' "$T/tp.ready" 2>/dev/null)" = "$TP" ] \
	|| bail "the third party's authorization server started" "$(tail -n 5 "$T/tp.log")"
wait_fixture tracker || bail "the tracker (the fixture upstream, --require-bearer at the third party) started" "$(tail -n 5 "$T/tracker.log")"
pass "the organisation's authorization server at $IDP (resource $GW_URL), the third party's at $TP (resource $UP_URL), both with login pages; the tracker at $UP_URL"

# register ISSUER NAME GRANT...: a confidential client (client_secret_basic) whose one
# redirect URI is connect-path, by dynamic registration: the registration's answer.
register() {
	local iss=$1 name=$2
	shift 2
	curl -s --max-time 30 -H 'Content-Type: application/json' --data-binary \
		"$(jq -nc --arg n "$name" --arg r "$CONNECT" '{client_name: $n, redirect_uris: [$r], response_types: ["code"],
			grant_types: $ARGS.positional, token_endpoint_auth_method: "client_secret_basic"}' --args "$@")" "$iss/reg"
}
ORG_REG=$(register "$IDP" "mcpgate: sign-in before connecting" authorization_code)
TP_REG=$(register "$TP" "mcpgate: the tracker's client" authorization_code refresh_token client_credentials)
jcheck "DCR at the organisation: the gateway's client for signing people in, redirect_uri $CONNECT exactly" \
	"$ORG_REG" ".client_id and .client_secret and .redirect_uris == [\"$CONNECT\"] and .grant_types == [\"authorization_code\"]"
jcheck "DCR at the third party: the gateway's client there (authorization_code, refresh_token, client_credentials), redirect_uri $CONNECT exactly" \
	"$TP_REG" ".client_id and .client_secret and .redirect_uris == [\"$CONNECT\"] and (.grant_types | sort) == [\"authorization_code\", \"client_credentials\", \"refresh_token\"]"
ORG_CLIENT=$(jq -r '.client_id // empty' <<<"$ORG_REG")
TP_CLIENT=$(jq -r '.client_id // empty' <<<"$TP_REG")
if [ -z "$ORG_CLIENT" ] || [ -z "$TP_CLIENT" ]; then bail "the gateway's clients registered" "$ORG_REG $TP_REG"; fi
(umask 077 && jq -r .client_secret <<<"$ORG_REG" > "$T/org-connect.secret" && jq -r .client_secret <<<"$TP_REG" > "$T/tp-client.secret")
ORG_SECRET=$(cat "$T/org-connect.secret")
TP_SECRET=$(cat "$T/tp-client.secret")

# The fixtures, before the gateway is involved.
jcheck "the tracker's protected-resource metadata names the third party as its authorization server" \
	"$(curl -s --max-time 10 "http://127.0.0.1:$UP_PORT/.well-known/oauth-protected-resource/mcp")" \
	".resource == \"$UP_URL\" and .authorization_servers == [\"$TP\"]"
is "the tracker refuses a request without a token (401)" \
	"$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		--data-binary '{"jsonrpc":"2.0","id":1,"method":"ping"}' "$UP_URL")" 401
TP_CC=$(curl -s --max-time 30 -u "$TP_CLIENT:$TP_SECRET" -d grant_type=client_credentials -d scope=mcp:tools \
	--data-urlencode "resource=$UP_URL" "$TP/token" | jq -r '.access_token // empty')
jcheck "the gateway's client at the third party gets a client_credentials token for the tracker, which the tracker takes (whoami: that client, no person)" \
	"$(MCP_BEARER_TOKEN=$TP_CC node "$here/lib/connect-client.mjs" --url "$UP_URL" --tool whoami --no-url-elicitation 2>> "$T/client.err" | jq -c '(.result.content[0].text | fromjson?) // .')" \
	".sub == null and .client_id == \"$TP_CLIENT\" and .aud == \"$UP_URL\""
ALICE=$(mint --user alice --resource "$GW_URL")
BOB=$(mint --user bob --resource "$GW_URL")
for t in "$ALICE" "$BOB"; do case $t in '' | null) bail "alice's and bob's tokens minted headlessly at the organisation (client cli)" "$(tail -n 5 "$T/idp.log")" ;; esac; done
pass "alice's and bob's tokens for the gateway, minted headlessly at the organisation (client cli) while its login pages serve the browsers"

# --- the gateway ----------------------------------------------------------------------------
(umask 077 && head -c 32 /dev/urandom > "$T/session.key")
gateway_conf "$T/gw.conf" "$GW_URL" "session-key-file = $T/session.key" \
	"connect-client-id = $ORG_CLIENT" "connect-client-secret-file = $T/org-connect.secret"
cat >> "$T/gw.conf" <<CONF
[upstream "tracker"]
url = $UP_URL
prefix = tr_
credentials = user-oauth
client-id = $TP_CLIENT
client-secret-file = $T/tp-client.secret
user-scopes = mcp:tools
catalog-credentials = client-credentials
CONF
if out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1); then
	pass "mcpgate -t accepts the configuration (credentials = user-oauth, its clients at both servers, catalog-credentials = client-credentials)"
	like "mcpgate -t says how the tracker is reached: each person's own account, connected at $CONNECT, signed in at the issuer as $ORG_CLIENT, consent at the third party as $TP_CLIENT, the catalog with the gateway's own token" \
		"$out" "upstream \"tracker\": each person.s own account there, connected at $CONNECT \(sign-in at the issuer as client $ORG_CLIENT; consent at .* client $TP_CLIENT\); its catalog with the gateway.s own token \(client_credentials\)"
else
	bail "mcpgate -t accepts the configuration (credentials = user-oauth, its clients at both servers, catalog-credentials = client-credentials)" "$out"
fi

check "the nginx recipe (deploy/nginx/mcpgate.conf.in) routes connect-path to the gateway: location = /mcp/connect" \
	grep -q '^location = /mcp/connect {' "$top/deploy/nginx/mcpgate.conf.in"
if start_mcpgate_fcgi "$T/mcpgate.sock" "$T/gw.conf" 2 2 >> "$T/start.out" 2>&1 && start_nginx "$GW_PORT" >> "$T/start.out" 2>&1; then
	pass "spawn-fcgi (2 x 2) + mcpgate behind nginx at $BASE, connect-path $CONNECT"
else
	bail "the gateway started" "$(tail -n 20 "$T/start.out")"
fi
pids_before=$MG_FCGI_PIDS

# --- the client and the browsers: 300 s at most (connect-browser.mjs stops itself after 280 s)
run_bounded 300 "$T/sdk.tap" "$T/sdk.err" env ALICE_TOKEN="$ALICE" BOB_TOKEN="$BOB" \
	node "$here/lib/connect-browser.mjs" --base "$BASE" --org "$IDP" --tp "$TP" --tracker "$UP_URL" \
	--org-client="$ORG_CLIENT" --tp-client="$TP_CLIENT" --artifacts "$ART" --fragments "$T/fragments"
rc=$?
cp "$T/sdk.err" "$ART/browser.err" 2>/dev/null
tap_relay "$T/sdk.tap"
if [ "$rc" -eq 0 ] && [ "$tap_relayed" -ge 31 ]; then
	pass "connect-browser.mjs ran every step ($tap_relayed) and exited 0"
else
	fail "connect-browser.mjs ran every step (31) and exited 0" "exit $rc after $tap_relayed steps; stderr: $(tail -n 15 "$T/sdk.err")"
	jq -r 'select(.level == "warn" or .level == "error") | "\(.level): \(.msg)"' "$T/gw.log" 2>/dev/null | sort | uniq -c | sed 's/^ */# the gateway logged, times: /'
fi
# shellcheck disable=SC2086 # one word per pid
is "the mcpgate processes survived the run" "$(gone $pids_before)" none

# --- what the logs and the state file hold ---------------------------------------------------
if [ -s "$T/fragments" ]; then
	is "no piece of a ticket, state or code in the gateway's logs (log-file and stderr; $(wc -l < "$T/fragments") pieces)" \
		"$(leaked_fragments "$T/fragments" "$T/gw.log" "$MG_LOG")" 0
	echo "# pieces of tickets, states and codes in nginx's access and error logs (query strings of connect-path): $(leaked_fragments "$T/fragments" "$MG_DIR/nginx/access.log" "$MG_FRONT_LOG")"
else
	fail "no piece of a ticket, state or code in the gateway's logs" "connect-browser.mjs wrote no fragments"
fi
is "no caller's token, client secret or client_credentials token in any log" \
	"$(pieces_logged "$ALICE" "$BOB" "$TP_CC" "$ORG_SECRET" "$TP_SECRET")" 0
jcheck "the audit log has one connection made: the tracker's, \"connected\" (alice's; the refused ones connected nothing)" \
	"$(grep '"audit":"connection"' "$T/gw.log" | jq -sc 'map({upstream, event, subject})')" \
	'(map(select(.event == "connected")) | length == 1 and .[0].upstream == "tracker" and (.[0].subject | type) == "string")'
seen "$T/seen.json"
jcheck "the tracker was shown alice's own token from the third party (sub alice, the gateway's client there), and never a caller's token of the organisation" \
	"$(jq -c --arg c "$TP_CLIENT" --arg a "$(sha "$ALICE")" --arg b "$(sha "$BOB")" \
		'{alice: ([.accepted[] | select(.sub == "alice" and .client_id == $c)] | length),
		  callers: ([.accepted[], .rejected[] | select(.token_sha256 == $a or .token_sha256 == $b)] | length)}' "$T/seen.json")" \
	'.alice >= 1 and .callers == 0'
{ head -c 5000 /dev/urandom; printf 'x%sy' "$TP_CC"; head -c 5000 /dev/urandom; } > "$T/control"
is "the detector finds a token the tracker accepted, written in clear between random bytes" "$(in_clear "$T/control" "$T/seen.json")" 1
clear=0
for f in "$T/gw.log" "$MG_LOG" "$T/state"; do [ ! -f "$f" ] || clear=$((clear + $(in_clear "$f" "$T/seen.json"))); done
is "no token the tracker accepted is in clear in the gateway's logs or its state file (the vault is sealed)" "$clear" 0
shots=$(find "$ART" -name '*.png' -size +1k | wc -l)
check "a screenshot of each state in $ART (at least 12, $shots taken)" test "$shots" -ge 12
rm -f "$T/fragments"
tap_done
