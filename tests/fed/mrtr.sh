#!/usr/bin/env bash
# tests/fed/mrtr.sh — an upstream's input_required (2026-07-28, SEP-2322) through the
# gateway, and what a caller can do with the requestState it gets. Two fixture upstreams
# that speak 2026-07-28 (tests/upstream/fixture.mjs --modern-only), a (prefix a_) and b
# (prefix b_), behind nginx + spawn-fcgi + mcpgate; two callers (machine-acme,
# machine-beta, one policy group for both: every tool and prompt, every resource but
# test://static-binary):
#
#  - the upstream's input_required reaches the caller as the upstream wrote it but for
#    its requestState, which is the gateway's (SEAL.STATE: the upstream's state after
#    the seal); the retry with the answers gets the upstream's complete result;
#  - the same state sent by the other caller, aimed at b's tool, altered (ours or the
#    upstream's part), or with our seal dropped: -32602, and the upstream never sees
#    the call (its /_traffic);
#  - multi-round: each round's state is the gateway's, the last round completes;
#  - the gateway spoke 2026-07-28 to both (no initialize, no session; /mcp/health says
#    which revision), and the client capabilities the caller declared reached the
#    upstream (a capability it lacks: the upstream's -32021, HTTP 400, its data kept);
#  - a 2026-07-28 caller of a 2025-11-25 upstream (c, prefix c_) that wants sampling:
#    the upstream's answer for a client without that capability (the gateway declares
#    none on the caller's behalf there: nobody could answer), never a hang;
#  - subscriptions/listen: the acknowledgement first (only what will come: a URI no
#    upstream of 2026-07-28 owns is left out), a's resource update relayed, a's tool
#    list change making the gateway fetch its catalog and tell its own list changed, a
#    listen for prompts alone hearing nothing of tools; a resource of c (2025-11-25)
#    listened to on a session of the listen's own there; one caller's listens at once
#    bounded (4 on the host, whichever process holds them); server/discover says so;
#  - caching hints: a relayed resources/read is private (the upstream's public is its
#    answer to this caller through the policy), a list private with ttlMs 0;
#  - the official SDK client (1.32.2, 2025-11-25) declaring elicitation, sampling and
#    roots calls a's input-required tools: the gateway asks it on the call's stream
#    (one question, several, two rounds), takes its answers (POSTed to either of the two
#    mcpgate processes) and retries a: the upstream's result; one that declared nothing
#    gets an error naming the capability;
#    with a Redis store the answers wait there (sealed), taken once;
#  - a 2025-11-25 caller calling an input-required tool gets a JSON-RPC error, not a
#    result of a revision it does not speak (the upstreams refuse initialize: its calls
#    go statelessly, with no capability declared for it);
#  - a 2025-11-25 session's logging/setLevel: kept by the gateway for a and b (their
#    revision removed the method) and asked of them in each request's _meta, sent to c;
#    a bad level refused; with Redis kept there too, and Redis's word read first;
#  - a 2025-11-25 session's resources/subscribe at a: kept by the gateway, its standalone
#    stream listening at a, the update told in its revision; with Redis kept there.
#
# Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq redis-server:redis-server redis-cli:redis-tools \
	--node @modelcontextprotocol/sdk/package.json

start_fixture a --port 0 --modern-only --name a
start_fixture b --port 0 --modern-only --name b
start_fixture c --port 0 --name c --announce --watched-uri test://c-watched
MG_PORT=$(free_port)
URL=http://127.0.0.1:$MG_PORT/mcp
start_idp "$URL"
wait_fixture a || bail "fixture a started" "$(tail -n 5 "$T/a.log")"
wait_fixture b || bail "fixture b started" "$(tail -n 5 "$T/b.log")"
wait_fixture c || bail "fixture c started" "$(tail -n 5 "$T/c.log")"
(umask 077 && head -c 32 /dev/urandom > "$T/session.key")	# (a Redis store, below, needs one)
gateway_conf "$T/gw.conf" "$URL" "page-size = 1000" "session-key-file = $T/session.key"
cat >> "$T/gw.conf" <<CONF
[upstream "a"]
url = ${FIXTURE_URL[a]}
prefix = a_
[upstream "b"]
url = ${FIXTURE_URL[b]}
prefix = b_
[upstream "c"]
url = ${FIXTURE_URL[c]}
prefix = c_
[group "all"]
tools = *
prompts = *
resources = test://static-text test://watched-resource test://c-watched test://template/*
[tenant "acme"]
groups = all
[tenant "beta"]
groups = all
[tenant "*"]
groups = all
CONF
start_gateway "$MG_PORT" "nginx + spawn-fcgi (2 x 6 threads: listen streams hold one each) + mcpgate in front of a and b, two upstreams of 2026-07-28, and c, of 2025-11-25" 2 6
ACME=$(mint_cc machine-acme)
BETA=$(mint_cc machine-beta)
if [ -z "$ACME" ] || [ "$ACME" = null ] || [ -z "$BETA" ] || [ "$BETA" = null ]; then
	bail "two tokens" "$(tail -n 5 "$T/idp.log")"
