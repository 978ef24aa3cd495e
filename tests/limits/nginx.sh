#!/usr/bin/env bash
# Rate limits after authentication, end to end: nginx + spawn-fcgi (2 x 2) + mcpgate, real
# oidc-provider tokens (tests/idp: machine-acme is tenant acme, machine-beta beta,
# machine-none has no tenant) and the SDK fixture upstream. Each class triggers alone
# with its 429 (HttpError naming class and window, Retry-After, RateLimit headers); a
# tenant's overrides apply; the tool limit is per tenant; a [group]'s limit-tool applies
# to its tools where it is tighter; a batch element is limited on its own while the
# others proceed; 2026-07-28 gets its JSON-RPC error body echoing the id; the log names
# class and key digest, never a token. Then exactness: spawn-fcgi -F 4 with 2 threads
# each, 40 concurrent requests of one token under token = 10/3600: exactly 10 pass. Then,
# without a policy and with [limits] tool off, groups' limit-tool alone: 2/60 on one tool
# (its third call refused) and 3/60 on its upstream's own group (the tighter applies to
# that tool; the upstream's other tools are served, at 3/60), and explain names the
# group. Windows are an hour long, so a slow machine refills nothing meanwhile (but the
# groups': three calls in 30 s, four in 20 s). Prints TAP. Env: MCPGATE_BIN.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq --node @modelcontextprotocol/sdk/package.json

fixture_and_idp fx --port 0 --name fx --quiet
gateway_conf "$T/gw.conf" "$GW_URL" "catalog-ttl = 3600"
cat >> "$T/gw.conf" <<CONF
[upstream "fx"]
url = ${FIXTURE_URL[fx]}
[tenant "acme"]
groups = fx
limit-tenant = 100/3600
limit-token = 2/3600
[tenant "beta"]
groups = fx
limit-tenant = 100/3600
[tenant "*"]
groups = fx
[group "costly"]
tools = test_simple_text
limit-tool = 1/3600
[limits]
tenant = 6/3600
token = 4/3600
tool = 3/3600
CONF
out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1) || bail "mcpgate -t accepts the limits" "$out"
start_mcpgate_fcgi "$T/mcpgate.sock" "$T/gw.conf" 2 2 > "$T/start.out" 2>&1 && start_nginx "$GW_PORT" >> "$T/start.out" 2>&1 \
	|| bail "nginx + spawn-fcgi + mcpgate" "$(tail -n 20 "$T/start.out")"
pass "nginx + spawn-fcgi (2 x 2) + mcpgate with tenant, token, tool and a group's tool limits"

# post TOKEN BODY [HEADER...]: headers in $T/h, body in $T/b; prints the status.
post() {
	local tok=$1 body=$2
	shift 2
	curl -sS --max-time 30 -o "$T/b" -D "$T/h" -w '%{http_code}' -H 'Content-Type: application/json' \
		-H 'Accept: application/json' -H "Authorization: Bearer $tok" "$@" --data-binary "$body" "$GW_URL" 2>> "$T/curl.err"
}
hdr() { grep -i "^$1: " "$T/h" | head -n 1 | sed 's/^[^:]*: //' | tr -d '\r'; }
PING='{"jsonrpc":"2.0","id":1,"method":"ping"}'
ECHO='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}'
SIMPLE='{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}'
pings() {	# pings TOKEN N: the statuses of N pings
	local i out=
	for i in $(seq 1 "$2"); do out="$out$(post "$1" "$PING") "; done
	echo "$out"
}
declare -A tok=()
for t in A1 A2 A3 A4; do tok[$t]=$(mint --client machine-acme --scope mcp:tools); done
for t in B1 B2 B3; do tok[$t]=$(mint --client machine-beta --scope mcp:tools); done
for t in N1 N2; do tok[$t]=$(mint --client machine-none --scope mcp:tools); done
for t in "${!tok[@]}"; do [ -n "${tok[$t]}" ] && [ "${tok[$t]}" != null ] || bail "tokens" "$t: $(tail -n 5 "$T/idp.log")"; done

# --- token -------------------------------------------------------------------------------
st=$(post "${tok[B1]}" "$PING")
is "token = 4/3600: the first ping passes" "$st" 200
is "… RateLimit-Policy names the tightest class (token)" "$(hdr RateLimit-Policy)" '"token";q=4;w=3600'
like "… RateLimit: 3 remain" "$(hdr RateLimit)" '^"token";r=3;t=[0-9]+$'
is "… the next three pass, the fifth is limited" "$(pings "${tok[B1]}" 4)" "200 200 200 429 "
is "… 429 rate_limited" "$(jq -r .error "$T/b")" rate_limited
is "… naming class and window" "$(jq -r .error_description "$T/b")" "token limit 4 per 3600 s exceeded"
ra=$(hdr Retry-After)
check "… Retry-After: whole seconds, at most one interval (900 s), got $ra" test "${ra:-0}" -ge 1 -a "${ra:-0}" -le 900
like "… RateLimit: none remain" "$(hdr RateLimit)" '^"token";r=0;t=[0-9]+$'
is "another token of the same tenant has its own bucket" "$(post "${tok[B2]}" "$PING")" 200

