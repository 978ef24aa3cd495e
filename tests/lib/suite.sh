# shellcheck shell=bash
# tests/lib/suite.sh — the start of a suite that runs the gateway behind real fronts:
# TAP, deploy/lib.sh, MCPGATE_BIN (default: the in-tree build), suite_need and start_ok.
# Source it after setting $top (the source tree).
: "${top:?set top before sourcing tests/lib/suite.sh}"
. "$top/tests/lib/tap.sh"
# shellcheck disable=SC2034 # read by deploy/lib.sh
MG_TOP=$top
MCPGATE_BIN=${MCPGATE_BIN:-$top/src/mcpgate}
. "$top/deploy/lib.sh"

# suite_need CMD:PACKAGE... [--node FILE...]: installs the commands that are missing and
# checks files under tests/node_modules, or bails out.
suite_need() {
	local cmds=() f
	while [ $# -gt 0 ] && [ "$1" != --node ]; do
		cmds+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	need_cmds "${cmds[@]}" >/dev/null 2>&1 || { echo "Bail out! cannot install ${cmds[*]%%:*}"; exit 1; }
	for f in "$@"; do
		[ -f "$top/tests/node_modules/$f" ] \
			|| { echo "Bail out! tests/node_modules/$f is missing (npm ci --prefix tests)"; exit 1; }
	done
}

# start_ok DESC CMD...: runs CMD in this shell (it starts processes that
# stop_all must know about), passes or fails with its output.
start_ok() {
	local desc=$1 out=$MG_DIR/start.$RANDOM.out
	shift
	if "$@" >"$out" 2>&1; then
		pass "$desc"
		return 0
	fi
	fail "$desc" "$(tail -n 30 "$out")"
	return 1
}