fi

# post TOKEN METHOD PARAMS [NAME]: a 2026-07-28 request through nginx; "STATUS BODY".
CAPS='{"elicitation":{},"sampling":{},"roots":{}}'
post() {
	local token=$1 method=$2 params=$3 name=${4:-} body
	body=$(jq -cn --arg m "$method" --argjson p "$params" --argjson caps "$CAPS" \
		'{jsonrpc: "2.0", id: 7, method: $m, params: ($p + {_meta: (($p._meta // {}) + {
			"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": $caps})})}')
	curl -s --max-time 60 -w '\n%{http_code}' -H 'Content-Type: application/json' -H 'Accept: application/json' \
		-H "Authorization: Bearer $token" -H 'MCP-Protocol-Version: 2026-07-28' -H "Mcp-Method: $method" \
		${name:+-H "Mcp-Name: $name"} --data-binary "$body" "$URL" | { read -r -d '' all; printf '%s %s' "${all##*$'\n'}" "${all%$'\n'*}"; }
}
call() { post "$1" tools/call "$(jq -cn --arg n "$2" --argjson a "${3:-{\}}" --argjson x "${4:-{\}}" '{name: $n, arguments: $a} + $x')" "$2"; }
body() { printf '%s' "${1#* }"; }
status() { printf '%s' "${1%% *}"; }
tool_calls() { curl -s --max-time 10 "${FIXTURE_URL[$1]%/mcp}/_traffic" | jq '.byMethod["tools/call"] // 0'; }

# --- relayed, then answered ------------------------------------------------------------------
res=$(call "$ACME" a_test_input_required_result_elicitation)
b1=$(body "$res")
jcheck "a's input_required reaches the caller: resultType, one elicitation/create input request" "$b1" \
	'.result.resultType == "input_required" and (.result.inputRequests | length) == 1 and
	 ([.result.inputRequests[] | .method] == ["elicitation/create"]) and (.result.requestState | type) == "string"'
STATE=$(jq -r '.result.requestState' <<<"$b1")
KEY=$(jq -r '.result.inputRequests | keys[0]' <<<"$b1")
like "… the upstream gave no requestState: the gateway's is a seal alone" "$STATE" '^[A-Za-z0-9_-]{60,}$'
ANSWER=$(jq -cn --arg k "$KEY" --arg s "$STATE" '{inputResponses: {($k): {action: "accept", content: {name: "alice"}}}, requestState: $s}')
res=$(call "$ACME" a_test_input_required_result_elicitation '{}' "$ANSWER")
jcheck "the retry with the answer: the upstream's complete result" "$(body "$res")" \
	'.result.resultType == "complete" and (.result.content | length) > 0'

# A tool whose upstream keeps its own requestState.
b1=$(body "$(call "$ACME" a_test_input_required_result_request_state)")
SSTATE=$(jq -r '.result.requestState' <<<"$b1")
like "an upstream's own requestState: the gateway's is a seal, then the upstream's as it wrote it" "$SSTATE" \
	'^[A-Za-z0-9_-]{60,}\..'
SANSWER=$(jq -c '{inputResponses: (.result.inputRequests | with_entries(.value = {action: "accept", content: {}})),
	requestState: .result.requestState}' <<<"$b1")
jcheck "… the retry gets the upstream's complete result (its own state went back to it)" \
	"$(body "$(call "$ACME" a_test_input_required_result_request_state '{}' "$SANSWER")")" '.result.resultType == "complete"'

# --- what a caller cannot do with it ---------------------------------------------------------------
# refused DESC TOKEN TOOL EXTRA UPSTREAM: -32602, and UPSTREAM saw no call.
refused() {
	local before after res
	before=$(tool_calls "$5")
	res=$(call "$2" "$3" '{}' "$4")
	after=$(tool_calls "$5")
	jcheck "$1: -32602, and upstream $5 never saw the call" "{\"r\":$(body "$res"),\"n\":$((after - before))}" \
		'.r.error.code == -32602 and .n == 0'
}
refused "alice's state sent by another caller" "$BETA" a_test_input_required_result_elicitation "$ANSWER" a
refused "the state aimed at b's tool of the same name" "$ACME" b_test_input_required_result_elicitation "$ANSWER" b
refused "the state altered (a suffix, as the suite's tampering does)" "$ACME" a_test_input_required_result_elicitation \
	"$(jq -c '.requestState += "-TAMPERED"' <<<"$ANSWER")" a
