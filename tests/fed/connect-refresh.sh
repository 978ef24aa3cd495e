#!/usr/bin/env bash
# tests/fed/connect-refresh.sh — a connected account's life after it is connected
# ([upstream] credentials = user-oauth), against real parts: nginx + spawn-fcgi + mcpgate,
# the organisation's authorization server and a third party's (tests/idp, both with the
# headless interaction: the connect page's flow is driven by curl with a cookie jar, no
# browser), and the tracker upstream (tests/upstream/fixture.mjs --require-bearer at the
# third party). The third party issues its people's access tokens for 4 s
# (--access-ttl), less than the gateway's early-refresh margin (UPCRED_EARLY_MS, 30 s): such
# a token is refreshed at half its life:
#
#  1. refresh: alice connects; each call of hers refreshes her token first (the third
#     party counts refresh_token grants), and the tracker is shown the new token (sub alice);
#  2. the revoked refresh token: revoked at the third party (RFC 7009, as the gateway's
#     client there), the next call is asked to connect again, the audit log says
#     "dropped" (invalid_grant); connecting again makes calls work again;
#  3. one refresh under concurrency: a burst of calls across the gateway's processes makes
#     one refresh_token grant (the bound is explained where it is asserted);
#  4. two hosts (two state files, one session-key-file, no Redis): the vault is the host's;
#  5. the connections page: sign-in, the list, a disconnect (revoked at the third party,
#     the next call asked again), and the refused forms (CSRF token, Origin, no session);
#  6. `mcpgate explain --tool tr_whoami` says connected (since when) or not connected;
#  7. two hosts with one Redis store (host A's configuration reloaded with it, host C
#     started with it): a connection made through one is used at the other, a burst across
#     both refreshes once, one disconnect ends it for both, nothing of it in Redis in clear.
#  8. an authorization code issued to another client, slipped into alice's callback with
#     her genuine state, is refused;
# Alice's client speaks 2026-07-28 and takes URL elicitation: a person not connected gets
# an input_required result, and the call retried with its requestState after she
# connected is answered.
# Prints TAP. Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq openssl:openssl redis-server:redis-server redis-cli:redis-tools \
	--node oidc-provider/package.json
. "$top/tests/lib/bearer.sh"

SHORT_TTL=4	# < UPCRED_EARLY_MS (30 s, src/access/upcred.h): refreshed at half its life
# past_half: let a SHORT_TTL token reach its refresh point (half its life, for a token
# that lives less than the early margin: connected.c). A lower bound on time passing,
# not a wait for something to happen: a slower machine only lets more of it pass.
past_half() { sleep "$((SHORT_TTL / 2)).2"; }
LONG_TTL=600	# > UPCRED_EARLY_MS + any burst of part 3 (each call is bounded at 60 s)

# --- the two authorization servers and the tracker ----------------------------------------
GW_PORT=$(free_port)
BASE=http://127.0.0.1:$GW_PORT
GW_URL=$BASE/mcp
CONNECT=$BASE/mcp/connect
UP_PORT=$(free_port)
UP_URL=http://127.0.0.1:$UP_PORT/mcp
TP_PORT=$(free_port)
TP=http://127.0.0.1:$TP_PORT
rm -f "$T/tp.ready"
node "$top/tests/idp/server.mjs" --port "$TP_PORT" --resource "$UP_URL" --access-ttl "$SHORT_TTL" \
	--ready-file "$T/tp.ready" --quiet > /dev/null 2> "$T/tp.log" &
TP_PID=$!
mg_track "$TP_PID"
start_fixture tracker --port "$UP_PORT" --name tracker --require-bearer "$TP" \
	--introspect-client mcpgate:mcpgate-secret --resource "$UP_URL"
start_idp "$GW_URL"
wait_until 30 ready_or_gone "$T/tp.ready" "$TP_PID"
[ "$(sed -n 's/^ready //p' "$T/tp.ready" 2>/dev/null)" = "$TP" ] \
	|| bail "the third party's authorization server started" "$(tail -n 5 "$T/tp.log")"
wait_fixture tracker || bail "the tracker started" "$(tail -n 5 "$T/tracker.log")"

