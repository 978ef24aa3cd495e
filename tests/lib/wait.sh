# tests/lib/wait.sh — time for shell suites that must hold on a slow machine (a loaded
# CI host, an ASan or valgrind build): wait for conditions, never for fixed times, and
# size lifetimes from what this machine measured.
#
#   now_ms                      milliseconds since the epoch
#   wait_until SECS CMD...      runs CMD every 0.1 s until it succeeds (0) or SECS pass (1)
#   sleep_until_ms T            sleeps until now_ms >= T
#   lifetime_for MS [MIN]       a lifetime in whole seconds that covers a window of MS
#                               milliseconds three times over, at least MIN (default 2)
#   ready_or_gone FILE PID      FILE is not empty, or process PID is gone: a server started
#                               in the background has written its ready file or died
#                               (wait_until SECS ready_or_gone FILE PID waits for either)

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

wait_until() {
	local secs=$1 end
	shift
	end=$(( $(now_ms) + secs * 1000 ))
	until "$@"; do
		[ "$(now_ms)" -lt "$end" ] || return 1
		sleep 0.1
	done
	return 0
}

sleep_until_ms() {
	local left=$(( $1 - $(now_ms) ))
	[ "$left" -le 0 ] || sleep "$((left / 1000)).$(printf '%03d' $((left % 1000)))"
}

lifetime_for() {
	local s=$(( ($1 * 3 + 999) / 1000 ))
	[ "$s" -ge "${2:-2}" ] || s=${2:-2}
	echo "$s"
}

ready_or_gone() { [ -s "$1" ] || ! kill -0 "$2" 2>/dev/null; }
