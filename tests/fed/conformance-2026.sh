#!/usr/bin/env bash
# The official MCP conformance suite's frozen requirement sets (conformance-alpha, npm
# alias of @modelcontextprotocol/conformance 0.2.0-alpha.12: `server --requirements
# 2026-07-28` and `--requirements 2025-11-25`, each at its revision's wire) run twice
# against an upstream that speaks both revisions (tests/upstream/fixture.mjs --modern:
# 2025-11-25 with sessions, 2026-07-28 stateless, with the MRTR tools): directly, then
# through the gateway (mcpgate under spawn-fcgi, 2 processes x 8 threads, behind real
# nginx, the upstream published with no prefix, an oidc-provider client_credentials
# token). The gateway speaks 2026-07-28 to the upstream (its catalog found it by
# server/discover), whatever the revision of the suite's client.
#
#  - one TAP line per scenario of each set, scored and not scored alike: a scenario
#    clean directly (no failing and no warning check) must be clean through the
#    gateway; one not clean directly is a `#` line either way (the upstream's, not the
#    gateway's), as is a not-scored scenario (the set's `not_scored`: the tasks
#    extension, pending scenarios) whatever it gives;
#  - the gateway spoke 2026-07-28 to the upstream: its catalog says so, and the
#    upstream saw server/discover and no initialize from it (its /_traffic);
#  - the mcpgate processes survived the runs.
#
# Env: MCPGATE_BIN; MG_CONF_UPSTREAM=URL runs against that upstream instead of the
# fixture (e.g. the suite's own reference server, examples/servers/typescript/
# everything-server.ts of the conformance repository, started by hand: it is not
# published on npm; its /_traffic checks are then skipped, said as such);
# MG_CONF_SETS (default "2026-07-28 2025-11-25"); MG_KEEP=1 keeps the temp dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq \
	--node @modelcontextprotocol/sdk/package.json conformance-alpha/dist/index.js
CONF=$top/tests/node_modules/conformance-alpha/dist/index.js
PRELOAD=$top/tests/mcp/bearer-preload.mjs
CLI_SECS=120	# a set takes a few seconds
SETS=${MG_CONF_SETS:-2026-07-28 2025-11-25}
# MG_CONF_ONLY=1 (tests/fed/conformance-2026-only.sh): the upstream speaks 2026-07-28
# alone (--modern-only), so an older client's scenarios go through the gateway's own
# asking; directly, the suite runs against the same fixture of both revisions instead
# (the same tools). What cannot be had that way is GAPS: each must fail through the
# gateway (else delete it), and nothing else may.
ONLY=${MG_CONF_ONLY:+1}
GAPS=" ${MG_CONF_GAPS:-} "

# --- upstream, IdP, gateway --------------------------------------------------------------
PORT=$(free_port)
ORIGIN=http://localhost:$PORT
URL=$ORIGIN/mcp
if [ -n "${MG_CONF_UPSTREAM:-}" ]; then
	UP_URL=$MG_CONF_UPSTREAM
	DIRECT_URL=$UP_URL
	start_idp "$URL"
else
	if [ -n "$ONLY" ]; then start_fixture up --port 0 --modern-only; else start_fixture up --port 0 --modern; fi
	[ -z "$ONLY" ] || start_fixture dual --port 0 --modern
	start_idp "$URL"
	wait_fixture up || bail "the fixture upstream started" "$(tail -n 5 "$T/up.log")"
	UP_URL=${FIXTURE_URL[up]}
	DIRECT_URL=$UP_URL
	if [ -n "$ONLY" ]; then
		wait_fixture dual || bail "the fixture of both revisions started" "$(tail -n 5 "$T/dual.log")"
		DIRECT_URL=${FIXTURE_URL[dual]}
	fi
fi
UP_ORIGIN=${UP_URL%/mcp}