# register ISSUER NAME GRANT...: a confidential client whose one redirect URI is the
# connect page, by dynamic registration: the registration's answer.
register() {
	local iss=$1 name=$2
	shift 2
	curl -s --max-time 30 -H 'Content-Type: application/json' --data-binary \
		"$(jq -nc --arg n "$name" --arg r "$CONNECT" '{client_name: $n, redirect_uris: [$r], response_types: ["code"],
			grant_types: $ARGS.positional, token_endpoint_auth_method: "client_secret_basic"}' --args "$@")" "$iss/reg"
}
ORG_REG=$(register "$IDP" "mcpgate: sign-in before connecting" authorization_code)
TP_REG=$(register "$TP" "mcpgate: the tracker's client" authorization_code refresh_token client_credentials)
ORG_CLIENT=$(jq -r '.client_id // empty' <<<"$ORG_REG")
TP_CLIENT=$(jq -r '.client_id // empty' <<<"$TP_REG")
if [ -z "$ORG_CLIENT" ] || [ -z "$TP_CLIENT" ]; then bail "the gateway's clients registered" "$ORG_REG $TP_REG"; fi
(umask 077 && jq -r .client_secret <<<"$ORG_REG" > "$T/org-connect.secret" && jq -r .client_secret <<<"$TP_REG" > "$T/tp-client.secret")
TP_SECRET=$(cat "$T/tp-client.secret")
ALICE=$(mint --user alice --resource "$GW_URL")
case $ALICE in '' | null) bail "alice's token for the gateway" "$(tail -n 5 "$T/idp.log")" ;; esac
pass "the organisation's authorization server at $IDP, the third party's at $TP (--access-ttl $SHORT_TTL), the tracker at $UP_URL, the gateway's clients registered at both"

# --- the gateway (host A) -------------------------------------------------------------------
(umask 077 && head -c 32 /dev/urandom > "$T/session.key")
# host_conf OUT STATE LOG: one host's configuration: its own state file and log, the
# session key and everything else the same.
host_conf() {
	GW_STATE=$2 GW_LOG=$3 gateway_conf "$1" "$GW_URL" "session-key-file = $T/session.key" \
		"connect-client-id = $ORG_CLIENT" "connect-client-secret-file = $T/org-connect.secret"
	cat >> "$1" <<CONF
[upstream "tracker"]
url = $UP_URL
prefix = tr_
credentials = user-oauth
client-id = $TP_CLIENT
client-secret-file = $T/tp-client.secret
user-scopes = mcp:tools
catalog-credentials = client-credentials
CONF
}
host_conf "$T/gw.conf" "$T/state" "$T/gw.log"
# Two processes of four workers each: the burst of part 3 meets both processes, and
# several workers of each, at once.
start_gateway "$GW_PORT" "host A: nginx + spawn-fcgi (2 processes x 4 workers) + mcpgate at $GW_URL, connect page $CONNECT" 2 4
pids_a=$MG_FCGI_PIDS

