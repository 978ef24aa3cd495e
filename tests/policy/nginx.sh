#!/usr/bin/env bash
# Per-caller tool catalogs end to end: two fixture upstreams (the same tools
# under the prefixes gh_ and fs_) behind nginx + spawn-fcgi + mcpgate, groups, tenants,
# a read-only tenant, an allow list and a deny rule, and real oidc-provider tokens
# (tests/idp) whose tenant, groups and scopes differ. For each of five caller profiles:
#
#  - tools/list (every page) is exactly the expected set, computed here from the
#    whole catalog by the rules written out once more in jq;
#  - tools/call of every tool of the catalog: 200 with the upstream's answer for each
#    listed tool, and for each other one the denial docs/ARCHITECTURE.md §4 names
#    (403 with its reason, or 403 insufficient_scope with WWW-Authenticate naming the
#    scopes to step up to), so list and call cannot drift;
#
#  - prompts/list, resources/list and resources/templates/list show the things of the
#    upstreams whose group the caller passes (steps 2 and 3), and prompts/get,
#    resources/read and completion/complete of the others get the same denials;
#  - a [group] whose prompts and resources globs grant records on their own (as CGI runs
#    of another configuration on the same state file): the lists hold exactly those,
#    gets and reads of them pass and of the others are refused, initialize announces
#    what they make reachable, and `mcpgate explain --json` lists exactly the same
#    prompts, resources and templates as visible (policy and explain agree);
#
# then a sixth caller whose tenant is not configured (403 tenant_forbidden on every
# /mcp request), and deny-style = hide (a denied tool answers exactly as a tool that
# does not exist), each tools/call decision in the audit log, with no arguments.
# Prints TAP. Env: MCPGATE_BIN.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq --node @modelcontextprotocol/sdk/package.json

# --- the upstreams, the authorization server, the gateway -----------------------------
for name in gh fs; do start_fixture "$name" --port 0 --name "$name"; done
for name in gh fs; do wait_fixture "$name" || bail "fixture $name started" "$(tail -n 5 "$T/$name.log")"; done
NGX_PORT=$(free_port)
NGX_URL=http://127.0.0.1:$NGX_PORT/mcp
start_idp "$NGX_URL"
gateway_conf "$T/gw.conf" "$NGX_URL"
cat >> "$T/gw.conf" <<CONF
page-size = 7
[upstream "gh"]
url = ${FIXTURE_URL[gh]}
prefix = gh_
group = github
[upstream "fs"]
url = ${FIXTURE_URL[fs]}
prefix = fs_
read-only-tools = fs_test_simple_text
[group "github"]
tools = gh_*
scopes = mcp:github
members = engineering
[group "admin"]
tools = *_test_error_handling
scopes = mcp:admin
members = ops
[tenant "acme"]
groups = github fs admin
deny = fs_slow
[tenant "beta"]
groups = fs
access-mode = read-only
[tenant "*"]
groups = fs
allow = fs_echo*
CONF
# [gateway] keys go before the first section: move page-size up; and the catalog is
# fetched once for the whole run (the reloads at the end must not wait for a refetch).
sed -i '/^page-size = 7$/d; s/^\[gateway\]$/[gateway]\npage-size = 7\ncatalog-ttl = 3600/' "$T/gw.conf"
if out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1); then
	pass "mcpgate -t accepts groups, tenants, a read-only tenant, allow and deny"
else
	bail "mcpgate -t accepts the configuration" "$out"
fi
if start_mcpgate_fcgi "$T/mcpgate.sock" "$T/gw.conf" 2 2 >> "$T/start.out" 2>&1 && start_nginx "$NGX_PORT" >> "$T/start.out" 2>&1; then
	pass "spawn-fcgi (2 x 2) + mcpgate behind nginx at $NGX_URL"
else
	bail "the gateway started" "$(tail -n 20 "$T/start.out")"
fi

