#!/usr/bin/env bash
# tests/fed/exchange.sh — an upstream reached as the caller ([upstream] credentials =
# exchange, RFC 8693). The SDK fixture upstream with --require-bearer: it accepts only
# tokens whose audience is its own resource, verified by introspection at the test
# authorization server (oidc-provider with its token exchange grant), and records the
# digest of every token it is shown. Through nginx + two mcpgate processes, and as CGI:
#
#  - the catalog of such an upstream is fetched with the first caller's exchanged token;
#  - alice and bob each arrive as themselves (whoami: their own subject, the gateway's
#    exchanging client as the actor), on sessions of their own;
#  - neither caller's own token ever reaches the upstream (no digest of it, accepted or
#    refused), nor the gateway's log;
#  - one exchange per caller and upstream while the token lives, whichever process
#    serves the call (two FastCGI processes, a CGI run): the cache in the state file;
#  - the cached token is sealed: no byte of it in the state file;
#  - a refused exchange (a scope beyond the caller's token: invalid_scope) answers the
#    call with a 403 step-up naming the scope the caller's token lacks (a batch element:
#    its JSON-RPC error), and nothing is cached for it;
#  - the token endpoint failing (500, garbage, hanging): a retryable error naming the
#    upstream, health's token_exchange down (not the upstream), the upstream never called
#    without a token, and the callers whose tokens are cached served meanwhile;
#  - an upstream with credentials = client-credentials: its authorization server
#    discovered (RFC 9728, RFC 8414), every caller arrives as the gateway's service
#    client, with one token for the host;
#  - such an upstream whose protected resource metadata is not at the well-known URL but
#    where its 401 says (resource_metadata, RFC 9728 §5.1): found there, asked once
#    without a token; one whose 401 names another origin: refused, nothing fetched there;
#  - the upstream refusing a cached token (401): dropped, exchanged once more, then an
#    error; the upstream back, the last token from the cache;
#  - a caller's token revoked: refused at the gate within cache-ttl, and the upstream
#    sees no more of that caller;
#  - an upstream reached as the caller whose catalog-credentials = client-credentials:
#    its catalog fetched with the gateway's own token, its calls as the caller;
#  - an audit line for each token obtained (its act when it is a JWT);
#  - metrics count the credentials by upstream and outcome; mcpgate -t warns when the
#    tokens are sealed under the state file's own key;
#  - mcpgate explain, given a caller's claims, says whether a token is cached for that
#    caller (alice after her first call, not bob before his), and for client-credentials
#    that the gateway's own is, whoever the caller.
#
# Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq --node @modelcontextprotocol/sdk/package.json
. "$top/tests/lib/bearer.sh"

# --- the authorization server (the gateway's resource and the upstream's), the upstream ----
UP_PORT=$(free_port)
UP_URL=http://127.0.0.1:$UP_PORT/mcp
GW_PORT=$(free_port)
GW_URL=http://127.0.0.1:$GW_PORT/mcp
UP2_PORT=$(free_port)	# "prm" and "far": their metadata where their 401 says
UP2_URL=http://127.0.0.1:$UP2_PORT/mcp
UP3_PORT=$(free_port)
UP3_URL=http://127.0.0.1:$UP3_PORT/mcp
start_idp "$GW_URL" "$UP_URL" "$UP2_URL" "$UP3_URL"
start_fixture up --port "$UP_PORT" --name up --require-bearer "$IDP" --resource "$UP_URL"
wait_fixture up || bail "the fixture upstream (--require-bearer) started" "$(tail -n 5 "$T/up.log")"