refused "the upstream's own state alone (our seal dropped)" "$ACME" a_test_input_required_result_request_state \
	"$(jq -c '.requestState |= sub("^[^.]*\\."; "")' <<<"$SANSWER")" a
refused "the upstream's own state altered behind our seal" "$ACME" a_test_input_required_result_request_state \
	"$(jq -c '.requestState += "x"' <<<"$SANSWER")" a
refused "a requestState that is not a string" "$ACME" a_test_input_required_result_elicitation \
	"$(jq -c '.requestState = 5' <<<"$ANSWER")" a

# --- several rounds ------------------------------------------------------------------------------
res=$(call "$ACME" a_test_input_required_result_multi_round)
b1=$(body "$res")
rounds=0
while [ "$(jq -r '.result.resultType' <<<"$b1")" = input_required ] && [ "$rounds" -lt 5 ]; do
	rounds=$((rounds + 1))
	ans=$(jq -c '{inputResponses: (.result.inputRequests | with_entries(.value = (if .value.method == "elicitation/create"
		then {action: "accept", content: {}} elif .value.method == "sampling/createMessage"
		then {role: "assistant", content: {type: "text", text: "ok"}, model: "m"} else {roots: []} end))),
		requestState: .result.requestState}' <<<"$b1")
	like "multi-round: round $rounds's state is the gateway's" "$(jq -r .requestState <<<"$ans")" '^[A-Za-z0-9_-]{60,}(\.|$)'
	b1=$(body "$(call "$ACME" a_test_input_required_result_multi_round '{}' "$ans")")
done
jcheck "multi-round: complete after $rounds rounds (more than one)" "{\"r\":$b1,\"n\":$rounds}" \
	'.r.result.resultType == "complete" and .n >= 2'

# --- the revision spoken, the capabilities declared -------------------------------------------
CAPS='{}'
res=$(call "$ACME" a_test_missing_capability)
jcheck "a capability the caller did not declare: the upstream's -32021 with HTTP 400, its data kept" \
	"{\"s\":$(status "$res"),\"r\":$(body "$res")}" '.s == 400 and .r.error.code == -32021 and (.r.error.data.requiredCapabilities | type) == "object"'
CAPS='{"elicitation":{},"sampling":{},"roots":{}}'
for u in a b; do
	# (an initialize is the catalog's asking what it offers older callers: refused here)
	jcheck "upstream $u was spoken to in 2026-07-28: discovered, every request stateless, no session, no GET" \
		"$(curl -s --max-time 10 "${FIXTURE_URL[$u]%/mcp}/_traffic")" \
		'.sessionsOpened == 0 and .gets == 0 and .byMethod["server/discover"] >= 1 and .byRevision.legacy == 0'
done
# (from the answering worker's copy of the catalog: a thread that has served no request
# yet has none, and says nothing of revisions)
HEALTH_WANT='[.dependencies[] | select(.dependency == "upstream") | .protocolVersion] == ["2026-07-28", "2026-07-28", "2025-11-25"]'
health_says() { curl -s --max-time 10 "${URL%/mcp}/mcp/health" > "$T/health.json"; jq -e "$HEALTH_WANT" "$T/health.json" > /dev/null 2>&1; }
wait_until 30 health_says || true
jcheck "/mcp/health names the revision the gateway speaks to each" "$(cat "$T/health.json")" "$HEALTH_WANT"