declare -A tok=()
tok[P1]=$(mint --client machine-acme --scope "mcp:tools mcp:github mcp:admin" --resource "$NGX_URL")
tok[P2]=$(mint --client machine-acme --scope "mcp:tools" --resource "$NGX_URL")
tok[P3]=$(mint --client machine-beta --scope "mcp:tools" --resource "$NGX_URL")
tok[P4]=$(mint --client machine-none --scope "mcp:tools" --resource "$NGX_URL")
tok[P5]=$(mint --user bob --scope "mcp:tools mcp:github" --resource "$NGX_URL")
tok[P6]=$(mint --user eve --scope "mcp:tools" --resource "$NGX_URL")
for p in P1 P2 P3 P4 P5 P6; do
	[ -n "${tok[$p]}" ] && [ "${tok[$p]}" != null ] || bail "tokens for every profile" "$p: $(tail -n 5 "$T/idp.log")"
done
pass "tokens: machine-acme (acme; engineering, ops) with and without mcp:github mcp:admin, machine-beta (beta), machine-none (no tenant), bob (acme; sales), eve (tenant nosuch)"

# post TOKEN BODY: through nginx; headers in $T/h, body in $T/b; prints the status.
post() {
	curl -sS --max-time 20 -o "$T/b" -D "$T/h" -w '%{http_code}' -H 'Content-Type: application/json' \
		-H 'Accept: application/json' -H "Authorization: Bearer $1" --data-binary "$2" "$NGX_URL" 2>> "$T/curl.err"
}
# list TOKEN [METHOD FIELD]: every page of METHOD (tools/list), the FIELD (.tools[].name)
# of each record of its result: a sorted JSON array on stdout.
list() {
	local cursor='' i st params method=${2:-tools/list} field=${3:-.tools[].name}
	: > "$T/names"
	for i in $(seq 1 30); do
		params=$(jq -nc --arg c "$cursor" 'if $c == "" then {} else {cursor: $c} end')
		st=$(post "$1" "$(jq -nc --arg m "$method" --argjson p "$params" '{jsonrpc: "2.0", id: 1, method: $m, params: $p}')")
		[ "$st" = 200 ] || { echo "\"HTTP $st $(head -c 200 "$T/b" | tr -d '"\n')\""; return; }
		jq -r ".result$field" "$T/b" >> "$T/names"
		cursor=$(jq -r '.result.nextCursor // ""' "$T/b")
		[ -n "$cursor" ] || break
	done
	jq -R . "$T/names" | jq -sc 'sort'
}

# --- the whole catalog, and what each profile must see -------------------------------
# (a gateway with no policy would list it all; here the union of what the profiles see
# is taken from the upstreams' own tool names)
ALL=$(for n in gh fs; do
	curl -sS --max-time 10 -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		-D "$T/init.h" -o /dev/null --data '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' "${FIXTURE_URL[$n]}"
	sid=$(grep -i '^mcp-session-id:' "$T/init.h" | sed 's/^[^:]*: *//' | tr -d '\r')
	curl -sS --max-time 10 -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		-H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-11-25' \
		--data '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}' "${FIXTURE_URL[$n]}" |
		sed -n 's/^data: //p' | jq -r --arg p "${n}_" '.result.tools[]?.name | $p + .'
done | jq -R . | jq -sc 'sort')
jcheck "the catalog: the fixture's tools twice, as gh_* and fs_*" "$(jq -c '{n: length, gh: map(select(startswith("gh_"))) | length}' <<<"$ALL")" \
	'.n >= 30 and .gh * 2 == .n'
declare -A want=() deny=()
want[P1]=$(jq -c 'map(select(. != "fs_slow"))' <<<"$ALL")
want[P2]=$(jq -c 'map(select(startswith("fs_") and . != "fs_slow"))' <<<"$ALL")
want[P3]='["fs_test_simple_text"]'
want[P4]=$(jq -c 'map(select(startswith("fs_echo")))' <<<"$ALL")
want[P5]=$(jq -c 'map(select(startswith("fs_") and . != "fs_slow"))' <<<"$ALL")
# the denial each hidden tool must get: a jq expression of the tool's name (.)
deny[P1]='"tool_denied"'
deny[P2]='if startswith("gh_") then "insufficient_scope" else "tool_denied" end'
deny[P3]='if startswith("gh_") then "group_forbidden" else "read_only_mode" end'
deny[P4]='if startswith("gh_") then "group_forbidden" else "tool_denied" end'
deny[P5]='if startswith("gh_") then "group_forbidden" else "tool_denied" end'