# The upstream's own sections: "up" as alice or bob with the caller's scopes, "wide"
# (the same server, prefix w_) asking a scope beyond an ordinary caller's token, and
# "svc" (prefix s_) as the gateway's own service identity (client-credentials, its token
# endpoint discovered: the upstream's RFC 9728 metadata names its authorization server),
# and "cat" (prefix c_) as the caller, its catalog fetched with the gateway's own token
# (catalog-credentials = client-credentials).
(umask 077 && printf 'gateway-exchange-secret\n' > "$T/exchange-secret" && printf 'machine-acme-secret\n' > "$T/machine-secret")
GW_CACHE_TTL=3 gateway_conf "$T/gw.conf" "$GW_URL" "catalog-ttl = 3600"
cat >> "$T/gw.conf" <<CONF
[upstream "up"]
url = $UP_URL
credentials = exchange
client-id = gateway-exchange
client-secret-file = $T/exchange-secret
[upstream "wide"]
url = $UP_URL
prefix = w_
credentials = exchange
exchange-scopes = mcp:tools mcp:admin
[upstream "svc"]
url = $UP_URL
prefix = s_
credentials = client-credentials
client-id = machine-acme
client-secret-file = $T/machine-secret
exchange-resource = $UP_URL
exchange-scopes = mcp:tools
[upstream "cat"]
url = $UP_URL
prefix = c_
credentials = exchange
client-id = gateway-exchange
client-secret-file = $T/exchange-secret
catalog-credentials = client-credentials
[metrics]
allow = 127.0.0.1/32
CONF
start_gateway "$GW_PORT" "nginx + two mcpgate processes, in front of an upstream that takes only its own tokens"
out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1)
like "mcpgate -t warns that without session-key-file the tokens are sealed under the state file's own key" \
	"$out" "gw.conf:[0-9]+: .*credentials = exchange: without \[gateway\] session-key-file"
is "mcpgate -t says how each upstream's token is obtained" "$(grep '^upstream "' <<<"$out")" \
	"upstream \"up\": each caller's token exchanged (RFC 8693) at the issuer's token endpoint (its metadata), as client gateway-exchange
upstream \"wide\": each caller's token exchanged (RFC 8693) at the issuer's token endpoint (its metadata), as client mcpgate
upstream \"svc\": the gateway's own token (client_credentials) from the token endpoint of the authorization server its protected resource metadata names, as client machine-acme
upstream \"cat\": each caller's token exchanged (RFC 8693) at the issuer's token endpoint (its metadata), as client gateway-exchange; its catalog with the gateway's own token"

ALICE=$(mint --user alice --scope 'mcp:tools mcp:admin' --resource "$GW_URL")
BOB=$(mint --user bob --scope mcp:tools --resource "$GW_URL")
DAVE=$(mint --user dave --scope mcp:tools --resource "$GW_URL")
for t in "$ALICE" "$BOB" "$DAVE"; do
	[ -n "$t" ] && [ "$t" != null ] || bail "tokens for alice, bob and dave" "$(tail -n 5 "$T/idp.log")"
done

# --- the catalog, and each caller as itself ---------------------------------------------
out=$(rpc "$ALICE" tools/list '{}')
jcheck "tools/list as alice: the upstream's tools, fetched with her exchanged token (both sections)" \
	"$(sed -n 2p <<<"$out" | jq -c --arg st "$(head -1 <<<"$out")" '{status: $st, names: [.result.tools[]?.name], error}')" \
	'.status == "200" and (.names | index("whoami")) and (.names | index("w_whoami")) and (.names | index("s_whoami")) and (.names | index("c_whoami"))'
jcheck "alice's whoami: the upstream sees alice, through the gateway's exchanging client (act)" "$(whoami "$ALICE")" \
	'.sub == "alice" and .client_id == "gateway-exchange" and .act.sub == "gateway-exchange"'

# explain, given a caller's claims (the introspection response the gateway had), reads
# the state file's markers: a token cached for alice after her first calls, none for bob
# before his. Its catalog from a file (the upstream takes no token of explain's).
printf '%s\n' '{"up":{"tools":[{"name":"whoami","inputSchema":{"type":"object"}}]},
	"svc":{"tools":[{"name":"whoami","inputSchema":{"type":"object"}}]}}' > "$T/explain-catalog.json"
explain_as() {	# explain_as TOKEN TOOL [--json]
	local claims
	claims=$(mint_json --introspect "$1" | jq -c .) || return 1
	"$MCPGATE_BIN" explain -c "$T/gw.conf" --catalog "$T/explain-catalog.json" --claims "$claims" --tool "$2" \
		${3:+"$3"} 2> "$T/explain.err"
}
like "explain --tool whoami, alice's claims, after her first call: a token cached for her, until when" \
	"$(explain_as "$ALICE" whoami)" "^credential: cached for this caller until 20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$"
like "… bob's, before his first: none (one is obtained at his first call)" \
	"$(explain_as "$BOB" whoami)" "^credential: none cached for this caller \(one is obtained at its first call\)$"
is "… the same in --json: alice's credential_cached true with its credential_until, bob's false" \
	"$(explain_as "$ALICE" whoami --json | jq -c '[.decision.credential_cached, (.decision.credential_until | test("Z$"))]') $(explain_as "$BOB" whoami --json | jq -c '[.decision.credential_cached, .decision.credential_until]')" \
	"[true,true] [false,null]"
