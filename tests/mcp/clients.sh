#!/usr/bin/env bash
# The official MCP packages (pinned in tests/package.json) drive POST /mcp through real
# nginx and real lighttpd (deploy/ recipes) + spawn-fcgi (2 processes x 2 threads) +
# mcpgate, with oidc-provider (tests/idp) as the issuer and a client_credentials token:
#
#  1. the SDK client (tests/mcp/sdk-client.mjs): connect, tools/list, ping, DELETE, and
#     404 for the ended session, for each of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25;
#  2. inspector-cli: `--method tools/list` prints {"tools": []};
#  3. conformance 0.1.16: server-initialize, ping, dns-rebinding-protection;
#  4. conformance 0.2.0-alpha.12 at the 2026-07-28 wire: server-stateless and
#     http-header-validation, with the checks that need federation listed in
#     tests/mcp/expected-failures-2026.yml.
#
# The conformance CLI has no header option: tests/mcp/bearer-preload.mjs (node --import)
# adds the token to its requests. dns-rebinding-protection wants a localhost URL, so each
# gateway's resource is http://localhost:PORT/mcp and its own origin is allowed.
# Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir (conformance checks.json included).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light lighttpd:lighttpd spawn-fcgi:spawn-fcgi curl:curl jq:jq \
	--node @modelcontextprotocol/sdk/package.json @modelcontextprotocol/conformance/dist/index.js \
	conformance-alpha/dist/index.js @modelcontextprotocol/inspector-cli/build/cli.js
nm=$top/tests/node_modules
CONF_STABLE=$nm/@modelcontextprotocol/conformance/dist/index.js
CONF_ALPHA=$nm/conformance-alpha/dist/index.js
INSPECTOR=$nm/@modelcontextprotocol/inspector-cli/build/cli.js
BASELINE=$here/expected-failures-2026.yml

# --- the two stacks ------------------------------------------------------------------
fronts=(nginx lighttpd)
declare -A port url origin token pids
for f in "${fronts[@]}"; do
	port[$f]=$(free_port)
	origin[$f]=http://localhost:${port[$f]}
	url[$f]=${origin[$f]}/mcp
done
start_idp "${url[nginx]}" "${url[lighttpd]}"
for f in "${fronts[@]}"; do
	gateway_conf "$T/$f.conf" "${url[$f]}"
	sed -i -e "s|^state = .*|state = $T/$f.state|" -e "s|^log-file = .*|log-file = $T/$f.gw.log|" \
		-e "/^resource = /a allowed-origins = ${origin[$f]}" "$T/$f.conf"
	if start_mcpgate_fcgi "$T/$f.sock" "$T/$f.conf" 2 2 >>"$T/start.out" 2>&1 \
		&& "start_$f" "${port[$f]}" >>"$T/start.out" 2>&1; then
		pass "$f + spawn-fcgi (2 processes x 2 threads) + mcpgate at ${url[$f]}"
	else
		fail "$f + spawn-fcgi + mcpgate started" "$(tail -n 20 "$T/start.out")"
		tap_done
		exit 1
	fi
	pids[$f]=$MG_FCGI_PIDS
	token[$f]=$(mint --client machine-acme --scope mcp:tools --resource "${url[$f]}")
	if [ -z "${token[$f]}" ] || [ "${token[$f]}" = null ]; then
		fail "$f: a client_credentials token for ${url[$f]}" "$(tail -n 5 "$T/idp.log")"
		tap_done
		exit 1
	fi
done

# --- 1. the SDK client, every revision -------------------------------------------------
sdk_client() {
	local f=$1 rc
	MCP_BEARER_TOKEN=${token[$f]} run_bounded 130 "$T/$f.sdk.tap" "$T/$f.sdk.err" \
		node "$here/sdk-client.mjs" "${url[$f]}" --label "$f: SDK" --no-plan
	rc=$?
	tap_relay "$T/$f.sdk.tap"
	if [ "$rc" -eq 0 ] && [ "$tap_relayed" -ge 46 ]; then
		pass "$f: sdk-client.mjs ran every step ($tap_relayed) and exited 0"
	else
		fail "$f: sdk-client.mjs ran every step and exited 0" \
			"exit $rc after $tap_relayed steps; stderr: $(tail -n 15 "$T/$f.sdk.err")"
	fi
}

# --- 2. inspector-cli ---------------------------------------------------------------
# It reads ../package.json relative to the working directory (for its client name), so
# it runs from tests/mcp; --cli selects the command-line mode of the mcp-inspector-cli
# bin (without it the bin starts the web UI, which this package does not ship).
inspector() {
	local f=$1 rc got
	run_bounded 90 "$T/$f.inspector.out" "$T/$f.inspector.err" env -C "$here" \
		node "$INSPECTOR" --cli "${url[$f]}" --transport http --method tools/list \
		--header "Authorization: Bearer ${token[$f]}"
	rc=$?
	got=$(jq -c . "$T/$f.inspector.out" 2>/dev/null)
	if [ "$rc" -eq 0 ] && [ "$got" = '{"tools":[]}' ]; then
		pass "$f: mcp-inspector-cli --method tools/list prints {\"tools\": []}"
	else
		fail "$f: mcp-inspector-cli --method tools/list prints {\"tools\": []}" \
			"exit $rc; stdout: $(head -c 600 "$T/$f.inspector.out"); stderr: $(grep -v '^$' "$T/$f.inspector.err" | tail -n 8)"
	fi
}

