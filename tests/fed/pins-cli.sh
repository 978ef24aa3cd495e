#!/usr/bin/env bash
# tests/fed/pins-cli.sh — `mcpgate pins status|diff|approve` against an SDK fixture
# upstream whose definitions change (--defs, POST /_defs), with no gateway running: the
# command asks the upstreams itself (no catalog in a state file).
#   fx   (prefix fx_)   pin = warn, hygiene on: the one judged
#   off  (prefix off_)  pin = off: skipped
#
#  - no pins file: every record new, exit 1; approve --all-new writes the file (its lines
#    in the format), mcpgate -t accepts it, and a digest tampered with makes -t name
#    FILE:LINE; then every record pinned, exit 0;
#  - a description changed and a tool added with a U+202E in its description: changed
#    (pinned=the old digest) and new with hygiene="...", exit 1; diff shows the old and
#    the new description lines; --json parses;
#  - approve UPSTREAM/NAME pins the changed one; a name no upstream lists: exit 2, the
#    file unchanged, byte for byte; a tool removed: gone, and approving it by name
#    removes its pin;
#  - two approvals at once both land (pins_update serializes them).
#
# Env: MCPGATE_BIN; MG_KEEP=1 keeps the temp dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin curl:curl jq:jq --node @modelcontextprotocol/sdk/package.json

start_fixture fx --port 0 --json --quiet --defs --name fx
wait_fixture fx || bail "the fixture upstream started" "$(tail -n 5 "$T/fx.log")"
DEFS=${FIXTURE_URL[fx]%/mcp}/_defs
(umask 077 && printf 'mcpgate-secret\n' > "$T/secret")
cat > "$T/gw.conf" <<CONF
[gateway]
resource = http://127.0.0.1:9/mcp
name = com.example/gateway
state = $T/state
log-file = $T/gw.log
[auth]
issuer = http://127.0.0.1:9
client-id = mcpgate
client-secret-file = $T/secret
[upstream "fx"]
url = ${FIXTURE_URL[fx]}
prefix = fx_
pin = warn
hygiene = yes
[upstream "off"]
url = ${FIXTURE_URL[fx]}
prefix = off_
pin = off
CONF
PINS=$T/gw.pins	# beside the configuration (pins-file's default)

# pins ARG...: the command's stdout in $T/out, its stderr in $T/err; its exit code in RC.
RC=0
pins() {
	"$MCPGATE_BIN" pins -c "$T/gw.conf" "$@" > "$T/out" 2> "$T/err"
	RC=$?
}
# defs JSON: POST /_defs, the fixture's answer.
defs() { curl -s --max-time 30 --data-binary "$1" "$DEFS"; }
# line STATE NAME: the status line of tool NAME of fx in $T/out.
line() { grep -E "^$1 fx tool $2 " "$T/out"; }

# --- no pins file ---------------------------------------------------------------------------
pins status
is "no pins file: status exits 1" "$RC" 1
n_tools=$(grep -c ' fx tool ' "$T/out")
check "… every tool listed ($n_tools), each new" test "$n_tools" -ge 19 -a "$(grep -c '^new fx tool ' "$T/out")" = "$n_tools"
is "… lines of five fields: STATE UPSTREAM KIND NAME DIGEST" \
	"$(grep -Evc '^[a-z]+ fx (tool|prompt|template) [^ ]+ sha256:[0-9a-f]{64}$' "$T/out")" 0
like "… says the catalog was asked of the upstreams now" "$(cat "$T/err")" '^note: catalog: asked of the upstreams now'
like "… says pin = off skips [upstream \"off\"]" "$(cat "$T/err")" 'upstream "off".*pin = off'
unlike "… and lists none of its records" "$(cat "$T/out")" ' off '