unlike "… and no token in explain's answers" "$(explain_as "$ALICE" whoami --json; cat "$T/explain.err")" "$ALICE"
jcheck "bob's whoami: bob, not alice" "$(whoami "$BOB")" '.sub == "bob" and .client_id == "gateway-exchange"'
like "… then explain says one is cached for bob too" "$(explain_as "$BOB" whoami)" "^credential: cached for this caller until "
sed "s|^state = .*|state = $T/no-such-state|" "$T/gw.conf" > "$T/gw-nostate.conf"
out=$("$MCPGATE_BIN" explain -c "$T/gw-nostate.conf" --catalog "$T/explain-catalog.json" \
	--claims "$(mint_json --introspect "$ALICE" | jq -c .)" --tool whoami 2>&1); rc=$?
like "… a state file it cannot read: not known, said, and still exit 0" "rc=$rc $(tr '\n' ' ' <<<"$out")" \
	"^rc=0 .*credential: not known \(no state file at $T/no-such-state that this user may read"
jcheck "alice again: still alice (bob's token is not hers)" "$(whoami "$ALICE")" '.sub == "alice"'
for i in 1 2 3 4; do whoami "$ALICE" > /dev/null; whoami "$BOB" > /dev/null; done
is "one exchange each for alice and bob at 'up', whichever process took the 6 calls (and the catalog's)" \
	"$(exchanges alice) $(exchanges bob)" "2 1"

# --- client-credentials: the gateway's own identity, one token for the host ----------------
jcheck "alice's s_whoami (client-credentials): the gateway's service client, not alice" "$(whoami "$ALICE" s_whoami)" \
	'.client_id == "machine-acme" and .sub != "alice"'
t0=$(idp_stats tokens)
for i in 1 2 3; do whoami "$ALICE" s_whoami > /dev/null; whoami "$BOB" s_whoami > /dev/null; done
jcheck "bob's s_whoami: the same service client" "$(whoami "$BOB" s_whoami)" '.client_id == "machine-acme" and .sub != "bob"'
is "… 7 calls of two callers through two processes: no new token at the token endpoint" "$(( $(idp_stats tokens) - t0 ))" 0
like "explain --tool s_whoami (client-credentials), dave's claims (no call of his): the gateway's own, cached" \
	"$(explain_as "$DAVE" s_whoami)" "^credential: the gateway's own cached \(one per host, whoever the caller\) until "

# --- catalog-credentials = client-credentials ------------------------------------------------
jcheck "'cat': its catalog was fetched with the gateway's own token (tools/list by gateway-exchange, not as a caller)" \
	"$(curl -s --max-time 5 "http://127.0.0.1:$UP_PORT/_seen" |
		jq -c '[.accepted[] | select(.method == "tools/list" and .client_id == "gateway-exchange" and .act == null)] | length')" \
	'. >= 1'
jcheck "… and bob's c_whoami is bob (a call is the caller's)" "$(whoami "$BOB" c_whoami)" '.sub == "bob"'

# --- as CGI: another process, the same state file ----------------------------------------
# cgi_whoami TOKEN [TOOL [CONF]]: whoami (or TOOL) as CGI with gw.conf (or CONF): its
# JSON, or the JSON-RPC answer.
cgi_whoami() { cgi_rpc "${3:-$T/gw.conf}" "$1" tools/call "{\"name\":\"${2:-whoami}\",\"arguments\":{}}" | text_of; }
jcheck "CGI: alice's whoami is alice" "$(cgi_whoami "$ALICE")" '.sub == "alice"'
is "… with the token the FastCGI processes obtained: no new exchange" "$(exchanges alice)" 2

# --- never the caller's own token ---------------------------------------------------------
seen "$T/seen.json"
jcheck "the upstream was shown tokens (the record is there)" "$(jq -c '{accepted: (.accepted | length)}' "$T/seen.json")" \
	'.accepted >= 10'
is "no token the upstream was shown, accepted or refused, is alice's, bob's or dave's own" \
	"$(jq -r '[.accepted[], .rejected[]] | map(.token_sha256) | .[]' "$T/seen.json" |
		grep -c -e "$(sha "$ALICE")" -e "$(sha "$BOB")" -e "$(sha "$DAVE")")" 0
is "every request the upstream saw carried an exchanged token: none refused" "$(jq '.rejected | length' "$T/seen.json")" 0
is "alice's and bob's tokens are in no log of the gateway's" \
	"$(cat "$T/gw.log" "$T/cgi.err" "$T"/*.err 2>/dev/null | grep -c -e "${ALICE:10:24}" -e "${BOB:10:24}")" 0