gateway_conf "$T/gw.conf" "$URL"
sed -i "/^resource = /a allowed-origins = $ORIGIN" "$T/gw.conf"
cat >> "$T/gw.conf" <<CONF
[upstream "up"]
url = $UP_URL
timeout-ms = 10000
CONF
# 8 threads a process: a subscriptions/listen holds one for its time (5 minutes) unless
# its client closes it, and the suite's client leaves its streams open; each process
# keeps one thread free of them (7 streams a process).
start_gateway "$PORT" "nginx + spawn-fcgi (2 processes x 8 threads) + mcpgate at $URL, the upstream at $UP_URL" 2 8
FCGI_PIDS=$MG_FCGI_PIDS
TOKEN=$(mint --client machine-acme --scope mcp:tools --resource "$URL")
if [ -z "$TOKEN" ] || [ "$TOKEN" = null ]; then
	bail "a client_credentials token for $URL" "$(tail -n 5 "$T/idp.log")"
fi

# --- the runs ------------------------------------------------------------------------------
# run_set SET WHERE URL [bearer]: the CLI with --requirements SET against URL, results in
# $T/WHERE-SET (checks.json per scenario), its output in $T/WHERE-SET.out.
run_set() {
	local set=$1 url=$3 dir=$T/$2-$1
	mkdir -p "$dir"
	if [ "${4:-}" = bearer ]; then
		MCP_BEARER_TOKEN=$TOKEN MCP_BEARER_ORIGIN=$ORIGIN MCP_BEARER_UNDICI=$CONF \
			run_bounded "$CLI_SECS" "$dir.out" "$dir.err" node --import "$top/tests/lib/conformance-node20.mjs" \
			--import "$PRELOAD" "$CONF" server --url "$url" --requirements "$set" -o "$dir"
	else
		run_bounded "$CLI_SECS" "$dir.out" "$dir.err" node --import "$top/tests/lib/conformance-node20.mjs" \
			"$CONF" server --url "$url" --requirements "$set" -o "$dir"
	fi
	sed -i 's/\x1b\[[0-9;]*m//g' "$dir.out"
}

# verdicts DIR: "scenario<TAB>good<TAB>bad<TAB>warn" for each checks.json under DIR.
verdicts() {
	local f s
	for f in "$1"/server-*/checks.json; do
		[ -f "$f" ] || continue
		s=$(basename "$(dirname "$f")")
		s=${s#server-}
		s=$(sed -E 's/-[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9-]+Z$//' <<<"$s")
		printf '%s\t%s\n' "$s" "$(jq -r '[map(select(.status == "SUCCESS")), map(select(.status == "FAILURE")),
			map(select(.status == "WARNING"))] | map(length) | @tsv' "$f" 2>/dev/null || echo "0	1	0")"
	done
}

# The not-scored scenarios of a set, from the CLI's own report.
not_scored() { sed -n 's/^  [✓✗] \([a-z0-9-]*\) (.*)$/\1/p' "$1" | sort -u; }

# notes FILE: the failing and warning checks of a checks.json, one per line.
notes() {
	jq -r '.[] | select(.status == "FAILURE" or .status == "WARNING")
		| "\(.status) \(.id): \(.errorMessage // .details.message // "" | gsub("\n"; " ") | .[0:300])"' "$1"
}