# --- a tenant's override -------------------------------------------------------------------
is "acme's limit-token = 2/3600 replaces token = 4/3600" "$(pings "${tok[A1]}" 3)" "200 200 429 "
is "… and says so" "$(jq -r .error_description "$T/b")" "token limit 2 per 3600 s exceeded"

# --- tenant ----------------------------------------------------------------------------------
# Tokens without a tenant share tenant "*"'s bucket (6/3600): N1 takes 4 (its token
# limit), its 5th is refused by the token limit after the tenant's 5th unit was taken.
is "tenant = 6/3600: a token without a tenant uses its 4" "$(pings "${tok[N1]}" 5)" "200 200 200 200 429 "
is "… another token of tenant \"*\" gets the tenant's last one, then the tenant limit" "$(pings "${tok[N2]}" 2)" "200 429 "
is "… the tenant class named" "$(jq -r .error_description "$T/b")" "tenant limit 6 per 3600 s exceeded"

# --- tool (per tenant) -------------------------------------------------------------------------
out=
for i in 1 2 3 4; do out="$out$(post "${tok[B3]}" "$ECHO") "; [ "$i" = 2 ] && out="$out$(post "${tok[B2]}" "$ECHO") "; done
is "tool = 3/3600 per tenant: beta's tokens share echo's bucket (3 pass, then 429)" "$out" "200 200 200 429 429 "
is "… the tool class named" "$(jq -r .error_description "$T/b")" "tool limit 3 per 3600 s exceeded"
is "… in another tenant the tool has its own bucket" "$(post "${tok[A2]}" "$ECHO")" 200

# --- a group's limit-tool, tighter than [limits] tool ------------------------------------------
is "[group \"costly\"] limit-tool = 1/3600, tighter than tool = 3/3600: test_simple_text's second call is limited" \
	"$(post "${tok[A4]}" "$SIMPLE") $(post "${tok[A4]}" "$SIMPLE")" "200 429"
is "… at the group's rate, in the tool class" "$(jq -r .error_description "$T/b")" "tool limit 1 per 3600 s exceeded"

# --- a batch: every element is a request of its own ----------------------------------------------
st=$(post "${tok[A3]}" '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]')
is "a batch of 3 pings under acme's 2/3600: 200" "$st" 200
jcheck "… two answered, the third a JSON-RPC error -32029 with the facts in data" "$(cat "$T/b")" \
	'(map(select(.result)) | length) == 2 and (.[] | select(.id == 3) | .error.code == -32029 and .error.data.class == "token" and .error.data.limit == 2 and .error.data.window == 3600 and .error.data.retry_after >= 1)'