# --- subscriptions/listen -----------------------------------------------------------------------
# listen ID FILTER SECONDS: a 2026-07-28 caller's listen stream, read for SECONDS into
# $T/listen.ID (its events' data, one a line; a JSON answer instead), in the background.
listen() {
	local body
	body=$(jq -cn --argjson id "$1" --argjson f "$2" '{jsonrpc: "2.0", id: $id, method: "subscriptions/listen",
		params: {notifications: $f, _meta: {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": {}}}}')
	curl -sN --max-time "$3" -H 'Content-Type: application/json' -H 'Accept: text/event-stream' \
		-H "Authorization: Bearer $ACME" -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: subscriptions/listen' \
		--data-binary "$body" "$URL" 2>/dev/null | sed -un -e 's/^data: //p;t' -e '/^{/p' > "$T/listen.$1" &
	LISTEN_PID[$1]=$!
}
declare -A LISTEN_PID=()
acked() { grep -q 'subscriptions/acknowledged' "$T/listen.$1" 2>/dev/null; }
heard() { grep -q "$2" "$T/listen.$1" 2>/dev/null; }
listen 41 '{"toolsListChanged":true,"resourceSubscriptions":["test://watched-resource","test://not-offered"]}' 15
wait_until 15 acked 41 || fail "listen: acknowledged" "$(cat "$T/listen.41")"
jcheck "listen: the acknowledgement first, tagged with the request's id, naming what will come (the URI an upstream of 2026-07-28 owns, not one nobody offers)" \
	"$(head -n 1 "$T/listen.41")" '.method == "notifications/subscriptions/acknowledged" and
	 .params._meta["io.modelcontextprotocol/subscriptionId"] == 41 and .params.notifications.toolsListChanged == true and
	 .params.notifications.resourceSubscriptions == ["test://watched-resource"]'
call "$ACME" a_update_watched_resource > /dev/null
wait_until 15 heard 41 'resources/updated' || true
jcheck "… the upstream's resource changed: notifications/resources/updated, tagged" \
	"$(grep 'resources/updated' "$T/listen.41" | head -n 1)" \
	'.params.uri == "test://watched-resource" and .params._meta["io.modelcontextprotocol/subscriptionId"] == 41'
call "$ACME" a_test_trigger_tool_change > /dev/null
wait_until 15 heard 41 'tools/list_changed' || true
jcheck "… an upstream's tool list changed: the gateway's catalog fetched again, notifications/tools/list_changed" \
	"$(grep 'tools/list_changed' "$T/listen.41" | head -n 1)" '.params._meta["io.modelcontextprotocol/subscriptionId"] == 41'
jcheck "… and its tools/list has the new tool" "$(body "$(post "$ACME" tools/list '{}')")" \
	'[.result.tools[].name] | any(test("^a_test_changed_"))'
listen 42 '{"promptsListChanged":true}' 10
wait_until 15 acked 42 || fail "listen: acknowledged" "$(cat "$T/listen.42")"
call "$ACME" a_test_trigger_tool_change > /dev/null
call "$ACME" a_test_trigger_prompt_change > /dev/null
wait_until 15 heard 42 'prompts/list_changed' || true
jcheck "a listen for prompts alone: its prompts/list_changed, no tools/list_changed" \
	"$(jq -sc '[.[].method]' "$T/listen.42")" 'index("notifications/prompts/list_changed") != null and
	 index("notifications/tools/list_changed") == null'
# A resource of c, of 2025-11-25 (which has no subscriptions/listen): the listen opens a
# session of its own there, subscribes on it, reads its GET stream, and ends it after.
c_deletes() { curl -s --max-time 10 "${FIXTURE_URL[c]%/mcp}/_traffic" | jq '.deletes // 0'; }
more_deletes() { [ "$(c_deletes)" -gt "$1" ]; }
d0=$(c_deletes)
listen 43 '{"resourceSubscriptions":["test://c-watched"]}' 8
wait_until 15 acked 43 || fail "listen: acknowledged" "$(cat "$T/listen.43")"
jcheck "a listen for a resource of c, of 2025-11-25: acknowledged, naming it" \
	"$(head -n 1 "$T/listen.43")" '.params.notifications.resourceSubscriptions == ["test://c-watched"]'
call "$ACME" c_update_watched_resource > /dev/null
wait_until 15 heard 43 'resources/updated' || true
jcheck "… c's update (on the listen's own session there) relayed, tagged" \
	"$(grep 'resources/updated' "$T/listen.43" | head -n 1)" \
	'.params.uri == "test://c-watched" and .params._meta["io.modelcontextprotocol/subscriptionId"] == 43'
wait "${LISTEN_PID[43]}"
wait_until 20 more_deletes "$d0" || true
is "… that session ended with the listen (a DELETE at c)" "$([ "$(c_deletes)" -gt "$d0" ] && echo ended)" ended
# One caller holds at most 4 listens at once on the host, whichever of the 2 processes
# (5 stream slots each here) takes them: of 9 at once, 4 at most are acknowledged, the
# others refused (-32029), and nothing else goes wrong.
wait "${LISTEN_PID[41]}" "${LISTEN_PID[42]}"	# (their time is up: none of the caller's is open)
for i in 51 52 53 54 55 56 57 58 59; do listen "$i" '{"toolsListChanged":true}' 8; done
settled() { local i; for i in 51 52 53 54 55 56 57 58 59; do [ -s "$T/listen.$i" ] || return 1; done; }
wait_until 20 settled || true
jcheck "one caller's listens at once: at most 4 on the host (of two processes), the others refused with -32029" \
	"$(cat "$T"/listen.5[1-9] | jq -sc '{acks: map(select(.method == "notifications/subscriptions/acknowledged")) | length,
	 refused: map(select(.error.code == -32029)) | length, n: length}')" '.acks >= 1 and .acks <= 4 and .acks + .refused == 9'

res=$(post "$ACME" server/discover '{}')
jcheck "server/discover for 2026-07-28: listChanged on the gateway's lists, resources.subscribe (an upstream of 2026-07-28 offers it)" \
	"$(body "$res")" '.result.capabilities.tools.listChanged == true and .result.capabilities.resources.subscribe == true'

# --- caching hints -----------------------------------------------------------------------------------
res=$(post "$ACME" resources/read '{"uri":"test://static-text"}' test://static-text)
jcheck "resources/read: the upstream's public cacheScope is private through the gateway (the caller's answer)" \
	"$(body "$res")" '.result.cacheScope == "private" and (.result.contents | length) > 0'
res=$(post "$ACME" tools/list '{}')
jcheck "tools/list: a list filtered for the caller, private, ttlMs 0" "$(body "$res")" \
	'.result.cacheScope == "private" and .result.ttlMs == 0 and (.result.tools | length) > 0'

# --- an older upstream ------------------------------------------------------------------------
# A 2026-07-28 caller has no stream for the upstream's requests: its session there (the
# gateway's, for that caller alone) declares no client capability, whatever the caller
# declared, so the upstream asks nothing of it (or is declined, -32601, if it asks).
res=$(call "$ACME" c_test_sampling '{"prompt":"hi"}')
jcheck "a 2026-07-28 caller at a 2025-11-25 upstream's sampling tool: the upstream's own answer for a client without sampling, at once" \
	"$(body "$res")" '(.result.isError == true or .error != null) and (.result.resultType // "complete") != "input_required"'
jcheck "… and that upstream was called with a session (its revision), stateless requests none" \
	"$(curl -s --max-time 10 "${FIXTURE_URL[c]%/mcp}/_traffic")" '.sessionsOpened >= 1 and (.byRevision["2026-07-28"] // 0) == 0'

# --- an older caller's log level ---------------------------------------------------------------
# logging/setLevel of a 2025-11-25 session: the revision of a and b removed the method,
# so the gateway keeps the level for the session (the state file both processes share)
# and asks a for it in each request's _meta; a sends its log messages on the call's
# stream at and above it. c, of 2025-11-25, gets the method itself on the caller's
# session there.
LH=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -H "Authorization: Bearer $ACME")
# legacy_session: a 2025-11-25 session's id
legacy_session() {
	curl -s -D - -o /dev/null --max-time 30 "${LH[@]}" --data-binary \
		'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
		"$URL" | tr -d '\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p'
}
# lpost SID METHOD PARAMS: a request of that session; its answer (JSON, or the event
# stream's data lines)
lpost() {
	curl -s --max-time 30 "${LH[@]}" -H "Mcp-Session-Id: $1" -H 'MCP-Protocol-Version: 2025-11-25' --data-binary \
		"$(jq -cn --arg m "$2" --argjson p "$3" '{jsonrpc: "2.0", id: 7, method: $m, params: $p}')" "$URL" |
		sed -n '/^{/p; s/^data: //p'
}
set_level() { lpost "$1" logging/setLevel "{\"level\":\"$2\"}" | jq -c 'select(.id == 7)'; }
# logs SID TOOL: how many log messages a call of TOOL brought, and whether it ended with
# its result ("N ok")
logs() {
	local out
	out=$(lpost "$1" tools/call "{\"name\":\"$2\",\"arguments\":{}}")
	printf '%s %s' "$(grep -c '"notifications/message"' <<<"$out")" \
		"$(jq -r 'select(.id == 7) | if (.result.content | length) > 0 then "ok" else "failed" end' <<<"$out")"
}
L1=$(legacy_session)
L2=$(legacy_session)
[ -n "$L1" ] && [ -n "$L2" ] || bail "two 2025-11-25 sessions" "$(tail -n 5 "$T/gw.log")"
is "a 2025-11-25 session that set no level: a sends it no log messages" "$(logs "$L1" a_test_tool_with_logging)" "0 ok"
jcheck "logging/setLevel with a level that is none: -32602, nothing kept" "$(set_level "$L1" loud)" '.error.code == -32602'
is "… and a still sends no log messages" "$(logs "$L1" a_test_tool_with_logging)" "0 ok"
jcheck "logging/setLevel warning: {} (kept for a and b, sent to c)" "$(set_level "$L1" warning)" '.result == {}'
is "… a's info messages stay below it" "$(logs "$L1" a_test_tool_with_logging)" "0 ok"
jcheck "logging/setLevel debug: {}" "$(set_level "$L1" debug)" '.result == {}'
n=0
for _ in 1 2 3 4 5 6; do [ "$(logs "$L1" a_test_tool_with_logging)" = "3 ok" ] && n=$((n + 1)); done
is "… a's three info messages relayed on the call's stream, on six calls (either process)" "$n" 6
is "… and c's, of its own session there, which got the method" "$(logs "$L1" c_test_tool_with_logging)" "3 ok"
is "another session of the same caller: its own level, none" "$(logs "$L2" a_test_tool_with_logging)" "0 ok"

# resources/subscribe of a 2025-11-25 session at a (which has none: 2026-07-28): kept by
# the gateway for the session; the session's standalone stream (GET /mcp, held open
# though the session has no upstream session to stream from) listens at a for it and
# tells the update as notifications/resources/updated, untagged; and the gateway's own
# lists changing, as list_changed (announced at initialize).
# stream SID ID SECONDS: the session's GET /mcp stream read into $T/stream.ID (its
# events' data; the raw answer in stream.ID.raw), in the background, once it began (its
# first comment), tried again while every stream slot of the process it reached is
# taken (the listens above may hold theirs a while yet): 0, or 1 when it never began
stream() {
	local i
	for i in $(seq 1 20); do
		: > "$T/stream.$2.raw"
		curl -sN --max-time "$3" -H 'Accept: text/event-stream' -H "Authorization: Bearer $ACME" \
			-H "Mcp-Session-Id: $1" -H 'MCP-Protocol-Version: 2025-11-25' "$URL" 2>/dev/null |
			tee "$T/stream.$2.raw" | sed -un 's/^data: //p' > "$T/stream.$2" &
		wait_until 10 grep -q '^: stream\|error' "$T/stream.$2.raw" || true
		grep -q '^: stream' "$T/stream.$2.raw" && return 0
		sleep 0.5
	done
	return 1
}
listens() { curl -s --max-time 10 "${FIXTURE_URL[a]%/mcp}/_traffic" | jq '.byMethod["subscriptions/listen"] // 0'; }
more_listens() { [ "$(listens)" -gt "$1" ]; }
streamed() { grep -q "$2" "$T/stream.$1" 2>/dev/null; }
jcheck "initialize of a 2025-11-25 client: listChanged of the gateway's lists announced" \
	"$(curl -s --max-time 30 "${LH[@]}" --data-binary \
		'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
		"$URL" | sed -n '/^{/p; s/^data: //p')" \
	'.result.capabilities.tools.listChanged == true and .result.capabilities.prompts.listChanged == true and
	 .result.capabilities.resources.listChanged == true and .result.capabilities.resources.subscribe == true'
L4=$(legacy_session)
n0=$(listens)
stream "$L4" 1 30 || fail "the session's stream began" "$(cat "$T/stream.1.raw")"
wait_until 20 more_listens "$n0" || fail "the session's stream listened at a (its list changes)" "listens: $(listens), before $n0"
n0=$(listens)
jcheck "resources/subscribe of a 2025-11-25 session at a, which has none: {}" \
	"$(lpost "$L4" resources/subscribe '{"uri":"test://watched-resource"}' | jq -c 'select(.id == 7)')" '.result == {}'
wait_until 20 more_listens "$n0" || fail "the session's stream listened at a" "listens: $(listens), before $n0"
call "$ACME" a_update_watched_resource > /dev/null
wait_until 20 streamed 1 'resources/updated' || true
jcheck "… the session's standalone stream listened at a for it: the update, as its revision's notification" \
	"$(grep 'resources/updated' "$T/stream.1" | head -n 1)" \
	'.method == "notifications/resources/updated" and .params.uri == "test://watched-resource" and (.params | has("_meta") | not)'
unlike "… and nothing of 2026-07-28's listen (its acknowledgement)" "$(cat "$T/stream.1")" 'subscriptions/acknowledged'
call "$ACME" a_test_trigger_tool_change > /dev/null
wait_until 20 streamed 1 'tools/list_changed' || true
jcheck "a's tools changed: the gateway's catalog fetched again, tools/list_changed on the session's stream" \
	"$(grep 'tools/list_changed' "$T/stream.1" | head -n 1)" '. == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}'
jcheck "… and its tools/list has the new tool" \
	"$(lpost "$L4" tools/list '{}' | jq -c 'select(.id == 7)')" '[.result.tools[].name] | any(test("^a_test_changed_"))'
lpost "$L4" tools/call '{"name":"c_announce_prompts_changed","arguments":{}}' > /dev/null
wait_until 20 streamed 1 'prompts/list_changed' || true
jcheck "c, of 2025-11-25, says on the session's own stream there that its prompts changed: prompts/list_changed" \
	"$(grep 'prompts/list_changed' "$T/stream.1" | head -n 1)" '.method == "notifications/prompts/list_changed"'
jcheck "resources/unsubscribe: {}" \
	"$(lpost "$L4" resources/unsubscribe '{"uri":"test://watched-resource"}' | jq -c 'select(.id == 7)')" '.result == {}'
jcheck "a subscription of a URI nobody offers: an error, nothing kept" \
	"$(lpost "$L4" resources/subscribe '{"uri":"test://not-offered"}' | jq -c 'select(.id == 7)')" '.error.code != null'
jcheck "a subscription of a's test://static-binary, which the policy does not grant: refused (403 group_forbidden, as a read of it is)" \
	"$(lpost "$L4" resources/subscribe '{"uri":"test://static-binary"}')" '.error == "group_forbidden"'


# --- an older caller, asked by the gateway -------------------------------------------------
# The official SDK client (1.32.2, a 2025-11-25 client) declaring elicitation, sampling and
# roots: the gateway asks it what a's input_required wants, on the call's stream, and
# retries a with its answers (two mcpgate processes: the answer's POST may reach either).
CLIENT=$here/gateway-client.mjs
sdk() { CLIENT_ANSWERS=1 MCP_BEARER_TOKEN=$ACME WATCHDOG_MS=60000 run_bounded 90 "$T/sdk.out" "$T/sdk.err" node "$CLIENT" "$URL" "$@"; cat "$T/sdk.out"; }
out=$(sdk '{"op":"call","name":"a_test_input_required_result_elicitation","tag":"el"}' \
	'{"op":"call","name":"a_test_input_required_result_sampling","tag":"sa"}' \
	'{"op":"call","name":"a_test_input_required_result_list_roots","tag":"ro"}' \
	'{"op":"call","name":"a_test_input_required_result_multiple_inputs","tag":"mu"}' \
	'{"op":"call","name":"a_test_input_required_result_multi_round","tag":"mr"}')
for t in el sa ro mu mr; do
	line=$(jq -c --arg t "$t" 'select(.tag == $t)' <<<"$out")
	case $t in
	el) want='.asked | map(.method) == ["elicitation/create"]' ;;
	sa) want='.asked | map(.method) == ["sampling/createMessage"]' ;;
	ro) want='.asked | map(.method) == ["roots/list"]' ;;
	mu) want='.asked | map(.method) | sort == ["elicitation/create", "roots/list", "sampling/createMessage"]' ;;
	mr) want='.asked | map(.method) == ["elicitation/create", "elicitation/create"]' ;;
	esac
	jcheck "SDK 1.32.2 client, $(jq -r .name <<<"$line"): asked by the gateway, answered, the upstream's result" \
		"${line:-{\}}" "(.result.content | length) > 0 and (.result.isError != true) and ($want)"