# --- sealed at rest -------------------------------------------------------------------------
# The issued tokens are known to the test only by the digests the upstream recorded. A
# token of the authorization server's is 43 base64url characters: every 43-character
# window of every base64url run in a file is tried against those digests. The detector
# is shown to work first, on a file holding a token the test exchanged itself and showed
# the upstream.
is "the detector finds a token the upstream accepted in a file that holds it" "$(detector_control "$BOB")" 1
is "no token the upstream accepted is in the state file in clear" "$(in_clear "$T/state" "$T/seen.json")" 0

# --- a refused exchange ----------------------------------------------------------------------
out=$(rpc "$BOB" tools/call '{"name":"w_whoami","arguments":{}}')
is "bob's call at 'wide' (its exchange asks mcp:admin, beyond his token; invalid_scope): 403, a step-up" \
	"$(head -1 <<<"$out")" 403
like "… the challenge names insufficient_scope and mcp:admin" "$(tr -d '\r' < "$T/h" | grep -i '^www-authenticate:')" \
	'scope="[^"]*mcp:admin[^"]*", error="insufficient_scope"'
out=$(curl -s --max-time 30 -H 'Content-Type: application/json' -H 'Accept: application/json' \
	-H "Authorization: Bearer $BOB" --data-binary '[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"w_whoami","arguments":{}}},{"jsonrpc":"2.0","id":2,"method":"ping"}]' "$GW_URL")
jcheck "… in a batch: that element's JSON-RPC error names insufficient_scope; the other answered" "$out" \
	'(.[] | select(.id == 1) | .error.message | contains("insufficient_scope")) and (.[] | select(.id == 2) | .result == {})'
before=$(idp_stats tokens)
rpc "$BOB" tools/call '{"name":"w_whoami","arguments":{}}' > /dev/null
is "… asked again, asked again at the token endpoint (a refusal is not cached)" "$(( $(idp_stats tokens) - before ))" 1
curl -s --max-time 5 "$GW_URL/health" > "$T/health.json"
jcheck "… and health does not call the upstream down for it (a caller's refusal), nor the token endpoint" \
	"$(cat "$T/health.json")" '.status == "ok" and ([.dependencies[] | select(.dependency == "token_exchange")][0].state == "up")'
jcheck "bob's whoami at 'up' still answers (the refusal was his, at 'wide')" "$(whoami "$BOB")" '.sub == "bob"' 
jcheck "alice's call at 'wide' (her token has mcp:admin): alice" "$(whoami "$ALICE" w_whoami)" '.sub == "alice"'

# --- the token endpoint failing ---------------------------------------------------------------
# The authorization server's exchange grant fails (its other endpoints, introspection
# included, still answer: the upstream verifies what it is shown there).
out=$(rpc "$DAVE" ping '{}')	# dave's token verified and cached at the gate, nothing exchanged
is "dave's ping: answered (his token accepted, nothing exchanged)" "$(head -1 <<<"$out")" 200
n0=$(curl -s --max-time 5 "http://127.0.0.1:$UP_PORT/_seen" | jq '.accepted | length')
for mode in 500 garbage hang; do
	curl -s --max-time 5 -X POST -H 'Content-Type: application/json' -d "{\"exchange\":\"$mode\"}" "$IDP/_fault/exchange" > /dev/null
	out=$(rpc "$DAVE" tools/call '{"name":"whoami","arguments":{}}')
	jcheck "the exchange grant failing ($mode): dave's call answers an error that names the upstream and says to retry" \
		"$(sed -n 2p <<<"$out" | jq -c --arg st "$(head -1 <<<"$out")" '{status: $st, error}')" \
		'.error.message | (contains("upstream up") and contains("retry"))'
done
jcheck "… alice's call still goes through with her cached token" "$(whoami "$ALICE")" '.sub == "alice"'
seen "$T/seen2.json"
is "… and dave's calls never reached the upstream (alice's did)" \
	"$(jq --argjson n0 "$n0" '[.accepted[$n0:][] | .sub] | unique | join(" ")' -r "$T/seen2.json") $(jq '.rejected | length' "$T/seen2.json")" "alice 0"
curl -s --max-time 5 "$GW_URL/health" > "$T/health.json"
jcheck "health: degraded, naming the token exchange (not the upstream)" "$(cat "$T/health.json")" \
	'.status == "degraded" and ([.dependencies[] | select(.dependency == "token_exchange")][0].state == "down") and ([.dependencies[] | select(.dependency == "upstream" and .state == "down")] | length) == 0'