# --- 2026-07-28 ---------------------------------------------------------------------------------
MODERN='{"jsonrpc":"2.0","id":"m1","method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
st=$(post "${tok[A1]}" "$MODERN" -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: ping')
is "2026-07-28, a limited token: 429" "$st" 429
jcheck "… the JSON-RPC error body, echoing the id" "$(cat "$T/b")" '.id == "m1" and .error.code == -32029 and .error.data.class == "token"'
like "… with Retry-After" "$(hdr Retry-After)" '^[0-9]+$'

# --- the log -------------------------------------------------------------------------------------
jcheck "every 429 is logged: class, key digest, limit, window, retry-after" \
	"$(grep '"rate_limited"' "$T/gw.log" | jq -sc 'map({class, key, limit, window_s, retry_after_s})')" \
	'length >= 7 and all(.[]; (.key | test("^[0-9a-f]{8}$")) and .limit > 0 and .window_s == 3600 and .retry_after_s >= 1) and ([.[].class] | unique) == ["tenant", "token", "tool"]'
leaked=0
for t in "${!tok[@]}"; do grep -qF -e "${tok[$t]}" "$T/gw.log" && leaked=1; done
is "no token in the log" "$leaked" 0

# --- exactness: spawn-fcgi -F 4, 2 threads each, 40 concurrent requests -------------------------------
# (the gateway and its front only: the authorization server and the upstream stay)
# shellcheck disable=SC2086
kill -TERM $MG_FCGI_PIDS "$MG_FRONT_PID" 2>/dev/null
for pid in $MG_FCGI_PIDS $MG_FRONT_PID; do wait_until 30 eval "! mg_alive $pid" || kill -KILL "$pid" 2>/dev/null; done
wait "$MG_FRONT_PID" 2>/dev/null
rm -f "$T/mcpgate.sock"
sed -i '/^\[limits\]$/,$d; /^\[tenant/,$d' "$T/gw.conf"
printf '[limits]\ntoken = 10/3600\n[group "costly"]\ntools = test_simple_text\nlimit-tool = 2/60\n[group "fx"]\nlimit-tool = 3/60\n' >> "$T/gw.conf"
rm -f "$T/state"
start_mcpgate_fcgi "$T/mcpgate.sock" "$T/gw.conf" 4 2 > "$T/start.out" 2>&1 && start_nginx "$GW_PORT" >> "$T/start.out" 2>&1 \
	|| bail "nginx + spawn-fcgi -F 4 + mcpgate" "$(tail -n 20 "$T/start.out")"
E=$(mint --client machine-acme --scope mcp:tools)
post "$E" '{"jsonrpc":"2.0","id":0,"method":"tools/list"}' > /dev/null	# the token cached, the catalog fetched
seq 1 39 | xargs -P 40 -I{} curl -sS --max-time 60 -o /dev/null -w '%{http_code}\n' -H 'Content-Type: application/json' \
	-H 'Accept: application/json' -H "Authorization: Bearer $E" --data-binary "$PING" "$GW_URL" > "$T/par" 2>> "$T/curl.err"
is "token = 10/3600 across 4 processes x 2 threads: 40 requests (one before, 39 at once), exactly 10 pass" \
	"$(sort "$T/par" | uniq -c | awk '{printf "%s:%s ", $2, $1}')" "200:9 429:30 "

# --- groups' limit-tool alone, without a policy (no [tenant] left; [limits] tool off) ------------
G=$(mint --client machine-beta --scope mcp:tools)
out=
for i in 1 2 3; do out="$out$(post "$G" "$SIMPLE") "; done
is "[group \"costly\"] limit-tool = 2/60 (tighter than its upstream's [group \"fx\"] 3/60), no policy: test_simple_text's third call is 429" \
	"$out" "200 200 429 "
is "… naming the tool class and the group's rate" "$(jq -r .error_description "$T/b")" "tool limit 2 per 60 s exceeded"
ra=$(hdr Retry-After)
check "… Retry-After: whole seconds, at most one interval (30 s), got $ra" test "${ra:-0}" -ge 1 -a "${ra:-0}" -le 30
is "… RateLimit-Policy: the group's rate" "$(hdr RateLimit-Policy)" '"tool";q=2;w=60'
like "… RateLimit: none remain" "$(hdr RateLimit)" '^"tool";r=0;t=[0-9]+$'
st=$(post "$G" '{"jsonrpc":"2.0","id":"m2","method":"tools/call","params":{"name":"test_simple_text","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' \
	-H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: test_simple_text')
jcheck "… 2026-07-28: 429, the JSON-RPC error's data {class: tool, limit: 2, window: 60}" "{\"st\": $st, \"b\": $(cat "$T/b")}" \
	'.st == 429 and .b.id == "m2" and .b.error.code == -32029 and .b.error.data.class == "tool" and .b.error.data.limit == 2 and .b.error.data.window == 60 and .b.error.data.retry_after >= 1'
out=
for i in 1 2 3 4; do out="$out$(post "$G" "$ECHO") "; done
is "echo, outside [group \"costly\"]: served, at its upstream's [group \"fx\"] limit-tool = 3/60 (the tool's upstream known without a policy)" \
	"$out" "200 200 200 429 "
is "… naming that rate" "$(jq -r .error_description "$T/b")" "tool limit 3 per 60 s exceeded"
L_GROUP=$(grep -n '^limit-tool = 2/60$' "$T/gw.conf" | cut -d: -f1)
L_FX=$(grep -n '^limit-tool = 3/60$' "$T/gw.conf" | cut -d: -f1)
out=$("$MCPGATE_BIN" explain -c "$T/gw.conf" --claims '{"scope":"mcp:tools","tenant":"beta"}' --tool test_simple_text 2>&1)
like "explain --tool test_simple_text: the group's limit-tool, from its line" "$out" \
	"^  tool: 2/60 s \(from $T/gw.conf:$L_GROUP: \[group \"costly\"\] limit-tool\); keyed by tool \"test_simple_text\" within tenant \"beta\"$"
out=$("$MCPGATE_BIN" explain -c "$T/gw.conf" --claims '{"scope":"mcp:tools","tenant":"beta"}' --tool echo 2>&1)
like "explain --tool echo: its upstream's group's limit-tool, from its line" "$out" \
	"^  tool: 3/60 s \(from $T/gw.conf:$L_FX: \[group \"fx\"\] limit-tool\); keyed by tool \"echo\" within tenant \"beta\"$"

tap_done