done
like "… the upstream's answers name what the client gave" "$(jq -r 'select(.tag == "el") | .result.content[0].text' <<<"$out")" 'answer'
# With a Redis store ([limits] store, the configuration reloaded while it runs) the
# answers wait in Redis (mcpgate:ma:…, sealed), taken once.
. "$top/tests/lib/redis.sh"
start_redis || bail "redis-server started" "$(tail -n 5 "$T/redis.log")"
reloads() { grep -c '"config: reloaded' "$T/gw.log" 2>/dev/null; }
reloaded() { test "$(reloads)" -ge "$1"; }
n0=$(reloads)
# (2 s for Redis: a loaded machine's first connection of each worker)
printf '[limits]\nstore = %s\nredis-timeout-ms = 2000\n' "$(store redis 3)" >> "$T/gw.conf"
wait_until 60 reloaded $((n0 + 2)) || bail "the gateway reloaded with the Redis store" "$(tail -n 5 "$T/gw.log")"
sets() { rcli info commandstats | sed -n 's/^cmdstat_set:calls=\([0-9]*\).*/\1/p'; }
s0=$(sets)
out=$(sdk '{"op":"call","name":"a_test_input_required_result_multiple_inputs","tag":"rd"}')
jcheck "with a Redis store: asked three things, answered, the upstream's result" "$out" \
	'(.result.content | length) > 0 and (.asked | length) == 3'
