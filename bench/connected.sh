#!/usr/bin/env bash
# bench/connected.sh — an upstream reached with the person's connected account
# ([upstream] credentials = user-oauth: their tokens at the upstream's own authorization
# server, kept sealed in the host's vault) against the same upstream behind a static
# header.
#
# Two gateway stacks in the same run, each its own nginx + spawn-fcgi + mcpgate
# (BENCH_PROCS x BENCH_WORKERS), the same binary, sharing the organisation's
# authorization server (tests/idp: the callers' tokens, and the person's sign-in on the
# connect page), a third party's (another tests/idp: the upstream's own) and one upstream,
# the tracker (tests/upstream/fixture.mjs --require-bearer THIRD_PARTY, official SDK,
# --json: it takes only the third party's tokens for it, each introspected there):
#
#   stack S   [upstream] credentials = static: one auth-header-file line, alice's token
#             at the third party, for every caller
#   stack U   [upstream] credentials = user-oauth: alice's account connected once before
#             the runs; each call takes her entry from the vault, unsealed per call
#
# Why the tracker that checks tokens, not an upstream taking any: the connect page finds
# the upstream's authorization server by its protected-resource metadata (RFC 9728) and
# checks the iss of its answer against it (RFC 9207), and only the bearer mode of the
# fixture publishes one; and so the tracker proves that what reached it is alice's own
# token from the third party. Both stacks' calls then cost the upstream the same
# introspection at the third party, which is in the rates of both (its CPU has a column):
# the ratios are the diluted figure, mcpgate's CPU per request U − S the direct one.
#
# Requests per second, p50/p99 latency and CPU per request of tools/call of the echo tool
# (tr_echo) in alice's session of each stack, with 16 client connections (S16, U16) and
# 64 (S64, U64). Target: U16 / S16 and U64 / S64 ≥ 0.95 (a call with a connected account
# costs no more than 5 % more than with a static header: one unseal per call).
#
# Before the runs: the micro-benchmark of the same hit with the gateway's own code
# (bench/connected.c: upcred_bind and connected_bearer for a 43-byte, a 1 KiB and a 4 KiB
# access token), and the time from the elicitation to a connected call: for alice, bob,
# carol and dave in turn, a tools/call answered -32042 gives the connect page's URL, curl
# follows it (a cookie jar of its own, every redirect: the organisation's sign-in, its
# callback, the third party's consent, its callback) to "Connected", and the same call
# again answers; the wall time from the -32042 answer to that answer. Both authorization
# servers complete the interaction headlessly (no --login-pages); the person is named by
# login_hint on each authorization request, as a person picks their account at a login
# page.
#
# Every answer's status and body are checked (wrk.lua: the echoed argument): a run with
# any other answer or a socket error is not a measurement, and nothing is appended then.
# A benchmark, not a timed test: nothing here fails a build.
#
# Usage: bench/connected.sh       (as root on Debian 12: installs what it lacks)
# Settings (environment):
#   BENCH_DURATION=10   seconds per measured run      BENCH_REPS=3    repetitions
#   BENCH_WARMUP=3      seconds per warm-up run       BENCH_THREADS=1 (wrk -t)
#   BENCH_PROCS=2 BENCH_WORKERS=2   mcpgate processes (spawn-fcgi -F) x threads (-w)
#   BENCH_SRC=worktree  build from the working tree (default), or HEAD (git archive)
#   BENCH_RESULTS=bench/RESULTS.md  where the dated section is appended ("" = nowhere)
#   MG_KEEP=1           keep the temp dir (configs, logs) after the run
# Everything goes to bench/out/connected/ (gitignored). What it shares with the other
# scripts is in bench/lib.sh.
# The whole script is one brace group: bash reads it completely before running it, so
# editing this file while it runs cannot derail the run.
{
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$here/out/connected
THREADS=${BENCH_THREADS:-1}
CACHE_TTL=3600
KINDS="S16 U16 S64 U64"
NKINDS=4
PEOPLE="alice bob carol dave"	# tests/idp's accounts that connect, alice first
KNOBS="BENCH_SRC=$SRC"
ECHO_ARG=connected-bench-echo
# Every token here lives an hour (tests/idp's default): the callers', the static header's
# and the connected ones (their refresh is not what is measured).
[ $((REPS * NKINDS * (DURATION + 2) + NKINDS * WARMUP)) -lt 3000 ] ||
	die "a run this long outlives the tokens (1 h); fewer BENCH_REPS or a shorter BENCH_DURATION"

setup
need_sdk
build_mcpgate_with connected_bench

# --- The micro-benchmark, before anything competes with it ---------------------------
declare -A MICRO=()
for t in 43 1024 4096; do
	prog_run "a connected account's vault hit" -t "$t"
	for k in bind name get open bearer hit; do MICRO[$t.$k]=$(pb "${k}_ns"); done
	MICRO[$t.sealed]=$(pb sealed_chars)
done

# --- The authorization servers, the tracker, the two stacks ---------------------------
mkdir -p "$OUT/tmp"
TMPDIR=$OUT/tmp bench_root '*/mcpgate.log' '*/nginx/error.log' idp.log tp.log tracker.log
read -r PORT_S PORT_U UP_PORT TP_PORT <<<"$(free_ports 4)"
[ -n "${TP_PORT:-}" ] || die "no free ports"
declare -A BASEOF=([S]=http://127.0.0.1:$PORT_S [U]=http://127.0.0.1:$PORT_U) FCGIOF=() NGINXOF=() TOK=() SID=()
UP_URL=http://127.0.0.1:$UP_PORT/mcp
TP=http://127.0.0.1:$TP_PORT
CONNECT=${BASEOF[U]}/mcp/connect
# ready_url FILE PID WHAT: the URL a node server wrote to its ready file (10 s at most)
ready_url() {
	local u=''
	for _ in $(seq 1 100); do
		u=$(sed -n 's/^ready //p' "$1" 2>/dev/null)
		if [ -n "$u" ] || ! kill -0 "$2" 2>/dev/null; then break; fi
		sleep 0.1
	done
	[ -n "$u" ] || die "$3 did not start: $(tail -n 5 "${1%.ready}.log" 2>/dev/null)"
	echo "$u"
}
say "starting the third party's authorization server and the tracker"
node "$top/tests/idp/server.mjs" --port "$TP_PORT" --resource "$UP_URL" --ready-file "$ROOT/tp.ready" \
	--quiet >/dev/null 2>"$ROOT/tp.log" &
TP_PID=$!
mg_track "$TP_PID"
node "$top/tests/upstream/fixture.mjs" --port "$UP_PORT" --ready-file "$ROOT/tracker.ready" --name tracker \
	--json --quiet --require-bearer "$TP" --resource "$UP_URL" >/dev/null 2>"$ROOT/tracker.log" &
TRACKER_PID=$!
mg_track "$TRACKER_PID"
start_idp "${BASEOF[U]}/mcp" "${BASEOF[S]}/mcp"
[ "$(ready_url "$ROOT/tp.ready" "$TP_PID" "the third party's authorization server")" = "$TP" ] ||
	die "the third party's authorization server is not at $TP"
[ -n "$(ready_url "$ROOT/tracker.ready" "$TRACKER_PID" "the tracker")" ] || die "the tracker did not start"

# register ISSUER GRANT...: the gateway's confidential client there (client_secret_basic),
# its one redirect URI the connect page, by dynamic registration; prints "ID SECRET".
register() {
	local iss=$1
	shift
	curl -s --max-time 30 -H 'Content-Type: application/json' --data-binary \
		"$(jq -nc --arg r "$CONNECT" '{client_name: "mcpgate bench", redirect_uris: [$r], response_types: ["code"],
			grant_types: $ARGS.positional, token_endpoint_auth_method: "client_secret_basic"}' --args "$@")" "$iss/reg" |
		jq -r 'select(.client_id and .client_secret) | "\(.client_id) \(.client_secret)"'
}
read -r ORG_CLIENT ORG_SECRET <<<"$(register "$IDP" authorization_code)"
read -r TP_CLIENT TP_SECRET <<<"$(register "$TP" authorization_code refresh_token client_credentials)"
if [ -z "${ORG_CLIENT:-}" ] || [ -z "${TP_CLIENT:-}" ]; then die "the gateway's clients were not registered (DCR at $IDP and $TP)"; fi
(umask 077 && echo "$ORG_SECRET" >"$ROOT/org-connect.secret" && echo "$TP_SECRET" >"$ROOT/tp-client.secret" &&
	head -c 32 /dev/urandom >"$ROOT/session.key")
# user_token ISSUER USER RESOURCE: USER's access token (client cli, the headless login)
user_token() {
	local t
	t=$(node "$top/tests/idp/token.mjs" --issuer "$1" --user "$2" --resource "$3" | jq -r .access_token)
	[ -n "$t" ] && [ "$t" != null ] && echo "$t"
}
STATIC=$(user_token "$TP" alice "$UP_URL") || die "cannot mint alice's token at the third party"
(umask 077 && printf 'Authorization: Bearer %s\n' "$STATIC" >"$ROOT/static.header")

say "starting nginx + spawn-fcgi ($PROCS x $WORKERS) twice: a static header on $PORT_S, user-oauth on $PORT_U"
mkdir -p "$ROOT/S" "$ROOT/U"
CONF_GATEWAY="session-key-file = $ROOT/session.key" \
	CONF_MORE=$(printf '[upstream "tracker"]\nurl = %s\nprefix = tr_\ncredentials = static\nauth-header-file = %s\n' \
	"$UP_URL" "$ROOT/static.header") start_stack "$ROOT/S" "$BIN" "$PORT_S" || die "stack S did not start"
FCGIOF[S]=$STACK_FCGI NGINXOF[S]=$STACK_NGINX
CONF_GATEWAY=$(printf 'session-key-file = %s\nconnect-client-id = %s\nconnect-client-secret-file = %s\n' \
	"$ROOT/session.key" "$ORG_CLIENT" "$ROOT/org-connect.secret") \
	CONF_MORE=$(printf '[upstream "tracker"]\nurl = %s\nprefix = tr_\ncredentials = user-oauth\nclient-id = %s\nclient-secret-file = %s\nuser-scopes = mcp:tools\ncatalog-credentials = client-credentials\n' \
	"$UP_URL" "$TP_CLIENT" "$ROOT/tp-client.secret") start_stack "$ROOT/U" "$BIN" "$PORT_U" || die "stack U did not start"
FCGIOF[U]=$STACK_FCGI NGINXOF[U]=$STACK_NGINX

# alice's session on each stack (her token at the organisation for that gateway)
for s in S U; do
	TOK[$s]=$(user_token "$IDP" alice "${BASEOF[$s]}/mcp") || die "cannot mint alice's token for stack $s"
	check "stack $s: initialize: 200" "$(post_to "${BASEOF[$s]}/mcp" "$INIT" -H "Authorization: Bearer ${TOK[$s]}")" \
		"\"protocolVersion\":\"$PV\".* 200\$"
	SID[$s]=$(sid)
	[ -n "${SID[$s]}" ] || die "stack $s: initialize gave no Mcp-Session-Id"
done
ARGS='{"text":"'$ECHO_ARG'"}'
call() { printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":%s}}' "$1" "$2"; }
check "stack S: tools/call tr_echo: the echo" \
	"$(post_to "${BASEOF[S]}/mcp" "$(call tr_echo "$ARGS")" -H "Authorization: Bearer ${TOK[S]}" \
	-H "Mcp-Session-Id: ${SID[S]}" -H "MCP-Protocol-Version: $PV")" "$ECHO_ARG.* 200\$"

# --- Connecting: the time from the elicitation to a connected call ----------------------
# hop_name URL: where a hop went (the server and path, no query, no interaction uid)
hop_name() {
	local p=${1%%\?*} w
	case $1 in
	"${BASEOF[U]}"*) w=gateway p=${p#"${BASEOF[U]}"} ;;
	"$IDP"*) w=org p=${p#"$IDP"} ;;
	"$TP"*) w=tp p=${p#"$TP"} ;;
	*) w=elsewhere ;;
	esac
	echo "$w$(sed -E 's|/[A-Za-z0-9_-]{16,}|/…|g' <<<"$p")"
}
# connect_flow USER URL: follows the connect page's URL with curl as USER's browser (a
# cookie jar of its own, every redirect), USER named by login_hint on each authorization
# request, to the page "Connected"; HOPS: where each went and its status. On any other
# answer, FLOW_ERR says the request, what was expected and what came (and it fails).
connect_flow() {
	local user=$1 url=$2 jar=$ROOT/jar.$1 out code next
	rm -f "$jar"
	HOPS='' FLOW_ERR=''
	for _ in $(seq 1 24); do
		case $url in "$IDP/auth?"* | "$TP/auth?"*) url="$url&login_hint=$user" ;; esac
		out=$(curl -sS --max-time 20 -o "$ROOT/hop.body" -c "$jar" -b "$jar" \
			-w '%{http_code} %{redirect_url}' "$url" 2>&1) || { FLOW_ERR="GET $url: curl: $out"; return 1; }
		code=${out%% *} next=${out#* }
		HOPS="$HOPS $(hop_name "$url") $code →"
		case $code in
		30[1237])
			[ -n "$next" ] || { FLOW_ERR="GET $url: expected a Location with the $code, got none"; return 1; }
			url=$next
			;;
		200)
			HOPS=${HOPS% →}
			grep -q '<title>Connected' "$ROOT/hop.body" && return 0
			FLOW_ERR="GET $url: expected the page \"Connected\", got 200: $(sed 's/<[^>]*>/ /g' "$ROOT/hop.body" | tr -s ' \n' ' ' | head -c 300)"
			return 1
			;;
		*)
			FLOW_ERR="GET $url: expected a redirect or the page \"Connected\", got $code: $(sed 's/<[^>]*>/ /g' "$ROOT/hop.body" | tr -s ' \n' ' ' | head -c 300)"
			return 1
			;;
		esac
	done
	FLOW_ERR="more than 24 redirects from the connect page's URL:$HOPS"
	return 1
}
# connect_person USER: USER's token for stack U and a session whose client declared URL
# elicitation; a tools/call in it answers -32042, a URL elicitation of the connect page;
# connect_flow; the same call again answers the echo. ELAPSED: ms from the -32042 answer
# to the connected call's answer.
ELICIT_INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"'$PV'","capabilities":{"elicitation":{"url":{}}},"clientInfo":{"name":"bench","version":"1"}}}'
connect_person() {
	local user=$1 tok a url t0 t1 sess
	tok=$(user_token "$IDP" "$user" "${BASEOF[U]}/mcp") || die "cannot mint $user's token for stack U"
	check "stack U: $user's initialize (elicitation.url declared): 200" \
		"$(post_to "${BASEOF[U]}/mcp" "$ELICIT_INIT" -H "Authorization: Bearer $tok")" "\"protocolVersion\":\"$PV\".* 200\$"
	sess=(-H "Authorization: Bearer $tok" -H "Mcp-Session-Id: $(sid)" -H "MCP-Protocol-Version: $PV")
	a=$(post_to "${BASEOF[U]}/mcp" "$(call tr_echo "$ARGS")" "${sess[@]}")
	t0=$(date +%s%N)
	url=$(body "$a" | sed -n 's/^data: //p; /^{/p' | jq -r 'select(.error.code == -32042) |
		.error.data.elicitations[0].url // empty' 2>/dev/null | head -n 1)
	case $url in
	"$CONNECT?ticket="*) ;;
	*) die "POST ${BASEOF[U]}/mcp tools/call tr_echo as $user, not connected: expected JSON-RPC -32042 whose error.data.elicitations[0].url is $CONNECT?ticket=..., got: $(head -c 400 <<<"$a")" ;;
	esac
	connect_flow "$user" "$url" || die "connecting $user's account: $FLOW_ERR (hops so far:$HOPS)"
	a=$(post_to "${BASEOF[U]}/mcp" "$(call tr_echo "$ARGS")" "${sess[@]}")
	t1=$(date +%s%N)
	check "stack U: $user's tools/call after connecting: the echo" "$a" "$ECHO_ARG.* 200\$"
	ELAPSED=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
	say "  $user connected: ${ELAPSED} ms from the elicitation to the connected call"
}
say "connecting $PEOPLE in turn on stack U (curl following the connect page's URL)"
declare -A FLOW_MS=()
for p in $PEOPLE; do
	connect_person "$p"
	FLOW_MS[$p]=$ELAPSED
	[ "$p" != alice ] || ALICE_HOPS=$HOPS
