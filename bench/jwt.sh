#!/usr/bin/env bash
# bench/jwt.sh — the benchmark of JWT access tokens verified at the gateway.
#
# One stack (nginx + spawn-fcgi + mcpgate, [auth] verify = auto: a JWT is verified here,
# an opaque token introspected) and the authorization server (tests/idp, oidc-provider),
# requests per second of POST /mcp ping (BENCH_SESSION=1: with the Mcp-Session-Id of an
# initialize, as a client sends it) with:
#
#   O   one opaque token, introspected once, then a hit of the token cache
#   J   one JWT access token, verified once, then a hit of the token cache
#   F   a JWT never seen before on every request (a pool minted beforehand: RS256, signed
#       by the authorization server's own key through its /_sign, the claims of its own
#       tokens): a cache miss, one signature check with the mirrored keys, no network
#   P   one DPoP-bound JWT (bound to an ES256 key of the client's), cached, with a new
#       DPoP proof on every request (a pool minted just before each run, by
#       bench/dpop.mjs): one proof checked and recorded per request
#
# Targets: F / J >= 0.7, J / O >= 0.95 and P / J >= 0.8 (the medians of the
# per-repetition ratios). The kinds run interleaved (O J F P, O J F P, ...). bench/jws_bench (bench/jws.c, the
# gateway's own code) gives the µs of one signature check and of a whole jwt_verify for
# RS256, PS256 and ES256, alone, before the stack starts. Every answer's status and body
# are checked (wrk.lua: 200 with a "result"), the pool must never run out, and the IdP
# must see no introspection and no fetch of its keys during the runs; otherwise nothing
# is appended. A benchmark, not a timed test: nothing here fails a build.
#
# Usage: bench/jwt.sh            (as root on Debian 12: installs what it lacks)
# Settings (environment):
#   BENCH_DURATION=10   seconds per measured run      BENCH_REPS=3    repetitions
#   BENCH_WARMUP=3      seconds per warm-up run       BENCH_THREADS=2 BENCH_CONNS=8  (wrk -t -c)
#   BENCH_PROCS=2 BENCH_WORKERS=2   mcpgate processes (spawn-fcgi -F) x threads (-w)
#   BENCH_SESSION=1     ping with the Mcp-Session-Id of an initialize (0: no session)
#   BENCH_JWS_N=2000    tokens per repetition of bench/jws_bench (11 repetitions)
#   BENCH_SRC=worktree  build from the working tree (default), or HEAD (git archive)
#   BENCH_RESULTS=bench/RESULTS.md  where the dated section is appended ("" = nowhere)
#   MG_KEEP=1           keep the temp dir (configs, logs) after the run
# Everything goes to bench/out/jwt/ (gitignored). What it shares with the other scripts
# is in bench/lib.sh.
# The whole script is one brace group: bash reads it completely before running it, so
# editing this file while it runs cannot derail the run.
{
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$here/out/jwt
JWS_N=${BENCH_JWS_N:-2000}
CACHE_TTL=3600
KINDS="O J F P"
KNOBS="BENCH_SESSION=$SESSION BENCH_JWS_N=$JWS_N BENCH_SRC=$SRC"
CONF_MORE='verify = auto
jwks-ttl = 3600
dpop-window = 600'

# --- 1. What it needs -------------------------------------------------------------
setup

# --- 2. The binaries ----------------------------------------------------------------
# src/mcpgate and bench/jws_bench (bench/lib.sh's build_mcpgate_with).
build_mcpgate_with jws_bench

# --- 3. One signature check, alone ------------------------------------------------------
prog_run "JWT verification" -n "$JWS_N" -r 11

# --- 4. The stack -------------------------------------------------------------------
mkdir -p "$OUT/tmp"
TMPDIR=$OUT/tmp bench_root mcpgate.log nginx/error.log idp.log mcpgate.conf
one_stack "$BIN"
OPAQUE=$(one_token) || die "cannot mint an opaque token"
curl -s --max-time 5 -X POST -H 'Content-Type: application/json' -d '{"format":"jwt","alg":"RS256"}' "$IDP/_format" >/dev/null
JWT=$(one_token) || die "cannot mint a JWT"
[ "$(cut -d. -f1 <<<"$JWT" | tr '_-' '/+' | base64 -d 2>/dev/null | jq -r .typ)" = at+jwt ] || die "the IdP issued no JWT access token"
# pool JSON COUNT FILE: COUNT tokens of the IdP's /_sign with the claims of its own JWTs
# (a jti each), in FILE, one a line; 5000 a request.
CLAIMS=$(cut -d. -f2 <<<"$JWT" | tr '_-' '/+' | base64 -d 2>/dev/null | jq -c 'del(.jti)')
[ -n "$CLAIMS" ] || die "cannot read the JWT's claims"
pool() {
	local left=$1 n
	: >"$2.tmp"
	while [ "$left" -gt 0 ]; do
		n=$((left > 5000 ? 5000 : left))
		curl -s --max-time 600 -X POST -H 'Content-Type: application/json' \
			-d "{\"key\":\"rsa\",\"count\":$n,\"payload\":$CLAIMS}" "$IDP/_sign" | jq -r '.tokens[]' >>"$2.tmp" ||
			die "minting the pool failed"
		left=$((left - n))
	done
	[ "$(sort -u "$2.tmp" | wc -l)" = "$1" ] || die "the pool has $(sort -u "$2.tmp" | wc -l) distinct tokens, not $1"
	mv "$2.tmp" "$2"
}

PING='{"jsonrpc":"2.0","id":1,"method":"ping"}'
declare -A SID=()
for k in O J; do
	tok=$OPAQUE
	[ "$k" = O ] || tok=$JWT
	check "no token: 401" "$(post_to "$BASE/mcp" "$PING")" ' 401$'
	SESS=()
	if [ "$SESSION" != 0 ]; then
		check "$k: initialize: 200" "$(post_to "$BASE/mcp" "$INIT" -H "Authorization: Bearer $tok")" "\"protocolVersion\":\"$PV\".* 200\$"
		SID[$k]=$(sid)
		SESS=(-H "Mcp-Session-Id: ${SID[$k]}" -H "MCP-Protocol-Version: $PV")
	fi
	check "$k: ping: 200" "$(post_to "$BASE/mcp" "$PING" -H "Authorization: Bearer $tok" "${SESS[@]}")" '"result":\{\}.* 200$'
done
pool 3 "$ROOT/pool.check"
F_SID=${SID[J]:-}
while read -r t; do
	SESS=()
	[ -z "$F_SID" ] || SESS=(-H "Mcp-Session-Id: $F_SID" -H "MCP-Protocol-Version: $PV")
	check "F: a fresh JWT of the pool: 200" "$(post_to "$BASE/mcp" "$PING" -H "Authorization: Bearer $t" "${SESS[@]}")" '"result":\{\}.* 200$'
done <"$ROOT/pool.check"
check "a JWT with another signature: 401" "$(post_to "$BASE/mcp" "$PING" -H "Authorization: Bearer ${JWT%?????}AAAAA")" ' 401$'
# P: the client's key, its bound token, a session of its own (initialize with a proof)
node "$here/dpop.mjs" --key "$ROOT/dpop.key" --issuer "$IDP" --token-out "$ROOT/bound" || die "cannot mint a DPoP-bound token"
BOUND=$(cat "$ROOT/bound")
proofs() { # COUNT FILE: proofs for POST /mcp with the bound token
	node "$here/dpop.mjs" --key "$ROOT/dpop.key" --token "$ROOT/bound" --htu "$BASE/mcp" --count "$1" --out "$2" ||
		die "minting proofs failed"
}
proofs 3 "$ROOT/proofs.check"
SESS=()
if [ "$SESSION" != 0 ]; then
	check "P: initialize with a proof: 200" "$(post_to "$BASE/mcp" "$INIT" -H "Authorization: DPoP $BOUND" -H "DPoP: $(sed -n 1p "$ROOT/proofs.check")")" "\"protocolVersion\":\"$PV\".* 200\$"
	SID[P]=$(sid)
	SESS=(-H "Mcp-Session-Id: ${SID[P]}" -H "MCP-Protocol-Version: $PV")
fi
check "P: ping with a proof: 200" "$(post_to "$BASE/mcp" "$PING" -H "Authorization: DPoP $BOUND" -H "DPoP: $(sed -n 2p "$ROOT/proofs.check")" "${SESS[@]}")" '"result":\{\}.* 200$'
check "P: the same proof again: 401" "$(post_to "$BASE/mcp" "$PING" -H "Authorization: DPoP $BOUND" -H "DPoP: $(sed -n 2p "$ROOT/proofs.check")" "${SESS[@]}")" ' 401$'
check "P: the bound token as Bearer: 401" "$(post_to "$BASE/mcp" "$PING" -H "Authorization: Bearer $BOUND" "${SESS[@]}")" ' 401$'
jwks0=$(curl -s --max-time 5 "$IDP/_stats" | jq -r .jwks)

# --- 5. Measuring -------------------------------------------------------------------
runs_header kind pool_used exhausted us_nginx us_mcpgate us_idp
run() { # KIND SECONDS REP
	local kind=$1 secs=$2 rep=$3 envs=(BENCH_TARGET=ping BENCH_EXPECT=200 "BENCH_THREADS=$THREADS") s
	case $kind in
	O) envs+=("BENCH_TOKEN=$OPAQUE") s=${SID[O]:-} ;;
	J) envs+=("BENCH_TOKEN=$JWT") s=${SID[J]:-} ;;
	F) envs+=("BENCH_POOL=$ROOT/pool.$rep") s=${SID[J]:-} ;;
	P) # a new pool for each run, made just before it: proofs are fresh for dpop-window
		proofs "$POOLN_P" "$ROOT/proofs.$rep"
		envs+=("BENCH_TOKEN=$BOUND" BENCH_SCHEME=DPoP BENCH_POOL_HEADER=DPoP "BENCH_POOL=$ROOT/proofs.$rep") s=${SID[P]:-} ;;
	esac
	[ -z "$s" ] || envs+=("BENCH_SESSION=$s" "BENCH_PROTOCOL=$PV")
	# F's fresh tokens evict the cached ones from the token cache: O's and J's are
	# verified again here, before the run, not during it
	case $kind in
	O) post_to "$BASE/mcp" "$PING" -H "Authorization: Bearer $OPAQUE" >/dev/null ;;
	J) post_to "$BASE/mcp" "$PING" -H "Authorization: Bearer $JWT" >/dev/null ;;
	esac
	CPU_PIDS=("$(nginx_pids "$NGINX")" "$FCGI" "$IDP_PID")
	measure "$kind" "$secs" "$OUT/wrk.$rep.$kind.out" "$BASE/mcp" "${envs[@]}"
	row "$rep" "$kind" "$(kv pool_used)" "$(kv exhausted)"
	said "$rep" "$kind"
}
kindname() {
	case $1 in
	O) echo "O opaque token, cached (introspected once)" ;;
	J) echo "J JWT, cached (verified once)" ;;
	F) echo "F a fresh JWT every request (one signature check)" ;;
	P) echo "P a DPoP-bound JWT, cached, a new proof every request" ;;
	esac
}