# --- 3/4. the conformance suites -------------------------------------------------------
# conformance FRONT LABEL BUNDLE SCENARIO [ARGS...]: one scenario, one TAP line; the
# failing (and warning) checks of its checks.json become diagnostics. Without
# --expected-failures the line passes when the CLI exits 0 and no check failed. With it
# (ARGS), when the CLI exits 0 (every failure is in the baseline, no entry passes) and
# every failure is one the suite marks untestable (a fixture tool is missing): one check
# id may cover several cases, and a real fault must not hide behind an excused one.
conformance() {
	local f=$1 what=$2 bundle=$3 s=$4 d rc checks total good bad warn known=0 real=0 desc
	shift 4
	d=$T/conformance/$f-$what-$s
	mkdir -p "$d"
	MCP_BEARER_TOKEN=${token[$f]} MCP_BEARER_ORIGIN=${origin[$f]} MCP_BEARER_UNDICI=$bundle \
		run_bounded 90 "$d/out" "$d/err" node --import "$top/tests/lib/conformance-node20.mjs" \
		--import "$here/bearer-preload.mjs" "$bundle" server --url "${url[$f]}" --scenario "$s" \
		--output-dir "$d" "$@"
	rc=$?
	checks=$(find "$d" -name checks.json | head -n 1)
	if [ -z "$checks" ] || ! jq -e 'type == "array" and length > 0' "$checks" >/dev/null 2>&1; then
		fail "$f: conformance $what $s" "exit $rc, no checks.json; output: $(tail -n 15 "$d/out"; tail -n 10 "$d/err")"
		return
	fi
	total=$(jq '[.[] | select(.status == "SUCCESS" or .status == "FAILURE" or .status == "WARNING")] | length' "$checks")
	good=$(jq '[.[] | select(.status == "SUCCESS")] | length' "$checks")
	bad=$(jq '[.[] | select(.status == "FAILURE")] | length' "$checks")
	warn=$(jq '[.[] | select(.status == "WARNING")] | length' "$checks")
	desc="$f: conformance $what $s: $good/$total checks pass"
	[ "$warn" -eq 0 ] || desc="$desc, $warn warnings"
	sed -i 's/\x1b\[[0-9;]*m//g' "$d/out"	# the CLI's colours
	if [ $# -gt 0 ]; then	# with a baseline
		known=$(grep -c '^  ~ ' "$d/out")
		real=$(jq '[.[] | select((.status == "FAILURE" or .status == "WARNING") and .details.untestable != true)] | length' "$checks")
	fi
	if [ "$rc" -eq 0 ] && [ "$real" -eq 0 ] && { [ $# -gt 0 ] || [ "$bad" -eq 0 ]; }; then
		[ "$known" -eq 0 ] || desc="$desc; the $((bad + warn)) others are untestable here and in the baseline"
		pass "$desc"
		[ "$known" -eq 0 ] || sed -n 's/^  ~ \(.*\)$/# baseline: \1/p' "$d/out"
	else
		fail "$desc" "exit $rc$([ "$real" -eq 0 ] || echo "; $real failing checks the suite does not mark untestable")
$(jq -r '.[] | select(.status == "FAILURE" or .status == "WARNING")
	| "\(.status) \(.id): \(.errorMessage // "" | gsub("\n"; " ") | .[0:400])"' "$checks")
$(sed -n '/^Stale baseline\|^Unexpected failures/,/^$/p' "$d/out")"
	fi
}

for f in "${fronts[@]}"; do
	sdk_client "$f"
	inspector "$f"
	for s in server-initialize ping dns-rebinding-protection; do
		conformance "$f" 0.1.16 "$CONF_STABLE" "$s"
	done
	for s in server-stateless http-header-validation; do
		conformance "$f" 2026-07-28 "$CONF_ALPHA" "$s" --spec-version 2026-07-28 --expected-failures "$BASELINE"
	done
done

# --- afterwards -------------------------------------------------------------------------
for f in "${fronts[@]}"; do
	gone=
	for pid in ${pids[$f]}; do mg_alive "$pid" || gone="$gone $pid"; done
	is "$f: the mcpgate processes survived the run" "${gone:-none}" none
	n=$(grep -c '"path":"/mcp"' "$T/$f.gw.log" 2>/dev/null)
	if [ "${n:-0}" -ge 40 ]; then
		pass "$f: the gateway logged the clients' requests ($n /mcp lines)"
	else
		fail "$f: the gateway logged the clients' requests" "${n:-0} /mcp lines in $T/$f.gw.log"
	fi
done
leaks=0
for f in "${fronts[@]}"; do
	grep -qF -- "${token[$f]:0:12}" "$T"/*.gw.log "$MG_LOG" "$MG_DIR"/nginx/*.log "$MG_DIR"/lighttpd/*.log 2>/dev/null \
		&& leaks=$((leaks + 1))
done
is "no token fragment in the gateway's, nginx's or lighttpd's logs" "$leaks" 0
tap_done
