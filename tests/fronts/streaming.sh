#!/usr/bin/env bash
# tests/fronts/streaming.sh — the deploy/ recipes hand an event stream on
# POST /mcp to the client event by event: no response buffering and no
# compression, even where the server compresses other responses. nginx,
# lighttpd and Apache (mod_proxy_fcgi, and CGI) in turn, each in front of a
# FastCGI stub (sse-stub.py) that writes three events 1.5 s apart, flushing
# each: the first must arrive long before the last. (A property of the web
# server configuration; mcpgate's own relaying is tested with its upstreams.)
# Prints TAP; exits non-zero on failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"

if ! need_cmds curl:curl python3:python3 nginx:nginx-light lighttpd:lighttpd apache2:apache2 \
	>"${TMPDIR:-/tmp}/mcpgate-streaming.$$" 2>&1; then
	fail "install what the streaming suite needs" "$(tail -n 20 "${TMPDIR:-/tmp}/mcpgate-streaming.$$")"
	rm -f "${TMPDIR:-/tmp}/mcpgate-streaming.$$"
	tap_done
	exit 1
fi
rm -f "${TMPDIR:-/tmp}/mcpgate-streaming.$$"
mg_init || exit 1
MG_SOCK=$MG_DIR/sse.sock
python3 "$here/sse-stub.py" "$MG_SOCK" 1.5 2>"$MG_DIR/stub.err" &
mg_track $!
for _ in $(seq 1 300); do
	[ -S "$MG_SOCK" ] && break
	sleep 0.1
done
check "the FastCGI stream stub listens" test -S "$MG_SOCK"

# stream URL LABEL: POST with Accept-Encoding: gzip; checks the arrival times
# of the three events (ms after the request started) and the headers; behind
# FastCGI, that the server never half-closed the connection while it waited for
# the answer (mcpgate would take it for its client gone).
stream() {
	local url=$1 label=$2 start line t v times='' h=$MG_DIR/stream.h rdhup=''
	start=${EPOCHREALTIME/./}
	while IFS= read -r line; do
		case $line in
		data:*)
			t=${EPOCHREALTIME/./}
			times="$times $(((t - start) / 1000))"
			case $line in *'"rdhup":'*) v=${line#*\"rdhup\":}; rdhup="$rdhup ${v%%,*}" ;; esac
			;;
		esac
	done < <(curl -N -sS --max-time 20 -X POST -H 'Accept-Encoding: gzip' -H 'Content-Type: application/json' \
		--data '{"jsonrpc":"2.0","id":1,"method":"tools/call"}' -D "$h" "$url" 2>&1)
	case $label in
	*CGI*) ;;
	*) is "$label: the server does not half-close the FastCGI connection while the answer streams" \
		"$(echo $rdhup)" "false false false" ;;
	esac
	# shellcheck disable=SC2086 # the three numbers
	set -- $times
	if [ $# -ne 3 ]; then
		fail "$label: three events arrive" "arrivals (ms):$times; headers: $(tr -d '\r' <"$h" | head -10)"
		return
	fi
	pass "$label: three events arrive"
	if [ "$1" -lt 1000 ] && [ $(($3 - $1)) -ge 2500 ]; then
		pass "$label: each event as it is written (ms: $1 $2 $3)"
	else
		fail "$label: each event as it is written" "arrivals (ms): $1 $2 $3; written at 0, 1500, 3000"
	fi
	like "$label: Content-Type text/event-stream" "$(grep -i '^content-type:' "$h" | tr -d '\r')" 'text/event-stream'
	is "$label: not compressed" "$(grep -i '^content-encoding:' "$h" | tr -d '\r')" ""
}

# through START NAME CONF PATH LABEL [PATH LABEL]...: START (deploy/lib.sh's start_nginx,
# start_lighttpd or start_apache) on a free port with the extra configuration CONF: passes
# "NAME starts" and streams from each PATH under its LABEL, or fails with its output.
through() {
	local start=$1 name=$2 conf=$3 port
	shift 3
	port=$(free_port)
	if ! "$start" "$port" "$conf" >"$MG_DIR/$start.out" 2>&1; then
		fail "$name starts" "$(tail -n 20 "$MG_DIR/$start.out")"
		return
	fi
	pass "$name starts"
	while [ $# -ge 2 ]; do
		stream "http://127.0.0.1:$port$1" "$2"
		shift 2
	done
}

# nginx, compressing everything it can at the server level.
cat >"$MG_DIR/nginx-gzip.conf" <<'CONF'
gzip on;
gzip_min_length 1;
gzip_types text/event-stream application/json;
CONF
through start_nginx nginx "$MG_DIR/nginx-gzip.conf" /mcp nginx

# lighttpd, with mod_deflate compressing event streams.
cat >"$MG_DIR/lighttpd-deflate.conf" <<'CONF'
server.modules += ( "mod_deflate" )
deflate.mimetypes = ( "text/event-stream", "application/json" )
deflate.allowed-encodings = ( "gzip" )
deflate.min-compress-size = 1
CONF
through start_lighttpd lighttpd "$MG_DIR/lighttpd-deflate.conf" /mcp lighttpd

# Apache, with mod_deflate on event streams; mod_proxy_fcgi to the stub, and
# a CGI program that streams the same way.
mkdir -p "$MG_DIR/cgi"
cat >"$MG_DIR/cgi/mcpgate" <<'CGI'
#!/bin/sh
cat >/dev/null
printf 'Status: 200 OK\r\nContent-Type: text/event-stream\r\n\r\n'
for i in 1 2 3; do
	printf 'event: message\ndata: {"n":%d}\n\n' "$i"
	[ "$i" -eq 3 ] || sleep 1.5
done
CGI
chmod 755 "$MG_DIR/cgi/mcpgate"
# shellcheck disable=SC2034 # read by deploy/lib.sh
MG_CGI_BIN=$MG_DIR/cgi/mcpgate
# mod_deflate as Debian enables it (deflate.conf: text and script types, not
# text/event-stream), plus event streams on /mcp: the FastCGI recipe must keep
# them uncompressed. A CGI program's stream, with a DEFLATE filter registered
# for its type, is held back by Apache even with no-gzip set (README).
cat >"$MG_DIR/apache-deflate.conf" <<'CONF'
LoadModule filter_module /usr/lib/apache2/modules/mod_filter.so
LoadModule deflate_module /usr/lib/apache2/modules/mod_deflate.so
AddOutputFilterByType DEFLATE text/html text/plain text/xml text/css text/javascript application/javascript application/json
<LocationMatch "^/mcp$">
    AddOutputFilterByType DEFLATE text/event-stream
</LocationMatch>
CONF
through start_apache Apache "$MG_DIR/apache-deflate.conf" \
	/mcp "Apache mod_proxy_fcgi" /cgi-bin/mcpgate/mcp "Apache CGI"
tap_done
