# tests/lib/redis.sh — a redis-server of the suite's own on loopback, nothing kept on disk
# (its log and dir in $T). Source it after creating $T and setting RPORT (a free port).
#   start_redis → REDIS_PID (stopped by stop_all); rcli ARGS... talks to it
: "${T:?source after creating \$T}"
start_redis() {
	redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$T" \
		--daemonize no > "$T/redis.log" 2>&1 &
	REDIS_PID=$!
	mg_track "$REDIS_PID"
	wait_until 30 redis-cli -p "$RPORT" ping > /dev/null 2>&1
}
rcli() { redis-cli -p "$RPORT" "$@"; }