# --- approve --all-new ------------------------------------------------------------------------
pins approve --all-new --by ci-bot
is "approve --all-new exits 0" "$RC" 0
is "… one 'approved' line per record" "$(grep -c '^approved ' "$T/out")" "$(grep -c . "$T/out")"
check "… the pins file exists" test -s "$PINS"
# shellcheck disable=SC2016 # the $ are awk's
check "… its pin lines: UPSTREAM KIND NAME DIGEST WHEN BY, each with its definition after a tab" \
	awk '/^#/ { next } /^\t\{/ { if (!pin) exit 1; pin = 0; next }
	     { if (NF != 6 || $1 != "fx" || $4 !~ /^sha256:[0-9a-f]+$/ || length($4) != 71 ||
	           $5 !~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z$/ ||
	           $6 != "ci-bot") exit 1; pin = 1 }' "$PINS"
is "… a pin for each tool" "$(grep -c '^fx tool ' "$PINS")" "$n_tools"
check "mcpgate -t accepts the configuration with its pins" "$MCPGATE_BIN" -t -c "$T/gw.conf"
cp "$PINS" "$T/pins.good"
lineno=$(grep -n '^fx tool echo ' "$PINS" | cut -d: -f1)
digest=$(sed -n "${lineno}p" "$PINS" | cut -d' ' -f4)
case $digest in *0) other=${digest%0}1 ;; *) other=${digest%?}0 ;; esac
sed -i "${lineno}s/$digest/$other/" "$PINS"
out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1)
rc=$?
check "a digest tampered with: mcpgate -t fails" test "$rc" -ne 0 -a "$(cmp -s "$PINS" "$T/pins.good"; echo $?)" -ne 0
like "… naming pins-file:LINE" "$out" "gw\\.pins:($lineno|$((lineno + 1))):"
cp "$T/pins.good" "$PINS"
pins status
is "status after approve: exits 0" "$RC" 0
is "… every record pinned" "$(grep -vc '^pinned ' "$T/out")" 0

# --- a description changed, a tool added ----------------------------------------------------
old=$(line pinned test_simple_text | cut -d' ' -f5)
defs '{"set": {"test_simple_text": {"description": "Returns two text items now"},
	"sneaky": {"description": "Harmless \u202e instructions"}}}' > /dev/null
pins status
is "a description changed, a tool added: status exits 1" "$RC" 1
like "… the changed one: changed, pinned=its old digest" "$(line changed test_simple_text)" \
	"^changed fx tool test_simple_text sha256:[0-9a-f]{64} pinned=$old\$"
like "… the new one: new, with the bidi control's reason" "$(line new sneaky)" \
	'^new fx tool sneaky sha256:[0-9a-f]{64} hygiene="bidi control: U\+202E [^"]*at /description"$'
