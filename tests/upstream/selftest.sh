#!/usr/bin/env bash
# The upstream fixture (tests/upstream/fixture.mjs) against the official MCP conformance
# suite, directly (no gateway): every scenario of the 0.1.16 active server suite must pass
# (one TAP line each, failing and warning checks as "#" lines); then the pending
# scenarios (0.1.16, plus the alpha's server-sse-polling, which resumes on a 2025-11-25
# stream), the alpha's 2025-11-25 scenarios, the fixture in --json mode (all but logging
# and progress, as the SDK), extras.mjs for the relay helpers, and bearer-selftest.mjs for
# --require-bearer (with tests/idp as the authorization server); then --modern (both
# revisions) against the alpha's frozen 2026-07-28 requirements (one line per scored
# scenario, the not-scored ones as "#" lines) and 2025-11-25 requirements, --modern-only
# against 2026-07-28, and GET /_traffic. Each fixture listens
# on a port of its own choosing (--port 0); everything started here is stopped on exit.
# shellcheck source-path=SCRIPTDIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=../lib/tap.sh
. "$top/tests/lib/tap.sh"
# shellcheck source=../lib/wait.sh
. "$top/tests/lib/wait.sh"
nm=$top/tests/node_modules
conf_stable=$nm/@modelcontextprotocol/conformance/dist/index.js
conf_alpha=$nm/conformance-alpha/dist/index.js
for f in "$nm/@modelcontextprotocol/sdk/package.json" "$conf_stable" "$conf_alpha" "$nm/oidc-provider/package.json"; do
	[ -f "$f" ] || { echo "Bail out! $f is missing (npm ci --prefix tests)"; exit 1; }
done
command -v jq > /dev/null || { echo "Bail out! jq is required"; exit 1; }

T=$(mktemp -d "${TMPDIR:-/tmp}/mcpgate-upstream.XXXXXX")
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

# start_fixture NAME ARGS... → URL of a fixture started with ARGS, its log in $T/NAME.log.
start_fixture() {
	local name=$1 pid; shift
	node "$here/fixture.mjs" --port 0 --ready-file "$T/$name.ready" --name "$name" "$@" > /dev/null 2> "$T/$name.log" &
	pid=$!
	pids+=("$pid")
	wait_until 60 ready_or_gone "$T/$name.ready" "$pid"
	URL=$(sed -n 's/^ready //p' "$T/$name.ready" 2>/dev/null)
	if [ -z "$URL" ]; then
		fail "fixture $name started" "$(tail -n 5 "$T/$name.log")"
		return 1
	fi
	pass "fixture $name started${*:+ ($*)} at $URL"
}

# conformance BUNDLE OUT-DIR ARGS...: one run of the CLI (60 s at most), stdout in OUT-DIR.out.
conformance() {
	local bundle=$1 out=$2; shift 2
	timeout -k 2 60 node --import "$top/tests/lib/conformance-node20.mjs" "$bundle" server "$@" -o "$out" > "$out.out" 2>&1
}