say "warm-up: minting a pool"
pool 60000 "$ROOT/pool.w"
POOLN_P=60000
run O "$WARMUP" w
run J "$WARMUP" w
run F "$WARMUP" w
rate_f=$(kv rps)
run P "$WARMUP" w
rate_p=$(kv rps)
# A pool per repetition: twice the warm-up rate (at least 2000/s) for the whole run.
POOLN=$(awk -v a="$rate_f" -v d="$DURATION" 'BEGIN { m = a < 2000 ? 2000 : a; printf "%d", m * d * 2 + 1000 }')
POOLN_P=$(awk -v a="$rate_p" -v d="$DURATION" 'BEGIN { m = a < 2000 ? 2000 : a; printf "%d", m * d * 2 + 1000 }')
say "minting $REPS x $POOLN JWTs"
for r in $(seq 1 "$REPS"); do pool "$POOLN" "$ROOT/pool.$r"; done
say "measuring: $REPS x ($KINDS), $DURATION s each, wrk -t$THREADS -c$CONNS"
for r in $(seq 1 "$REPS"); do
	for k in $KINDS; do run "$k" "$DURATION" "$r"; done
done
# shellcheck disable=SC2086
runs_done $FCGI
jwks1=$(curl -s --max-time 5 "$IDP/_stats" | jq -r .jwks)

