#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance 0.1.16, the 30
# scenarios of its active server suite) *through* the gateway: the SDK-written
# fixture upstream (tests/upstream/fixture.mjs, which passes the suite directly: 30/30)
# behind mcpgate under spawn-fcgi (2 processes x 2 threads) and real nginx (deploy/
# recipe), published as [upstream "fixture"] with no prefix, with an oidc-provider
# (tests/idp) client_credentials token:
#
#  - one TAP line per scenario, from its checks.json: a scenario passes with no failing
#    and no warning check (the CLI's rule); one that fails passes here only when
#    tests/fed/conformance-expected.yml lists it (the line quotes the reason given there)
#    *and* every failing check fails for want of a relay: the gateway answered -32601
#    (a method it does not relay) or the upstream never sent the client a sampling or
#    elicitation request. Anything else is a fault the baseline must not hide. A listed
#    scenario that passes fails here (delete its entry);
#  - the baseline may not excuse tools-list, tools-call-*, server-initialize, ping or
#    dns-rebinding-protection: those go through what the gateway relays already, so a
#    failure there is a gateway bug, not missing work (ALSO_NEED below may name
#    exceptions that need something not relayed yet: none today);
#  - the mcpgate processes survived the run;
#  - last, the CLI's own verdict against the baseline: exit 0 when the failing scenarios
#    are exactly the listed ones.
#
# The conformance CLI has no header option: tests/mcp/bearer-preload.mjs (node --import)
# adds the token to its requests. dns-rebinding-protection wants a localhost URL, so the
# gateway's resource is http://localhost:PORT/mcp and its own origin is allowed.
#
# With MG_CONFORMANCE_POLICY=1 (tests/fed/conformance-policy.sh) the gateway has a tenant
# policy: one [group "all"] with tools = *, prompts = * and resources = *, listed by the
# token's tenant and by [tenant "*"] — the fixture's own group listed by nobody, so its
# prompts, resources, completions and log level reach the caller through those globs
# alone. Before the run, `mcpgate -t` warns about the same policy without prompts and
# resources (nothing of the upstream but its tools would reach anyone) and not about
# this one; after it, `mcpgate -t` checks the configuration against the catalog the
# gateway saved in its state file, and finds nothing to warn about.
# Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir (checks.json of every scenario, logs of
# the gateway, nginx and the fixture).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq \
	--node @modelcontextprotocol/sdk/package.json @modelcontextprotocol/conformance/dist/index.js
CONF=$top/tests/node_modules/@modelcontextprotocol/conformance/dist/index.js
PRELOAD=$top/tests/mcp/bearer-preload.mjs
BASELINE=$here/conformance-expected.yml
# Scenarios the baseline may not list: they use only what the gateway relays already
# (initialize, ping, tools/list, tools/call with its progress and log notifications and
# the sampling and elicitation requests of the upstream). ALSO_NEED would name those
# among them that need something not relayed yet: none now.
NEVER_EXCUSED='^(tools-.*|server-initialize|ping|dns-rebinding-protection)$'
ALSO_NEED='^$'
# The failures of a listed scenario that mean "not relayed yet" (jq regex on errorMessage):
# the gateway's -32601 to a method it does not relay, or no sampling/elicitation request
# reaching the client.
NOT_RELAYED='^(Failed: MCP error -32601: Method not found|Server did not request (sampling|elicitation) from client)$'
CLI_SECS=50	# the suite takes about 10 s