for p in P1 P2 P3 P4 P5; do
	got=$(list "${tok[$p]}")
	jcheck "$p: tools/list is exactly its tools ($(jq length <<<"${want[$p]}") of $(jq length <<<"$ALL"))" \
		"$(jq -nc --argjson g "$got" --argjson w "${want[$p]}" '{same: ($g == $w), missing: ($w - $g), extra: ($g - $w)}')" '.same'
	bad=
	while read -r name; do
		st=$(post "${tok[$p]}" "$(jq -nc --arg n "$name" '{jsonrpc: "2.0", id: 7, method: "tools/call", params: {name: $n, arguments: {ms: 10}}}')")
		if jq -e --arg n "$name" 'index($n)' <<<"${want[$p]}" > /dev/null; then
			# listed: the gateway lets it through (the upstream's answer, whatever it is)
			if [ "$st" != 200 ] || jq -e '.error.code == -32003 or .error.message == "Unknown tool"' "$T/b" > /dev/null 2>&1; then
				bad="$bad $name:listed-but-$st"
			fi
		else
			reason=$(jq -r "$(printf '%s' "${deny[$p]}")" <<<"\"$name\"")
			got_reason=$(jq -r '.error // ""' "$T/b" 2>/dev/null)
			if [ "$st" != 403 ] || [ "$got_reason" != "$reason" ]; then
				bad="$bad $name:want-403-$reason-got-$st-$got_reason"
			elif [ "$reason" = insufficient_scope ] && ! grep -qi '^www-authenticate:.*error="insufficient_scope".*' "$T/h"; then
				bad="$bad $name:no-challenge"
			fi
		fi
	done < <(jq -r '.[]' <<<"$ALL")
	is "$p: tools/call of every catalog tool: listed ones pass, the others get their denial" "${bad:-none}" none
done

# --- prompts and resources: by the group of the upstream that offers them ----------------
# (steps 2 and 3 for the upstream's own group; allow, deny and read-only mode are about
# tools). gh's group "github" needs members engineering and mcp:github; fs's group is
# "fs" (no [group] section: listed is enough). The fixtures offer the same resource
# URIs: a caller who may reach either sees them, and reads them from one it may reach.
rpc() { jq -nc --arg m "$1" --argjson p "$2" '{jsonrpc: "2.0", id: 9, method: $m, params: $p}'; }
prompts=$(list "${tok[P1]}" prompts/list '.prompts[].name')
jcheck "P1 (acme engineer with mcp:github) sees the prompts of both upstreams" \
	"$(jq -c '{n: length, gh: map(select(startswith("gh_"))) | length, fs: map(select(startswith("fs_"))) | length}' <<<"${prompts:-null}")" \
	'.n >= 2 and .gh == .fs and .gh + .fs == .n'
resources=$(list "${tok[P1]}" resources/list '.resources[].uri')
templates=$(list "${tok[P1]}" resources/templates/list '.resourceTemplates[].uriTemplate')
jcheck "P1 sees the resources and templates" "$(jq -nc --argjson r "${resources:-null}" --argjson t "${templates:-null}" '{r: ($r | length), t: ($t | length), st: ($r | index("test://static-text"))}')" \
	'.r >= 1 and .t >= 1 and .st != null'