# --- 6. Report ----------------------------------------------------------------------
ratio_medians F/J J/O P/J F/O
bad=$(awk -F'\t' '$1 != "rep" && ($6 > 0 || $8 > 0 || $9 > 0) { printf "%s/%s ", $1, $2 }' "$RUNS")
intro=$(awk -F'\t' '$1 != "rep" { s += $12 } END { print s + 0 }' "$RUNS")
exhausted=$(awk -F'\t' '$1 != "rep" && ($2 == "F" || $2 == "P") && $14 > 0 { printf "%s/%s ", $1, $2 }' "$RUNS")
table() {
	# shellcheck disable=SC2086 # the kinds are words
	rates_table request "nginx, mcpgate, IdP, wrk" $KINDS
	ratio_row F/J "F / J (a fresh JWT vs a cached one)" "≥ 0.7" 0.7
	ratio_row J/O "J / O (a cached JWT vs a cached introspected token)" "≥ 0.95" 0.95
	ratio_row P/J "P / J (DPoP on vs off, a cached token)" "≥ 0.8" 0.8
	ratio_row F/O "F / O (a fresh JWT vs a cached introspected token)"
	echo
	echo "One JWT verified (\`bench/jws_bench -n $JWS_N -r 11\`: src/base/jws.c over cjose $(pkg-config --modversion cjose) and $(openssl version | cut -d' ' -f1-2); CPU time, median of 11):"
	echo
	echo "| algorithm | parse µs | parse + signature µs | jwt_verify µs (+ header, claims, keys from the worker's view) |"
	echo "|---|---:|---:|---:|"
	for a in RS256 PS256 ES256; do
		echo "| $a | $(us "$(pb "parse_$a")") | $(us "$(pb "sig_$a")") | $(us "$(pb "jwt_$a")") |"
	done
	echo
	echo "One DPoP proof checked (dpop_check: the parse, the key imported from its header, its thumbprint, the signature, the claims): ES256 $(us "$(pb proof_ES256)") µs, PS256 $(us "$(pb proof_PS256)") µs."
	echo
	echo "mcpgate's CPU per request (median): F − J $(awk -v f="$(med F 16)" -v j="$(med J 16)" 'BEGIN { printf "%.0f", f - j }') µs: what a cache miss with one RS256 signature check adds (the JWT, the cache fill, the claims); P − J $(awk -v f="$(med P 16)" -v j="$(med J 16)" 'BEGIN { printf "%.0f", f - j }') µs: what a DPoP proof adds (checked, recorded in the state file)."
	echo
	echo "Correctness during every run (warm-ups included): every answer 200 with its \"result\", no socket errors: $([ -z "$bad" ] && echo yes || echo "NO: $bad (see $RUNS)"); the pool never ran out: $([ -z "$exhausted" ] && echo yes || echo "NO: $exhausted"); introspections during the runs (0 expected: O's token was cached before): $intro; fetches of the JWK set during the runs (0 expected): $((jwks1 - jwks0))"
}
report
if [ -n "$bad" ] || [ -n "$exhausted" ] || [ "$intro" != 0 ] || [ "$jwks1" != "$jwks0" ]; then
	say "not appended: a run was not clean (see the last lines of the table)"
	exit 1
fi
append_results jwt "" "oidc-provider $(oidc_version) on node $(node -v): O an opaque token, J and F JWT access tokens (RS256, RSA-2048) of it; [auth] verify = auto, cache-ttl = $CACHE_TTL" \
	kind "$KINDS" "- requests: POST /mcp ping$([ "$SESSION" = 0 ] || echo " with the Mcp-Session-Id of an initialize and MCP-Protocol-Version: $PV") and \`Authorization: Bearer\` (P: \`DPoP\` and a \`DPoP\` proof); F: $POOLN tokens per repetition, P: $POOLN_P proofs per run (ES256), none sent twice; dpop-window = 600"
exit 0
}