for set in $SETS; do
	run_set "$set" direct "$DIRECT_URL"
	run_set "$set" gateway "$URL" bearer
	declare -A dgood=() dbad=() gbad=()
	while IFS=$'\t' read -r s g b w; do dgood[$s]=$g; dbad[$s]=$((b + w)); done < <(verdicts "$T/direct-$set")
	while IFS=$'\t' read -r s g b w; do gbad[$s]=$((b + w)); done < <(verdicts "$T/gateway-$set")
	ns=" $(not_scored "$T/direct-$set.out" | tr '\n' ' ') "
	n_direct=${#dbad[@]}
	if [ "$n_direct" -gt 0 ] && [ "${#gbad[@]}" -eq "$n_direct" ]; then
		pass "$set: the set ran directly and through the gateway ($n_direct scenarios each)"
	else
		fail "$set: the set ran directly and through the gateway" \
			"direct: $n_direct scenarios, through the gateway: ${#gbad[@]}; $(tail -n 5 "$T/gateway-$set.err")"
	fi
	clean_direct=0 clean_gw=0
	for s in $(printf '%s\n' "${!dbad[@]}" | sort); do
		kind=scored
		case $ns in *" $s "*) kind="not scored" ;; esac
		checks=$(find "$T/gateway-$set" -path "$T/gateway-$set/server-$s-[0-9][0-9][0-9][0-9]-*" -name checks.json | head -n 1)
		[ "${dbad[$s]}" -eq 0 ] && clean_direct=$((clean_direct + 1))
		[ "${gbad[$s]:-1}" -eq 0 ] && clean_gw=$((clean_gw + 1))
		case $GAPS in *" $s "*) gap=1 ;; *) gap= ;; esac
		if [ -n "$gap" ] && [ "${gbad[$s]:-1}" -eq 0 ]; then
			fail "$set $s: listed as a gap of an upstream of 2026-07-28 alone, but clean through the gateway: delete it"
		elif [ -n "$gap" ]; then
			pass "$set $s ($kind): a gap of an upstream of 2026-07-28 alone, as listed"
			[ -n "$checks" ] && notes "$checks" | sed 's/^/# /'
		elif [ "${dbad[$s]}" -eq 0 ] && [ "${gbad[$s]:-1}" -eq 0 ]; then
			pass "$set $s ($kind): clean directly and through the gateway (${dgood[$s]} checks)"
		elif [ "${dbad[$s]}" -eq 0 ] && [ "$kind" = scored ]; then
			fail "$set $s: clean directly, not through the gateway" "$( [ -n "$checks" ] && notes "$checks")"
		elif [ "${dbad[$s]}" -eq 0 ]; then
			pass "$set $s ($kind): clean directly, not through the gateway: not scored, reported"
			[ -n "$checks" ] && notes "$checks" | sed 's/^/# /'
		else
			pass "$set $s ($kind): not clean directly (${dbad[$s]} failing or warning checks): the upstream's, reported"
			[ "${gbad[$s]:-1}" -eq 0 ] && echo "# $s: clean through the gateway"
		fi
	done
	echo "# $set: $clean_direct of $n_direct scenarios clean directly, $clean_gw through the gateway"
	unset dgood dbad gbad
done

# --- which revision the gateway spoke ---------------------------------------------------
# (from the answering worker's copy of the catalog: a thread that has served no request
# yet has none, and says nothing of revisions)
HEALTH_WANT='.dependencies[] | select(.dependency == "upstream" and .name == "up") | .protocolVersion == "2026-07-28"'
health_says() { curl -s --max-time 10 "$ORIGIN/mcp/health" > "$T/health.json"; jq -e "$HEALTH_WANT" "$T/health.json" > /dev/null 2>&1; }
wait_until 30 health_says || true
health=$(cat "$T/health.json")
jcheck "health: the gateway speaks 2026-07-28 to the upstream (its catalog found it by server/discover)" "$health" \
	"$HEALTH_WANT"
if [ -z "${MG_CONF_UPSTREAM:-}" ]; then
	traffic=$(curl -s --max-time 10 "$UP_ORIGIN/_traffic")
	jcheck "the upstream saw server/discover and stateless requests from the gateway" "$traffic" \
		'.byMethod["server/discover"] >= 1 and ((.byRevision["2026-07-28"] // 0) > 0)'
	[ -z "$ONLY" ] || jcheck "… and opened no session: every scenario went stateless" "$traffic" '.sessionsOpened == 0'
else
	echo "# MG_CONF_UPSTREAM: the upstream's traffic is not counted"
fi

gone=
for pid in $FCGI_PIDS; do mg_alive "$pid" || gone="$gone $pid"; done
is "the mcpgate processes survived the runs" "${gone:-none}" none
tap_done
