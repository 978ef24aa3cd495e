# shellcheck shell=bash
# tests/lib/redis.sh — redis-servers of the suite's own, nothing kept on disk (--save ''
# --appendonly no, their dir $T): on a free loopback port each or, with REDIS_VIA=unix, on
# a unix socket alone ($T/NAME.sock, no port). Source after tests/lib/wait.sh.
#   VIA                 tcp (the default) or unix: REDIS_VIA
#   RPORTS[NAME]        the port of redis-server NAME (tcp; the suite sets it for others
#                       than the main one, "redis"); RPORT the main one's
#   listen NAME         redis-server's options to listen as NAME
#   at NAME             redis-cli's options to reach NAME
#   store NAME DB [CREDENTIALS@]   the [limits] store URL of NAME's database DB
#   WHERE               what `mcpgate -t` and the outage log call the main one
#   start_redis         starts the main one (again, at the same place): REDIS_PID; waits
#                       until it answers
#   rcli ARGS...        redis-cli on the main one
: "${T:?source after creating \$T}"
VIA=${REDIS_VIA:-tcp}
case $VIA in tcp | unix) ;; *) bail "REDIS_VIA must be tcp or unix, not $VIA" ;; esac
declare -A RPORTS=()
listen() {
	[ "$VIA" = unix ] && echo --port 0 --unixsocket "$T/$1.sock" --unixsocketperm 700 ||
		echo --port "${RPORTS[$1]}" --bind 127.0.0.1
}
at() { [ "$VIA" = unix ] && echo -s "$T/$1.sock" || echo -h 127.0.0.1 -p "${RPORTS[$1]}"; }
store() { [ "$VIA" = unix ] && echo "unix://${3:-}$T/$1.sock?db=$2" || echo "redis://${3:-}127.0.0.1:${RPORTS[$1]}/$2"; }
RPORT=
[ "$VIA" = unix ] || { RPORTS[redis]=$(free_port); RPORT=${RPORTS[redis]}; }
LISTEN_MAIN=$(listen redis)
[ "$VIA" = unix ] && WHERE="unix socket $T/redis.sock" || WHERE="127.0.0.1 port $RPORT"
start_redis() {
	# shellcheck disable=SC2086 # LISTEN_MAIN: options
	redis-server $LISTEN_MAIN --save '' --appendonly no --dir "$T" \
		--daemonize no > "$T/redis.log" 2>&1 &
	REDIS_PID=$!
	mg_track "$REDIS_PID"
	wait_until 30 rcli ping > /dev/null 2>&1
}
# shellcheck disable=SC2046 # at: options
rcli() { redis-cli $(at redis) "$@"; }
