#!/usr/bin/env bash
# tests/fed/no-passthrough.sh — the caller's own token never reaches an upstream, with
# the two credentials modes that obtain none: static (an auth-header-file line: every
# caller reaches the upstream as that one identity) and none (nothing is sent). In front
# of the SDK fixture upstream with --require-bearer, which records the digest of every
# token it is shown, and which takes only tokens for its own resource (the other modes,
# exchange, client-credentials and id-jag, are tests/fed/exchange.sh's and idjag.sh's).
# Through nginx + two mcpgate processes:
#
#  - static: alice and bob both arrive as the header's identity; the only token the
#    upstream was shown is the header's;
#  - none: the upstream is shown no token at all (it refuses, and is left out of the
#    catalog: /mcp/health names it);
#  - no caller's token among what the upstream was shown, accepted or refused.
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
start_idp "$GW_URL" "$UP_URL"
start_fixture up --port "$UP_PORT" --name up --require-bearer "$IDP" --resource "$UP_URL"
wait_fixture up || bail "the fixture upstream (--require-bearer) started" "$(tail -n 5 "$T/up.log")"

# The static identity: a token for the upstream's resource (carol's, exchanged by the
# test itself), in the header file an operator would write.
CAROL=$(mint --user carol --scope mcp:tools --resource "$GW_URL")
FIXED=$(node "$top/tests/idp/token.mjs" --issuer "$IDP" --exchange "$CAROL" --as gateway-exchange --resource "$UP_URL" |
	jq -r .access_token)
case $FIXED in ''|null) bail "a token for the upstream's resource" "$(tail -n 5 "$T/idp.log")" ;; esac
(umask 077 && printf 'Authorization: Bearer %s\n' "$FIXED" > "$T/fixed.header")
gateway_conf "$T/gw.conf" "$GW_URL" "catalog-ttl = 3600"
cat >> "$T/gw.conf" <<CONF
[upstream "fixed"]
url = $UP_URL
prefix = f_
credentials = static
auth-header-file = $T/fixed.header
[upstream "bare"]
url = $UP_URL
prefix = n_
CONF
start_gateway "$GW_PORT" "nginx + two mcpgate processes: the same upstream with a static header, and with none"

ALICE=$(mint --user alice --scope mcp:tools --resource "$GW_URL")
BOB=$(mint --user bob --scope mcp:tools --resource "$GW_URL")
for t in "$ALICE" "$BOB"; do case $t in ''|null) bail "tokens for alice and bob" "$(tail -n 5 "$T/idp.log")" ;; esac; done

jcheck "tools/list: the static section's tools; the section with no credentials left out (the upstream refused it)" \
	"$(rpc "$ALICE" tools/list '{}' | sed -n 2p | jq -c '{names: [.result.tools[]?.name]}')" \
	'(.names | index("f_whoami")) and ([.names[] | select(startswith("n_"))] | length) == 0'
jcheck "alice's f_whoami: the header's identity (carol), not alice" "$(whoami "$ALICE" f_whoami)" '.sub == "carol"'
jcheck "bob's f_whoami: the same identity" "$(whoami "$BOB" f_whoami)" '.sub == "carol"'
seen "$T/seen.json"
is "static: the only token the upstream accepted is the header's" \
	"$(jq -r '[.accepted[].token_sha256] | unique | join(" ")' "$T/seen.json")" "$(sha "$FIXED")"
jcheck "none: what the upstream refused carried no token at all" \
	"$(jq -c '{n: (.rejected | length), tokens: [.rejected[].token_sha256 | select(. != null)]}' "$T/seen.json")" \
	'.n >= 1 and .tokens == []'
is "no token the upstream was shown is alice's, bob's or carol's own" \
	"$(jq -r '[.accepted[], .rejected[]] | map(.token_sha256 // empty) | .[]' "$T/seen.json" |
		grep -c -e "$(sha "$ALICE")" -e "$(sha "$BOB")" -e "$(sha "$CAROL")")" 0
jcheck "/mcp/health names the upstream without credentials as down" "$(curl -s --max-time 5 "$GW_URL/health")" \
	'.status == "degraded" and ([.dependencies[] | select(.dependency == "upstream" and .name == "bare")][0].state == "down")'
is "no token in any log" "$(pieces_logged "$ALICE" "$BOB" "$CAROL" "$FIXED")" 0
tap_done
