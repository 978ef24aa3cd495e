#!/usr/bin/env bash
# Upstream faults through the main path: nginx (deploy/ recipe) → spawn-fcgi (2 processes)
# → mcpgate, a token from oidc-provider (tests/idp), one good upstream (the SDK fixture,
# tests/upstream/fixture.mjs) and one loopback stub per fault (tests/fed/stub.py
# --list-ok: it lists its tool "x" like a real server, then fails the call):
#
#   s500      HTTP 500                          garbage     200 with a body that is not JSON
#   big       a 50 MB answer (Content-Length)   bigchunked  a 50 MB answer, chunked
#   hang      never answers (timeout-ms 3000)   ssedie      an event stream cut mid-event
#   sseend    an event stream that ends without the answer
#   refused   listed, then gone (killed): the call finds the port closed
#
# For each: tools/call of its tool answers HTTP 200 with JSON-RPC error -32603 whose
# message names the upstream, promptly; the next call to the good upstream still works
# (JSON and event stream); the processes still run. (The upstream client alone:
# tests/fed/upstream.sh; a slow upstream past its timeout and one killed mid-call:
# tests/fed/gateway.sh.)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin nginx:nginx-light spawn-fcgi:spawn-fcgi curl:curl jq:jq python3:python3 \
	--node @modelcontextprotocol/sdk/package.json oidc-provider/package.json
HANG_TIMEOUT=3000
STUBS="s500:500 garbage:garbage big:big bigchunked:big-chunked hang:hang ssedie:sse-die sseend:sse-end refused:500"

declare -A url=() pid=()
# ready NAME: its ready file's URL (60 s at most).
ready() { wait_until 60 test -s "$T/$1.ready" && url[$1]=$(sed -n 's/^ready //p' "$T/$1.ready"); }
node "$top/tests/upstream/fixture.mjs" --port 0 --name good --ready-file "$T/good.ready" > /dev/null 2> "$T/good.log" &
pid[good]=$!
mg_track "${pid[good]}"
for s in $STUBS; do
	python3 "$top/tests/fed/stub.py" --mode "${s#*:}" --list-ok --ready-file "$T/${s%%:*}.ready" 2> "$T/${s%%:*}.log" &
	pid[${s%%:*}]=$!
	mg_track "${pid[${s%%:*}]}"
done
names="good"
for s in $STUBS; do names="$names ${s%%:*}"; done
for n in $names; do ready "$n" || bail "upstream $n started" "$(tail -n 5 "$T/$n.log")"; done

PORT=$(free_port)
URL=http://127.0.0.1:$PORT/mcp
start_idp "$URL"
gateway_conf "$T/gw.conf" "$URL"
sed -i 's/^\[gateway\]$/[gateway]\ncatalog-ttl = 3600/' "$T/gw.conf"
{
	printf '[upstream "good"]\nurl = %s\nprefix = g_\ntimeout-ms = 20000\n' "${url[good]}"
	for s in $STUBS; do
		n=${s%%:*}
		to=20000
		[ "$n" != hang ] || to=$HANG_TIMEOUT
		printf '[upstream "%s"]\nurl = %s\nprefix = %s_\ntimeout-ms = %s\n' "$n" "${url[$n]}" "$n" "$to"
	done
} >> "$T/gw.conf"
start_mcpgate_fcgi "$T/mcpgate.sock" "$T/gw.conf" 2 2 > "$T/start.out" 2>&1 && start_nginx "$PORT" >> "$T/start.out" 2>&1 \
	|| bail "nginx + spawn-fcgi + mcpgate" "$(tail -n 20 "$T/start.out")"
PIDS=$MG_FCGI_PIDS
TOKEN=$(mint --client machine-acme --scope mcp:tools)

# call NAME ARGS [ACCEPT]: tools/call through nginx; body $T/b; prints the status.
call() {
	curl -s --max-time 120 -o "$T/b" -w '%{http_code}' -X POST "$URL" -H 'Content-Type: application/json' \
		-H "Accept: ${3:-application/json}" -H "Authorization: Bearer $TOKEN" \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2}}"
}
# the JSON-RPC answer with id 7, from a JSON body or an event stream
answer() { { sed -n 's/^data: //p' "$T/b"; grep '^[{[]' "$T/b"; } | jq -c 'select(.id == 7)' 2>/dev/null | head -n 1; }

t0=$(now_ms)
st=$(curl -s --max-time 60 -o "$T/b" -w '%{http_code}' -X POST "$URL" -H 'Content-Type: application/json' \
	-H 'Accept: application/json' -H "Authorization: Bearer $TOKEN" \
	--data-binary '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}')
base=$(( $(now_ms) - t0 ))
jcheck "tools/list: the good upstream's tools and every stub's x (${base} ms)" \
	"$(jq -c --arg st "$st" '{status: $st, stubs: [.result.tools[].name | select(endswith("_x"))] | sort, good: ([.result.tools[].name | select(startswith("g_"))] | length)}' "$T/b")" \
	".status == \"200\" and .good > 10 and (.stubs | length) == $(echo $STUBS | wc -w)"
disown "${pid[refused]}"	# no "Killed" notice
kill -9 "${pid[refused]}"
wait_until 30 eval '! mg_alive "${pid[refused]}"'

for s in $STUBS; do
	n=${s%%:*}
	limit=$(( 20000 + 4 * base ))
	[ "$n" != hang ] || limit=$(( HANG_TIMEOUT + 5000 + 4 * base ))
	for accept in application/json 'application/json, text/event-stream'; do
		t0=$(now_ms)
		st=$(call "${n}_x" '{}' "$accept")
		ms=$(( $(now_ms) - t0 ))
		jcheck "upstream $n (Accept: $accept): tools/call → -32603 naming it, in $ms ms (< $limit)" \
			"$(jq -nc --arg st "$st" --argjson ms "$ms" --argjson a "$(answer || true)" '{status: $st, ms: $ms, error: $a.error, result: $a.result}' 2>/dev/null \
				|| echo "{\"status\": \"$st\", \"body\": $(head -c 300 "$T/b" | jq -Rs .)}")" \
			".status == \"200\" and .error.code == -32603 and (.error.message | contains(\"$n\")) and .ms < $limit"
	done
	st=$(call g_echo "{\"after\":\"$n\"}")
	jcheck "upstream $n: the next call to the good upstream works" \
		"$(jq -c --arg st "$st" '{status: $st, text: .result.content[0].text, error}' "$T/b" 2>/dev/null || head -c 300 "$T/b")" \
		".status == \"200\" and (.text | fromjson) == {\"after\": \"$n\"}"
done
st=$(call g_slow '{"ms":300}' 'text/event-stream')
jcheck "the good upstream streams a call with progress after all that" \
	"$(jq -nc --arg st "$st" --argjson a "$(answer || echo null)" '{status: $st, text: $a.result.content[0].text}')" \
	'.status == "200" and .text == "slept 300 ms"'
gone=
for p in $PIDS; do mg_alive "$p" || gone="$gone $p"; done
is "the mcpgate processes survived every fault" "${gone:-none}" none
tap_done
