#!/usr/bin/env bash
# tests/fed/idjag.sh — an upstream that trusts only its own authorization server, reached
# as the caller through enterprise-managed authorization ([upstream] credentials =
# id-jag). Two real oidc-provider servers (tests/idp): A, the organisation's issuer,
# which the gateway's callers get their tokens from and which issues identity assertion
# grants (ID-JAGs) for B; B, the upstream's own authorization server, which redeems A's
# ID-JAGs (RFC 7523 jwt-bearer) for its own access tokens. The SDK fixture upstream with
# --require-bearer takes only B's tokens for its resource (introspected at B), and
# publishes RFC 9728 metadata naming B. Through nginx + two mcpgate processes, and as
# CGI:
#
#  - the gateway discovers B (the upstream's metadata, then B's), asks A for an ID-JAG
#    whose audience is B, and redeems it at B: alice and bob arrive as themselves;
#  - one ID-JAG and one redemption per caller while B's token lives, whichever process
#    (a CGI run too);
#  - a machine's token (no person to assert): the issuer refuses, and the call's error
#    names the upstream and the OAuth error;
#  - neither caller's own token, nor any of A's, ever reaches the upstream;
#  - mcpgate -t says how the token is obtained.
#
# Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq --node @modelcontextprotocol/sdk/package.json
. "$top/tests/lib/bearer.sh"

UP_PORT=$(free_port)
UP_URL=http://127.0.0.1:$UP_PORT/mcp
GW_PORT=$(free_port)
GW_URL=http://127.0.0.1:$GW_PORT/mcp
B_PORT=$(free_port)
B=http://127.0.0.1:$B_PORT
# A: the organisation's issuer ($IDP), issuing ID-JAGs for B.
IDP_OPTS="--id-jag-audience $B" start_idp "$GW_URL"
# B: the upstream's authorization server, redeeming A's ID-JAGs.
rm -f "$T/b.ready"
node "$top/tests/idp/server.mjs" --port "$B_PORT" --resource "$UP_URL" --trust-id-jag "$IDP" \
	--ready-file "$T/b.ready" --quiet > /dev/null 2> "$T/b.log" &
B_PID=$!
mg_track "$B_PID"
wait_until 30 ready_or_gone "$T/b.ready" "$B_PID"
[ "$(sed -n 's/^ready //p' "$T/b.ready" 2>/dev/null)" = "$B" ] || bail "the upstream's authorization server started" "$(tail -n 5 "$T/b.log")"
start_fixture up --port "$UP_PORT" --name up --require-bearer "$B" --resource "$UP_URL"
wait_fixture up || bail "the fixture upstream (--require-bearer at B) started" "$(tail -n 5 "$T/up.log")"

(umask 077 && printf 'gateway-exchange-secret\n' > "$T/exchange-secret")
gateway_conf "$T/gw.conf" "$GW_URL" "catalog-ttl = 3600"
cat >> "$T/gw.conf" <<CONF
[upstream "up"]
url = $UP_URL
credentials = id-jag
client-id = gateway-exchange
client-secret-file = $T/exchange-secret
CONF
start_gateway "$GW_PORT" "nginx + two mcpgate processes, an upstream that trusts only its own authorization server"
like "mcpgate -t: the upstream's token, an ID-JAG of the issuer traded at its own server, as client gateway-exchange" \
	"$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1)" \
	'upstream "up": each caller.s token exchanged for an ID-JAG at the issuer, traded \(jwt-bearer\) at the token endpoint of the authorization server its protected resource metadata names, as client gateway-exchange'

ALICE=$(mint --user alice --scope mcp:tools --resource "$GW_URL")
BOB=$(mint --user bob --scope mcp:tools --resource "$GW_URL")
for t in "$ALICE" "$BOB"; do case $t in ''|null) bail "tokens for alice and bob" "$(tail -n 5 "$T/idp.log")" ;; esac; done
stat_of() { curl -s --max-time 5 "$1/_stats" | jq -c "$2"; }

out=$(rpc "$ALICE" tools/list '{}')
jcheck "tools/list as alice: the upstream's tools (its catalog fetched with the token B issued for her)" \
	"$(sed -n 2p <<<"$out" | jq -c --arg st "$(head -1 <<<"$out")" '{status: $st, names: [.result.tools[]?.name], error}')" \
	'.status == "200" and (.names | index("whoami"))'
jcheck "alice's whoami: the upstream sees alice, with a token of its own server's for the gateway's client" \
	"$(whoami "$ALICE")" '.sub == "alice" and .client_id == "gateway-exchange"'
jcheck "bob's whoami: bob" "$(whoami "$BOB")" '.sub == "bob"'
for i in 1 2 3; do whoami "$ALICE" > /dev/null; whoami "$BOB" > /dev/null; done
is "one ID-JAG each from the issuer (A), whichever process took the calls" "$(stat_of "$IDP" .id_jags)" 2
is "… each redeemed once at the upstream's server (B): alice 1, bob 1" \
	"$(stat_of "$B" '[.jwt_bearer_by_subject.alice, .jwt_bearer_by_subject.bob]')" "[1,1]"

cgi=$(cgi_rpc "$T/gw.conf" "$ALICE" tools/call '{"name":"whoami","arguments":{}}' | text_of)
jcheck "CGI: alice's whoami is alice" "$cgi" '.sub == "alice"'
is "… with the token of the FastCGI processes: no new ID-JAG, no new redemption" \
	"$(stat_of "$IDP" .id_jags) $(stat_of "$B" .jwt_bearer)" "2 2"

MACHINE=$(mint_cc machine-acme)
out=$(rpc "$MACHINE" tools/call '{"name":"whoami","arguments":{}}')
jcheck "a machine's token (no person to assert): the issuer refuses the ID-JAG, and the call's error names the upstream and invalid_grant" \
	"$(sed -n 2p <<<"$out" | jq -c '{error}')" '.error.message | (contains("upstream up") and contains("invalid_grant"))'
seen "$T/seen.json"
jcheck "the upstream was shown tokens, and refused none" "$(jq -c '{a: (.accepted | length), r: (.rejected | length)}' "$T/seen.json")" \
	'.a >= 8 and .r == 0'
is "no token the upstream was shown is a caller's own" \
	"$(jq -r '[.accepted[], .rejected[]] | map(.token_sha256) | .[]' "$T/seen.json" | grep -c -e "$(sha "$ALICE")" -e "$(sha "$BOB")" -e "$(sha "$MACHINE")")" 0
is "every token the upstream was shown came from its own server (B's client gateway-exchange)" \
	"$(jq -r '[.accepted[] | .client_id] | unique | join(" ")' "$T/seen.json")" gateway-exchange
is "no caller's token in any log" "$(pieces_logged "$ALICE" "$BOB" "$MACHINE")" 0
tap_done
