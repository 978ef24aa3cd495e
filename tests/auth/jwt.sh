#!/usr/bin/env bash
# JWT access tokens (RFC 9068) verified by the gateway from the issuer's JWK set, through
# real nginx (deploy/nginx recipe) + spawn-fcgi (2 processes x 2 threads), with real
# oidc-provider JWT access tokens (tests/idp --token-format jwt): every acceptance row
# (audience, issuer, exp, nbf, alg none, HS256 with the public key, typ), the keys
# fetched once for the host and once more for an unknown kid (a flood of forged kids
# fetches nothing more), a key rotation at the issuer picked up without a restart, the
# issuer down with the keys mirrored, verify = auto (opaque tokens introspected, JWTs
# verified here), introspect-jwt (revocation honoured), and clean logs. /mcp/health's
# jwk_set dependency (up, down while the issuer is, up again) and /metrics' count of JWT
# verifications by outcome.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq

port=$(free_port)
base=http://127.0.0.1:$port
other=http://127.0.0.1:1/other
IDP_OPTS="--token-format jwt" start_idp "$base/mcp" "$other"
idp_port=${IDP##*:}

# conf [AUTH-LINE...]: the gateway's configuration, verifying tokens as JWTs with these
# [auth] lines besides (a later line of the same key is an error: give each once), and
# /metrics for loopback.
conf() {
	gateway_conf "$T/mcpgate.conf.new" "$base/mcp"
	{
		echo '[auth]'
		printf '%s\n' "$@"
		printf '%s\n' '[metrics]' 'allow = 127.0.0.1'
	} >> "$T/mcpgate.conf.new"
	mv "$T/mcpgate.conf.new" "$T/mcpgate.conf"
}
# reconf [AUTH-LINE...]: conf, then waits until both processes logged their reload.
reloads() { grep -c 'config: reloaded' "$T/gw.log"; }
reloaded() { [ "$(reloads)" -ge "$1" ]; }
reconf() {
	local before
	before=$(reloads)
	conf "$@"
	wait_until 30 reloaded $((before + 2))
}
base_lines=('verify = jwt' 'clock-skew = 2')
conf "${base_lines[@]}" 'jwks-min-interval = 3600'
start_mcpgate_fcgi "$T/mcpgate.sock" "$T/mcpgate.conf" 2 2 && start_nginx "$port" \
	&& pass "nginx + spawn-fcgi + mcpgate (verify = jwt) + oidc-provider (JWT access tokens) started" \
	|| { fail "stack started"; tap_done; exit 1; }
pids=$MG_FCGI_PIDS

LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
post() {	# post TOKEN → $T/h (headers), $T/b (body); prints the status
	curl -s --max-time 20 -o "$T/b" -D "$T/h" -w '%{http_code}' -X POST "$base/mcp" \
		-H 'Content-Type: application/json' -H "Authorization: Bearer $1" --data "$LIST"
}
hdr() { grep -i "^$1:" "$T/h" | head -1 | sed 's/^[^:]*: //' | tr -d '\r'; }
why() { hdr WWW-Authenticate | sed -n 's/.*error_description="\([^"]*\)".*/\1/p'; }
part() { printf '%s' "$1" | cut -d. -f"$2" | tr '_-' '/+' | base64 -d 2>/dev/null; }
# jwk_set FIELDS: /mcp/health's jwk_set dependency, its jq FIELDS joined by "|".
jwk_set() { curl -s --max-time 10 "$base/mcp/health" | jq -r ".dependencies[] | select(.dependency == \"jwk_set\") | [$1] | map(tostring) | join(\"|\")"; }
# verifications OUTCOME: /metrics' count of JWT verifications with this outcome.
verifications() { curl -s --max-time 10 "$base/metrics" | sed -n "s/^mcpgate_jwt_verifications_total{outcome=\"$1\"} //p"; }
# cgi_status STATE TOKEN: the gateway run once as CGI with its own state file STATE: the
# first line of its answer (all of it in $T/cgi.out)
cgi_status() {
	sed "s|^state = .*|state = $1|" "$T/mcpgate.conf" > "$T/cgi.conf"
	printf '%s' "$LIST" | REQUEST_METHOD=POST PATH_INFO=/mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#LIST} \
		HTTP_AUTHORIZATION="Bearer $2" MCPGATE_CONFIG=$T/cgi.conf timeout 20 "$MCPGATE_BIN" > "$T/cgi.out" 2>> "$T/gw.log"
	head -1 "$T/cgi.out" | tr -d '\r'
}
now() { date +%s; }
# claims JSON: an accepted payload for the gateway (iss, aud, sub, client_id, scope, iat,
# exp, jti) with JSON's members over it.
claims() {
	jq -cn --arg iss "$IDP" --arg aud "$base/mcp" --argjson now "$(now)" --arg jti "t$RANDOM$RANDOM" --argjson over "$1" \
		'{iss: $iss, aud: $aud, sub: "alice", client_id: "cli", scope: "mcp:tools", iat: $now, exp: ($now + 3600), jti: $jti} + $over'
}
# forge KEY HEADER OVER: a token signed by the IdP (KEY: rsa, ec, none, hmac-public,
# other-rsa) with HEADER over {typ: at+jwt} and OVER over the accepted claims.
forge() {
	idp_sign "$(jq -cn --arg key "$1" --argjson header "$2" --argjson payload "$(claims "$3")" \
		'{key: $key, header: $header, payload: $payload}')"
}
tokens=()	# every token sent: none may be found in a log
# jwks-max-age: a CGI gateway with a state file of its own (jwks-ttl = jwks-max-age =
# 60 s) has the keys fetched now; at the end of the suite, 60 s later at least, with the
# issuer failing, a token of the keys it holds is a 500 with Retry-After ("could not
# verify"), not verified with keys the issuer could not confirm for longer than that.
# (The suite's other steps run meanwhile.)
jwks_fault() { curl -s --max-time 5 -X POST -H 'Content-Type: application/json' -d "{\"jwks\":\"$1\"}" "$IDP/_fault/jwks" > /dev/null; }
{ sed -e "s|^state = .*|state = $T/state-age|" -e "/^log-file/d" "$T/mcpgate.conf"; printf '%s\n' '[auth]' 'jwks-ttl = 60' 'jwks-max-age = 60'; } > "$T/age.conf"
age_status() {	# age_status TOKEN: a CGI run of age.conf, its first line (all of it in $T/age.out)
	printf '%s' "$LIST" | REQUEST_METHOD=POST PATH_INFO=/mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#LIST} \
		HTTP_AUTHORIZATION="Bearer $1" MCPGATE_CONFIG=$T/age.conf timeout 20 "$MCPGATE_BIN" > "$T/age.out" 2>> "$T/age.log"
	head -1 "$T/age.out" | tr -d '\r'
}
age_first=$(mint --client machine-acme --scope mcp:tools)
age_later=$(mint --client machine-beta --scope mcp:tools)
age_t0=$(now_ms)
is "jwks-max-age = 60: a CGI gateway of its own state fetches the keys (200)" "$(age_status "$age_first")" "Status: 200 OK"
tokens+=("$age_first" "$age_later")
idp_reset	# (the counts below are the FastCGI gateway's)

machine=$(mint --client machine-acme --scope mcp:tools); tokens+=("$machine")
is "the IdP issues JWT access tokens (typ at+jwt, RS256, a kid)" \
	"$(part "$machine" 1 | jq -c '[.typ, .alg, (.kid|type)]')" '["at+jwt","RS256","string"]'
is "machine JWT: 200" "$(post "$machine")" 200
is "machine JWT: a JSON-RPC result" "$(jq -r '.result.tools|type' "$T/b")" array
is "no introspection: the token was verified here" "$(idp_stats)" 0
is "the issuer's JWK set fetched once" "$(idp_stats jwks)" 1
is "health: the jwk_set dependency is up since the fetch" "$(jwk_set '.state, (.since | length > 0)')" "up|true"
is "health: no introspection dependency (verify = jwt: none is made)" \
	"$(curl -s --max-time 10 "$base/mcp/health" | jq '[.dependencies[] | select(.dependency == "introspection")] | length')" 0
codes=$(for _ in $(seq 1 30); do post "$machine" & done; wait)
is "30 concurrent requests over 2 processes x 2 threads: all 200" "$(echo "$codes" | grep -o 200 | wc -l | tr -d ' ')" 30
fresh=$(mint --client machine-beta --scope mcp:tools); tokens+=("$fresh")
codes=$(for _ in $(seq 1 12); do post "$fresh" & done; wait)
is "a fresh JWT, 12 concurrent requests: all 200" "$(echo "$codes" | grep -o 200 | wc -l | tr -d ' ')" 12
is "the host's processes share one JWK set: still one fetch, no introspection" "$(idp_stats jwks) $(idp_stats)" "1 0"
user=$(mint --user carol --scope mcp:tools); tokens+=("$user")
is "user JWT (authorization code + PKCE): 200" "$(post "$user")" 200
idp_format jwt PS256
t=$(mint --client machine-none --scope mcp:tools); tokens+=("$t")
is "PS256 JWT: 200" "$(part "$t" 1 | jq -r .alg) $(post "$t")" "PS256 200"
idp_format jwt ES256
t=$(mint --client machine-none --scope mcp:tools); tokens+=("$t")
is "ES256 JWT (the P-256 key): 200" "$(part "$t" 1 | jq -r .alg) $(post "$t")" "ES256 200"
idp_format jwt RS256

# The acceptance rows: each refused with its reason, in a 401 challenge.
wrong=$(mint --client machine-acme --scope mcp:tools --resource "$other"); tokens+=("$wrong")
is "wrong audience (a real token for another resource): 401" "$(post "$wrong")" 401
is "wrong audience: reason" "$(why)" "token not issued for this resource"
like "wrong audience: the challenge" "$(hdr WWW-Authenticate)" "^Bearer resource_metadata=\"$base/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:tools\", error=\"invalid_token\""
# Tokens signed by the issuer (or not): KEY|HEADER|CLAIMS OVER THE ACCEPTED ONES|REASON
# (none: accepted)|WHAT
past=$(( $(now) - 3600 )) ahead=$(( $(now) + 3600 ))
while IFS='|' read -r key header over reason what; do
	[ -n "$key" ] || continue
	t=$(forge "$key" "$header" "$over"); tokens+=("$t")
	if [ -z "$reason" ]; then
		is "$what: 200" "$(post "$t")" 200
		continue
	fi
	is "$what: 401" "$(post "$t")" 401
	is "$what: reason" "$(why)" "$reason"
done <<ROWS
rsa|{}|{"iss": "http://127.0.0.1:1"}|token issued by another issuer|wrong issuer (signed with the issuer's key)
rsa|{}|{"exp": $past, "iat": $((past - 3600))}|token expired|expired an hour ago
rsa|{}|{"nbf": $ahead}|token not yet valid|nbf an hour ahead
rsa|{}|{"iat": $ahead}|token issued in the future|iat an hour ahead
rsa|{}|{"exp": "never"}|token time claim is not a number|exp not a number
rsa|{}|{"aud": ["$other", "$base/mcp/"]}||an audience array naming the resource with a trailing slash (accepted)
none|{}|{}|token is not a JWT|alg none with an empty signature (not even a JWS)
hmac-public|{}|{}|JWS algorithm not accepted|HS256 signed with the issuer's public key as the secret
rsa|{"typ": "JWT"}|{}|token is not a JWT access token (typ at+jwt)|typ JWT (not an access token; jwt-typ = strict)
rsa|{"typ": "dpop+jwt"}|{}|token is not a JWT access token (typ at+jwt)|typ dpop+jwt
ROWS
t=$(forge none '{}' '{}')AAAA; tokens+=("$t")
is "alg none with a signature part: 401" "$(post "$t")" 401
is "alg none: reason" "$(why)" "JWS algorithm not accepted"
t=$(forge rsa '{}' '{}')
# (an RS256 signature's last character holds 2 bits: A, Q, g or w; another of those)
[ "${t: -1}" = A ] && t=${t%?}Q || t=${t%?}A
tokens+=("$t")
is "a signature changed in its last character: 401" "$(post "$t")" 401
t=$(forge rsa '{}' '{"scope": "mcp:read"}'); tokens+=("$t")
is "a valid JWT without the required scope: 403" "$(post "$t")" 403
like "missing scope: a step-up challenge" "$(hdr WWW-Authenticate)" 'error="insufficient_scope"'
t=opaque-$RANDOM$RANDOM
is "an opaque token with verify = jwt: 401" "$(post "$t")" 401
is "an opaque token: reason" "$(why)" "token is not a JWT"
is "no refusal asked the issuer for anything" "$(idp_stats) $(idp_stats jwks)" "0 1"

# /metrics: one verification a token the cache does not know, by outcome; a cache hit
# (an accepted or a refused token seen again) is none.
accepted=$(verifications accepted) refused=$(verifications refused)
[ -n "$accepted" ] && [ "$accepted" -gt 0 ] && [ "$refused" -gt 0 ] \
	&& pass "metrics: JWT verifications counted ($accepted accepted, $refused refused so far)" \
	|| fail "metrics: JWT verifications counted" "accepted '$accepted' refused '$refused'"
t=$(forge rsa '{}' '{}'); tokens+=("$t")
post "$t" > /dev/null; post "$t" > /dev/null
t=$(forge rsa '{}' '{"iss": "http://127.0.0.1:2"}'); tokens+=("$t")
post "$t" > /dev/null; post "$t" > /dev/null
is "metrics: a new JWT and a refused one, each sent twice: one verification each" \
	"$(( $(verifications accepted) - accepted )) $(( $(verifications refused) - refused )) $(verifications error)" "1 1 0"

# An unknown kid: one fetch of the keys again, then 401; a flood of forged kids within
# jwks-min-interval fetches nothing more.
idp_reset
t=$(forge other-rsa '{}' '{}'); tokens+=("$t")
is "a key the issuer does not publish (kid not-published): 401" "$(post "$t")" 401
is "unknown kid: reason" "$(why)" "token signed with a key the issuer does not publish"
is "unknown kid: the keys fetched once more" "$(idp_stats jwks)" 1
codes=$(for i in $(seq 1 20); do post "$(forge other-rsa "{\"kid\": \"forged-$i\"}" '{}')" & done; wait)
is "20 forged kids at once: all 401" "$(echo "$codes" | grep -o 401 | wc -l | tr -d ' ') $(echo "$codes" | grep -o '[0-9][0-9][0-9]' | grep -v 401 | sort | uniq -c | tr -s ' \n' ' ')" "20 "
is "20 forged kids within jwks-min-interval: no fetch" "$(idp_stats jwks)" 1

# A real short-lived JWT (5 s): accepted, then refused once expired (clock-skew = 2).
short=$(mint_cc short-lived); tokens+=("$short")
is "short-lived JWT: 200" "$(post "$short")" 200
exp=$(part "$short" 2 | jq -r .exp)
sleep_until_ms $(( (exp + 3) * 1000 ))
is "short-lived JWT past exp + clock-skew: 401" "$(post "$short")" 401
is "short-lived: reason" "$(why)" "token expired"

# A key rotation at the issuer: it restarts with new keys (new kids). The gateway fetches
# the new set for the first token naming a new kid, without a restart of its own.
reconf "${base_lines[@]}" 'jwks-min-interval = 1' && pass "reloaded with jwks-min-interval = 1" \
	|| fail "reloaded with jwks-min-interval = 1" "$(grep config "$T/gw.log" | tail -3)"
old_kid=$(part "$machine" 1 | jq -r .kid)
unseen_old=$(mint --client machine-acme --scope mcp:tools); tokens+=("$unseen_old")
stop_idp
sleep 1.1	# past jwks-min-interval since the last fetch
IDP_PORT=$idp_port IDP_OPTS="--token-format jwt" start_idp "$base/mcp" "$other"
rotated=$(mint --client machine-acme --scope mcp:tools); tokens+=("$rotated")
new_kid=$(part "$rotated" 1 | jq -r .kid)
[ "$new_kid" != "$old_kid" ] && pass "the restarted issuer signs with another kid ($new_kid, was $old_kid)" || fail "the restarted issuer signs with another kid" "$new_kid"
is "a token of the new key: 200 (no gateway restart)" "$(post "$rotated")" 200
is "the new keys fetched once" "$(idp_stats jwks)" 1
is "a token accepted before the rotation stays accepted from the cache" "$(post "$machine")" 200
is "an old token never seen before, its key gone from the set: 401" "$(post "$unseen_old")" 401
is "its reason" "$(why)" "token signed with a key the issuer does not publish"

# The issuer down: the mirrored keys still verify new tokens; an unknown kid is a 401
# (the refetch fails, the keys held are used), not a 500.
unseen=$(mint --client machine-beta --scope mcp:tools); tokens+=("$unseen")
stop_idp
is "issuer down: a JWT never seen before, verified with the mirrored keys: 200" "$(post "$unseen")" 200
sleep 1.1
t=$(printf '{"alg":"RS256","typ":"at+jwt","kid":"gone"}' | base64 -w0 | tr '/+' '_-' | tr -d '=').$(printf '%s' "$unseen" | cut -d. -f2-)
is "issuer down: an unknown kid is 401, not 500" "$(post "$t")" 401
is "issuer down: health's jwk_set is down since the failed fetch, saying what happened (not where)" \
	"$(jwk_set '.state, (.since | length > 0), .detail')" \
	"down|true|the JWK set could not be had (unreachable, an HTTP error, or not a JWK set)"
like "issuer down: health is degraded, naming the JWK set" "$(curl -s --max-time 10 "$base/mcp/health" | jq -c '[.status, .reasons]')" \
	'^\["degraded",\[.*"jwk_set is down since [^"]*: the JWK set could not be had'
grep -q 'jwks: .*the keys fetched before are used' "$T/gw.log" \
	&& pass "issuer down: the failed fetch is logged, the keys held are used" \
	|| fail "issuer down: the failed fetch is logged" "$(grep jwks "$T/gw.log" | tail -3)"
# A gateway that never had the keys (a CGI run on a state file of its own) cannot verify:
# 500 with Retry-After, never 401.
like "issuer down, keys never fetched (CGI, its own state): 500" "$(cgi_status "$T/state-fresh" "$unseen")" '^Status: 500'
like "... with Retry-After" "$(grep -i '^Retry-After:' "$T/cgi.out")" 'Retry-After: 5'
IDP_PORT=$idp_port IDP_OPTS="--token-format jwt" start_idp "$base/mcp" "$other"

# The issuer's JWK set failing while the gateway has none (a CGI run on a state file of
# its own each time): 500 with Retry-After within timeout-ms (1.5 s), never 401, nothing
# kept; a document that is not a usable JWK set is never mirrored.
fresh_jwt=$(mint --client machine-acme --scope mcp:tools); tokens+=("$fresh_jwt")
for mode in 500 garbage huge hang; do
	jwks_fault "$mode"
	t0=$(now_ms)
	st=$(cgi_status "$T/state-$mode" "$fresh_jwt")
	took=$(( $(now_ms) - t0 ))
	like "JWK set fault $mode, no keys mirrored: 500 (in ${took} ms)" "$st" "^Status: 500"
	[ "$took" -lt 15000 ] && pass "JWK set fault $mode: answered within 15 s" || fail "JWK set fault $mode: answered within 15 s" "$took ms"
done
# A well-formed set served with 200 but without a usable key (one symmetric key, or
# none) is what the issuer publishes: every JWT is refused (401), none is a 500.
for mode in no-keys empty; do
	jwks_fault "$mode"
	is "JWK set $mode (a set without a usable key), no keys mirrored: 401" "$(cgi_status "$T/state-$mode" "$fresh_jwt")" "Status: 401 Unauthorized"
	like "… signed with a key the issuer does not publish" "$(grep -i '^WWW-Authenticate:' "$T/cgi.out")" \
		'error_description="token signed with a key the issuer does not publish"'
done
jwks_fault none
is "the fault gone: the same token on a fresh state: 200" "$(cgi_status "$T/state-after" "$fresh_jwt")" "Status: 200 OK"
t=$(forge other-rsa '{"kid": "back"}' '{}'); tokens+=("$t")
is "the issuer back: an unknown kid, the set fetched again: 401" "$(post "$t")" 401
is "… health's jwk_set is up again" "$(jwk_set .state)" up
grep -q 'JWK set from .*: not a JWK set' "$T/gw.log" && grep -q 'no usable signing key' "$T/gw.log" \
	&& pass "the refused documents are logged with why" || fail "the refused documents are logged with why" "$(grep jwks "$T/gw.log" | tail -5)"

# The issuer withdraws every key ({"keys": []}, 200): the empty set replaces the keys
# held (jwks-min-interval is 1 s here), so a token signed with a withdrawn key and never
# seen before is refused, not verified with the keys held; health says the set holds no
# usable key. Published again, a key is taken by the next fetch.
withdrawn=$(mint --client machine-acme --scope mcp:tools); tokens+=("$withdrawn")
jwks_fault empty
idp_reset
sleep 1.1	# past jwks-min-interval since the last fetch for an unknown kid
t=$(forge other-rsa '{"kid": "after-withdrawal"}' '{}'); tokens+=("$t")
is "every key withdrawn: a token naming an unknown kid has the set fetched: 401" "$(post "$t") $(idp_stats jwks)" "401 1"
is "a token of a withdrawn key, never seen before: 401 (the empty set replaced the keys held)" "$(post "$withdrawn")" 401
is "… its reason" "$(why)" "token signed with a key the issuer does not publish"
is "health: jwk_set down, saying the set holds no usable key" "$(jwk_set '.state, .detail')" \
	"down|the issuer's JWK set holds no usable key: every JWT is refused"
grep -q "jwks: the JWK set from .* holds no usable key" "$T/gw.log" \
	&& pass "… and the log says so" || fail "… and the log says so" "$(grep jwks "$T/gw.log" | tail -3)"
jwks_fault none
sleep 1.1	# past jwks-min-interval
back=$(mint --client machine-acme --scope mcp:tools); tokens+=("$back")
is "a key published again: a fresh token of it is accepted (its kid has the set fetched)" "$(post "$back")" 200
is "… health's jwk_set is up again" "$(jwk_set .state)" up

# verify = auto: an opaque token is introspected, a JWT verified here.
reconf 'verify = auto' 'clock-skew = 2' 'jwks-min-interval = 1' && pass "reloaded with verify = auto" \
	|| fail "reloaded with verify = auto" "$(grep config "$T/gw.log" | tail -3)"
idp_format opaque
opaque=$(mint --client machine-acme --scope mcp:tools); tokens+=("$opaque")
idp_format jwt
jwt=$(mint --client machine-acme --scope mcp:tools); tokens+=("$jwt")
idp_reset
is "auto: an opaque token: 200" "$(post "$opaque")" 200
is "auto: ... introspected" "$(idp_stats)" 1
is "auto: a JWT: 200" "$(post "$jwt")" 200
is "auto: ... verified here (no introspection)" "$(idp_stats)" 1

# introspect-jwt: verified here, then introspected, so that a revoked JWT is refused.
revoked1=$(mint --client machine-acme --scope mcp:tools); tokens+=("$revoked1")
revoked2=$(mint --client machine-acme --scope mcp:tools); tokens+=("$revoked2")
revoke "$revoked1"
revoke "$revoked2"
is "a JWT revoked at the issuer, verify = auto alone: 200 (a JWT does not know it was revoked)" "$(post "$revoked1")" 200
reconf 'verify = jwt' 'clock-skew = 2' 'jwks-min-interval = 1' 'introspect-jwt = yes' \
	&& pass "reloaded with introspect-jwt = yes" || fail "reloaded with introspect-jwt = yes" "$(grep config "$T/gw.log" | tail -3)"
idp_reset
is "introspect-jwt: a revoked JWT: 401" "$(post "$revoked2")" 401
is "introspect-jwt: reason" "$(why)" "token is not active"
live=$(mint --client machine-acme --scope mcp:tools); tokens+=("$live")
is "introspect-jwt: a live JWT: 200" "$(post "$live")" 200
is "introspect-jwt: both introspected" "$(idp_stats)" 2
for _ in $(seq 1 5); do post "$live" > /dev/null; done
is "introspect-jwt: a repeated JWT is a cache hit (no more introspection)" "$(idp_stats)" 2
t=$(forge rsa '{}' '{"iss": "http://127.0.0.1:1"}'); tokens+=("$t")
is "introspect-jwt: a JWT refused here is never introspected" "$(post "$t") $(idp_stats)" "401 2"

# jwks-max-age (the CGI gateway of age.conf, whose keys were fetched at the start, by
# the issuer before its restart): 60 s after that fetch, the issuer failing, a token of
# those keys is not verified with them: 500 with Retry-After, logged; once the issuer
# answers (its set has other keys since the restart), the token is refused, 401.
sleep_until_ms $((age_t0 + 61000))
jwks_fault 500
is "jwks-max-age = 60, the issuer failing 60 s after the keys were fetched: 500, not verified" \
	"$(age_status "$age_later")" "Status: 500 Internal Server Error"
like "… with Retry-After" "$(grep -i '^Retry-After:' "$T/age.out")" 'Retry-After: 5'
like "… logged: the keys are older than jwks-max-age" "$(cat "$T/age.log")" 'older than jwks-max-age'
jwks_fault none
age_refused() { [ "$(age_status "$age_later")" = "Status: 401 Unauthorized" ]; }
wait_until 60 age_refused	# (a failed fetch is not tried again for 10 s)
is "… the issuer back: the set fetched again, the key gone since its restart: 401" "$(age_status "$age_later")" "Status: 401 Unauthorized"

# The logs: no token, nor a piece of one (the middle of its payload, its signature's end).
is "no piece of any of ${#tokens[@]} tokens in the gateway's, nginx's or the IdP's logs" "$(pieces_logged "${tokens[@]}")" 0
is "the mcpgate processes survived" "$(gone $pids)" none
tap_done