# --- helpers --------------------------------------------------------------------------------
# call [URL [EXTRA]]: alice's tools/call of tr_whoami (MCP 2026-07-28, the client
# declaring URL elicitation: a person not connected gets an input_required result) at URL
# (default host A), EXTRA (JSON members) added to its params: the HTTP status, a blank,
# the JSON-RPC answer on one line.
call() {
	local st f=$T/call.$BASHPID params
	params=$(jq -c --argjson x "${2:-{\}}" '. + $x' <<<'{"name":"tr_whoami","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"url":{}}}}}')
	st=$(curl -s --max-time 60 -o "$f" -w '%{http_code}' -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
		-H 'Mcp-Method: tools/call' -H 'Mcp-Name: tr_whoami' -H "Authorization: Bearer $ALICE" \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":$params}" \
		"${1:-$GW_URL}")
	printf '%s %s\n' "$st" "$(sed -n 's/^data: //p; /^{/p' "$f" | head -1 | jq -c . 2>/dev/null)"
	rm -f "$f"
}
# who OUT: what the tracker said whoami (its JSON), or the answer as it is.
who() { jq -c '(.result.content[0].text | fromjson?) // .' <<<"${1#* }" 2>/dev/null; }
asked() {	# asked OUT: input_required with one URL elicitation to the connect page: the URL
	jq -r --arg c "$CONNECT?ticket=" '.result | select(.resultType == "input_required")
		| .inputRequests.mcpgate_connect | select(.method == "elicitation/create") | .params
		| select(.mode == "url" and (.elicitationId | type) == "string") | .url
		| select(type == "string" and startswith($c))' <<<"${1#* }" 2>/dev/null
}
state_of() { jq -r '.result.requestState // empty' <<<"${1#* }" 2>/dev/null; }	# state_of OUT
tp_stat() { curl -s --max-time 5 "$TP/_stats" | jq -r ".$1"; }
# the refresh tokens alice holds for the gateway's client at the third party
alice_rts() { curl -s --max-time 5 "$TP/_refresh_tokens?sub=alice" | jq -r --arg c "$TP_CLIENT" '.refresh_tokens[] | select(.client_id == $c) | .token'; }
tp_introspect() { curl -s --max-time 10 -u mcpgate:mcpgate-secret --data-urlencode "token=$1" "$TP/token/introspection"; }
set_ttl() { curl -s --max-time 5 -H 'Content-Type: application/json' -d "{\"access_ttl\":$1}" "$TP/_ttl" | jq -r .access_ttl; }
# the tokens the tracker accepted for alice's tools/calls, as /_seen names them (SHA-256)
seen_alice() { curl -s --max-time 5 "http://127.0.0.1:$UP_PORT/_seen" | jq -r '.accepted[] | select(.method == "tools/call" and .sub == "alice") | .token_sha256'; }
# connect URL JAR: the connect page's flow from URL (a ticket's link) with curl following
# every redirect (issuer, third party, back) in the cookie jar JAR: the last status; the
# last page in $T/page.html.
connect() {
	curl -sS -L --max-redirs 20 --max-time 60 -c "$2" -b "$2" -o "$T/page.html" -w '%{http_code}' "$1" 2>> "$T/curl.err"
}
audit_lines() { grep -h '"audit":"connection"' "$@" 2>/dev/null | jq -sc 'map({upstream, event, reason})'; }
printf '%s\n' '{"tracker":{"tools":[{"name":"whoami","inputSchema":{"type":"object"}}]}}' > "$T/explain-catalog.json"
CLAIMS=$(mint_json --introspect "$ALICE" | jq -c .)
# explain_alice: explain's connection line for alice's claims and tr_whoami, read from
# host A's state file (this user runs the gateway's processes).
explain_alice() {
	"$MCPGATE_BIN" explain -c "$T/gw.conf" --catalog "$T/explain-catalog.json" --claims "$CLAIMS" --tool tr_whoami \
		2> "$T/explain.err" | grep '^connection:'
}

# --- 1. connect, then every call refreshes ----------------------------------------------------
out=$(call)
url=$(asked "$out")
check "alice's first call (not connected): an input_required result with one URL elicitation to $CONNECT?ticket=..." test -n "$url"
[ -n "$url" ] || bail "a connect URL" "$out"
state1=$(state_of "$out")
check "… and a requestState of the gateway's (opaque: nothing of alice's in clear)" \
	eval '[ -n "$state1" ] && ! grep -q alice <<<"$state1"'
out=$(call "" "{\"requestState\":\"$state1\",\"inputResponses\":{\"mcpgate_connect\":{\"action\":\"decline\"}}}")
jcheck "the retry, declined: refused (-32003), naming the upstream" "${out#* }" \
	'.error.code == -32003 and (.error.message | test("tracker"))'
alt=${state1:0:20}$( [ "${state1:20:1}" = A ] && echo B || echo A )${state1:21}
out=$(call "" "{\"requestState\":\"$alt\",\"inputResponses\":{\"mcpgate_connect\":{\"action\":\"accept\"}}}")
jcheck "the retry with its requestState altered: refused (-32602)" "${out#* }" '.error.code == -32602'
url=$(asked "$(call)")	# a new link: the first was not used
like "explain before she connects: not connected" "$(explain_alice)" "^connection: not connected \(a call asks the person to connect at $CONNECT\)$"
st=$(connect "$url" "$T/jar")
if [ "$st" = 200 ] && grep -q '<h1>Connected</h1>' "$T/page.html"; then
	pass "the connect flow with curl and a cookie jar: ticket → issuer → third party → \"Connected\" (200)"
else
	bail "the connect flow ends on \"Connected\"" "status $st: $(head -c 600 "$T/page.html"; tail -n 3 "$T/curl.err")"
fi
out=$(call "" "{\"requestState\":\"$state1\",\"inputResponses\":{\"mcpgate_connect\":{\"action\":\"accept\"}}}")
jcheck "the retry after connecting, with the requestState and her acceptance: answered as alice" "$(who "$out")" \
	'.sub == "alice"'
like "explain after she connected: this person's own account, connected since when" "$(explain_alice)" \
	"^connection: this person's own account, connected since 20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$"
