#!/usr/bin/env bash
# Authentication through CGI and spawn-fcgi, with real oidc-provider tokens: every
# acceptance rule of docs/ARCHITECTURE.md §5, the shared cache (one introspection for
# many requests, across 4 FastCGI processes and CGI runs), negative caching, expiry and
# revocation, faults of the authorization server, the metadata mirror, and no token in
# any log.
#
# Time: a CGI run of an ASan build on a loaded machine takes a second or more, so no
# lifetime here is a guess. The cache lifetime is an hour (every entry outlives the run);
# the short ones that must run out (negative-ttl, cache-ttl before a revocation takes
# effect, the 5 s token) are checked over a window this run measured: a window that
# still outlived its lifetime is tried again with a lifetime sized from it.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../cgi/lib.sh"
. "$here/../lib/idp.sh"
. "$here/../lib/wait.sh"
trap 'stop_idp; [ -f "$T/fcgi.pid" ] && kill $(cat "$T/fcgi.pid") 2>/dev/null; rm -rf "$T"' EXIT
GW=http://127.0.0.1:8080/mcp
start_idp "$GW" http://127.0.0.1:8081/other
(umask 077 && printf 'mcpgate-secret\n' > "$T/secret")
AS_TIMEOUT=5000	# [auth] timeout-ms: an introspection under valgrind on a loaded machine takes seconds
auth_conf() {	# [CACHE_TTL=s] [NEG_TTL=s] auth_conf [extra [auth] lines]
	ISSUER=$IDP write_conf '[gateway]' "log-file = $T/gw.log" '[auth]' 'client-id = mcpgate' \
		"client-secret-file = $T/secret" "cache-ttl = ${CACHE_TTL:-3600}" "negative-ttl = ${NEG_TTL:-3600}" \
		"timeout-ms = $AS_TIMEOUT" "$@"
}
auth_conf
LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
call() {	# call TOKEN-OR-HEADER [VAR=value...] → status in $(status), body in $T/body
	local auth=$1
	shift
	cgi POST /mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#LIST} HTTP_AUTHORIZATION="$auth" "$@" <<< "$LIST"
}