jcheck "… the three answers went through Redis, and none is left there" \
	"{\"sets\":$(( $(sets) - ${s0:-0} )),\"left\":$(rcli -n 3 --scan --pattern 'mcpgate:ma:*' | wc -l)}" '.sets >= 3 and .left == 0'

# With it, a session's level is kept in Redis too (mcpgate:ll:…, until the session
# expires), which every host reads first.
L3=$(legacy_session)
jcheck "with a Redis store: logging/setLevel info: {}" "$(set_level "$L3" info)" '.result == {}'
lkeys=$(rcli -n 3 --scan --pattern 'mcpgate:ll:*')
is "… one level kept in Redis, with the session's lifetime" "$(wc -l <<<"$lkeys") $(rcli -n 3 get "$lkeys") $([ "$(rcli -n 3 ttl "$lkeys")" -gt 0 ] && echo expires)" "1 info expires"
is "… a's three messages" "$(logs "$L3" a_test_tool_with_logging)" "3 ok"
# (another host's setLevel, as Redis would have it: emergency)
rcli -n 3 set "$lkeys" emergency keepttl >/dev/null
is "… Redis's word first: set to emergency there, a sends none" "$(logs "$L3" a_test_tool_with_logging)" "0 ok"

# … and a session's subscriptions at a are kept in Redis (mcpgate:su:…, a set), which its
# stream reads.
L5=$(legacy_session)
stream "$L5" 2 30 || fail "the session's stream began" "$(cat "$T/stream.2.raw")"
n0=$(listens)
jcheck "with a Redis store: resources/subscribe at a: {}" \
	"$(lpost "$L5" resources/subscribe '{"uri":"test://watched-resource"}' | jq -c 'select(.id == 7)')" '.result == {}'