is "the third party holds one refresh token of alice's for the gateway's client" "$(alice_rts | wc -l)" 1

# A call is several requests to the tracker (initialize, notifications/initialized,
# tools/call), each taking alice's token from the vault; a token past half its life is
# refreshed first. So a call made past that point makes one refresh at least, and no more
# than one per request the tracker accepted for it.
upstream_requests() { curl -s --max-time 5 "http://127.0.0.1:$UP_PORT/_seen" | jq '[.accepted[] | select(.sub == "alice")] | length'; }
refreshed_call() {	# refreshed_call N: the Nth call: alice, after at least one refresh, at most one per request
	local r0 q0 out r q
	past_half
	r0=$(tp_stat refreshes) q0=$(upstream_requests)
	out=$(call)
	r=$(( $(tp_stat refreshes) - r0 )) q=$(( $(upstream_requests) - q0 ))
	echo "# call $1: $r refresh_token grant(s) for its $q request(s) to the tracker"
	jcheck "call $1 of alice's: the tracker saw alice, through the gateway's client at the third party" "$(who "$out")" \
		".sub == \"alice\" and .client_id == \"$TP_CLIENT\" and .aud == \"$UP_URL\""
	check "… after a refresh_token grant at the third party (her token, $SHORT_TTL s, past half its life): 1 <= $r <= $q, its requests" \
		test "$r" -ge 1 -a "$r" -le "$q"
}
u0=$(seen_alice | sort -u | wc -l) n0=$(seen_alice | wc -l)
refreshed_call 1
refreshed_call 2
is "… and the tracker was shown a new token each time (two distinct new tokens for the two calls)" \
	"$(( $(seen_alice | sort -u | wc -l) - u0 )) $(( $(seen_alice | wc -l) - n0 ))" "2 2"
is "the third party still holds one refresh token of alice's (not rotated for a confidential client)" "$(alice_rts | wc -l)" 1

# --- 2. the refresh token revoked at the third party --------------------------------------------
rt=$(alice_rts | head -1)
st=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' -u "$TP_CLIENT:$TP_SECRET" --data-urlencode "token=$rt" \
	-d token_type_hint=refresh_token "$TP/token/revocation")
is "alice's refresh token revoked at the third party (RFC 7009, as the gateway's client: its own token): 200" "$st" 200
jcheck "… it introspects inactive there" "$(tp_introspect "$rt")" '.active == false'
r0=$(tp_stat refreshes)
out=$(call)
url=$(asked "$out")
check "the next call: asked to connect again (input_required with a new connect URL)" test -n "$url"
is "… no token issued (the refresh was refused)" "$(( $(tp_stat refreshes) - r0 ))" 0
# Revoking the refresh token ends its grant's access tokens too: the call either meets a
# token the tracker now refuses, fresh (dropped without a refresh), or one to refresh
# (refused: invalid_grant). Either way the connection is dropped, and said so.
jcheck "the audit log: a connection \"dropped\" (tracker: invalid_grant, or its fresh token refused) after the \"connected\"" \
	"$(audit_lines "$T/gw.log")" 'map(.event) == ["connected", "dropped"] and .[1].upstream == "tracker" and
	(.[1].reason == "invalid_grant" or .[1].reason == "the upstream refused a fresh token")'
like "explain: not connected" "$(explain_alice)" "^connection: not connected "
out=$(call)
is "calls keep asking until she connects (no refresh tried: nothing to refresh)" "$(asked "$out" | grep -c .) $(( $(tp_stat refreshes) - r0 ))" "1 0"
st=$(connect "$url" "$T/jar")
if [ "$st" = 200 ] && grep -q '<h1>Connected</h1>' "$T/page.html"; then pass "connecting again with the new link: \"Connected\""
else fail "connecting again with the new link: \"Connected\"" "status $st: $(head -c 600 "$T/page.html")"; fi
out=$(call)
jcheck "… and calls work again: alice" "$(who "$out")" ".sub == \"alice\" and .client_id == \"$TP_CLIENT\""
is "… with a new refresh token (the revoked one is gone)" "$(alice_rts | grep -c .) $(alice_rts | grep -cxF -- "$rt")" "1 0"