declare -A pwant=() rwant=() gh_denial=()
pwant[P1]=$prompts
rwant[P1]=$resources
for p in P2 P3 P4 P5; do pwant[$p]=$(jq -c 'map(select(startswith("fs_")))' <<<"$prompts"); rwant[$p]=$resources; done
gh_denial[P2]=insufficient_scope	# acme engineer without mcp:github: may step up
gh_denial[P3]=group_forbidden		# beta: its groups do not list github
gh_denial[P4]=group_forbidden		# no tenant claim: [tenant "*"] lists fs only
gh_denial[P5]=group_forbidden		# bob is not in engineering
for p in P1 P2 P3 P4 P5; do
	gp=$(list "${tok[$p]}" prompts/list '.prompts[].name')
	gr=$(list "${tok[$p]}" resources/list '.resources[].uri')
	gt=$(list "${tok[$p]}" resources/templates/list '.resourceTemplates[].uriTemplate' | jq length)
	jcheck "$p: prompts/list, resources/list and resources/templates/list are exactly its upstreams'" \
		"$(jq -nc --argjson gp "${gp:-null}" --argjson gr "${gr:-null}" --argjson gt "${gt:-null}" --argjson wp "${pwant[$p]}" --argjson wr "${rwant[$p]}" \
			'{prompts: ($gp == $wp), resources: ($gr == $wr), templates: (if ($wr | length) > 0 then $gt > 0 else $gt == 0 end), gp: $gp}')" \
		'.prompts and .resources and .templates'
	fs_st=$(post "${tok[$p]}" "$(rpc prompts/get '{"name":"fs_test_simple_prompt"}')")
	fs_ok=$(jq -c '.result.messages | length > 0' "$T/b" 2>/dev/null)
	gh_st=$(post "${tok[$p]}" "$(rpc prompts/get '{"name":"gh_test_simple_prompt"}')")
	gh_err=$(jq -r '.error // (.result.messages | length | tostring)' "$T/b" 2>/dev/null)
	gh_ch=$(grep -i '^www-authenticate:' "$T/h" | tr -d '\r')
	rd_st=$(post "${tok[$p]}" "$(rpc resources/read '{"uri":"test://static-text"}')")
	rd_err=$(jq -r '.error // (.result.contents | length | tostring)' "$T/b" 2>/dev/null)
	if [ "$p" = P1 ]; then
		jcheck "P1: prompts/get of both upstreams' prompts and resources/read: 200" \
			"$(jq -nc --arg a "$fs_st $fs_ok" --arg b "$gh_st $gh_err" --arg c "$rd_st $rd_err" '{a: $a, b: $b, c: $c}')" \
			'.a == "200 true" and (.b | test("^200 [1-9]")) and (.c | test("^200 [1-9]"))'
	else
		jcheck "$p: prompts/get fs_ 200, gh_test_simple_prompt 403 ${gh_denial[$p]}; resources/read of a URI both offer: 200 (from fs)" \
			"$(jq -nc --arg a "$fs_st $fs_ok" --arg b "$gh_st $gh_err" --arg c "$rd_st $rd_err" --arg ch "$gh_ch" '{a: $a, b: $b, c: $c, ch: $ch}')" \
			'.a == "200 true" and .b == "403 '"${gh_denial[$p]}"'" and (.c | test("^200 [1-9]"))'"$([ "$p" = P2 ] && printf '%s' ' and (.ch | test("error=\"insufficient_scope\"")) and (.ch | test("mcp:github"))')"
	fi
done
st=$(post "${tok[P3]}" "$(rpc completion/complete '{"ref":{"type":"ref/prompt","name":"gh_test_prompt_with_arguments"},"argument":{"name":"arg1","value":"x"}}')")
jcheck "P3: completion/complete for a gh_ prompt: 403 group_forbidden too" "$(jq -c --arg st "$st" '{st: $st, error}' "$T/b" 2>/dev/null)" \
	'.st == "403" and .error == "group_forbidden"'
a=$(grep '"audit":"prompts/get"' "$T/gw.log")
jcheck "prompts/get decisions are in the audit log with the upstream" \
	"$(jq -sc '{n: length, denied: (map(select(.allowed == false and .upstream == "gh")) | length), ok: (map(select(.allowed)) | length)}' <<<"$a")" \
	'.denied >= 4 and .ok >= 1'
a=$(grep '"audit":"resources/read"' "$T/gw.log")
jcheck "resources/read of the shared URI: P1 from gh (the first), the others from fs, never refused" \
	"$(jq -sc '{gh: (map(select(.upstream == "gh")) | length), fs: (map(select(.upstream == "fs")) | length), refused: (map(select(.allowed == false)) | length)}' <<<"$a")" \
	'.gh == 1 and .fs == 4 and .refused == 0'