done
# Alice's session on stack U begun again, now that she is connected: the one begun before
# opened no session at the tracker (she had no token there yet), so its calls would go on
# sessions each gateway thread opens for her (an initialize per thread): the steady state
# of a connected person is a session begun connected, as stack S's is.
check "stack U: initialize again, alice connected: 200" \
	"$(post_to "${BASEOF[U]}/mcp" "$INIT" -H "Authorization: Bearer ${TOK[U]}")" "\"protocolVersion\":\"$PV\".* 200\$"
SID[U]=$(sid)
[ -n "${SID[U]}" ] || die "stack U: initialize gave no Mcp-Session-Id"
check "stack U: tools/call tr_echo in alice's session: the echo" \
	"$(post_to "${BASEOF[U]}/mcp" "$(call tr_echo "$ARGS")" -H "Authorization: Bearer ${TOK[U]}" \
	-H "Mcp-Session-Id: ${SID[U]}" -H "MCP-Protocol-Version: $PV")" "$ECHO_ARG.* 200\$"
# whoami on U: the tracker was shown alice's own token from the third party
who=$(body "$(post_to "${BASEOF[U]}/mcp" "$(call tr_whoami '{}')" -H "Authorization: Bearer ${TOK[U]}" \
	-H "Mcp-Session-Id: ${SID[U]}" -H "MCP-Protocol-Version: $PV")" | sed -n 's/^data: //p; /^{/p' |
	jq -c '.result.content[0].text | fromjson? | {sub, client_id, aud}')