# --- 3. one refresh under concurrency ---------------------------------------------------------------
# From now on the third party issues tokens of LONG_TTL (600 s). The token stored now is of
# SHORT_TTL and past half its life: it needs a refresh at the burst's start, and once. Why exactly one: a process
# that needs the refresh claims it in the state file (vault_claim_refresh), the others see
# the claim and read the entry again until the new token is there (or the claim's bound,
# 4 x [auth] timeout-ms + 1 s, passes: then they fail, they do not refresh); the claim's
# refresh request is bounded by timeout-ms itself, so no second claim can start while it
# runs. The new token lives 600 s: more than the early margin (30 s) plus the burst (every
# call ends within curl's 60 s), so no call of the burst finds it in need of a refresh,
# however slow the machine. Hence refreshes == 1 for the burst, not merely "far below N".
is "the third party's people's tokens from now on: $LONG_TTL s (POST /_ttl)" "$(set_ttl "$LONG_TTL")" "$LONG_TTL"
past_half
N=24
r0=$(tp_stat refreshes)
burst=()
for i in $(seq 1 "$N"); do call > "$T/burst.$i" & burst+=($!); done
wait "${burst[@]}"	# each call is bounded (curl --max-time 60)
ok_n=0
for i in $(seq 1 "$N"); do [ "$(who "$(cat "$T/burst.$i")" | jq -r .sub 2>/dev/null)" = alice ] && ok_n=$((ok_n + 1)); done
is "$N concurrent calls of alice's across the 2 processes x 4 workers: all answered by the tracker as alice" "$ok_n" "$N"
is "… with exactly one refresh_token grant at the third party (the token needed one, once)" "$(( $(tp_stat refreshes) - r0 ))" 1
out=$(call)
is "a call after the burst: no refresh (the token lives $LONG_TTL s)" "$(who "$out" | jq -r .sub) $(( $(tp_stat refreshes) - r0 ))" "alice 1"
is "the third party's people's tokens: back to $SHORT_TTL s" "$(set_ttl "$SHORT_TTL")" "$SHORT_TTL"

# --- 4. two hosts -----------------------------------------------------------------------------------
# Host B: another nginx + spawn-fcgi + mcpgate with its own state file, the same
# configuration and session key otherwise. The vault lives in each host's state file and
# is not shared between hosts (nor through [auth] shared-cache): a connection made at host
# A is not seen at host B, whose calls ask alice to connect there too. This documents the
# behaviour as it is, not as it should be.
B_PORT=$(free_port)
B_URL=http://127.0.0.1:$B_PORT/mcp
mkdir -p "$T/b"
host_conf "$T/b.conf" "$T/b.state" "$T/b.log"
# start_host NAME PORT CONF: deploy/lib.sh's start functions, in a directory of that host's
# own (NAME), one process of two workers; its pids in HOST_PIDS.
start_host() {
	local dir=$MG_DIR log=$MG_LOG front=$MG_FRONT_LOG fpid=$MG_FRONT_PID sock=$MG_SOCK conf=${MG_CONF:-} rc
	MG_DIR=$T/$1 MG_LOG=$T/$1/mcpgate.log
	mkdir -p "$MG_DIR/tmp" "$MG_DIR/empty"
	start_mcpgate_fcgi "$T/$1/mcpgate.sock" "$3" 1 2 && start_nginx "$2"
	rc=$?
	HOST_PIDS=$MG_FCGI_PIDS
	MG_DIR=$dir MG_LOG=$log MG_FRONT_LOG=$front MG_FRONT_PID=$fpid MG_SOCK=$sock MG_CONF=$conf
	return "$rc"
}
start_host_b() { start_host b "$B_PORT" "$T/b.conf" && pids_b=$HOST_PIDS; }
if start_host_b >> "$T/start.out" 2>&1; then
	pass "host B: its own nginx + spawn-fcgi + mcpgate at 127.0.0.1:$B_PORT, its own state file, the same session-key-file and resource"
else
	bail "host B started" "$(tail -n 20 "$T/start.out")"
fi
out=$(call "$B_URL")
url_b=$(asked "$out")
check "alice's call at host B: asked to connect (input_required): without a Redis store the vault is the host's, host A's connection is not seen there" test -n "$url_b"
jcheck "… while at host A she is connected: alice" "$(who "$(call)")" '.sub == "alice"'