# scenarios DIR: "name<TAB>successes<TAB>failures<TAB>warnings<TAB>dir" for each
# server-<name>-<time>/checks.json under DIR, in the order they ran.
scenarios() {
	local d
	for d in "$1"/server-*; do
		[ -f "$d/checks.json" ] || continue
		printf '%s\t%s\n' "$(basename "$d" | sed -E 's/^.*-([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9-]+Z)$/\1/')" "$d"
	done | sort | while IFS=$'\t' read -r _ d; do
		printf '%s\t%s\t%s\n' "$(basename "$d" | sed -E 's/^server-//; s/-[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9-]+Z$//')" \
			"$(jq -r '[map(select(.status == "SUCCESS")), map(select(.status == "FAILURE")), map(select(.status == "WARNING"))]
				| map(length) | @tsv' "$d/checks.json")" "$d"
	done
}
# notes DIR: the failing and warning checks of one scenario, one per line.
notes() {
	jq -r '.[] | select(.status == "FAILURE" or .status == "WARNING")
		| "\(.status) \(.id): \(.errorMessage // .details.message // "")"' "$1/checks.json"
}
# ran_all LABEL OUT-DIR: the CLI announced N scenarios and wrote N results.
ran_all() {
	local want got
	want=$(sed -n -E 's/^Running [a-z]+ suite \(([0-9]+) scenarios\).*/\1/p' "$2.out" | head -n 1)
	got=$(scenarios "$2" | wc -l)
	if [ -n "$want" ] && [ "$want" -eq "$got" ]; then
		pass "$1: all $want scenarios ran"
	else
		fail "$1: all scenarios ran" "announced ${want:-?}, results for $got; CLI output:
$(tail -n 15 "$2.out")"
	fi
}
# per_scenario LABEL OUT-DIR [STRICT]: one TAP line per scenario; it passes with no failing
# check and at least one passing one (STRICT: and no warning).
per_scenario() {
	local label=$1 dir=$2 strict=${3:-} name ok_n bad warn d
	while IFS=$'\t' read -r name ok_n bad warn d; do
		if [ "$bad" -eq 0 ] && [ "$ok_n" -gt 0 ] && { [ -z "$strict" ] || [ "$warn" -eq 0 ]; }; then
			if [ "$warn" -gt 0 ]; then
				pass "$label: $name ($ok_n checks passed, $warn warnings)"
				notes "$d" | sed 's/^/# /'
			else
				pass "$label: $name ($ok_n checks passed)"
			fi
		else
			fail "$label: $name ($ok_n passed, $bad failed, $warn warnings)" "$(notes "$d")"
		fi
	done < <(scenarios "$dir")
}

# requirements LABEL OUT-DIR REVISION [per-scenario]: the results of a --requirements
# REVISION run: every scenario of the frozen set's server list ran with no failing and no
# warning check, one TAP line each with per-scenario, else one line for all; the other
# scenarios it ran (not scored: extensions, pending) as "#" lines.
requirements() {
	local label=$1 dir=$2 rev=$3 per=${4:-} scored ran name ok_n bad warn d n=0 checks=0 bad_list=''
	scored=$(awk '/^server:/ { f = 1; next } /^[a-z_]+:/ { f = 0 } f && /^  - / { print $2 }' \
		"$nm/conformance-alpha/requirements/$rev.yaml")
	ran=$(scenarios "$dir")	# once: each line costs a jq run
	for name in $scored; do
		d=$(awk -F'\t' -v s="$name" '$1 == s' <<<"$ran")
		if [ -z "$d" ]; then
			fail "$label: $name ran" "$(tail -n 5 "$dir.out")"
			continue
		fi
		IFS=$'\t' read -r _ ok_n bad warn d <<<"$d"
		n=$((n + 1)); checks=$((checks + ok_n))
		if [ "$bad" -eq 0 ] && [ "$warn" -eq 0 ] && [ "$ok_n" -gt 0 ]; then
			[ -n "$per" ] && pass "$label: $name ($ok_n checks passed)"
		elif [ -n "$per" ]; then
			fail "$label: $name ($ok_n passed, $bad failed, $warn warnings)" "$(notes "$d")"
		else
			bad_list="$bad_list$name: $(notes "$d")
"
		fi
	done
	if [ -z "$per" ]; then
		if [ -z "$bad_list" ] && [ "$n" -eq "$(wc -w <<<"$scored")" ]; then
			pass "$label: all $n scored scenarios clean ($checks checks)"
		else
			fail "$label: every scored scenario clean ($n ran)" "$bad_list"
		fi
	fi
	while IFS=$'\t' read -r name ok_n bad warn d; do
		[ -z "$name" ] || grep -qxF "$name" <<<"$scored" && continue
		echo "# $label, not scored: $name ($ok_n passed, $bad failed, $warn warnings)"
	done <<<"$ran"
}
# traffic URL [reset]: GET /_traffic (or /_traffic/reset) of the fixture at URL, compact.
traffic() {
	curl -s --max-time 10 "${1%/mcp}/_traffic${2:+/reset}" | jq -c .
}
# stateless URL METHOD PARAMS-JSON [NAME]: one 2026-07-28 request (headers and _meta as
# the revision wants them; NAME: its Mcp-Name); the answer's body on stdout.
stateless() {
	local params
	params=$(jq -c '. + {_meta: {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": {}}}' <<<"$3")
	curl -s --max-time 10 -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		-H 'MCP-Protocol-Version: 2026-07-28' -H "Mcp-Method: $2" ${4:+-H "Mcp-Name: $4"} \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"$2\",\"params\":$params}" "$1"
}

