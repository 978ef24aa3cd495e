#!/usr/bin/env bash
# The docs site's console in a real browser: headless Chromium (Debian's chromium, driven
# by playwright-core from tests/package.json; nothing downloaded) against nginx (the
# deploy recipe, www/ at /docs/) + spawn-fcgi + mcpgate + oidc-provider (tests/idp, with
# its own login and consent pages) + the fixture upstream (tests/upstream) as fx_*.
#
# Two users of tenant acme see different tools: alice (group engineering) the eng group's,
# bob (group sales) the sales group's; fx_echo is in group admin, which wants mcp:admin,
# so alice steps up for it; dave (no tenant) is refused. What each identity must see is the policy's word: `mcpgate
# explain` on the same configuration. The browser steps are in lib/console-browser.mjs;
# this script starts and stops everything, relays its TAP, and afterwards checks the
# audit log and that no token or code reached a log. Screenshots of every state go to
# $WWW_ARTIFACTS (default _build/logs/www-console). The gateway runs as the recipes
# document: docs at its own origin, no allowed-origins; the console on another origin
# (localhost) is refused until that origin is added to allowed-origins.
# Prints TAP. Env: MCPGATE_BIN.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq chromium:chromium \
	--node playwright-core/package.json oidc-provider/package.json @modelcontextprotocol/sdk/package.json
ART=${WWW_ARTIFACTS:-$top/_build/logs/www-console}
{ rm -rf "$ART" && mkdir -p "$ART"; } || bail "the artifacts directory $ART"

# --- the upstream, the authorization server, the gateway ------------------------------
IDP_OPTS=--login-pages fixture_and_idp fx --port 0 --name fx
BASE=${GW_URL%/mcp}
gateway_conf "$T/gw.conf" "$BASE/mcp" "docs-url = $BASE/docs"
sed -i 's/^scopes-supported = .*/scopes-supported = mcp:tools mcp:admin/' "$T/gw.conf"
cat >> "$T/gw.conf" <<CONF
[upstream "fx"]
url = ${FIXTURE_URL[fx]}
prefix = fx_
[group "eng"]
tools = fx_slow fx_test_simple_text fx_test_tool_with_progress fx_json_schema_2020_12_tool
members = engineering
[group "sales"]
tools = fx_test_simple_text fx_test_error_handling fx_test_image_content
members = sales
[group "admin"]
tools = fx_echo
scopes = mcp:admin
members = engineering
[tenant "acme"]
groups = eng sales admin
CONF
if out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1); then
	pass "mcpgate -t accepts the configuration (docs-url at the gateway's origin, no allowed-origins)"
else
	bail "mcpgate -t accepts the configuration" "$out"
fi

# What each identity must see: the policy's answer (tests/idp/fixtures.mjs gives the claims).
visible() {	# visible USER SCOPE → the tools explain shows, as a JSON array
	local claims
	claims=$(jq -nc --arg u "$1" --arg s "$2" --arg t acme --argjson g "$3" \
		'{active: true, sub: $u, client_id: "x", tenant: $t, groups: $g, scope: $s}')
	"$MCPGATE_BIN" explain -c "$T/gw.conf" --claims "$claims" --json 2>> "$T/explain.err" | jq -c '.visible | sort'
}
ALICE=$(visible alice mcp:tools '["engineering"]')
ALICE_ADMIN=$(visible alice 'mcp:tools mcp:admin' '["engineering"]')
BOB=$(visible bob mcp:tools '["sales"]')
jcheck "explain: alice, bob and alice with mcp:admin each see a list of their own, fx_echo only after the step-up" \
	"$(jq -nc --argjson a "${ALICE:-null}" --argjson aa "${ALICE_ADMIN:-null}" --argjson b "${BOB:-null}" '{a: $a, aa: $aa, b: $b}')" \
	'(.a | length) >= 3 and (.b | length) >= 2 and .a != .b and (.a | index("fx_echo")) == null and (.aa - .a) == ["fx_echo"]'

if start_mcpgate_fcgi "$T/mcpgate.sock" "$T/gw.conf" 2 2 >> "$T/start.out" 2>&1 && start_nginx "$GW_PORT" >> "$T/start.out" 2>&1; then
	pass "spawn-fcgi (2 x 2) + mcpgate behind nginx at $BASE (docs at $BASE/docs/), oidc-provider at $IDP"
else
	bail "the gateway started" "$(tail -n 20 "$T/start.out")"
fi
pids_before=$MG_FCGI_PIDS

# --- the browser: 300 s at most (console-browser.mjs stops itself after 280 s) ----------
run_bounded 300 "$T/sdk.tap" "$T/sdk.err" node "$here/lib/console-browser.mjs" \
	--base "$BASE" --issuer "$IDP" --conf "$T/gw.conf" --artifacts "$ART" --fragments "$T/fragments" \
	--alice="$ALICE" --alice-admin="$ALICE_ADMIN" --bob="$BOB"	# =: a token may begin with "-"
rc=$?
cp "$T/sdk.err" "$ART/browser.err" 2>/dev/null
sdk_afterwards console-browser.mjs "$rc" 38 "$pids_before"
a=$(grep '"audit":"tools/call"' "$T/gw.log" | grep '"tool":"fx_echo"')
jcheck "the audit log has both decisions on fx_echo: refused (insufficient_scope), then allowed" \
	"$(jq -sc 'map({allowed, reason})' <<<"$a" 2>/dev/null)" \
	'length == 2 and .[0].allowed == false and .[0].reason == "insufficient_scope" and .[1].allowed == true'
shots=$(find "$ART" -name '*.png' -size +1k | wc -l)
check "a screenshot of each state in $ART (at least 12, $shots taken)" test "$shots" -ge 12
rm -f "$T/fragments"
tap_done
