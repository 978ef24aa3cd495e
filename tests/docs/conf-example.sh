#!/usr/bin/env bash
# tests/docs/conf-example.sh — the first example of mcpgate.conf(5)'s EXAMPLES does what
# its text says: mcpgate explain, on that configuration as printed (its secret file made
# here) and a catalog of the upstream's tools, shows
#   - tenant acme with mcp:tools: the gh_get_*/gh_list_*/gh_create_*/gh_update_* tools,
#     and gh_delete_* hidden for lack of mcp:admin (a step-up: insufficient_scope);
#   - acme with mcp:tools mcp:admin: gh_delete_issue too, never gh_delete_repo (deny);
#   - a caller without a tenant: only the read-only tools.
# Prints TAP. Env: MCPGATE_BIN (default src/mcpgate).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
mg_init || exit 1
M5=$top/man/mcpgate.conf.5

# The first literal block of EXAMPLES, its secret file here.
sed -n '/^\.Sh EXAMPLES/,/^\.Sh /p' "$M5" | sed -n '/^\.Bd -literal/,/^\.Ed/{/^\.Bd/d;/^\.Ed/q;p}' >"$MG_DIR/raw.conf"
if ! grep -q '^\[upstream "github"\]' "$MG_DIR/raw.conf"; then
	fail "the first example of mcpgate.conf(5) has [upstream \"github\"]" "$(cat "$MG_DIR/raw.conf")"
	tap_done
	exit 1
fi
echo placeholder >"$MG_DIR/secret"
chmod 600 "$MG_DIR/secret"
mkdir -m 0700 "$MG_DIR/st"
sed -e "s|^client-secret-file = .*|client-secret-file = $MG_DIR/secret|" \
	-e "/^\[gateway\]/a state = $MG_DIR/st/state" "$MG_DIR/raw.conf" >"$MG_DIR/ex.conf"
tools=(get_repo list_issues create_issue update_issue delete_issue delete_repo)
jq -n --args '{github: {caps: {tools: {}}, tools: [$ARGS.positional[] | {name: ., inputSchema: {type: "object"}}]}}' \
	"${tools[@]}" >"$MG_DIR/catalog.json"
out=$("$MCPGATE_BIN" -t -c "$MG_DIR/ex.conf" --catalog "$MG_DIR/catalog.json" 2>&1)
like "mcpgate -t accepts the example" "rc=$? $out" '^rc=0 '

# explain_tool CLAIMS TOOL: "visible" or the reason explain gives for hiding it.
explain_tool() {
	local out
	out=$("$MCPGATE_BIN" explain -c "$MG_DIR/ex.conf" --claims "$1" --tool "$2" --catalog "$MG_DIR/catalog.json" 2>&1)
	if grep -q "^$2: visible" <<<"$out"; then
		echo visible
	else
		sed -n "s/^ *$2: hidden at step [0-9]* (\([a-z_]*\)).*/\1/p" <<<"$out" | head -n 1
		grep -q "^ *$2: hidden" <<<"$out" || printf 'unexpected: %s\n' "$out"
	fi
}
ACME='{"scope":"mcp:tools","tenant":"acme"}'
ADMIN='{"scope":"mcp:tools mcp:admin","tenant":"acme"}'
NONE='{"scope":"mcp:tools"}'
for t in gh_get_repo gh_list_issues gh_create_issue gh_update_issue; do
	is "acme with mcp:tools sees $t" "$(explain_tool "$ACME" "$t")" visible
done
is "acme with mcp:tools does not see gh_delete_issue: mcp:admin is missing (a step-up)" \
	"$(explain_tool "$ACME" gh_delete_issue)" insufficient_scope
is "acme with mcp:admin sees gh_delete_issue" "$(explain_tool "$ADMIN" gh_delete_issue)" visible
is "acme with mcp:tools does not see gh_delete_repo" "$(explain_tool "$ACME" gh_delete_repo)" group_forbidden
is "acme with mcp:admin does not see gh_delete_repo either: deny" "$(explain_tool "$ADMIN" gh_delete_repo)" tool_denied
is "a caller without a tenant sees the read-only gh_get_repo" "$(explain_tool "$NONE" gh_get_repo)" visible
is "… not gh_create_issue (read-only mode)" "$(explain_tool "$NONE" gh_create_issue)" read_only_mode
is "… nor gh_delete_issue (its group is not the tenant's)" "$(explain_tool "$NONE" gh_delete_issue)" group_forbidden
tap_done
