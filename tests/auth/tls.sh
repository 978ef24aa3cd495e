#!/usr/bin/env bash
# An https authorization server (tests/auth/tls-issuer.py, with a certificate made here
# and trusted through [auth] ca-file), as CGI: introspection over TLS works, and an
# http:// introspection endpoint in an https:// issuer's metadata is refused — the
# token never reaches it (the real oidc-provider stands behind that http endpoint and
# counts its introspections).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../cgi/lib.sh"
. "$here/../lib/idp.sh"
trap 'stop_idp; [ -n "${TLS_PID:-}" ] && kill "$TLS_PID" 2>/dev/null; rm -rf "$T"' EXIT
GW=http://127.0.0.1:8080/mcp
start_idp "$GW"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
	-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
	-keyout "$T/key.pem" -out "$T/cert.pem" > "$T/openssl.log" 2>&1 \
	|| { echo "Bail out! openssl could not make a certificate: $(tail -3 "$T/openssl.log")"; exit 1; }
echo "https://127.0.0.1:1/introspect" > "$T/endpoint"
python3 "$here/tls-issuer.py" --cert "$T/cert.pem" --key "$T/key.pem" --resource "$GW" \
	--endpoint-file "$T/endpoint" --ready-file "$T/tls.ready" 2> "$T/tls.log" &
TLS_PID=$!
for _ in $(seq 1 300); do [ -s "$T/tls.ready" ] && break; kill -0 "$TLS_PID" 2>/dev/null || break; sleep 0.1; done
TLS=$(sed -n 's/^ready //p' "$T/tls.ready" 2>/dev/null)
[ -n "$TLS" ] || { echo "Bail out! tls-issuer did not start: $(tail -3 "$T/tls.log")"; exit 1; }

LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
n=0
tls_conf() {	# tls_conf [auth lines...]: the https issuer, a fresh state file (no mirror yet)
	n=$((n + 1))
	ISSUER=$TLS write_conf '[gateway]' "log-file = $T/gw.log" '[auth]' 'client-id = mcpgate' "$@"
	sed -i "s|^state = .*|state = $T/state.$n|" "$T/gw.conf"
}
call() {
	cgi POST /mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#LIST} HTTP_AUTHORIZATION="Bearer $1" <<< "$LIST"
}

# Over TLS, trusted through ca-file: the metadata and the introspection.
echo "$TLS/introspect" > "$T/endpoint"
tls_conf "ca-file = $T/cert.pem"
call tls-token-1
is "https issuer trusted by ca-file: the token is introspected over TLS (200)" "$(status)" 200
tls_conf
call tls-token-2
is "the same issuer without ca-file: its certificate is not trusted (500, never 401)" "$(status)" 500
like "... and the log says why" "$(grep 'authorization server failed' "$T/gw.log" | tail -1)" 'authorization server failed: .*(SSL|certificate)'
tls_conf "ca-file = $T/missing.pem"
cgi GET /mcp/health
is "a ca-file that does not exist: the configuration is refused (500)" "$(status)" 500
check "... with file:line and the key" grep -q "gw.conf:[0-9]*: ca-file: $T/missing.pem" "$T/err"

# The issuer's metadata names an http:// introspection endpoint (the real oidc-provider's):
# that would send the token in clear, so it is refused, and the token never gets there.
echo "$IDP/token/introspection" > "$T/endpoint"
tls_conf "ca-file = $T/cert.pem" 'client-secret-file = '"$T/secret"
(umask 077 && printf 'mcpgate-secret\n' > "$T/secret")
tok=$(mint --client machine-acme --scope mcp:tools)
idp_reset
call "$tok"
is "http:// introspection endpoint from an https:// issuer: 500 (refused), never 401" "$(status)" 500
is "... the token never reached the http endpoint (0 introspections)" "$(idp_stats)" 0
like "... and the log says it was refused" "$(grep 'authorization server failed' "$T/gw.log" | tail -1)" \
	'http:// from an https:// issuer: refused'
# The same http endpoint configured explicitly is the operator's choice: used (its answer
# names another issuer than the configured https one, so the token is then refused).
tls_conf "ca-file = $T/cert.pem" "client-secret-file = $T/secret" "introspection-endpoint = $IDP/token/introspection"
call "$tok"
is "an http introspection-endpoint set in the configuration is used (one introspection)" "$(idp_stats)" 1
like "... its answer judged as usual (issued by another issuer than the https one: 401)" \
	"$(header WWW-Authenticate)" 'token issued by another issuer'
if grep -qF -- "${tok:0:12}" "$T/gw.log" "$T/err" "$T/tls.log"; then fail "no token fragment in the logs"; else pass "no token fragment in the logs"; fi
tap_done