st=$(post "${tok[P2]}" '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"gh_echo","arguments":{}}}')
ch=$(grep -i '^www-authenticate:' "$T/h" | tr -d '\r')
jcheck "P2: the step-up challenge names every scope the call needs (the granted mcp:tools and the missing mcp:github)" \
	"$(jq -nc --arg st "$st" --arg ch "$ch" '{status: $st, ch: $ch}')" \
	'.status == "403" and (.ch | test("scope=\"[^\"]*mcp:tools[^\"]*\"")) and (.ch | test("scope=\"[^\"]*mcp:github")) and (.ch | test("resource_metadata="))'
st=$(post "${tok[P2]}" '[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gh_echo","arguments":{}}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fs_echo","arguments":{"x":1}}}]')
jcheck "P2: in a batch, the denied element gets a JSON-RPC error and the other proceeds" \
	"$(jq -c --arg st "$st" '{status: $st, a: (.[] | select(.id == 1) | .error.code), b: (.[] | select(.id == 2) | .result.content[0].text)}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
	'.status == "200" and .a == -32003 and .b == "{\"x\":1}"'

for body in '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}' '{"jsonrpc":"2.0","id":1,"method":"ping"}'; do
	st=$(post "${tok[P6]}" "$body")
	jcheck "P6 (tenant nosuch): $(jq -r .method <<<"$body") → 403 tenant_forbidden" \
		"$(jq -c --arg st "$st" '{status: $st, error}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" '.status == "403" and .error == "tenant_forbidden"'
done

a=$(grep '"audit":"tools/call"' "$T/gw.log" | head -n 400)
jcheck "every tools/call decision is in the audit log (tenant, subject digest, client, tool, allowed, reason), without arguments" \
	"$(jq -sc '{n: length, denied: (map(select(.allowed == false)) | length), allowed: (map(select(.allowed)) | length),
		fields: (map(has("request_id") and has("tenant") and has("subject") and has("client_id") and has("tool")) | all),
		args: (map(tostring | test("\"ms\"|arguments")) | any)}' <<<"$a")" \
	'.n > 100 and .denied > 50 and .allowed > 30 and .fields and (.args | not)'

# --- mcpgate explain ---------------------------------------------------------------------
P2_CLAIMS='{"active":true,"client_id":"machine-acme","scope":"mcp:tools","tenant":"acme","groups":["engineering","ops"]}'
ex=$("$MCPGATE_BIN" explain -c "$T/gw.conf" --claims "$P2_CLAIMS" --json 2> "$T/explain.err")
jcheck "explain --json (P2's claims): the visible tools are exactly P2's tools/list" \
	"$(jq -c --argjson w "${want[P2]}" '{same: ((.visible | sort) == $w), n: (.visible | length), hidden: (.hidden | length)}' <<<"${ex:-null}")" \
	'.same and .hidden > 0'
jcheck "explain --json: each hidden tool has its step, reason and the rule's file:line" \
	"$(jq -c '[.hidden[] | select(.tool == "gh_echo" or .tool == "fs_slow")] | map({tool, step, reason, rule})' <<<"${ex:-null}")" \
	'(.[] | select(.tool == "gh_echo") | .step == 3 and .reason == "insufficient_scope" and (.rule | test("gw.conf:[0-9]+: \\[group \"github\"\\] scopes"))) and
	 (.[] | select(.tool == "fs_slow") | .step == 4 and .reason == "tool_denied" and (.rule | test("gw.conf:[0-9]+: \\[tenant \"acme\"\\] deny")))'
out=$("$MCPGATE_BIN" explain -c "$T/gw.conf" --claims "$P2_CLAIMS" --tool gh_echo 2>&1); rc=$?; out=$(tr "\n" " " <<<"$out")
like "explain --tool gh_echo (hidden): exit 2, the failing step and its line" "rc=$rc $out" \
	'rc=2 .*gh_echo: hidden at step 3 \(insufficient_scope\) by [^ ]*gw.conf:[0-9]+: \[group "github"\] scopes'
