# tests/lib/tap.sh — a tiny TAP producer for shell suites.
# Source it, call `ok COND-EXIT-STATUS "description"` style helpers, end with `tap_done`.
# Every suite prints TAP on stdout and exits non-zero when any test failed;
# tests/run counts the `ok` / `not ok` lines of every suite.

tap_n=0
tap_failed=0

# pass DESC / fail DESC [DETAIL]
pass() { tap_n=$((tap_n + 1)); printf 'ok %d - %s\n' "$tap_n" "$1"; }
fail() {
	tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1))
	printf 'not ok %d - %s\n' "$tap_n" "$1"
	[ $# -gt 1 ] && printf '%s\n' "$2" | sed 's/^/# /'
	return 0
}

# check DESC CMD...: passes when CMD exits 0.
check() {
	local desc=$1; shift
	local out
	if out=$("$@" 2>&1); then pass "$desc"; else fail "$desc" "$out"; fi
}

# is DESC GOT WANT: string equality.
is() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got:  '$2'
want: '$3'"; fi
}

# like DESC GOT REGEX: extended-regex match.
like() {
	if printf '%s' "$2" | grep -Eq -- "$3"; then pass "$1"; else fail "$1" "got:  '$2'
want match: '$3'"; fi
}

# unlike DESC GOT REGEX: no line matches.
unlike() {
	if ! printf '%s' "$2" | grep -Eq -- "$3"; then pass "$1"; else fail "$1" "got:  '$2'
want no match: '$3'"; fi
}

# tap_relay FILE [PREFIX]: the "ok"/"not ok" lines of another TAP producer, renumbered
# into ours, PREFIX before each description (a "# SKIP" stays); its "#" lines as they are,
# its plan dropped, anything else as a comment. Sets tap_relayed to the number of tests
# it relayed.
tap_relayed=0
tap_relay() {
	local line
	tap_relayed=0
	while IFS= read -r line; do
		case "$line" in
		"ok "*) tap_relayed=$((tap_relayed + 1)); pass "${2:-}$(printf '%s' "$line" | sed -E 's/^ok [0-9]+ - //')" ;;
		"not ok "*)
			tap_relayed=$((tap_relayed + 1)); tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1))
			printf 'not ok %d - %s%s\n' "$tap_n" "${2:-}" "$(printf '%s' "$line" | sed -E 's/^not ok [0-9]+ - //')" ;;
		"#"*) printf '%s\n' "$line" ;;
		1..[0-9]*) ;;
		*) [ -z "$line" ] || printf '# %s\n' "$line" ;;
		esac
	done < "$1"
}

tap_done() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
}

# jcheck DESC JSON FILTER: passes when the jq FILTER is true of JSON; else shows both.
jcheck() {
	if [ -n "$2" ] && jq -e "$3" > /dev/null 2>&1 <<<"$2"; then
		pass "$1"
	else
		fail "$1" "want: $3
got:  $(printf '%s' "${2:-<nothing>}" | head -c 1500)"
	fi
}