# 1. The 0.1.16 active suite, one line per scenario: every one must pass.
if start_fixture sse; then
	conformance "$conf_stable" "$T/active" --url "$URL" --suite active
	ran_all "0.1.16 active" "$T/active"
	per_scenario "0.1.16 active" "$T/active" strict

	# 2. Pending scenarios. 0.1.16's server-sse-polling sends MCP-Protocol-Version
	# 2025-03-26 on its tools/call, so the SDK neither primes the stream nor lets the tool
	# close it: its checks are warnings and information. The alpha's sends the negotiated
	# version: there the stream is primed, closed mid-call and resumed with Last-Event-ID.
	conformance "$conf_stable" "$T/pending" --url "$URL" --suite pending
	while IFS=$'\t' read -r name ok_n bad warn d; do
		if [ "$bad" -eq 0 ]; then
			pass "0.1.16 pending: $name ($ok_n checks passed, $warn warnings)"
			notes "$d" | sed 's/^/# /'
		else
			fail "0.1.16 pending: $name ($ok_n passed, $bad failed, $warn warnings)" "$(notes "$d")"
		fi
	done < <(scenarios "$T/pending")
	[ "$(scenarios "$T/pending" | wc -l)" -eq 2 ] || fail "0.1.16 pending: 2 scenarios ran" "$(tail -n 15 "$T/pending.out")"
	conformance "$conf_alpha" "$T/polling" --url "$URL" --scenario server-sse-polling
	per_scenario "0.2.0-alpha.12 pending" "$T/polling" strict
	[ "$(scenarios "$T/polling" | wc -l)" -eq 1 ] || fail "alpha server-sse-polling ran" "$(tail -n 15 "$T/polling.out")"

	# 3. The alpha's 2025-11-25 scenarios (more checks per scenario, session lifecycle):
	# one line, failing scenarios as diagnostics.
	conformance "$conf_alpha" "$T/alpha" --url "$URL" --spec-version 2025-11-25
	bad_alpha=$(scenarios "$T/alpha" | awk -F'\t' '$3 > 0 || $4 > 0 || $2 == 0 { print $1 }')
	n_alpha=$(scenarios "$T/alpha" | wc -l)
	checks_alpha=$(scenarios "$T/alpha" | awk -F'\t' '{ s += $2 } END { print s + 0 }')
	if [ "$n_alpha" -ge 30 ] && [ -z "$bad_alpha" ]; then
		pass "0.2.0-alpha.12 --spec-version 2025-11-25: all $n_alpha scenarios pass ($checks_alpha checks)"
	else
		fail "0.2.0-alpha.12 --spec-version 2025-11-25: every scenario passes ($n_alpha ran)" \
			"$(for s in $bad_alpha; do echo "$s:"; notes "$(scenarios "$T/alpha" | awk -F'\t' -v s="$s" '$1 == s { print $5 }')"; done
			tail -n 5 "$T/alpha.out")"
	fi
fi