# --- 5. the connections page: sign-in, the list, disconnect ---------------------------------------
J=$T/jar2	# another browser
st=$(curl -s --max-time 30 -c "$J" -b "$J" -o /dev/null -w '%{http_code} %{redirect_url}' "$CONNECT")
like "GET $CONNECT with no ticket and no session: 302 to the issuer's authorization endpoint (a sign-in)" "$st" "^302 $IDP/auth\?"
st=$(curl -sS -L --max-redirs 20 --max-time 60 -c "$J" -b "$J" -D "$T/list.h" -o "$T/list.html" -w '%{http_code}' "$CONNECT" 2>> "$T/curl.err")
# each answer of the chain: its status, its Location, whether it set the session cookie
hops=$(tr -d '\r' < "$T/list.h" | awk 'function out() { if (st) print st, (loc ? loc : "-"), (ses ? "session" : "-") }
	/^HTTP\// { out(); st = $2; loc = ""; ses = 0 }
	tolower($1) == "location:" { loc = $2 }
	tolower($0) ~ /^set-cookie: mcpgate_connect_session=./ { ses = 1 }
	END { out() }')
like "… signed in there and back: 303 to $CONNECT with the session cookie mcpgate_connect_session, then 200" \
	"$(tr '\n' ' ' <<<"$hops")" "303 $CONNECT session 200 - - $"
row=$(grep -o '<tr><td>tracker</td>.*</tr>' "$T/list.html" | sed 's|</tr>.*||')
csrf=$(grep -o 'name="csrf" value="[0-9a-f]*"' <<<"$row" | sed 's/.*value="//; s/"//')
if [ "$st" = 200 ] && grep -q '<td>connected (since ' <<<"$row" && grep -q 'name="upstream" value="tracker"' <<<"$row" && [ ${#csrf} -eq 32 ]; then
	pass "… then 200: the list says tracker connected (since when), with a form: POST $CONNECT, hidden upstream and csrf"
else
	fail "… then 200: the list says tracker connected, with a form" "status $st: $(head -c 1500 "$T/list.html")"
fi
cookie_of() { awk -v n="$2" '$6 == n { v = $7 } END { print v }' "$1"; }	# cookie_of JAR NAME
disconnect() {	# disconnect COOKIE-HEADER ORIGIN CSRF: the status and Location of the POST
	curl -s --max-time 30 -o "$T/post.html" -w '%{http_code} %{redirect_url}' -H "Cookie: $1" ${2:+-H "Origin: $2"} \
		--data-urlencode upstream=tracker --data-urlencode "csrf=$3" "$CONNECT"
}
browser=mcpgate_connect=$(cookie_of "$J" mcpgate_connect)
session="$browser; mcpgate_connect_session=$(cookie_of "$J" mcpgate_connect_session)"
is "POST with a wrong csrf: 400" "$(disconnect "$session" "$BASE" "0123456789abcdef0123456789abcdef" | cut -d' ' -f1)" 400
is "POST with the Origin of another site: 403" "$(disconnect "$session" "http://127.0.0.1:1" "$csrf" | cut -d' ' -f1)" 403
is "POST without the session cookie (the browser's cookie alone): 403" "$(disconnect "$browser" "$BASE" "$csrf" | cut -d' ' -f1)" 403
jcheck "… none of them disconnected: alice's call still works" "$(who "$(call)")" '.sub == "alice"'
rt=$(alice_rts | head -1)
v0=$(tp_stat revocations)
is "POST with the session's cookies, its csrf, Origin $BASE: 303 to $CONNECT" "$(disconnect "$session" "$BASE" "$csrf")" "303 $CONNECT"
curl -s --max-time 30 -c "$J" -b "$J" -o "$T/list.html" "$CONNECT"
like "the list then says tracker not connected" "$(grep -o '<tr><td>tracker</td><td>[^<]*' "$T/list.html")" "<td>not connected$"
is "the third party saw one revocation" "$(( $(tp_stat revocations) - v0 ))" 1
jcheck "… of alice's refresh token: it introspects inactive there" "$(tp_introspect "$rt")" '.active == false'
jcheck "the audit log: \"disconnected\" (revoked)" "$(audit_lines "$T/gw.log" | jq -c '.[-1]')" \
	'.event == "disconnected" and .upstream == "tracker" and .reason == "revoked"'
out=$(call)
check "alice's next call: asked to connect again (input_required)" test -n "$(asked "$out")"
like "explain after she disconnected: not connected" "$(explain_alice)" "^connection: not connected "

# --- 7. two hosts with one Redis store -------------------------------------------------------------
# Host A takes a Redis store ([limits] store, its configuration reloaded while it runs),
# and host C starts with the same configuration and its own nginx, spawn-fcgi, mcpgate and
# state file: people's connections are then kept in Redis alone, for both. (Behind a load
# balancer both hosts would answer at one resource URL: here the connect page's links and
# redirect URI are host A's, and host C is called at its own port.)
. "$top/tests/lib/redis.sh"
start_redis || bail "redis-server started" "$(tail -n 5 "$T/redis.log")"
reloads() { grep -c '"config: reloaded' "$T/gw.log" 2>/dev/null; }
reloaded() { test "$(reloads)" -ge "$1"; }	# reloaded N: N reloads logged at least
n0=$(reloads)
printf '[limits]\nstore = %s\n' "$(store redis 3)" >> "$T/gw.conf"
if wait_until 60 reloaded $((n0 + 2)); then
	pass "host A's two processes reloaded its configuration with the Redis store ($WHERE)"
else
	bail "host A reloaded" "$(tail -n 5 "$T/gw.log")"
fi
C_PORT=$(free_port)
C_URL=http://127.0.0.1:$C_PORT/mcp
host_conf "$T/c.conf" "$T/c.state" "$T/c.log"
printf '[limits]\nstore = %s\n' "$(store redis 3)" >> "$T/c.conf"
if start_host c "$C_PORT" "$T/c.conf" >> "$T/start.out" 2>&1; then
	pids_c=$HOST_PIDS
	pass "host C: its own nginx + spawn-fcgi + mcpgate and state file at 127.0.0.1:$C_PORT, the same Redis store"
else
	bail "host C started" "$(tail -n 20 "$T/start.out")"
fi
url=$(asked "$(call "$C_URL")")
check "alice's call at host C: asked to connect (she disconnected in part 5)" test -n "$url"
st=$(connect "$url" "$T/jar-c")
is "… she connects (the connect page's flow at host A, now keeping connections in Redis)" \
	"$st $(grep -c '<h1>Connected</h1>' "$T/page.html")" "200 1"
jcheck "her call at host C: answered as alice (the connection kept in Redis, made through host A)" \
	"$(who "$(call "$C_URL")")" '.sub == "alice"'
jcheck "… and at host A" "$(who "$(call)")" '.sub == "alice"'
like "explain on host C's configuration: not known (connections are kept in Redis)" \
	"$("$MCPGATE_BIN" explain -c "$T/c.conf" --catalog "$T/explain-catalog.json" --claims "$CLAIMS" --tool tr_whoami \
	2>/dev/null | grep '^connection:')" "^connection: not known \(connections are kept in the Redis store"
is "Redis holds one connection (mcpgate:va:…)" "$(rcli -n 3 --scan --pattern 'mcpgate:va:*' | wc -l)" 1
vals=$(for k in $(rcli -n 3 --scan --pattern 'mcpgate:va:*'); do rcli -n 3 GET "$k"; done)
clear=$(for t in alice tracker $(alice_rts); do grep -cF -- "$t" <<<"$vals"; done | awk "{ n += \$1 } END { print n + 0 }")
is "… sealed: no subject, no upstream, no refresh token of hers in clear" "$clear" 0
# A burst across both hosts, her token past half its life: one refresh for both (the
# claim in Redis, mcpgate:vc:…); the bound as in part 3.
jcheck "a call at host C leaves her a token of $SHORT_TTL s" "$(who "$(call "$C_URL")")" '.sub == "alice"'
set_ttl "$LONG_TTL" > /dev/null
past_half
r0=$(tp_stat refreshes)
burst=()
for i in $(seq 1 12); do
	if [ $((i % 2)) = 0 ]; then call "$C_URL" > "$T/burst-ac.$i" & else call > "$T/burst-ac.$i" & fi
	burst+=($!)
done
wait "${burst[@]}"
ok_n=0
for i in $(seq 1 12); do [ "$(who "$(cat "$T/burst-ac.$i")" | jq -r .sub 2>/dev/null)" = alice ] && ok_n=$((ok_n + 1)); done
is "12 calls at once across hosts A and C: all answered as alice, with one refresh between them" \
	"$ok_n $(( $(tp_stat refreshes) - r0 ))" "12 1"
set_ttl "$SHORT_TTL" > /dev/null
# One disconnect, on host A's page, ends it for host C too.
J=$T/jar-list
curl -sS -L --max-redirs 20 --max-time 60 -c "$J" -b "$J" -o "$T/list-a.html" "$CONNECT" 2>> "$T/curl.err"
csrf=$(grep -o 'name="csrf" value="[0-9a-f]*"' "$T/list-a.html" | sed 's/.*value="//; s/"//')
session="mcpgate_connect=$(cookie_of "$J" mcpgate_connect); mcpgate_connect_session=$(cookie_of "$J" mcpgate_connect_session)"
is "alice disconnects on the connections page: 303" "$(disconnect "$session" "$BASE" "$csrf")" "303 $CONNECT"
check "… her next call at host C is asked to connect again" test -n "$(asked "$(call "$C_URL")")"
is "… and Redis holds no connection" "$(rcli -n 3 --scan --pattern 'mcpgate:va:*' | wc -l)" 0
# A Redis entry altered (one character of its sealed value) does not open: dropped, and
# the person asked again.
url=$(asked "$(call "$C_URL")")
st=$(connect "$url" "$T/jar-c2")
is "alice connects again" "$st $(grep -c '<h1>Connected</h1>' "$T/page.html")" "200 1"
key=$(rcli -n 3 --scan --pattern 'mcpgate:va:*' | head -1)
val=$(rcli -n 3 GET "$key")
alt=${val:0:40}$( [ "${val:40:1}" = A ] && echo B || echo A )${val:41}
is "her entry in Redis altered (one character of its sealed value)" "$(rcli -n 3 SET "$key" "$alt" KEEPTTL)" OK
check "… her next call at host C is asked to connect again (the entry does not open)" test -n "$(asked "$(call "$C_URL")")"
jcheck "… and the audit log says it was dropped, as an entry that did not open" "$(audit_lines "$T/c.log" | jq -c '[.[] | select(.event == "dropped")] | .[-1]')" \
	'.upstream == "tracker" and .reason == "its entry did not open"'
is "… and Redis holds no connection of hers" "$(rcli -n 3 --scan --pattern 'mcpgate:va:*' | wc -l)" 0

# --- 8. a code for another client ---------------------------------------------------------------
# An attacker's own authorization code at the third party (issued to another client, cli,
# for its own redirect URI) slipped into alice's callback with her genuine state: the
# third party refuses to redeem it for the gateway's client, and nothing is connected.
# next_hop URL JAR: one request, no redirect followed: the status and the Location.
next_hop() { curl -s --max-time 30 -c "$2" -b "$2" -o /dev/null -w '%{http_code} %{redirect_url}' "$1"; }
# until_origin URL JAR ORIGIN: redirects followed one by one until one goes to ORIGIN:
# that Location (empty when none does within 12 hops).
until_origin() {
	local url=$1 hop i
	for i in $(seq 1 12); do
		hop=$(next_hop "$url" "$2")
		url=${hop#* }
		case $url in "$3"*) echo "$url"; return 0 ;; "") return 1 ;; esac
	done
	return 1
}
verifier=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
challenge=$(printf '%s' "$verifier" | openssl dgst -sha256 -binary | base64 | tr '+/' '-_' | tr -d '=')
foreign=$(until_origin "$TP/auth?client_id=cli&response_type=code&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcallback&code_challenge=$challenge&code_challenge_method=S256&scope=openid&resource=$(jq -rn --arg u "$UP_URL" '$u|@uri')" \
	"$T/jar-cli" "http://127.0.0.1:9/callback" | sed -n 's/.*[?&]code=\([^&]*\).*/\1/p')
check "an authorization code of the third party's for another client (cli)" test -n "$foreign"
url=$(asked "$(call)")
J=$T/jar-foreign
to_tp=$(until_origin "$url" "$J" "$TP/auth")
state=$(sed -n 's/.*[?&]state=\([^&]*\).*/\1/p' <<<"$to_tp")
check "alice's link followed to the third party's authorization request (her state for that leg)" test -n "$state"
st=$(curl -s --max-time 30 -c "$J" -b "$J" -o "$T/foreign.html" -w '%{http_code}' \
	"$CONNECT?code=$foreign&state=$state&iss=$(jq -rn --arg u "$TP" '$u|@uri')")
is "the callback with the other client's code and her genuine state: 400 (the third party refuses to redeem it)" \
	"$st $(grep -c 'refused' "$T/foreign.html")" "400 1"
check "… and alice is not connected" test -n "$(asked "$(call)")"

# shellcheck disable=SC2086 # one word per pid
is "the mcpgate processes of every host survived the run" "$(gone $pids_a $pids_b $pids_c)" none
is "no caller's token or client secret in any log" "$(pieces_logged "$ALICE" "$TP_SECRET")" 0
tap_done
