#!/usr/bin/env bash
# The official MCP SDK client (@modelcontextprotocol/sdk 1.32.2, tests/package.json)
# finds its way in on its own: real nginx (deploy/nginx recipe) + spawn-fcgi + mcpgate,
# with oidc-provider (tests/idp) as the issuer. The SDK meets the 401, reads the
# challenge, fetches the protected-resource and authorization-server metadata, registers
# (DCR), authorizes with PKCE and resource=<gateway URL> through the headless login,
# gets a token, and then initialize, tools/list and ping work; a token for another
# resource is refused. The steps are checked in tests/auth/sdk-discovery.mjs; this
# script starts and stops everything and turns its lines into this suite's TAP.
# SDK_JWT=1 (tests/auth/sdk-jwt.sh): the issuer issues JWT access tokens and offers no
# introspection endpoint, and the gateway verifies them itself (verify = jwt) with no
# client of its own at the issuer.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq --node @modelcontextprotocol/sdk/package.json

port=$(free_port)
base=http://127.0.0.1:$port
other=http://127.0.0.1:1/other/mcp
if [ "${SDK_JWT:-0}" = 1 ]; then
	IDP_OPTS="--token-format jwt --no-introspection" start_idp "$base/mcp" "$other"
	gateway_conf "$T/mcpgate.conf.tmp" "$base/mcp"
	grep -v '^client-' "$T/mcpgate.conf.tmp" > "$T/mcpgate.conf"
	printf '[auth]\nverify = jwt\n' >> "$T/mcpgate.conf"
	jwt=--jwt
else
	start_idp "$base/mcp" "$other"
	gateway_conf "$T/mcpgate.conf" "$base/mcp"
	jwt=
fi
if start_mcpgate_fcgi "$T/mcpgate.sock" "$T/mcpgate.conf" 2 2 >"$T/start.out" 2>&1 && start_nginx "$port" >>"$T/start.out" 2>&1; then
	pass "nginx + spawn-fcgi (2 processes x 2 threads) + mcpgate + oidc-provider started"
else
	fail "nginx + spawn-fcgi + mcpgate + oidc-provider started" "$(tail -n 20 "$T/start.out")"
	tap_done
	exit 1
fi
pids_before=$MG_FCGI_PIDS

# Sessions and the token cache live in the shared state file: a session made by one
# process is continued by another only if both map the same file. Two processes that
# start together must not each build their own (one would keep a deleted inode).
maps=
for pid in $pids_before; do
	m=$(awk -v f="$T/state" '$6 == f { print $5 ($7 == "(deleted)" ? " deleted" : ""); exit }' "/proc/$pid/maps" 2>/dev/null)
	maps="$maps${maps:+, }$pid: ${m:-none}"
done
if ! printf '%s' "$maps" | grep -q '[0-9]: [0-9]'; then
	pass "every mcpgate process maps the same live state file # SKIP no mapping of $T/state seen in /proc ($maps)"
elif [ "$(printf '%s\n' "$maps" | tr ',' '\n' | sed 's/^ *[0-9]*: //' | sort -u | wc -l)" -eq 1 ] \
	&& ! printf '%s' "$maps" | grep -q 'deleted\|none'; then
	pass "every mcpgate process maps the same live state file ($maps)"
else
	fail "every mcpgate process maps the same live state file" "pid: inode of $T/state mapped — $maps
(a process holding a deleted or different inode has its own token cache and session key:
sessions it did not create answer 404)"
fi

# The SDK run: 130 s at most (sdk-discovery.mjs stops itself after 120 s). Its "ok N - x"
# lines are renumbered into ours, its "#" lines passed through.
# shellcheck disable=SC2086 # $jwt is one word or none
timeout -k 2 130 node "$here/sdk-discovery.mjs" "$base/mcp" --other-resource "$other" \
	--fragments "$T/fragments" --no-plan $jwt > "$T/sdk.tap" 2> "$T/sdk.err" &
NODE_PID=$!
wait "$NODE_PID"
rc=$?
NODE_PID=
sdk_afterwards sdk-discovery.mjs "$rc" 20 "$pids_before"
n=$(grep -c '"path":"/mcp"' "$T/gw.log" 2>/dev/null)
if [ "${n:-0}" -ge 5 ]; then
	pass "the gateway logged the SDK's requests ($n /mcp lines)"
else
	fail "the gateway logged the SDK's requests" "${n:-0} lines"
fi
if [ -n "$jwt" ]; then
	is "JWT issuer: no request of the gateway's reached an introspection endpoint" \
		"$(curl -s --max-time 5 "$IDP/_stats" | jq -r '.introspections')" 0
fi
rm -f "$T/fragments"
tap_done