# 4. --json: responses as JSON bodies. Sampling and elicitation then go on the session's
# GET stream; log and progress notifications of a call have no stream (the SDK drops
# them), so exactly those two scenarios fail.
if start_fixture json --json; then
	conformance "$conf_stable" "$T/json" --url "$URL" --suite active
	ran_all "--json, 0.1.16 active" "$T/json"
	expected="tools-call-with-logging tools-call-with-progress"
	failed_json=$(scenarios "$T/json" | awk -F'\t' '$3 > 0 || $2 == 0 { print $1 }' | sort | tr '\n' ' ' | sed 's/ $//')
	n_json=$(scenarios "$T/json" | wc -l)
	is "--json: every scenario but logging and progress passes ($n_json ran)" "$failed_json" "$expected"
	ct=$(jq -r '.[] | select(.id == "server-accepts-multiple-post-streams") | .details.contentTypes | unique | join(",")' \
		"$T"/json/server-server-sse-multiple-streams-*/checks.json 2>/dev/null)
	is "--json: POST responses are application/json" "$ct" "application/json"
fi

# 5. The relay helpers, pagination, log levels, resumption and the HTTP session layer.
if start_fixture extras --tools 50 --page-size 20; then
	timeout -k 2 130 node "$here/extras.mjs" "$URL" extras --no-plan > "$T/extras.tap" 2> "$T/extras.err"
	rc=$?
	tap_relay "$T/extras.tap" "extras: "
	if [ "$rc" -eq 0 ] && [ "$tap_relayed" -ge 30 ]; then
		pass "extras.mjs ran every check ($tap_relayed) and exited 0"
	else
		fail "extras.mjs ran every check and exited 0" "exit $rc after $tap_relayed checks; stderr: $(tail -n 15 "$T/extras.err")"
	fi
fi

# 6. --require-bearer: tokens introspected at tests/idp, only those meant for the fixture's
# own resource accepted, sessions bound to their subject, /_seen records. The script starts
# (and stops) its own idp and fixtures.
timeout -k 2 100 node "$here/bearer-selftest.mjs" --no-plan > "$T/bearer.tap" 2> "$T/bearer.err"
rc=$?
tap_relay "$T/bearer.tap" "bearer: "
if [ "$rc" -eq 0 ] && [ "$tap_relayed" -ge 30 ]; then
	pass "bearer-selftest.mjs ran every check ($tap_relayed) and exited 0"
else
	fail "bearer-selftest.mjs ran every check and exited 0" "exit $rc after $tap_relayed checks; stderr: $(tail -n 15 "$T/bearer.err")"
fi

# 7. --modern: the stateless 2026-07-28 revision (modern.mjs) and the SDK's sessions on
# the same /mcp. The frozen 2026-07-28 requirements, one line per scored scenario; then the
# 2025-11-25 requirements on the same fixture (the session path as without the option),
# and /_traffic proving which path each run took.
if start_fixture modern --modern; then
	conformance "$conf_alpha" "$T/modern" --url "$URL" --requirements 2026-07-28
	requirements "--modern, 2026-07-28" "$T/modern" 2026-07-28 per-scenario
	t=$(traffic "$URL")
	jcheck "--modern: the 2026-07-28 run was all stateless (no session opened)" "$t" \
		'.byRevision["2026-07-28"] > 100 and .byRevision.legacy == 0 and .sessionsOpened == 0 and .gets == 0 and .deletes == 0'
	jcheck "--modern: /_traffic counts by method (server/discover, tools/call, subscriptions/listen)" "$t" \
		'.byMethod["server/discover"] > 0 and .byMethod["tools/call"] > 0 and .byMethod["subscriptions/listen"] > 0'
	is "--modern: GET /_traffic/reset" "$(traffic "$URL" reset)" '{"reset":true}'
	is "--modern: /_traffic zeroed" "$(traffic "$URL")" \
		'{"posts":0,"byMethod":{},"byRevision":{"2026-07-28":0,"legacy":0},"sessionsOpened":0,"deletes":0,"gets":0}'

	conformance "$conf_alpha" "$T/modern-legacy" --url "$URL" --requirements 2025-11-25
	requirements "--modern, 2025-11-25" "$T/modern-legacy" 2025-11-25
	jcheck "--modern: the 2025-11-25 run took the session path alone" "$(traffic "$URL")" \
		'.byRevision.legacy > 100 and .byRevision["2026-07-28"] == 0 and .sessionsOpened > 20 and .byMethod.initialize > 20 and .deletes > 0'

	traffic "$URL" reset > /dev/null
	jcheck "--modern: server/discover names both revisions" "$(stateless "$URL" server/discover '{}')" \
		'.id == 7 and .result.resultType == "complete" and .result.supportedVersions[0] == "2026-07-28"
			and (.result.supportedVersions | index("2025-11-25")) and .result._meta["io.modelcontextprotocol/serverInfo"].name == "modern"'
	jcheck "--modern: a stateless tools/call" \
		"$(stateless "$URL" tools/call '{"name":"test_simple_text","arguments":{}}' test_simple_text)" \
		'.result.resultType == "complete" and .result.content[0].text == "This is a simple text response for testing."'
	is "--modern: /_traffic after two stateless requests" "$(traffic "$URL")" \
		'{"posts":2,"byMethod":{"server/discover":1,"tools/call":1},"byRevision":{"2026-07-28":2,"legacy":0},"sessionsOpened":0,"deletes":0,"gets":0}'
	like "--modern: one log line per stateless request" "$(grep -c 'POST 2026-07-28 tools/call test_simple_text → 200' "$T/modern.log")" '^[1-9]'
	is "--modern: POST /_traffic is 405" "$(curl -s -o /dev/null -w '%{http_code}' -X POST "${URL%/mcp}/_traffic")" 405