skeys=$(rcli -n 3 --scan --pattern 'mcpgate:su:*')
is "… kept in Redis, with the session's lifetime" "$(wc -l <<<"$skeys") $(rcli -n 3 smembers "$skeys") $([ "$(rcli -n 3 pttl "$skeys")" -gt 0 ] && echo expires)" \
	"1 test://watched-resource expires"
wait_until 20 more_listens "$n0" || fail "the session's stream listened at a" "listens: $(listens), before $n0"
call "$ACME" a_update_watched_resource > /dev/null
wait_until 20 streamed 2 'resources/updated' || true
jcheck "… the update on the session's stream" "$(grep 'resources/updated' "$T/stream.2" | head -n 1)" \
	'.params.uri == "test://watched-resource"'

# The same call by a client that declared nothing: an error, nothing asked.
out=$(CLIENT_ANSWERS=0 MCP_BEARER_TOKEN=$ACME run_bounded 60 "$T/sdk0.out" "$T/sdk0.err" node "$CLIENT" "$URL" \
	'{"op":"call","name":"a_test_input_required_result_elicitation"}'; cat "$T/sdk0.out")
jcheck "a 2025-11-25 client that declared no elicitation: an error saying what it lacks" "$out" \
	'.error.message | test("elicitation")'

# --- an older caller --------------------------------------------------------------------------------
H=(-H 'Content-Type: application/json' -H 'Accept: application/json' -H "Authorization: Bearer $ACME")
sid=$(curl -s -D - -o /dev/null --max-time 30 "${H[@]}" --data-binary \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}' \
	"$URL" | tr -d '\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
res=$(curl -s --max-time 30 "${H[@]}" -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-11-25' --data-binary \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a_test_input_required_result_elicitation","arguments":{}}}' "$URL")
# (its calls go statelessly: the upstream refuses initialize; the gateway declares no
# capability for it there, which the upstream says)
jcheck "a 2025-11-25 caller calling an input-required tool: a JSON-RPC error, no input_required" "$res" \
	'.error.code != null and .result == null'
res=$(curl -s --max-time 30 "${H[@]}" -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-11-25' --data-binary \
	'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a_test_simple_text","arguments":{}}}' "$URL")
jcheck "… and a plain tool: its result, without the stateless revision's resultType" "$res" \
	'(.result.content | length) > 0 and (.result | has("resultType") | not)'
tap_done