check "stack U: tr_whoami: alice's token at the third party, issued to the gateway's client there, for the tracker" \
	"$who" "\"sub\":\"alice\",\"client_id\":\"$TP_CLIENT\",\"aud\":\"$UP_URL\""
tp_tokens() { curl -s --max-time 5 "$TP/_stats" | jq -r .tokens; }
# What the tracker is asked per call: 20 calls in alice's session on each stack, the
# requests the tracker accepted and refused meanwhile (its /_seen), by method.
declare -A UPCALLS=()
for s in S U; do
	curl -s --max-time 5 -X POST "${UP_URL%/mcp}/_seen/reset" >/dev/null
	for _ in $(seq 1 20); do
		post_to "${BASEOF[$s]}/mcp" "$(call tr_echo "$ARGS")" -H "Authorization: Bearer ${TOK[$s]}" \
			-H "Mcp-Session-Id: ${SID[$s]}" -H "MCP-Protocol-Version: $PV" >/dev/null
	done
	UPCALLS[$s]=$(curl -s --max-time 5 "${UP_URL%/mcp}/_seen" | jq -r '([.accepted[].method] | group_by(.) |
		map("\(.[0]) \(length)") | join(", ")) + "; refused \(.rejected | length)"')
	say "  the tracker, for 20 calls on stack $s: ${UPCALLS[$s]}"
