#!/usr/bin/env bash
# Scope step-up end to end (docs/ARCHITECTURE.md §4): the official MCP SDK client
# (@modelcontextprotocol/sdk 1.32.2, tests/package.json) gets a 403 insufficient_scope
# from mcpgate for a tool whose group wants mcp:admin, authorizes again for the scopes
# the challenge names, and succeeds on the retry. Real nginx (deploy/nginx recipe) +
# spawn-fcgi + mcpgate, oidc-provider (tests/idp) as the issuer, one fixture upstream
# (tests/upstream/fixture.mjs) as fx_*; the user is alice (tenant acme).
#
# The steps are checked in tests/policy/sdk-stepup.mjs; this script starts and stops
# everything, checks the policy with `mcpgate explain` first, turns the SDK script's
# lines into this suite's TAP, and afterwards looks for tokens and codes in the logs.
# Prints TAP. Env: MCPGATE_BIN.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq --node @modelcontextprotocol/sdk/package.json

# --- the upstream, the authorization server, the gateway ------------------------------
fixture_and_idp fx --port 0 --name fx
gateway_conf "$T/gw.conf" "$GW_URL"
sed -i 's/^scopes-supported = .*/scopes-supported = mcp:tools mcp:admin/' "$T/gw.conf"
# fx_echo needs mcp:admin, the other fx_ tools do not. An upstream's own group (here
# "fx") holds all of its tools and one admitting group is enough (docs/ARCHITECTURE.md
# §4, step 3), so the tenant is not given "fx" but "base": the fx_ tools but fx_echo,
# by fnmatch globs.
cat >> "$T/gw.conf" <<CONF
[upstream "fx"]
url = ${FIXTURE_URL[fx]}
prefix = fx_
[group "base"]
tools = fx_[!e]* fx_e[!c]* fx_ec[!h]* fx_ech[!o]* fx_echo?*
[group "admin"]
tools = fx_echo
scopes = mcp:admin
[tenant "acme"]
groups = base admin
CONF
if out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1); then
	pass "mcpgate -t accepts the configuration (scopes-supported mcp:tools mcp:admin, fx_echo in group admin)"
else
	bail "mcpgate -t accepts the configuration" "$out"
fi

# alice's claims as the gateway will see them (tests/idp/fixtures.mjs)
ALICE='{"active":true,"sub":"alice","client_id":"x","tenant":"acme","groups":["engineering"]}'
claims() { jq -c --arg s "$1" '.scope = $s' <<<"$ALICE"; }
out=$("$MCPGATE_BIN" explain -c "$T/gw.conf" --claims "$(claims mcp:tools)" --tool fx_echo 2>&1); rc=$?
like "explain: with mcp:tools only, fx_echo is hidden at step 3 for insufficient_scope (a step-up lets alice in)" \
	"rc=$rc $(tr '\n' ' ' <<<"$out")" 'rc=2 .*fx_echo: hidden at step 3 \(insufficient_scope\) by [^ ]*gw.conf:[0-9]+: \[group "admin"\] scopes'
out=$("$MCPGATE_BIN" explain -c "$T/gw.conf" --claims "$(claims 'mcp:tools mcp:admin')" --json 2> "$T/explain.err")
jcheck "explain: with mcp:tools mcp:admin, every fx_ tool is visible" \
	"$(jq -c '{visible: (.visible | length), hidden: [.hidden[].tool], echo: (.visible | index("fx_echo") != null)}' <<<"${out:-null}" 2>/dev/null)" \
	'.visible >= 10 and .hidden == [] and .echo'
sed 's/^groups = base admin$/groups = fx admin/' "$T/gw.conf" > "$T/own-group.conf"
out=$("$MCPGATE_BIN" explain -c "$T/own-group.conf" --claims "$(claims mcp:tools)" --tool fx_echo 2>&1); rc=$?
like "explain: a tenant given the upstream's own group \"fx\" would see fx_echo with mcp:tools alone" \
	"rc=$rc $(tr '\n' ' ' <<<"$out")" 'rc=0 .*fx_echo: visible'

if start_mcpgate_fcgi "$T/mcpgate.sock" "$T/gw.conf" 2 2 >> "$T/start.out" 2>&1 && start_nginx "$GW_PORT" >> "$T/start.out" 2>&1; then
	pass "spawn-fcgi (2 x 2) + mcpgate behind nginx at $GW_URL, oidc-provider at $IDP"
else
	bail "the gateway started" "$(tail -n 20 "$T/start.out")"
fi
pids_before=$MG_FCGI_PIDS

# --- the SDK run: 130 s at most (sdk-stepup.mjs stops itself after 120 s) -----------------
run_bounded 130 "$T/sdk.tap" "$T/sdk.err" node "$here/sdk-stepup.mjs" "$GW_URL" --fragments "$T/fragments"
rc=$?
sdk_afterwards sdk-stepup.mjs "$rc" 15 "$pids_before"
a=$(grep '"audit":"tools/call"' "$T/gw.log" | grep '"tool":"fx_echo"')
jcheck "the audit log has both decisions on fx_echo: refused (insufficient_scope), then allowed" \
	"$(jq -sc 'map({allowed, reason})' <<<"$a" 2>/dev/null)" \
	'length == 2 and .[0].allowed == false and .[0].reason == "insufficient_scope" and .[1].allowed == true'
rm -f "$T/fragments"
tap_done