fi

# 8. --modern-only: the 2026-07-28 revision alone; what an earlier client meets there.
if start_fixture modernonly --modern-only; then
	conformance "$conf_alpha" "$T/modern-only" --url "$URL" --requirements 2026-07-28
	requirements "--modern-only, 2026-07-28" "$T/modern-only" 2026-07-28
	is "--modern-only: GET /mcp is 405, Allow: POST" "$(curl -s -o /dev/null -w '%{http_code} %header{allow}' "$URL")" "405 POST"
	is "--modern-only: DELETE /mcp is 405" "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$URL")" 405
	jcheck "--modern-only: initialize of 2025-11-25 gets 400/-32022 naming 2026-07-28" \
		"$(curl -s --max-time 10 -w '\n%{http_code}' -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
			--data-binary '{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
			"$URL" | jq -s -c '{body: .[0], status: .[1]}')" \
		'.status == 400 and .body.id == 3 and .body.error.code == -32022 and .body.error.data.supported == ["2026-07-28"] and .body.error.data.requested == "2025-11-25"'
	jcheck "--modern-only: /_traffic counts everything as 2026-07-28" "$(traffic "$URL")" \
		'.byRevision.legacy == 0 and .byRevision["2026-07-28"] > 100 and .gets == 1 and .deletes == 1 and .sessionsOpened == 0'
fi

# Without --modern nothing of it: the fixture of 1.-3. answered its runs on sessions
# alone, and a stateless request there is what it was (no session: 400/-32000).
if [ -f "$T/sse.ready" ]; then
	URL=$(sed -n 's/^ready //p' "$T/sse.ready")
	jcheck "default fixture: /_traffic saw only the session path" "$(traffic "$URL")" \
		'.byRevision["2026-07-28"] == 0 and .byRevision.legacy > 100 and .sessionsOpened > 20'
	jcheck "default fixture: a stateless server/discover gets 400/-32000 (no session), as before" \
		"$(stateless "$URL" server/discover '{}')" '.error.code == -32000 and .id == null'
fi

# The fixtures stayed up and logged no request failure.
for name in sse json extras modern modernonly; do
	[ -f "$T/$name.log" ] || continue
	if grep -q 'request failed' "$T/$name.log"; then
		fail "fixture $name: no request failed" "$(grep -A3 'request failed' "$T/$name.log" | head -n 12)"
	else
		pass "fixture $name: no request failed"
	fi
done
tap_done
