#!/usr/bin/env bash
# tests/fed/per-caller.sh — an upstream whose lists vary by person, reached as the caller
# (credentials = exchange) with catalog = per-caller: each caller's catalog holds what
# that upstream lists for that caller, never what it lists for another. The SDK fixture
# upstream with --require-bearer --per-subject (besides its tools, mine_<sub> for the
# verified token's subject alone), beside a plain fixture every caller shares. Through
# nginx + two mcpgate processes (two workers each), and as CGI:
#
#  - alice's list has her own tool and the shared upstream's, bob's his own, neither the
#    other's, however their requests interleave over the workers;
#  - a call of another caller's tool is refused by the gateway (not in that caller's
#    catalog) and never reaches the upstream; one's own is served;
#  - a caller's catalog is kept per worker for catalog-ttl: many lists, at most one
#    fetch per worker;
#  - a caller whose token for the upstream cannot be had (the exchange grant failing)
#    lists the shared upstream's tools and none of that one's; a caller whose catalog is
#    kept meanwhile is served as before;
#  - as CGI (nothing kept between runs): the same catalogs;
#  - the configuration refuses catalog = per-caller where it cannot hold (no caller's
#    credentials), naming file:line.
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
PLAIN_PORT=$(free_port)
GW_PORT=$(free_port)
GW_URL=http://127.0.0.1:$GW_PORT/mcp
start_idp "$GW_URL" "$UP_URL"
start_fixture up --port "$UP_PORT" --name up --require-bearer "$IDP" --resource "$UP_URL" --per-subject
start_fixture plain --port "$PLAIN_PORT" --name plain
wait_fixture up || bail "the fixture upstream (--require-bearer --per-subject) started" "$(tail -n 5 "$T/up.log")"
wait_fixture plain || bail "the plain fixture upstream started" "$(tail -n 5 "$T/plain.log")"

(umask 077 && printf 'gateway-exchange-secret\n' > "$T/exchange-secret")
gateway_conf "$T/gw.conf" "$GW_URL" "catalog-ttl = 3600"
cat >> "$T/gw.conf" <<CONF
[upstream "mine"]
url = $UP_URL
prefix = m_
credentials = exchange
client-id = gateway-exchange
client-secret-file = $T/exchange-secret
catalog = per-caller
[upstream "plain"]
url = ${FIXTURE_URL[plain]}
prefix = p_
CONF
start_gateway "$GW_PORT" "nginx + two mcpgate processes: an upstream listed per caller, and one shared"

ALICE=$(mint --user alice --scope mcp:tools --resource "$GW_URL")
BOB=$(mint --user bob --scope mcp:tools --resource "$GW_URL")
DAVE=$(mint --user dave --scope mcp:tools --resource "$GW_URL")
for t in "$ALICE" "$BOB" "$DAVE"; do
	[ -n "$t" ] && [ "$t" != null ] || bail "tokens for alice, bob and dave" "$(tail -n 5 "$T/idp.log")"
done

names() { rpc "$1" tools/list '{}' | sed -n 2p | jq -c '[.result.tools[]?.name]'; }

jcheck "alice's list: her own tool, the upstream's others, and the shared upstream's" "$(names "$ALICE")" \
	'index("m_mine_alice") and index("m_whoami") and index("p_echo") and (index("m_mine_bob") | not)'
jcheck "bob's list: his own tool, not alice's" "$(names "$BOB")" \
	'index("m_mine_bob") and index("p_echo") and (index("m_mine_alice") | not)'

# Interleaved over the four workers: each list is its caller's, whoever asked before.
bad=0
for i in 1 2 3 4 5 6; do
	a=$(names "$ALICE")
	b=$(names "$BOB")
	jq -e 'index("m_mine_alice") and (index("m_mine_bob") | not)' <<<"$a" > /dev/null || bad=$((bad + 1))
	jq -e 'index("m_mine_bob") and (index("m_mine_alice") | not)' <<<"$b" > /dev/null || bad=$((bad + 1))