out=$("$MCPGATE_BIN" explain -c "$T/gw.conf" --claims "$P2_CLAIMS" --tool fs_echo 2>&1); rc=$?; out=$(tr "\n" " " <<<"$out")
like "explain --tool fs_echo (visible): exit 0, with its rate limits and their keys" "rc=$rc $out" \
	'rc=0 .*fs_echo: visible .*rate limits of a call.*tenant: .*keyed by tenant "acme".*tool: .*keyed by tool "fs_echo" within tenant "acme"'
out=$("$MCPGATE_BIN" explain -c "$T/gw.conf" --claims '{"tenant":"nosuch"}' 2>&1)
like "explain for an unknown tenant says every request is 403 tenant_forbidden" "$out" 'nosuch is not configured.*tenant_forbidden'
out=$("$MCPGATE_BIN" explain -c "$T/gw.conf" --claims 'not json' 2>&1); rc=$?
is "explain with claims that are not JSON: exit 1" "$rc" 1

# --- a group's own prompts and resources, as CGI on the same state file -------------------
# Tenant beta (P3) lists only [group "items"], which holds no tool, gh's one simple prompt
# and the resources under test://template/ — the upstreams' own groups listed by nobody
# in beta: every grant below is the group's globs'.
sed 's/^\[tenant "beta"\]$/[group "items"]\nprompts = gh_test_simple_prompt\nresources = test:\/\/template\/*\n[tenant "beta"]/' \
	"$T/gw.conf" | sed '/^\[tenant "beta"\]$/,/^\[/ s/^groups = fs$/groups = items/' > "$T/items.conf"
icgi() {	# icgi TOKEN BODY: one CGI run of items.conf; the status line and body on stdout
	printf '%s' "$2" | timeout -k 2 20 env -i PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 SERVER_PROTOCOL=HTTP/1.1 \
		SERVER_NAME=127.0.0.1 SERVER_PORT="$NGX_PORT" REMOTE_ADDR=127.0.0.1 REQUEST_METHOD=POST SCRIPT_NAME=/mcp \
		PATH_INFO= QUERY_STRING= HTTP_HOST="127.0.0.1:$NGX_PORT" HTTP_ACCEPT=application/json CONTENT_TYPE=application/json \
		CONTENT_LENGTH="$(printf '%s' "$2" | wc -c)" HTTP_AUTHORIZATION="Bearer $1" MCPGATE_CONFIG="$T/items.conf" "$MCPGATE_BIN" \
		> "$T/icgi.out" 2>> "$T/cgi.err"
	sed '1,/^\r$/d' "$T/icgi.out"
}
istatus() { sed -n 's/^Status: \([0-9]*\).*/\1/p' "$T/icgi.out" | head -n 1; }
if out=$("$MCPGATE_BIN" -t -c "$T/items.conf" 2>&1); then pass "items.conf: -t accepts [group] prompts and resources"; else fail "items.conf loads" "$out"; fi
ip=$(icgi "${tok[P3]}" "$(rpc prompts/list '{}')" | jq -c '[.result.prompts[].name] | sort')
ir=$(icgi "${tok[P3]}" "$(rpc resources/list '{}')" | jq -c '[.result.resources[].uri] | sort')
it=$(icgi "${tok[P3]}" "$(rpc resources/templates/list '{}')" | jq -c '[.result.resourceTemplates[].uriTemplate] | sort')
jcheck "P3 with [group \"items\"]: prompts/list is its one prompt; templates/list the test://template/ ones; resources/list none of test://static-*" \
	"$(jq -nc --argjson p "${ip:-null}" --argjson r "${ir:-null}" --argjson t "${it:-null}" '{p: $p, r: $r, t: $t}')" \
	'.p == ["gh_test_simple_prompt"] and (.t | length) >= 1 and all(.t[]; startswith("test://template/")) and all(.r[]; startswith("test://template/"))'