curl -s --max-time 5 -X POST -H 'Content-Type: application/json' -d '{"exchange":"none"}' "$IDP/_fault/exchange" > /dev/null
idp_format jwt	# the tokens issued from now on are JWTs: their act can be read for the audit line
jcheck "the grant back: dave's call is dave" "$(whoami "$DAVE")" '.sub == "dave"'
idp_format opaque
jcheck "the audit line of dave's token: the upstream, the grant, his subject's digest, the client, its act (a JWT's)" \
	"$(grep '"audit":"credential"' "$T/gw.log" | grep '"upstream":"up"' | tail -1)" \
	'.grant == "exchange" and (.subject | test("^[0-9a-f]{32}$")) and .client_id == "gateway-exchange" and .act == {"sub": "gateway-exchange"} and .until_s > now'
is "… one audit line a token obtained at 'up' (alice, bob, dave), none with a token in it" \
	"$(grep '"audit":"credential"' "$T/gw.log" | grep -c '"upstream":"up"') $(pieces_logged "$ALICE" "$BOB" "$DAVE")" "3 0"
curl -s --max-time 5 "http://127.0.0.1:$GW_PORT/metrics" > "$T/metrics.txt"
m() { sed -n "s/^mcpgate_upstream_credentials_total{upstream=\"$1\",outcome=\"$2\"} //p" "$T/metrics.txt"; }
is "metrics: tokens at 'up' obtained 3 (alice, bob, dave; the test's own exchange is not the gateway's), failed 3" \
	"$(m up obtained) $(m up failed)" "3 3"
like "metrics: … and cached, for every other call" "$(m up cached)" '^[1-9][0-9]+$'
is "metrics: refused at 'wide' three times (bob), obtained once (alice)" "$(m wide refused) $(m wide obtained)" "3 1"
is "metrics: one token obtained for 'svc' (client-credentials), the other calls cached" "$(m svc obtained) $(m svc cached | grep -c .)" "1 1"
like "the gateway's log names each failure of the exchange" "$(grep -c 'upstream up: the token exchange: ' "$T/gw.log")" '^[3-9]$'

# --- the upstream refusing the cached token (401) --------------------------------------------
# The upstream restarted under another resource name: every token issued for the old one
# is refused (wrong audience). The gateway drops the cached token, exchanges once more,
# and, refused again, answers an error; back under its name, the token exchanged last is
# taken from the cache.
up_gone() { ! mg_alive "${FIXTURE_PID[up]}"; }
restart_up() {
	kill "${FIXTURE_PID[up]}" 2>/dev/null
	wait_until 10 up_gone
	start_fixture up --port "$UP_PORT" --name up --require-bearer "$IDP" --resource "$1"
	wait_fixture up || bail "the fixture upstream started again (--resource $1)" "$(tail -n 5 "$T/up.log")"
}
restart_up "http://127.0.0.1:$UP_PORT/elsewhere"
x0=$(exchanges dave)
out=$(rpc "$DAVE" tools/call '{"name":"whoami","arguments":{}}')
jcheck "the upstream refusing dave's cached token (401): an error naming the upstream" \
	"$(sed -n 2p <<<"$out" | jq -c '{error}')" '.error.message | contains("upstream up")'
is "… after exactly one more exchange (the cached token dropped, a new one refused too)" "$(( $(exchanges dave) - x0 ))" 1
restart_up "$UP_URL"
x0=$(exchanges dave)
jcheck "the upstream back under its name: dave's call is dave" "$(whoami "$DAVE")" '.sub == "dave"'
is "… with the token exchanged last, from the cache" "$(( $(exchanges dave) - x0 ))" 0

# --- a revoked caller token -----------------------------------------------------------------
# The gate verifies bob's token again after cache-ttl (here GW_CACHE_TTL s): revoked, it is
# refused there, and the token exchanged for it, still cached, is never used again.
revoke "$BOB"
bob_refused() { [ "$(rpc "$BOB" ping '{}' | head -1)" = 401 ]; }
wait_until 30 bob_refused
n0=$(curl -s --max-time 5 "http://127.0.0.1:$UP_PORT/_seen" | jq '[.accepted[] | select(.sub == "bob")] | length')
st=$(rpc "$BOB" tools/call '{"name":"whoami","arguments":{}}' | head -1)
is "bob's token revoked: his call is refused at the gate (401)" "$st" 401
is "… and the upstream sees no more of bob" \
	"$(curl -s --max-time 5 "http://127.0.0.1:$UP_PORT/_seen" | jq '[.accepted[] | select(.sub == "bob")] | length')" "$n0"