done
is "twelve lists interleaved: each caller's own every time" "$bad" 0
seen "$T/seen.json"
jcheck "… fetched at most once per worker and caller (four workers), not once per list" \
	"$(jq -c '{alice: [.accepted[] | select(.method == "tools/list" and .sub == "alice")] | length,
		bob: [.accepted[] | select(.method == "tools/list" and .sub == "bob")] | length}' "$T/seen.json")" \
	'.alice >= 1 and .alice <= 4 and .bob >= 1 and .bob <= 4'

out=$(rpc "$BOB" tools/call '{"name":"m_mine_alice","arguments":{}}')
jcheck "bob calling alice's tool: refused by the gateway (not in his catalog)" \
	"$(sed -n 2p <<<"$out" | jq -c '{error, result}')" '.error != null and .result == null'
seen "$T/seen2.json"
is "… and nothing of it reached the upstream" \
	"$(jq '[.accepted[], .rejected[] | select(.method == "tools/call")] | length' "$T/seen2.json")" 0
jcheck "alice calling her own tool: served, as alice" \
	"$(rpc "$ALICE" tools/call '{"name":"m_mine_alice","arguments":{}}' | sed -n 2p)" \
	'.result.content[0].text == "alice'"'"'s own tool"'
jcheck "bob's whoami through that upstream: bob" "$(whoami "$BOB" m_whoami)" '.sub == "bob"'

# --- a caller whose token for the upstream cannot be had ------------------------------------
curl -s --max-time 5 -X POST -H 'Content-Type: application/json' -d '{"exchange":"500"}' "$IDP/_fault/exchange" > /dev/null
jcheck "the exchange grant failing: dave lists the shared upstream's tools and none of that one's" \
	"$(names "$DAVE")" 'index("p_echo") and ([.[] | select(startswith("m_"))] | length) == 0'
bad=0
for i in 1 2 3 4; do
	names "$ALICE" | jq -e 'index("m_mine_alice")' > /dev/null || bad=$((bad + 1))
done
is "… while alice, her catalog kept, lists her own tool as before" "$bad" 0
curl -s --max-time 5 -X POST -H 'Content-Type: application/json' -d '{"exchange":"none"}' "$IDP/_fault/exchange" > /dev/null
dave_listed() { names "$DAVE" | jq -e 'index("m_mine_dave")' > /dev/null; }
# dave's catalog was kept for a moment only (it lacked an upstream): soon his own again.
r=no
wait_until 60 dave_listed && r=yes
is "the grant back: dave lists his own tool" "$r" yes

# --- as CGI --------------------------------------------------------------------------------------
cgi_names() { cgi_rpc "$T/gw.conf" "$1" tools/list '{}' | jq -c '[.result.tools[]?.name]'; }
jcheck "CGI: alice's list has her own tool, not bob's" "$(cgi_names "$ALICE")" \
	'index("m_mine_alice") and index("p_echo") and (index("m_mine_bob") | not)'
jcheck "CGI: bob's list has his own tool, not alice's" "$(cgi_names "$BOB")" \
	'index("m_mine_bob") and (index("m_mine_alice") | not)'

# --- where it cannot hold ---------------------------------------------------------------------------
cp "$T/gw.conf" "$T/bad.conf"
cat >> "$T/bad.conf" <<CONF
[upstream "nocred"]
url = ${FIXTURE_URL[plain]}
prefix = q_
catalog = per-caller
CONF
out=$("$MCPGATE_BIN" -t -c "$T/bad.conf" 2>&1)
like "mcpgate -t: catalog = per-caller on an upstream not reached as the caller is refused at its line" \
	"$out" "bad.conf:$(grep -n '^catalog = per-caller$' "$T/bad.conf" | tail -1 | cut -d: -f1): catalog = per-caller: for an upstream reached as the caller"
is "no token in any log" "$(pieces_logged "$ALICE" "$BOB" "$DAVE")" 0
tap_done