done

# --- Measuring -------------------------------------------------------------------------
runs_header kind us_nginx us_mcpgate us_tracker us_third_party
run() { # KIND SECONDS REP
	local kind=$1 s=${1:0:1}
	CONNS=${kind//[A-Z]/}
	CPU_PIDS=("$(nginx_pids "${NGINXOF[$s]}")" "${FCGIOF[$s]}" "$TRACKER_PID" "$TP_PID")
	measure "$kind" "$2" "$OUT/wrk.$3.$kind.out" "${BASEOF[$s]}/mcp" BENCH_EXPECT=200 BENCH_TARGET=call \
		BENCH_TOOL=tr_echo "BENCH_ARGS=$ARGS" "BENCH_WANT=$ECHO_ARG" "BENCH_TOKEN=${TOK[$s]}" \
		"BENCH_SESSION=${SID[$s]}" "BENCH_PROTOCOL=$PV"
	row "$3" "$kind"
	said "$3" "$kind"
}
k0=$(tp_tokens)
run_kinds " (S: a static header; U: alice's connected account)"
k1=$(tp_tokens)
# shellcheck disable=SC2086
runs_done ${FCGIOF[S]} ${FCGIOF[U]}
CONNS=16

# --- Report ----------------------------------------------------------------------------
ratio_medians U16/S16 U64/S64
bad=$(awk -F'\t' '$1 != "rep" && ($6 > 0 || $8 > 0 || $9 > 0 || $5 != $4) { printf "%s/%s ", $1, $2 }' "$RUNS")
kindname() {
	case $1 in
	S*) echo "$1 tools/call tr_echo, static header, ${1//[A-Z]/} connections" ;;
	U*) echo "$1 the same, alice's connected account (user-oauth)" ;;
	esac
}
flows=$(for p in $PEOPLE; do echo "${FLOW_MS[$p]}"; done | medlist)
table() {
	local t
	# shellcheck disable=SC2086
	rates_table request "nginx, mcpgate, the tracker, the third party's authorization server" $KINDS
	ratio_row U16/S16 "U16 / S16 (a connected account vs a static header, 16 connections)" "≥ 0.95" 0.95
	ratio_row U64/S64 "U64 / S64 (the same, 64 connections)" "≥ 0.95" 0.95
	echo
	echo "mcpgate CPU per call, U − S (what a connected account costs a call: the vault's keys bound, the entry read and unsealed), median: 16 connections $(awk -v a="$(med U16 14)" -v b="$(med S16 14)" 'BEGIN { print a - b }') µs, 64 connections $(awk -v a="$(med U64 14)" -v b="$(med S64 14)" 'BEGIN { print a - b }') µs."
	echo
	echo "The tracker's requests for 20 calls in alice's session, before the runs (its /_seen, by method): stack S: ${UPCALLS[S]}; stack U: ${UPCALLS[U]}."
	echo
	echo "Token requests at the third party during all the runs, warm-ups included (no refresh: the connected tokens live an hour): $((k1 - k0))."
	echo
	echo "The time from the elicitation (a tools/call answered -32042, its connect URL) to the connected call's answer, curl following the URL with a cookie jar (wall time; both authorization servers headless; the hops:$ALICE_HOPS): $(for p in $PEOPLE; do printf '%s %s ms, ' "$p" "${FLOW_MS[$p]}"; done)median **$flows ms**."
	echo
	echo "\`bench/connected_bench\` (the gateway's own code, ns of CPU per operation, median of 7 × 20000; an entry of an access token, a 43-byte refresh token and its scope, in a private mapping of a 1024-entry vault):"
	echo
	echo "| access token | sealed | bind (upcred_bind, once a request) | name | get (vault_get) | open (vault_open) | bearer (connected_bearer, the copy wiped and freed) | hit (bind + bearer) |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	for t in 43 1024 4096; do
		echo "| $t bytes | ${MICRO[$t.sealed]} chars | ${MICRO[$t.bind]} | ${MICRO[$t.name]} | ${MICRO[$t.get]} | ${MICRO[$t.open]} | ${MICRO[$t.bearer]} | **${MICRO[$t.hit]}** |"
	done
	echo
	echo "Correctness during every run (warm-ups included): every answer 200 with the echoed argument, no socket errors: $([ -z "$bad" ] && echo yes || echo "NO: $bad")"
}
report
[ -z "$bad" ] || die "some answers were not right ($bad): not a measurement; nothing appended (see $RUNS)"
# shellcheck disable=SC2016 # the backquotes are Markdown
append_results connected "" "alice's tokens of oidc-provider $(oidc_version) (client cli, headless), cached at the gate (cache-ttl = $CACHE_TTL); two stacks: S with \`credentials = static\` (alice's token at the third party), U with \`credentials = user-oauth\` (alice's account connected through the connect page, curl following it); a third party's authorization server (tests/idp, headless; the gateway's client there by DCR); upstream: tests/upstream/fixture.mjs --json --require-bearer (SDK $(jq -r .version "$top/tests/node_modules/@modelcontextprotocol/sdk/package.json"), node $(node -v)), every call's token introspected at the third party" \
	kind "$KINDS" \
	"- requests: POST /mcp tools/call of tr_echo with alice's \`Authorization: Bearer\`, in the \`Mcp-Session-Id\` of one initialize with \`MCP-Protocol-Version: $PV\`; wrk -t$THREADS, -c16 and -c64"
exit 0
}
