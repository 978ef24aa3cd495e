# tests/lib/node.sh — one Node (or other) helper process at a time under a suite's
# control: NODE_PID, stop_node (for the suite's EXIT trap), run_bounded, bail.

NODE_PID=
stop_node() { [ -n "$NODE_PID" ] && kill "$NODE_PID" 2>/dev/null; wait "$NODE_PID" 2>/dev/null; NODE_PID=; }

# bail MESSAGE [DETAIL]: a failed test, then stop the suite.
bail() { fail "$1" "${2:-}"; echo "Bail out! $1"; tap_done; exit 1; }

# run_bounded SECS OUT ERR CMD...: runs CMD in the background (so that the EXIT trap can
# stop it) with a hard time limit; returns its exit status.
run_bounded() {
	local secs=$1 out=$2 err=$3 rc
	shift 3
	timeout -k 3 "$secs" "$@" > "$out" 2> "$err" &
	NODE_PID=$!
	wait "$NODE_PID"
	rc=$?
	NODE_PID=
	return "$rc"
}
