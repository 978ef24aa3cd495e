#!/usr/bin/env bash
# Ring (b): a CGI run takes nothing from its command line. A server may hand a request's
# query string to the program as arguments (RFC 3875 4.4: Apache's mod_cgi does, for a
# query string without '='), so "?-c+FILE" would choose the configuration and
# "?explain+…" or "?--version" answer with what they print. With GATEWAY_INTERFACE set
# (every CGI server sets it) the configuration is MCPGATE_CONFIG's, else the built-in
# path, and arguments are ignored (the run says so on stderr, without them); from a
# shell (no GATEWAY_INTERFACE) the command line is the operator's, as always.
. "$(dirname "$0")/lib.sh"
write_conf
TITLE=ATTACKER-CHOSEN RESOURCE=http://127.0.0.1:9999/mcp write_conf
mv "$T/gw.conf" "$T/evil.conf"
write_conf

# run ARGS...: a CGI GET /.well-known/mcp under $T/gw.conf (MCPGATE_CONFIG) with ARGS.
run() {
	env -i PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 SERVER_PROTOCOL=HTTP/1.1 REMOTE_ADDR=127.0.0.1 \
		REQUEST_METHOD=GET SCRIPT_NAME=/.well-known/mcp QUERY_STRING="$*" MCPGATE_CONFIG="$T/gw.conf" \
		${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"} ${UBSAN_OPTIONS:+UBSAN_OPTIONS="$UBSAN_OPTIONS"} \
		"$MCPGATE_BIN" "$@" > "$T/out" 2> "$T/err"
	sed '1,/^\r$/d' "$T/out" > "$T/body"
}

run -c "$T/evil.conf"
is "-c FILE: served under MCPGATE_CONFIG's configuration" "$(jf .title)" "Example gateway"
is "… its resource, not the file's" "$(jf .endpoint)" http://127.0.0.1:8080/mcp
like "… stderr says arguments were ignored" "$(cat "$T/err")" 'a CGI run takes no arguments: 2 ignored'
unlike "… without naming them" "$(cat "$T/err")" 'evil'
run --config="$T/evil.conf" -w 3
is "--config=FILE -w 3: the same" "$(jf .title)" "Example gateway"
for args in "--version" "--help" "-t" "explain --claims {} --json" "-x"; do
	# shellcheck disable=SC2086 # the words are the arguments
	run $args
	if head -n 1 "$T/out" | grep -q '^Status: 200' && [ "$(jf .title)" = "Example gateway" ]; then
		pass "$args: the request is answered, nothing the arguments would print"
	else
		fail "$args: the request is answered, nothing the arguments would print" "$(head -c 300 "$T/out")"
	fi
done
run explain --claims '{}' --save-catalog "$T/written.json"
if [ ! -e "$T/written.json" ] && [ "$(jf .title)" = "Example gateway" ]; then
	pass "explain --save-catalog FILE: answered, no file written (the caller would choose a file to write)"
else
	fail "explain --save-catalog FILE: answered, no file written" "$(ls -l "$T/written.json" 2>&1)"
fi
env -i PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=GET SCRIPT_NAME=/.well-known/mcp \
	"$MCPGATE_BIN" -c "$T/gw.conf" > "$T/out" 2> "$T/err"
like "no MCPGATE_CONFIG: the built-in path, whatever -c says (500)" "$(head -n 1 "$T/out")" '^Status: 500'
like "… the log names the built-in path" "$(cat "$T/err")" 'config: /.*/mcpgate/mcpgate\.conf: No such file'

# A request header "Proxy:" arrives as HTTP_PROXY: never a proxy setting (httpoxy).
env -i PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=GET SCRIPT_NAME=/.well-known/mcp \
	MCPGATE_CONFIG="$T/gw.conf" HTTP_PROXY=http://127.0.0.1:9 "$MCPGATE_BIN" > "$T/out" 2> "$T/err"
grep -q '^Status: 200' "$T/out" && pass "HTTP_PROXY in a CGI run: served" || fail "HTTP_PROXY in a CGI run: served" "$(head -c 300 "$T/out")"

# From a shell the command line is the operator's.
out=$("$MCPGATE_BIN" -t -c "$T/evil.conf" 2>&1)
like "no GATEWAY_INTERFACE: -t -c FILE checks FILE" "$out" "evil\.conf: ok"
env -i PATH="$PATH" REQUEST_METHOD=GET SCRIPT_NAME=/.well-known/mcp "$MCPGATE_BIN" -c "$T/evil.conf" > "$T/out" 2> "$T/err"
sed '1,/^\r$/d' "$T/out" > "$T/body"
is "no GATEWAY_INTERFACE: a request under -c FILE" "$(jf .title)" ATTACKER-CHOSEN
tap_done
