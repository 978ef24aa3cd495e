# tests/lib/idp.sh — the real authorization server (oidc-provider, tests/idp) for shell suites.
# start_idp RESOURCE [RESOURCE...] → IDP (issuer URL), IDP_PID; mint, idp_stats, idp_fault.
# IDP_PORT=N starts it on that port (to start it again where it was); IDP_OPTS adds
# server.mjs options (--login-pages: oidc-provider's own login and consent pages;
# "--token-format jwt --no-introspection": JWT access tokens, no introspection endpoint).
: "${T:?source after creating \$T}"
IDP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../idp" && pwd)
. "$(dirname "${BASH_SOURCE[0]}")/wait.sh"

start_idp() {
	local args=() r try
	for r in "$@"; do args+=(--resource "$r"); done
	read -ra r <<<"${IDP_OPTS:-}" && args+=("${r[@]}")
	for try in 1 2; do	# a cold node under a busy machine: wait 30 s, and start once more if it died
		rm -f "$T/idp.ready"
		node "$IDP_DIR/server.mjs" --port "${IDP_PORT:-0}" "${args[@]}" --ready-file "$T/idp.ready" --quiet \
			> /dev/null 2> "$T/idp.log" &
		IDP_PID=$!
		wait_until 30 ready_or_gone "$T/idp.ready" "$IDP_PID"
		IDP=$(sed -n 's/^ready //p' "$T/idp.ready" 2>/dev/null)
		[ -n "$IDP" ] && return 0
		echo "start_idp: try $try: no ready line; idp.log: $(tail -5 "$T/idp.log")" >&2
		kill "$IDP_PID" 2>/dev/null; wait "$IDP_PID" 2>/dev/null
	done
	echo "Bail out! the authorization server did not start: $(tail -3 "$T/idp.log")"
	exit 1
}
stop_idp() { [ -n "${IDP_PID:-}" ] && kill "$IDP_PID" 2>/dev/null; wait "${IDP_PID:-}" 2>/dev/null; IDP_PID=; }

# mint ARGS... → prints the access token (client: --client ID; user: --user NAME; --scope, --resource)
mint() { node "$IDP_DIR/token.mjs" --issuer "$IDP" "$@" | jq -r .access_token; }
mint_json() { node "$IDP_DIR/token.mjs" --issuer "$IDP" "$@"; }
revoke() { node "$IDP_DIR/token.mjs" --issuer "$IDP" --revoke="$1" > /dev/null; }
idp_stats() { curl -s --max-time 5 "$IDP/_stats" | jq -r ".${1:-introspections}"; }
idp_reset() { curl -s --max-time 5 -X POST "$IDP/_stats/reset" > /dev/null; }
# idp_format FORMAT [ALG]: the access tokens it issues from now on (opaque, or jwt signed
# with RS256, PS256 or ES256).
idp_format() { curl -s --max-time 5 -X POST -H 'Content-Type: application/json' -d "{\"format\":\"$1\"${2:+,\"alg\":\"$2\"}}" "$IDP/_format" > /dev/null; }
# idp_sign JSON: a JWS made by the IdP (POST /_sign; JSON = {"header", "payload", "key"}:
# tests/idp/README.md): a token it would never issue, signed with its own key or not.
idp_sign() { curl -s --max-time 5 -X POST -H 'Content-Type: application/json' -d "$1" "$IDP/_sign" | jq -r .token; }
idp_fault() { curl -s --max-time 5 -X POST -H 'Content-Type: application/json' -d "{\"introspection\":\"$1\"}" "$IDP/_fault" > /dev/null; }

# leaked_fragments FRAGMENTS FILE...: how many of the lines of FRAGMENTS (pieces of tokens
# and codes, written by the SDK scripts) occur in any of the FILEs.
leaked_fragments() {
	local frags=$1 f n=0
	shift
	while IFS= read -r f; do
		[ -n "$f" ] || continue
		grep -qF -- "$f" "$@" 2>/dev/null && n=$((n + 1))
	done < "$frags"
	echo "$n"
}

# sdk_afterwards SCRIPT RC MIN PIDS: after an SDK script's run (its TAP in $T/sdk.tap, its
# stderr in $T/sdk.err, its token pieces in $T/fragments): its steps relayed into ours, it
# ran MIN steps at least and exited RC 0; the mcpgate processes PIDS survived; no piece of
# a token or code in the gateway's, nginx's or the IdP's logs.
sdk_afterwards() {
	local script=$1 rc=$2 min=$3 pid gone='' leaks
	tap_relay "$T/sdk.tap"
	if [ "$rc" -eq 0 ] && [ "$tap_relayed" -ge "$min" ]; then
		pass "$script ran every step ($tap_relayed) and exited 0"
	else
		fail "$script ran every step and exited 0" "exit $rc after $tap_relayed steps; stderr: $(tail -n 15 "$T/sdk.err")"
	fi
	for pid in $4; do mg_alive "$pid" || gone="$gone $pid"; done
	is "the mcpgate processes survived the run" "${gone:-none}" none
	if [ -s "$T/fragments" ]; then
		leaks=$(leaked_fragments "$T/fragments" "$T/gw.log" "$MG_LOG" "$MG_FRONT_LOG" "$MG_DIR/nginx/access.log" "$T/idp.log")
		is "no token or code fragment in the gateway's, nginx's or the IdP's logs ($(wc -l < "$T/fragments") fragments)" "$leaks" 0
	else
		fail "no token or code fragment in any log" "$script wrote no fragments"
	fi
}

# gateway_conf OUT RESOURCE [GATEWAY-LINE...]: the one gateway configuration of the
# suites: verifying tokens at $IDP as the `mcpgate` client, with its state and log in $T
# (GW_STATE, GW_LOG), the LINEs added to [gateway]; a suite appends its own sections
# ([upstream], [group], ...). A cached token stays cached for the whole suite (cache-ttl
# an hour, GW_CACHE_TTL): a slow run must not see it expire in between. GW_AUTH_TIMEOUT_MS
# (1500): [auth] timeout-ms.
gateway_conf() {
	local out=$1 resource=$2
	shift 2
	(umask 077 && printf 'mcpgate-secret\n' > "$T/secret")	# a secret file: 0600 (cfgfile_judge)
	{
		printf '%s\n' '[gateway]' "resource = $resource" 'name = com.example/gateway' \
			"state = ${GW_STATE:-$T/state}" "log-file = ${GW_LOG:-$T/gw.log}" "$@"
		cat <<CONF
[auth]
issuer = $IDP
client-id = mcpgate
client-secret-file = $T/secret
required-scopes = mcp:tools
scopes-supported = mcp:tools
cache-ttl = ${GW_CACHE_TTL:-3600}
negative-ttl = 5
timeout-ms = ${GW_AUTH_TIMEOUT_MS:-1500}
CONF
	} > "$out"
}

# mint_cc CLIENT [SCOPE]: a client_credentials token straight from the token endpoint
# with curl (no Node start-up: for tokens whose lifetime starts counting at once).
mint_cc() {
	curl -s --max-time 30 -u "$1:$1-secret" -d grant_type=client_credentials \
		-d "scope=${2:-mcp:tools}" "$IDP/token" | jq -r .access_token
}