unlike "… never the text itself" "$(cat "$T/out")" $'\u202e'
is "… nothing else differs" "$(grep -vc '^pinned ' "$T/out")" 2
pins --json status
is "--json: exits 1 too" "$RC" 1
jcheck "… one JSON array: the changed one with pinned, the new one with hygiene" "$(cat "$T/out")" \
	"length == $((n_tools + 5 + 1)) and
	 ([.[] | select(.state == \"changed\")] | length == 1 and .[0].name == \"test_simple_text\" and .[0].pinned == \"$old\") and
	 ([.[] | select(.state == \"new\")] | length == 1 and .[0].name == \"sneaky\" and (.[0].hygiene | test(\"U\\\\+202E\")))"
pins diff
is "diff exits 1" "$RC" 1
like "… a header of the pinned definition" "$(cat "$T/out")" \
	"^--- fx tool test_simple_text pinned $old \\([0-9T:Z-]+ by ci-bot\\)\$"
like "… the old description removed" "$(cat "$T/out")" '^-  "description": "Returns one text content item",$'
like "… the new one added" "$(cat "$T/out")" '^\+  "description": "Returns two text items now",$'
like "… a hunk header" "$(cat "$T/out")" '^@@ -[0-9]+,[0-9]+ \+[0-9]+,[0-9]+ @@$'
like "… the new tool all added, its bidi control escaped" "$(cat "$T/out")" '^\+  "description": "Harmless \\u202E instructions",$'
pins diff fx/test_simple_text
unlike "diff UPSTREAM/NAME: that record alone" "$(cat "$T/out")" sneaky
cp "$PINS" "$T/pins.defs"
sed -i '/^fx tool test_simple_text /{n;d}' "$PINS"
pins diff fx/test_simple_text
like "a pin that keeps no definition: diff says so" "$(head -n 1 "$T/out")" \
	"^--- fx tool test_simple_text pinned $old \\(.* by ci-bot; the pin keeps no definition\\)\$"
like "… and shows the listed one all added" "$(cat "$T/out")" '^\+  "description": "Returns two text items now",$'
unlike "… nothing removed" "$(sed 1d "$T/out")" '^-'
cp "$T/pins.defs" "$PINS"

# --- approve one, a name that is not there ------------------------------------------------------
pins approve fx/test_simple_text
is "approve fx/test_simple_text exits 0" "$RC" 0
like "… says what it approved" "$(cat "$T/out")" '^approved fx tool test_simple_text sha256:[0-9a-f]{64}$'
pins status fx/test_simple_text
like "… then it is pinned" "$(cat "$T/out")" '^pinned fx tool test_simple_text '
cp "$PINS" "$T/pins.before"
pins approve fx/no_such_tool
is "approve of a name fx does not list: exit 2" "$RC" 2
like "… said on stderr" "$(cat "$T/err")" '^mcpgate pins: fx/no_such_tool: '
check "… the pins file unchanged, byte for byte" cmp "$PINS" "$T/pins.before"
pins approve nowhere/x
is "approve of an upstream that is not configured: exit 2" "$RC" 2
pins approve off/test_simple_text
is "approve at an upstream with pin = off: exit 2" "$RC" 2
check "… the pins file unchanged" cmp "$PINS" "$T/pins.before"

# --- a tool removed -------------------------------------------------------------------------------
defs '{"remove": ["test_error_handling"]}' > /dev/null
pins status
is "a tool removed: status exits 1" "$RC" 1
like "… it is gone, with its pin's digest" "$(grep ' test_error_handling ' "$T/out")" \
	'^gone fx tool test_error_handling sha256:[0-9a-f]{64}$'
pins approve --by tester fx/test_error_handling
is "approve fx/test_error_handling (gone): exit 0" "$RC" 0
like "… says it removed the pin" "$(cat "$T/out")" '^removed fx tool test_error_handling sha256:[0-9a-f]{64}$'
grep -q '^fx tool test_error_handling ' "$PINS" && fail "… the pin is gone from the file" "$(grep test_error_handling "$PINS")" \
	|| pass "… the pin is gone from the file"
pins status fx/test_error_handling
is "… status of that name now: exit 2 (nothing listed or pinned of it)" "$RC" 2

# --- two approvals at once -----------------------------------------------------------------------
defs '{"set": {"twin_a": {"description": "A"}, "twin_b": {"description": "B"}}}' > /dev/null
"$MCPGATE_BIN" pins -c "$T/gw.conf" approve --by a fx/twin_a > "$T/a.out" 2>&1 &
pa=$!
"$MCPGATE_BIN" pins -c "$T/gw.conf" approve --by b fx/twin_b > "$T/b.out" 2>&1 &
pb=$!
wait "$pa"; ra=$?
wait "$pb"; rb=$?
is "two approvals at once: both exit 0" "$ra $rb" "0 0"
check "… both pins land" grep -q '^fx tool twin_a .* a$' "$PINS"
check "… (the second too)" grep -q '^fx tool twin_b .* b$' "$PINS"
check "… and the earlier ones stay" grep -q '^fx tool test_simple_text ' "$PINS"
pins status fx/twin_a fx/twin_b
is "… status of both: pinned, exit 0" "$RC $(grep -c '^pinned ' "$T/out")" "0 2"
defs '{"set": {"test_image_content": {"description": "Returns a GIF"}}}' > /dev/null
pins approve --all-new
is "approve --all-new: exit 0" "$RC" 0
is "… approves the one still new alone (never a changed one)" "$(cut -d' ' -f1-4 "$T/out")" "approved fx tool sneaky"
pins status fx/test_image_content
like "… the changed one stays changed" "$(cat "$T/out")" '^changed fx tool test_image_content '
pins approve --all-new
is "approve --all-new with nothing new: exit 0" "$RC" 0
like "… says so" "$(cat "$T/out")" '^nothing to approve'
pins status --by x
is "an option of approve given to status: exit 2" "$RC" 2
tap_done
