# shellcheck shell=bash
# tests/lib/redis.sh — a redis-server of the suite's own, on a free loopback port, nothing
# kept on disk (--save '' --appendonly no, its dir $T). Source after tests/lib/wait.sh.
#   RPORT        its port (a free one, chosen here)
#   start_redis  starts it (again, on the same port): REDIS_PID; waits until it answers
#   rcli ARGS... redis-cli on it
: "${T:?source after creating \$T}"
RPORT=$(free_port)
start_redis() {
	redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$T" \
		--daemonize no > "$T/redis.log" 2>&1 &
	REDIS_PID=$!
	mg_track "$REDIS_PID"
	wait_until 30 redis-cli -p "$RPORT" ping > /dev/null 2>&1
}
rcli() { redis-cli -p "$RPORT" "$@"; }