# --- the baseline ----------------------------------------------------------------------
# "scenario<TAB>reason" for each entry of the server: list, the reason being the comment
# lines just above it, joined.
baseline_entries() {
	awk '
		/^server:/ { on = 1; next }
		/^[^ #]/ { on = 0 }
		!on { next }
		/^[[:space:]]*#/ { sub(/^[[:space:]]*#[[:space:]]*/, ""); why = why (why == "" ? "" : " ") $0; next }
		/^[[:space:]]*-[[:space:]]*/ {
			name = $0; sub(/^[[:space:]]*-[[:space:]]*/, "", name); sub(/[[:space:]]*(#.*)?$/, "", name)
			gsub(/["'\'']/, "", name)
			printf "%s\t%s\n", name, why; why = ""; next
		}
		/^[[:space:]]*$/ { why = "" }
	' "$BASELINE"
}
declare -A expected=()
while IFS=$'\t' read -r name why; do
	[ -n "$name" ] && expected[$name]=${why:-no reason given}
done < <(baseline_entries)

# --- upstream, IdP, gateway --------------------------------------------------------------
PORT=$(free_port)
ORIGIN=http://localhost:$PORT
URL=$ORIGIN/mcp
start_fixture fixture --port 0
start_idp "$URL"
wait_fixture fixture || bail "the fixture upstream started" "$(tail -n 5 "$T/fixture.log")"
UP_URL=${FIXTURE_URL[fixture]}

gateway_conf "$T/gw.conf" "$URL"
sed -i "/^resource = /a allowed-origins = $ORIGIN" "$T/gw.conf"
cat >> "$T/gw.conf" <<CONF
[upstream "fixture"]
url = $UP_URL
timeout-ms = 10000
CONF
if [ -n "${MG_CONFORMANCE_POLICY:-}" ]; then
	printf '%s\n' '[group "all"]' 'tools = *' '[tenant "acme"]' 'groups = all' '[tenant "*"]' 'groups = all' > "$T/policy.conf"
	cp "$T/gw.conf" "$T/tools-only.conf"
	cat "$T/policy.conf" >> "$T/tools-only.conf"
	out=$("$MCPGATE_BIN" -t -c "$T/tools-only.conf" 2>&1); rc=$?
	like "policy: -t on tools = * alone: exit 0, and a warning that the fixture's prompts and resources reach nobody" \
		"rc=$rc $out" '^rc=0 .*warning: [^ ]*tools-only\.conf:[0-9]+: \[upstream "fixture"\]: no tenant lists its group "fixture", and no group a tenant lists has prompts or resources'
	sed -i 's/^tools = \*$/tools = *\nprompts = *\nresources = */' "$T/policy.conf"
	cat "$T/policy.conf" >> "$T/gw.conf"
	out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1); rc=$?
	like "policy: -t with prompts = * and resources = * too: exit 0, no warning" "rc=$rc $(grep -c '^warning' <<<"$out")" '^rc=0 0$'
fi
out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1) || bail "mcpgate -t accepts the configuration" "$out"
if start_mcpgate_fcgi "$T/mcpgate.sock" "$T/gw.conf" 2 2 >> "$T/start.out" 2>&1 \
	&& start_nginx "$PORT" >> "$T/start.out" 2>&1; then
	pass "nginx + spawn-fcgi (2 processes x 2 threads) + mcpgate at $URL, the fixture upstream at $UP_URL"
else
	bail "nginx + spawn-fcgi + mcpgate started" "$(tail -n 20 "$T/start.out")"
fi
FCGI_PIDS=$MG_FCGI_PIDS
TOKEN=$(mint --client machine-acme --scope mcp:tools --resource "$URL")
if [ -z "$TOKEN" ] || [ "$TOKEN" = null ]; then
	bail "a client_credentials token for $URL" "$(tail -n 5 "$T/idp.log")"
fi

# --- the suite ---------------------------------------------------------------------------
R=$T/conformance
mkdir -p "$R"
MCP_BEARER_TOKEN=$TOKEN MCP_BEARER_ORIGIN=$ORIGIN MCP_BEARER_UNDICI=$CONF \
	run_bounded "$CLI_SECS" "$R.out" "$R.err" node --import "$top/tests/lib/conformance-node20.mjs" \
	--import "$PRELOAD" "$CONF" server --url "$URL" --suite active \
	--expected-failures "$BASELINE" -o "$R"
RC=$?
sed -i 's/\x1b\[[0-9;]*m//g' "$R.out"	# the CLI's colours

# The scenarios in the order the CLI ran them (it announces each).
mapfile -t ran < <(sed -n 's/^=== Running scenario: \(.*\) ===$/\1/p' "$R.out")
want=$(sed -n -E 's/^Running [a-z]+ suite \(([0-9]+) scenarios\).*/\1/p' "$R.out" | head -n 1)
if [ -n "$want" ] && [ "${#ran[@]}" -eq "$want" ]; then
	pass "the CLI ran all $want scenarios of the active suite"
else
	fail "the CLI ran every scenario of the active suite" \
		"announced ${want:-nothing}, ran ${#ran[@]}; exit $RC; output: $(tail -n 15 "$R.out"; tail -n 10 "$R.err")"
fi

# notes FILE: the failing and warning checks of a checks.json, one per line.
notes() {
	jq -r '.[] | select(.status == "FAILURE" or .status == "WARNING")
		| "\(.status) \(.id): \(.errorMessage // .details.message // "" | gsub("\n"; " ") | .[0:600])"
			+ (if .details then " details: \(.details | tojson | .[0:600])" else "" end)' "$1"
}

declare -A seen=()
for s in "${ran[@]}"; do
	seen[$s]=1
	checks=$(find "$R" -path "$R/server-$s-[0-9][0-9][0-9][0-9]-*" -name checks.json | head -n 1)
	known=${expected[$s]+1}
	if [ -z "$checks" ] || ! jq -e 'type == "array" and length > 0' "$checks" > /dev/null 2>&1; then
		# The CLI could not run it at all (killed, or the scenario threw): never excused.
		fail "$s: no checks.json" "CLI exit $RC; $(grep -A3 "Failed to run scenario $s" "$R.err" | head -n 8)"
		continue
	fi
	read -r good bad warn < <(jq -r '[map(select(.status == "SUCCESS")), map(select(.status == "FAILURE")),
		map(select(.status == "WARNING"))] | map(length) | @tsv' "$checks")
	counts="$good passed, $bad failed, $warn warnings"
	if [ "$bad" -eq 0 ] && [ "$warn" -eq 0 ]; then
		if [ -n "$known" ]; then
			fail "$s ($counts): passes, but the baseline lists it: delete its entry"
		else
			pass "$s ($good checks passed)"
		fi
	elif [ -n "$known" ]; then
		other=$(jq -r --arg re "$NOT_RELAYED" '.[] | select((.status == "FAILURE" or .status == "WARNING")
			and ((.errorMessage // "") | test($re) | not)) | .id' "$checks")
		if [ -z "$other" ]; then
			pass "$s ($counts): as the baseline expects: ${expected[$s]}"
			notes "$checks" | sed 's/^/# /'
		else
			fail "$s ($counts): listed in the baseline, but fails for another reason than a missing relay" \
				"$(notes "$checks")"
		fi
	else
		fail "$s ($counts)" "$(notes "$checks")"
	fi
done

if [ "${#ran[@]}" -eq "${want:-0}" ]; then	# else some entries had no chance to run
	stray=
	for s in "${!expected[@]}"; do
		[ -n "${seen[$s]+1}" ] || stray="$stray $s"
	done
	is "every baseline entry names a scenario of the active suite" "${stray:-none}" none
fi
bad_entries=$(printf '%s\n' "${!expected[@]}" | grep -E "$NEVER_EXCUSED" | grep -Ev "$ALSO_NEED" | sort | tr '\n' ' ')
is "the baseline excuses no tools-*, server-initialize, ping or dns-rebinding-protection scenario (but those needing more than the tools relay)" \
	"${bad_entries:-none}" none

gone=
for pid in $FCGI_PIDS; do mg_alive "$pid" || gone="$gone $pid"; done
is "the mcpgate processes survived the run" "${gone:-none}" none

if [ -n "${MG_CONFORMANCE_POLICY:-}" ]; then
	# Every prompt, resource and completion went through the policy's word: allowed.
	a=$(grep -E '"audit":"(prompts/get|resources/read|completion/complete)"' "$T/gw.log")
	jcheck "policy: prompts/get, resources/read and completion/complete were decided, each allowed, by the record" \
		"$(jq -sc '{n: length, refused: map(select(.allowed | not)) | length, named: map(select(.prompt or .resource)) | length}' <<<"$a")" \
		'.n > 0 and .refused == 0 and .named == .n'
	out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1); rc=$?
	like "policy: -t after the run checks against the catalog the gateway saved in its state file, without a warning" \
		"rc=$rc warnings=$(grep -c '^warning' <<<"$out") $(grep '^catalog:' <<<"$out")" \
		'^rc=0 warnings=0 catalog: checked against the catalog the gateway saved in its state file \([1-9][0-9]* tools, [1-9][0-9]* prompts, [1-9][0-9]* resources'
fi

if [ "$RC" -eq 0 ]; then
	pass "conformance 0.1.16 active suite through the gateway: the CLI exits 0 (failures match ${BASELINE#"$top/"})"
else
	fail "conformance 0.1.16 active suite through the gateway: the CLI exits 0 (failures match ${BASELINE#"$top/"})" \
		"exit $RC$([ "$RC" -ne 124 ] || echo " (timed out after $CLI_SECS s)")
$(sed -n '/^=== SUMMARY ===/,$p' "$R.out" | grep -v '^$' | tail -n 45)"
fi
tap_done