machine=$(mint --client machine-acme --scope mcp:tools)
user=$(mint --user alice --scope "mcp:tools offline_access")
refresh=$(mint_json --user bob --scope "mcp:tools offline_access" | jq -r .refresh_token)
wrong_aud=$(mint --client machine-acme --scope mcp:tools --resource http://127.0.0.1:8081/other)
no_scope=$(mint --client machine-acme --scope mcp:read)
[ -n "$machine" ] && [ -n "$user" ] && [ -n "$refresh" ] && [ "$refresh" != null ] \
	&& pass "tokens minted by oidc-provider" || fail "tokens minted by oidc-provider"
all_tokens=("$machine" "$user" "$refresh" "$wrong_aud" "$no_scope")

call "Bearer $machine"
is "machine token (client_credentials): 200" "$(status)" 200
is "machine token: tools/list answered" "$(jf '.result.tools|type')" array
call "Bearer $user"
is "user token (auth code + PKCE): 200" "$(status)" 200
# The short-lived token lives 5 s from its issue (exp is whole seconds: at least 4 s from
# the start of the mint); it must reach the cache while valid.
for try in 1 2 3; do
	short_at=$(now_ms)
	short=$(mint_cc short-lived mcp:tools)
	all_tokens+=("$short")
	call "Bearer $short"
	w=$(( $(now_ms) - short_at ))
	[ "$w" -ge 3900 ] || break
done
is "short-lived token while valid (minted and used within ${w} ms, try $try): 200 (now cached)" "$(status)" 200

call "Bearer $wrong_aud"
is "wrong audience: 401" "$(status)" 401
like "wrong audience: invalid_token with a reason" "$(header WWW-Authenticate)" 'error="invalid_token", error_description="token not issued for this resource"'
call "Bearer $refresh"
is "refresh token as access token: 401" "$(status)" 401
call "Bearer $no_scope"
is "missing required scope: 403" "$(status)" 403
like "missing scope: insufficient_scope challenge with granted + needed scopes" "$(header WWW-Authenticate)" \
	'error="insufficient_scope".*|scope="mcp:read mcp:tools"'
like "missing scope: scope lists granted and needed" "$(header WWW-Authenticate)" 'scope="mcp:read mcp:tools"'
call "Bearer not-a-real-token"
is "unknown token: 401" "$(status)" 401
like "unknown token: not active" "$(header WWW-Authenticate)" 'token is not active'
call "Bearer $machine, Bearer $user"
is "two Authorization headers (merged by the server): 401" "$(status)" 401
call "Bearer"
is "malformed header: 401" "$(status)" 401
call "Basic bWNwZ2F0ZTpzZWNyZXQ="
is "Basic scheme: 401" "$(status)" 401
like "every 401 names the metadata" "$(header WWW-Authenticate)" "^Bearer resource_metadata=\"http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp\""

# The cache: 20 requests with one token cost no introspection (already cached above).
idp_reset
for _ in $(seq 1 20); do call "Bearer $machine"; done
is "cached token: 20 requests, 0 introspections" "$(idp_stats)" 0
fresh=$(mint --client machine-beta --scope mcp:tools)
all_tokens+=("$fresh")
idp_reset
for _ in $(seq 1 10); do call "Bearer $fresh"; done
is "fresh token: 10 requests, 1 introspection" "$(idp_stats)" 1
# libcurl is loaded only when a request needs another server (src/net/curlload.c): the
# dynamic loader's own account of the files it maps (LD_DEBUG=files, every object, those
# loaded with dlopen too) shows none for a cached token, and libcurl for a fresh one,
# whose introspection then works.
loaded() { cat "$T/ld.$1".* 2>/dev/null | grep -c 'file=libcurl'; }
idp_reset
call "Bearer $machine" LD_DEBUG=files LD_DEBUG_OUTPUT="$T/ld.cached"
is "a cached token: 200, and no introspection" "$(status) $(idp_stats)" "200 0"
like "… the loader told the files it mapped (LD_DEBUG=files)" "$(cat "$T/ld.cached".* 2>/dev/null)" 'file=libc\.so'
is "… and libcurl was not one of them" "$(loaded cached)" 0
fresh2=$(mint --client machine-beta --scope mcp:tools)
all_tokens+=("$fresh2")
call "Bearer $fresh2" LD_DEBUG=files LD_DEBUG_OUTPUT="$T/ld.fresh"
is "a fresh token: 200 after one introspection" "$(status) $(idp_stats)" "200 1"
like "… for which the run loaded libcurl" "$(loaded fresh)" '^[1-9]'
# The cache binds an entry to its acceptance context. A second gateway sharing the state
# file (the default when `state` is unset) but serving another resource never takes the
# first's cached answer, nor the first the second's; nor does this one after a reload
# that changed its resource.
sed 's|^resource = .*|resource = http://127.0.0.1:8081/other|' "$T/gw.conf" > "$T/other.conf"
mine=$(mint --client machine-acme --scope mcp:tools)
theirs=$(mint --client machine-acme --scope mcp:tools --resource http://127.0.0.1:8081/other)
all_tokens+=("$mine" "$theirs")
idp_reset
call "Bearer $mine"
is "context: a token for this resource is 200 (now cached)" "$(status)" 200
CONF=$T/other.conf call "Bearer $mine"
is "context: at a gateway of another resource sharing the state file, 401" "$(status)" 401
like "context: there the audience is checked (introspected, not a cache hit)" "$(header WWW-Authenticate)" \
	'token not issued for this resource'
CONF=$T/other.conf call "Bearer $theirs"
is "context: the other gateway's own token is 200 there (now cached)" "$(status)" 200
call "Bearer $theirs"
is "context: ... and 401 here" "$(status)" 401
is "context: every gateway introspected each token for itself (4 introspections)" "$(idp_stats)" 4
RESOURCE=http://127.0.0.1:8081/other auth_conf
call "Bearer $mine"
is "context: reloaded with another resource, a token cached under the old one is 401" "$(status)" 401
auth_conf
call "Bearer $mine"
is "context: back to the first resource, 200 again" "$(status)" 200

# Negative caching: an invalid token is introspected once per negative-ttl. The lifetime
# covers three times what five CGI runs took here (one run's worth measured first).
t0=$(now_ms)
call "Bearer bogus-token-probe"
neg=$(lifetime_for $(( ($(now_ms) - t0) * 5 )) 3)
for try in 1 2 3; do
	NEG_TTL=$neg auth_conf
	bogus=bogus-token-$try-$RANDOM
	idp_reset
	t0=$(now_ms)
	call "Bearer $bogus"
	t1=$(now_ms)
	st=$(status)
	for _ in 2 3 4 5; do call "Bearer $bogus"; st="$st $(status)"; done
	w=$(( $(now_ms) - t0 ))
	n=$(idp_stats)
	[ "$w" -ge $((neg * 1000)) ] || break
	neg=$(lifetime_for "$w" $((neg * 2)))
done
is "invalid token: 5 requests in ${w} ms (negative-ttl $neg s, try $try): all 401, 1 introspection" "$st: $n" "401 401 401 401 401: 1"
sleep_until_ms $((t1 + neg * 1000 + 200))
call "Bearer $bogus"
is "after negative-ttl: introspected again" "$(idp_stats)" 2
auth_conf

# A positive entry never outlives the token's exp (min(cache-ttl, exp - now)); the
# re-check of exp on every hit is proven in tests/unit/test_token_cache.
sleep_until_ms $((short_at + 6200))
call "Bearer $short"
is "expired token (it was cached): 401" "$(status)" 401
like "expired token: invalid_token" "$(header WWW-Authenticate)" 'error="invalid_token", error_description="token (expired|is not active)"'

# Revocation: within cache-ttl the cached answer stands; after it, the token is refused.
# The lifetime covers three times a call, a revocation and a call as measured here.
t0=$(now_ms)
probe=$(mint_cc machine-none mcp:tools)
all_tokens+=("$probe")
call "Bearer $probe"
revoke "$probe"
call "Bearer $probe"
ttl=$(lifetime_for $(( $(now_ms) - t0 )))
for try in 1 2 3; do
	CACHE_TTL=$ttl auth_conf
	victim=$(mint_cc machine-none mcp:tools)
	all_tokens+=("$victim")
	t0=$(now_ms)
	call "Bearer $victim"
	before=$(status)
	t1=$(now_ms)
	revoke "$victim"
	call "Bearer $victim"
	within=$(status)
	w=$(( $(now_ms) - t0 ))
	[ "$w" -ge $((ttl * 1000)) ] || break
	ttl=$(lifetime_for "$w" $((ttl * 2)))
done
is "token before revocation: 200" "$before" 200
is "revoked, within cache-ttl ($ttl s; ${w} ms, try $try): still served from cache (200)" "$within" 200
sleep_until_ms $((t1 + ttl * 1000 + 200))
call "Bearer $victim"
is "revoked, after cache-ttl: 401" "$(status)" 401
auth_conf
# cache-ttl lowered: entries stored under the longer one are not taken past the new one
# (an operator's lower cache-ttl, for revocations to count sooner, holds at once).
victim=$(mint_cc machine-none mcp:tools)
all_tokens+=("$victim")
call "Bearer $victim"
is "a token cached under cache-ttl = 3600: 200" "$(status)" 200
revoke "$victim"
call "Bearer $victim"
is "… revoked: still served from the cache (200)" "$(status)" 200
CACHE_TTL=1 auth_conf
call "Bearer $victim"
is "… cache-ttl lowered to 1 s: its entry of an hour is not taken, the token refused (401)" "$(status)" 401
auth_conf

# The metadata mirror.
cgi GET /.well-known/oauth-authorization-server
is "AS metadata mirrored: 200" "$(status)" 200
is "AS metadata: the issuer's own document" "$(jf .issuer)" "$IDP"
is "AS metadata: introspection endpoint" "$(jf .introspection_endpoint)" "$IDP/token/introspection"

# Faults: fresh tokens get 500 + Retry-After within the timeout; cached ones keep working.
# "Within the timeout" allows timeout-ms, 1 s, and four times a normal run measured here.
t0=$(now_ms)
call "Bearer $machine"
is "before the faults: the machine token is (still) accepted and cached" "$(status)" 200
limit=$(( AS_TIMEOUT + 1000 + 4 * ($(now_ms) - t0) ))
for mode in hang 500 garbage; do
	idp_fault "$mode"
	t=$(mint --client machine-beta --scope mcp:tools)
	all_tokens+=("$t")
	start=$(date +%s%N)
	call "Bearer $t"
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	is "AS fault '$mode': 500, never 401" "$(status)" 500
	is "AS fault '$mode': Retry-After" "$(header Retry-After)" 5
	[ "$ms" -lt "$limit" ] && pass "AS fault '$mode': answered within the timeout (${ms} ms < $limit)" || fail "AS fault '$mode': within the timeout" "${ms} ms, limit $limit"
	call "Bearer $machine"
	is "AS fault '$mode': a cached token still works" "$(status)" 200
done
idp_fault none
# An exp beyond any clock (the largest 64-bit integer): accepted, and cached for cache-ttl
# (the entry's lifetime is min(cache-ttl, exp), computed without overflow: UBSan, in the
# asan ring, fails the run on any).
idp_fault far-exp
call "Bearer far-exp-token"
is "exp = 2^63-1: accepted" "$(status)" 200
idp_fault none
call "Bearer far-exp-token"
is "exp = 2^63-1: cached for cache-ttl (the IdP, asked now, would say inactive)" "$(status)" 200
like "AS failures logged with the reason" "$(cat "$T/gw.log")" 'authorization server failed: .*(timed out|Timeout|answered 500|not a JSON)'

# Shared by processes: 4 spawn-fcgi processes and CGI runs, one introspection.
shared=$(mint --client machine-acme --scope mcp:tools)
all_tokens+=("$shared")
spawn-fcgi -s "$T/fcgi.sock" -F 4 -P "$T/fcgi.pid" -- "$MCPGATE_BIN" -c "$T/gw.conf" -w 2 > /dev/null 2>&1
wait_until 30 test -S "$T/fcgi.sock"
idp_reset
jobs_pids=()
for i in $(seq 1 40); do
	( env -i REQUEST_METHOD=POST SCRIPT_NAME=/mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#LIST} \
		HTTP_AUTHORIZATION="Bearer $shared" timeout 30 cgi-fcgi -bind -connect "$T/fcgi.sock" <<< "$LIST" \
		| head -1 | tr -d '\r' > "$T/r.$i" ) &
	jobs_pids+=($!)
	if [ $((i % 8)) -eq 0 ]; then wait "${jobs_pids[@]}"; jobs_pids=(); fi
done
call "Bearer $shared"
is "a CGI run with the same token: 200" "$(status)" 200
is "40 concurrent FastCGI requests over 4 processes: all 200" "$(cat "$T"/r.* | grep -c '^Status: 200')" 40
n=$(idp_stats)
is "shared cache: one introspection for all of them" "$n" 1
pids=$(pgrep -f "$T/gw.conf" | wc -l)
[ "$pids" -ge 4 ] && pass "4 FastCGI processes served ($pids running)" || fail "4 FastCGI processes" "$pids"

# Sessions: sealed, bound to the caller, ended by DELETE (any process can check them).
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
cgi POST /mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#INIT} HTTP_AUTHORIZATION="Bearer $machine" <<< "$INIT"
sid=$(header Mcp-Session-Id)
is "initialize: 200" "$(status)" 200
like "initialize: Mcp-Session-Id issued (visible ASCII)" "$sid" '^[A-Za-z0-9_-]{60,}$'
cgi POST /mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#LIST} HTTP_AUTHORIZATION="Bearer $machine" HTTP_MCP_SESSION_ID="$sid" HTTP_MCP_PROTOCOL_VERSION=2025-06-18 <<< "$LIST"
is "session: used by its caller: 200" "$(status)" 200
env -i REQUEST_METHOD=POST SCRIPT_NAME=/mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#LIST} \
	HTTP_AUTHORIZATION="Bearer $machine" HTTP_MCP_SESSION_ID="$sid" timeout 30 cgi-fcgi -bind -connect "$T/fcgi.sock" <<< "$LIST" > "$T/out"
like "session: continued by a FastCGI process (no session table)" "$(head -1 "$T/out")" '^Status: 200'
cgi POST /mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#LIST} HTTP_AUTHORIZATION="Bearer $user" HTTP_MCP_SESSION_ID="$sid" <<< "$LIST"
is "session: presented with another caller's token: 404" "$(status)" 404
is "session: 404 says so" "$(jf .error)" session_not_found
[ "${sid: -1}" = x ] && sid_bad=${sid%?}y || sid_bad=${sid%?}x	# never the same id
cgi POST /mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#LIST} HTTP_AUTHORIZATION="Bearer $machine" HTTP_MCP_SESSION_ID="$sid_bad" <<< "$LIST"
is "session: tampered: 404" "$(status)" 404
cgi DELETE /mcp HTTP_AUTHORIZATION="Bearer $machine"
is "DELETE without a session: 400" "$(status)" 400
cgi DELETE /mcp HTTP_AUTHORIZATION="Bearer $user" HTTP_MCP_SESSION_ID="$sid"
is "DELETE of another caller's session: 404" "$(status)" 404
cgi DELETE /mcp HTTP_AUTHORIZATION="Bearer $machine" HTTP_MCP_SESSION_ID="$sid"
is "DELETE: 204" "$(status)" 204
cgi POST /mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#LIST} HTTP_AUTHORIZATION="Bearer $machine" HTTP_MCP_SESSION_ID="$sid" <<< "$LIST"
is "after DELETE the id answers 404 (CGI)" "$(status)" 404
env -i REQUEST_METHOD=POST SCRIPT_NAME=/mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#LIST} \
	HTTP_AUTHORIZATION="Bearer $machine" HTTP_MCP_SESSION_ID="$sid" timeout 30 cgi-fcgi -bind -connect "$T/fcgi.sock" <<< "$LIST" > "$T/out"
like "after DELETE the id answers 404 (FastCGI: tombstone shared)" "$(head -1 "$T/out")" '^Status: 404'
cgi POST /mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#LIST} HTTP_AUTHORIZATION="Bearer $machine" <<< "$LIST"
is "no session id: served statelessly" "$(status)" 200

# A running FastCGI process reloaded with another resource: a token it cached under the
# old one is refused. (Each of the 4 processes logs its reload within a second or so.)
before=$(grep -c 'config: reloaded' "$T/gw.log")
RESOURCE=http://127.0.0.1:8081/other auth_conf
for _ in $(seq 1 300); do
	[ "$(grep -c 'config: reloaded' "$T/gw.log")" -ge $((before + 4)) ] && break
	sleep 0.1
done
is "FastCGI: all 4 processes reloaded the new resource" "$(( $(grep -c 'config: reloaded' "$T/gw.log") - before ))" 4
env -i REQUEST_METHOD=POST SCRIPT_NAME=/mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#LIST} \
	HTTP_AUTHORIZATION="Bearer $shared" timeout 5 cgi-fcgi -bind -connect "$T/fcgi.sock" <<< "$LIST" > "$T/out"
like "FastCGI reloaded with another resource: the token it had cached is 401" "$(head -1 "$T/out")" '^Status: 401'
auth_conf

# No token, nor any 12-character fragment of one, in any log.
leaks=0
for t in "${all_tokens[@]}"; do
	[ -n "$t" ] && [ "$t" != null ] || continue
	grep -rqF -- "${t:0:12}" "$T/gw.log" "$T/err" && leaks=$((leaks + 1))
	grep -rqF -- "${t: -12}" "$T/gw.log" "$T/err" && leaks=$((leaks + 1))
done
is "no token or token fragment in any log (${#all_tokens[@]} tokens)" "$leaks" 0
like "rejections are logged with a token digest prefix" "$(cat "$T/gw.log")" 'auth: token [0-9a-f]{8} rejected'

tap_done