# --- the metadata where the upstream's 401 says (RFC 9728 §5.1) -----------------------------
# Two more upstreams with credentials = client-credentials whose protected resource metadata
# is not at the well-known URL (404 there): "prm" names its own path in its 401's
# resource_metadata; "far" names its path under another host name (localhost for
# 127.0.0.1: another origin, the same server, which records what is fetched there). A
# gateway of their own (its own configuration and state file), as CGI.
start_fixture prm --port "$UP2_PORT" --name prm --require-bearer "$IDP" --resource "$UP2_URL" --prm-path /meta/prm
start_fixture far --port "$UP3_PORT" --name far --require-bearer "$IDP" --resource "$UP3_URL" --prm-path /meta/far \
	--prm-host localhost
wait_fixture prm || bail "the fixture upstream with --prm-path started" "$(tail -n 5 "$T/prm.log")"
wait_fixture far || bail "the fixture upstream with --prm-host started" "$(tail -n 5 "$T/far.log")"
GW_STATE=$T/state2 GW_LOG=$T/gw2.log gateway_conf "$T/gw2.conf" "$GW_URL"
for u in "prm p_ $UP2_URL" "far f_ $UP3_URL"; do
	read -r name prefix url <<<"$u"
	printf '%s\n' "[upstream \"$name\"]" "url = $url" "prefix = $prefix" "credentials = client-credentials" \
		"client-id = machine-acme" "client-secret-file = $T/machine-secret" "exchange-resource = $url" \
		"exchange-scopes = mcp:tools" >> "$T/gw2.conf"
done
CAROL=$(mint --user carol --scope mcp:tools --resource "$GW_URL")
jcheck "carol's p_whoami ('prm': its metadata where its 401 says): the gateway's service client" \
	"$(cgi_whoami "$CAROL" p_whoami "$T/gw2.conf")" '.client_id == "machine-acme" and .sub != "carol"'
jcheck "… again, another CGI run: the same (the discovery kept)" \
	"$(cgi_whoami "$CAROL" p_whoami "$T/gw2.conf")" '.client_id == "machine-acme"'
curl -s --max-time 5 "http://127.0.0.1:$UP2_PORT/_seen" > "$T/seen-prm.json"
jcheck "'prm' was asked for its metadata at the well-known URL (404), then at the path its 401 named, once each" \
	"$(jq -c '[.metadata[] | {path, status}]' "$T/seen-prm.json")" \
	'. == [{"path": "/.well-known/oauth-protected-resource/mcp", "status": 404}, {"path": "/meta/prm", "status": 200}]'
jcheck "… the probe for its 401: one request, with no token at all" \
	"$(jq -c '[.rejected[] | {method, token_sha256}]' "$T/seen-prm.json")" '. == [{"method": "ping", "token_sha256": null}]'
jcheck "… and the gateway's token arrived (the catalog's, the calls')" \
	"$(jq -c '[.accepted[] | select(.client_id == "machine-acme")] | length' "$T/seen-prm.json")" '. >= 2'
out=$(cgi_whoami "$CAROL" f_whoami "$T/gw2.conf")
jcheck "carol's f_whoami ('far': its 401 names metadata on another origin): no such tool (its catalog left out)" \
	"$out" '.error.message == "Unknown tool"'
like "… the gateway's log says why: its authorization server not discovered, the metadata on another origin not fetched" \
	"$(grep 'catalog: upstream far: ' "$T/gw2.log" | head -1)" \
	"upstream far: its authorization server could not be discovered; retry later \\(its 401 names protected resource metadata on another origin: http://localhost:$UP3_PORT/meta/far, not fetched\\)"
curl -s --max-time 5 "http://127.0.0.1:$UP3_PORT/_seen" > "$T/seen-far.json"
jcheck "… nothing was fetched there ('far' saw the well-known URL asked, never /meta/far), and no token arrived" \
	"$(jq -c '{paths: [.metadata[].path] | unique, accepted: (.accepted | length), tokens: [.rejected[] | select(.token_sha256 != null)] | length}' "$T/seen-far.json")" \
	'.paths == ["/.well-known/oauth-protected-resource/mcp"] and .accepted == 0 and .tokens == 0'
tap_done
