#!/usr/bin/env bash
# tests/fed/isolation.sh — two callers never share an upstream session. One mcpgate
# process of one worker thread (so that every request lands on the same worker and its
# pool of upstream sessions) behind nginx, in front of the SDK fixture upstream with
# --notes: a stateful server that keeps a note per upstream session. Callers without a
# gateway session of their own (no initialize; the 2026-07-28 revision has none) are
# each carried on an upstream session of their own:
#
#  - tenant acme's caller keeps a note; tenant beta's caller, stateless too, and of the
#    2026-07-28 revision, reads none (not acme's);
#  - another person of the same tenant (alice, bob) reads none either;
#  - the first caller reads its own note back (its session is kept between requests);
#  - a log level one stateless caller sets (logging/setLevel) is its own: another's
#    call still streams the upstream's info messages;
#  - a caller with a gateway session (initialize) has its own upstream session, which
#    neither stateless caller sees;
#  - the upstream saw one session per caller and one for the gateway's catalog.
#
# Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq --node @modelcontextprotocol/sdk/package.json

# --- the upstream, the authorization server, the gateway ----------------------------------
fixture_and_idp up --port 0 --notes --name notes
gateway_conf "$T/gw.conf" "$GW_URL" "catalog-ttl = 3600" "workers = 1" "max-workers = 1"
printf '[upstream "notes"]\nurl = %s\n' "${FIXTURE_URL[up]}" >> "$T/gw.conf"
start_gateway "$GW_PORT" "nginx + one mcpgate process of one worker thread, in front of a stateful upstream" 1 1

ACME=$(mint_cc machine-acme)
BETA=$(mint_cc machine-beta)
ALICE=$(mint --user alice --scope mcp:tools --resource "$GW_URL")
BOB=$(mint --user bob --scope mcp:tools --resource "$GW_URL")
for t in "$ACME" "$BETA" "$ALICE" "$BOB"; do
	[ -n "$t" ] && [ "$t" != null ] || bail "tokens for machine-acme, machine-beta, alice and bob" "$(tail -n 5 "$T/idp.log")"
done

# call TOKEN TOOL ARGS [SESSION]: tools/call through nginx (2025-11-25); the tool's text.
call() {
	curl -s --max-time 30 -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		-H "Authorization: Bearer $1" ${4:+-H "Mcp-Session-Id: $4"} ${4:+-H 'MCP-Protocol-Version: 2025-11-25'} \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3}}" "$GW_URL" |
		sed -n 's/^data: //p; /^{/p' | jq -r '.result.content[0].text // .error.message // "?"'
}
# call_2026 TOKEN TOOL ARGS: the same in the 2026-07-28 revision (no session exists there).
call_2026() {
	curl -s --max-time 30 -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		-H "Authorization: Bearer $1" -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H "Mcp-Name: $2" \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3,\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}" "$GW_URL" |
		sed -n 's/^data: //p; /^{/p' | jq -r '.result.content[0].text // .error.message // "?"'
}

# --- stateless callers ---------------------------------------------------------------------
is "tenant acme's caller keeps a note (no gateway session)" "$(call "$ACME" note_put '{"text":"acme-ledger-7731"}')" kept
is "tenant beta's caller, 2026-07-28: no note (not acme's)" "$(call_2026 "$BETA" note_get '{}')" "(none)"
is "tenant beta's caller, 2025-11-25 without a session: no note" "$(call "$BETA" note_get '{}')" "(none)"
is "alice (tenant acme): no note" "$(call "$ALICE" note_get '{}')" "(none)"
is "alice keeps one" "$(call "$ALICE" note_put '{"text":"alice-draft"}')" kept
is "bob (tenant acme, another person): no note, not alice's" "$(call "$BOB" note_get '{}')" "(none)"
is "acme's caller reads its own note back" "$(call "$ACME" note_get '{}')" acme-ledger-7731
is "alice reads hers" "$(call_2026 "$ALICE" note_get '{}')" alice-draft

# --- log levels ----------------------------------------------------------------------------------
# logs TOKEN: the notifications/message a call of test_tool_with_logging streams (2025-11-25, no session)
logs() {
	curl -s --max-time 30 -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		-H "Authorization: Bearer $1" \
		--data-binary '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_tool_with_logging","arguments":{}}}' "$GW_URL" |
		grep -c '"method":"notifications/message"'
}
is "before any level is set, beta's call streams the tool's 3 info messages" "$(logs "$BETA")" 3
out=$(curl -s --max-time 30 -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	-H "Authorization: Bearer $ACME" --data-binary '{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"emergency"}}' "$GW_URL" |
	sed -n 's/^data: //p; /^{/p')
jcheck "acme's caller sets its level to emergency (no session)" "$out" '.result == {}'
is "… its own call streams none" "$(logs "$ACME")" 0
is "… beta's call still streams 3 (the level was acme's alone)" "$(logs "$BETA")" 3

# --- a caller with a gateway session ---------------------------------------------------------
curl -s --max-time 30 -D "$T/init.h" -o "$T/init.b" -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' -H "Authorization: Bearer $BETA" \
	--data-binary '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	"$GW_URL"
SID=$(tr -d '\r' < "$T/init.h" | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
[ -n "$SID" ] || bail "a gateway session for beta's caller" "$(cat "$T/init.b")"
is "beta's caller, in its session: no note" "$(call "$BETA" note_get '{}' "$SID")" "(none)"
is "… keeps one there" "$(call "$BETA" note_put '{"text":"beta-session-note"}' "$SID")" kept
is "… and reads it back" "$(call "$BETA" note_get '{}' "$SID")" beta-session-note
is "beta's caller without the session: not the session's note" "$(call "$BETA" note_get '{}')" "(none)"
is "acme's caller: still its own" "$(call "$ACME" note_get '{}')" acme-ledger-7731

# --- what the upstream saw -------------------------------------------------------------------
# the catalog's (the gateway's own), acme, beta, alice, bob, beta's gateway session
n=$(grep -c 'session .* opened' "$T/up.log")
is "the upstream opened one session per caller, one for the gateway session and one for the catalog" "$n" 6
tap_done