got=$(icgi "${tok[P3]}" "$(rpc prompts/get '{"name":"gh_test_simple_prompt"}')" | jq -c '.result.messages | length')
is "… prompts/get of the granted prompt: 200 with its messages" "$(istatus) $got" "200 1"
icgi "${tok[P3]}" "$(rpc prompts/get '{"name":"gh_test_prompt_with_arguments","arguments":{"arg1":"a","arg2":"b"}}')" > "$T/b"
is "… prompts/get of another prompt of gh: 403 group_forbidden" "$(istatus) $(jq -r .error "$T/b")" "403 group_forbidden"
got=$(icgi "${tok[P3]}" "$(rpc resources/read '{"uri":"test://template/7/data"}')" | jq -c '.result.contents | length')
is "… resources/read of a URI the template expands (test://template/*): 200" "$(istatus) $got" "200 1"
icgi "${tok[P3]}" "$(rpc resources/read '{"uri":"test://static-text"}')" > "$T/b"
is "… resources/read of test://static-text: 403 group_forbidden" "$(istatus) $(jq -r .error "$T/b")" "403 group_forbidden"
icgi "${tok[P3]}" "$(rpc tools/call '{"name":"fs_echo","arguments":{}}')" > "$T/b"
is "… a tool: no group beta lists holds it (403 group_forbidden)" "$(istatus) $(jq -r .error "$T/b")" "403 group_forbidden"
caps=$(icgi "${tok[P3]}" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' | jq -c '.result.capabilities | keys')
jcheck "… initialize announces prompts, resources, completions and logging (what the granted records make reachable)" \
	"${caps:-null}" 'index("prompts") != null and index("resources") != null and index("completions") != null and index("logging") != null'
P3_CLAIMS='{"active":true,"client_id":"machine-beta","scope":"mcp:tools","tenant":"beta","groups":["sales"]}'
ex=$("$MCPGATE_BIN" explain -c "$T/items.conf" --claims "$P3_CLAIMS" --json 2> "$T/explain.err")
jcheck "explain --json (P3's claims, items.conf): the visible prompts, resources and templates are exactly P3's lists" \
	"$(jq -c --argjson p "${ip:-null}" --argjson r "${ir:-null}" --argjson t "${it:-null}" \
		'{p: ((.prompts.visible | sort) == $p), r: ((.resources.visible | sort) == $r), t: ((.templates.visible | sort) == $t),
		  hidden: (.prompts.hidden | map(select(.prompt == "gh_test_prompt_with_arguments")) | .[0] | {step, reason})}' <<<"${ex:-null}")" \
	'.p and .r and .t and .hidden.step == 3 and .hidden.reason == "group_forbidden"'
a=$(grep '"prompt":"gh_test_simple_prompt"' "$T/gw.log" | grep '"tenant":"beta"')
jcheck "… its prompts/get decisions are audited by the prompt and its upstream" \
	"$(jq -sc 'map(select(.audit == "prompts/get")) | {n: length, ok: (map(select(.allowed and .upstream == "gh")) | length)}' <<<"$a")" \
	'.n >= 1 and .ok >= 1'

# --- deny-style = hide, as CGI on the same state file ----------------------------------
sed 's/^\[gateway\]$/[gateway]\ndeny-style = hide/' "$T/gw.conf" > "$T/hide.conf"
cgi() {	# cgi TOKEN BODY: one CGI run; the body of its answer on stdout
	printf '%s' "$2" | timeout -k 2 20 env -i PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 SERVER_PROTOCOL=HTTP/1.1 \
		SERVER_NAME=127.0.0.1 SERVER_PORT="$NGX_PORT" REMOTE_ADDR=127.0.0.1 REQUEST_METHOD=POST SCRIPT_NAME=/mcp \
		PATH_INFO= QUERY_STRING= HTTP_HOST="127.0.0.1:$NGX_PORT" HTTP_ACCEPT=application/json CONTENT_TYPE=application/json \
		CONTENT_LENGTH="$(printf '%s' "$2" | wc -c)" HTTP_AUTHORIZATION="Bearer $1" MCPGATE_CONFIG="$T/hide.conf" "$MCPGATE_BIN" 2>> "$T/cgi.err" |
		sed '1,/^\r$/d'
}
hidden=$(cgi "${tok[P3]}" '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fs_echo","arguments":{}}}')
none=$(cgi "${tok[P3]}" '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}')
jcheck "deny-style = hide (CGI): a denied tool answers exactly as one that does not exist (-32602 Unknown tool)" \
	"$(jq -nc --argjson h "${hidden:-null}" --argjson n "${none:-null}" '{same: ($h == $n), h: $h}')" \
	'.same and .h.error.code == -32602 and .h.error.message == "Unknown tool"'
hidden=$(cgi "${tok[P3]}" '{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"gh_test_simple_prompt"}}')
none=$(cgi "${tok[P3]}" '{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"no_such_prompt"}}')
jcheck "… and a prompt of an upstream it may not reach answers as one that does not exist" \
	"$(jq -nc --argjson h "${hidden:-null}" --argjson n "${none:-null}" '{p: ($h == $n), h: $h.error}')" \
	'.p and .h.message == "Unknown prompt"'
cgi_list=$(cgi "${tok[P3]}" '{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{}}')
jcheck "… and its tools/list (CGI) is the same as through nginx: P3 sees fs_test_simple_text only" \
	"$(jq -c '[.result.tools[].name]' <<<"${cgi_list:-null}")" '. == ["fs_test_simple_text"]'

# --- reloads: the policy changes, the catalog stays ------------------------------------------
# A new deny for acme, and a file for tenant "nosuch" (eve's) in an included directory, as a
# hosting panel writes them; each file replaced whole (mv). The running processes reload
# within a second or two; the catalog in the state file is not refetched meanwhile.
# until_list TOKEN JQ: tools/list of TOKEN until JQ holds of its names (60 s at most).
until_list() {
	local got end=$(( $(date +%s) + 60 ))
	while [ "$(date +%s)" -lt "$end" ]; do
		got=$(list "$1")
		jq -e "$2" <<<"$got" > /dev/null 2>&1 && { echo "$got"; return 0; }
		sleep 0.2
	done
	echo "$got"
	return 1
}
mkdir -p "$T/tenants.d"
sed 's/^deny = fs_slow$/deny = fs_slow fs_echo/; s/^\[tenant "\*"\]$/include = tenants.d\/*.conf\n[tenant "*"]/' "$T/gw.conf" > "$T/gw.conf.new"
mv "$T/gw.conf.new" "$T/gw.conf"
printf '[tenant "nosuch"]\ngroups = fs\nallow = fs_test_simple_text\n' > "$T/tenants.d/nosuch.conf.tmp"
mv "$T/tenants.d/nosuch.conf.tmp" "$T/tenants.d/nosuch.conf"
got=$(until_list "${tok[P1]}" 'index("fs_echo") | not')
jcheck "reload: acme's new deny takes fs_echo out of P1's tools/list (the catalog unchanged)" \
	"$(jq -c --argjson w "${want[P1]}" '{same_but_echo: (. == ($w - ["fs_echo"])), n: length}' <<<"${got:-null}")" '.same_but_echo'
st=$(post "${tok[P1]}" '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs_echo","arguments":{}}}')
calls=$(for _ in 1 2 3 4 5 6; do post "${tok[P1]}" '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs_echo","arguments":{}}}'; printf ' %s' "$(jq -r .error "$T/b" 2>/dev/null)"; echo; done | sort -u | tr '\n' ';')
is "… and every process refuses its call the same way (403 tool_denied: list and call agree after a reload)" "$st $calls" "403 403 tool_denied;"
got=$(until_list "${tok[P6]}" '. == ["fs_test_simple_text"]')
jcheck "reload: a tenant file added to an included directory lets eve's tenant in, with its own rules" \
	"$(jq -c . <<<"${got:-null}")" '. == ["fs_test_simple_text"]'

gone=
for pid in $MG_FCGI_PIDS; do mg_alive "$pid" || gone="$gone $pid"; done
is "the mcpgate processes survived the run" "${gone:-none}" none
tap_done
