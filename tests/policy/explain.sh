#!/usr/bin/env bash
# `mcpgate explain` (docs/ARCHITECTURE.md §2) against two real fixture upstreams (the
# SDK server of tests/upstream, the same tools under the prefixes gh_ and fs_, with ~500
# extra tools each so the catalog holds over 1,000), a configuration with groups,
# features, a read-only tenant, an allow list, a deny rule, a tenant in an included
# file, and the groups and tenant claims under other names. For callers of each kind it
# checks:
#
#  - the visible tools, and for hidden tools the step, the reason and the rule as
#    FILE:LINE — the line of the configuration that decided, found here with grep;
#  - --tool: the decision and the rate limits of a call: each class's effective rate
#    (a tenant override with its line, [limits] with its line, unlimited where nothing
#    is set, a tenant's limit-ip not read, a group's limit-tool where it is the
#    tightest), and what its bucket is keyed by (trusted
#    proxies, the tenant, the tool within it), for a tenant, no tenant claim and an
#    unknown tenant;
#  - exit codes: 0 explained, 2 --tool hidden or unknown, 1 usage, claims or
#    configuration errors (printed as FILE:LINE);
#  - an upstream that is down: a note, the others' tools still explained;
#  - --json (how long deciding takes is bench/policy.sh's);
#  - --save-catalog, then --catalog with the upstreams out of reach: the same answer.
# Prints TAP. Env: MCPGATE_BIN.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_begin jq:jq --node @modelcontextprotocol/sdk/package.json
command -v node > /dev/null || { echo "Bail out! node is needed"; exit 1; }

# --- the upstreams ----------------------------------------------------------------------
for name in gh fs; do start_fixture "$name" --port 0 --name "$name" --tools 495 --quiet; done
for name in gh fs; do wait_fixture "$name" || bail "fixture $name started" "$(tail -n 5 "$T/$name.log")"; done

# --- the configuration --------------------------------------------------------------------
mkdir -p "$T/tenants.d"
cat > "$T/gw.conf" <<CONF
[gateway]
resource = https://gw.example.com/mcp
[auth]
issuer = https://idp.example.com
required-scopes = mcp:tools
groups-claim = roles
tenant-claim = org
[limits]
token = 120/60
tool = 600/60
[upstream "gh"]
url = ${FIXTURE_URL[gh]}
prefix = gh_
group = github
read-only-tools = gh_test_simple_text
[upstream "fs"]
url = ${FIXTURE_URL[fs]}
prefix = fs_
read-only-tools = fs_echo fs_test_simple_text
[group "github"]
tools = gh_*
scopes = mcp:github
members = engineering
[group "admin"]
tools = *_test_error_handling
scopes = mcp:admin
members = ops
[group "beta"]
tools = fs_test_sampling fs_test_elicitation*
feature = beta
[tenant "acme"]
groups = github fs admin beta
features = beta
deny = fs_slow
limit-token = 10/1
[tenant "contractors"]
groups = fs
access-mode = read-only
[tenant "nobeta"]
groups = beta
[tenant "*"]
groups = fs
allow = fs_echo*
include = tenants.d/*.conf
CONF
cat > "$T/tenants.d/globex.conf" <<'CONF'
# one file per tenant, as a hosting panel writes them
[tenant "globex"]
groups = github fs
deny = gh_test_*
CONF
# line N: the line of FILE that starts with TEXT after the line starting with AFTER.
line() { awk -v a="$2" -v t="$3" 'index($0, a) == 1 { on = 1 } on && index($0, t) == 1 { print NR; exit }' "$1"; }
L_SCOPES=$(line "$T/gw.conf" '[group "github"]' 'scopes =')
L_MEMBERS=$(line "$T/gw.conf" '[group "github"]' 'members =')
L_FEATURE=$(line "$T/gw.conf" '[group "beta"]' 'feature =')
L_DENY=$(line "$T/gw.conf" '[tenant "acme"]' 'deny =')
L_LIMIT=$(line "$T/gw.conf" '[tenant "acme"]' 'limit-token =')
L_TOOL=$(line "$T/gw.conf" '[limits]' 'tool =')
L_RO=$(line "$T/gw.conf" '[tenant "contractors"]' 'access-mode =')
L_STAR_GROUPS=$(line "$T/gw.conf" '[tenant "*"]' 'groups =')
L_ALLOW=$(line "$T/gw.conf" '[tenant "*"]' 'allow =')
L_NOBETA=$(line "$T/gw.conf" '[tenant "nobeta"]' 'groups =')
L_GLOBEX_DENY=$(line "$T/tenants.d/globex.conf" '[tenant "globex"]' 'deny =')
if out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1); then
	pass "mcpgate -t accepts the configuration (groups, features, read-only, allow, deny, an included tenant)"
else
	bail "mcpgate -t accepts the configuration" "$out"
fi

# explain [ARGS...]: stdout in $out, stderr in $T/err, exit status in $rc.
explain() {
	out=$(timeout 60 "$MCPGATE_BIN" explain -c "$T/gw.conf" "$@" 2> "$T/err")
	rc=$?
}
# flat [TEXT]: TEXT (else stdin) on one line, for a regex over several lines.
flat() { if [ $# -gt 0 ]; then tr '\n' ' ' <<<"$1"; else tr '\n' ' '; fi; }

# --- an acme engineer without mcp:github ------------------------------------------------------
ENG='{"active":true,"sub":"alice","scope":"mcp:tools","org":"acme","roles":["engineering"],"aud":"https://gw.example.com/mcp","exp":4102444800}'
explain --claims "$ENG" --json
ALL=$(jq -c '(.visible + [.hidden[].tool]) | sort' <<<"$out" 2>/dev/null)
jcheck "--json: the catalog of both upstreams, over 1,000 tools, explained" \
	"$(jq -c --argjson all "${ALL:-null}" '{rc: '"$rc"', n: ($all | length), gh: ($all | map(select(startswith("gh_"))) | length), decide_us}' <<<"$out")" \
	'.rc == 0 and .n > 1000 and .gh * 2 == .n and (.decide_us | type) == "number"'
jcheck "acme engineer: sees every fs_ tool but fs_slow, no gh_ tool" \
	"$(jq -c '{v: .visible, tenant}' <<<"$out")" \
	'.tenant == "acme" and (.v | length) > 400 and (.v | all(startswith("fs_"))) and (.v | index("fs_slow") | not) and (.v | index("fs_echo"))'
jcheck "… gh_echo hidden at step 3, insufficient_scope, by [group \"github\"] scopes (gw.conf:$L_SCOPES), with the scopes to step up to" \
	"$(jq -c '.hidden[] | select(.tool == "gh_echo")' <<<"$out")" \
	'.step == 3 and .reason == "insufficient_scope" and .line == '"$L_SCOPES"' and (.file | endswith("/gw.conf")) and .step_up and .scopes == "mcp:tools mcp:github"'
jcheck "… fs_slow hidden at step 4, tool_denied, by [tenant \"acme\"] deny (gw.conf:$L_DENY)" \
	"$(jq -c '.hidden[] | select(.tool == "fs_slow")' <<<"$out")" \
	'.step == 4 and .reason == "tool_denied" and .line == '"$L_DENY"' and (.rule | test("deny: fs_slow matches fs_slow$")) and (.step_up | not)'
jcheck "… the prompts and resources of gh hidden at step 3 (insufficient_scope, gw.conf:$L_SCOPES), fs's visible" \
	"$(jq -c '.upstreams' <<<"$out")" \
	'length == 2 and (.[] | select(.upstream == "gh") | .step == 3 and .reason == "insufficient_scope" and .line == '"$L_SCOPES"' and .step_up) and (.[] | select(.upstream == "fs") | .visible)'
explain --claims "$ENG"
like "… and in text, by upstream" "$(flat "$out")" 'by upstream .* gh: hidden at step 3 \(insufficient_scope\) by [^ ]*gw.conf:'"$L_SCOPES"': \[group "github"\] scopes.* fs: visible'
explain --claims "$ENG" --json
jcheck "… no step 1 note for an active token with the required scope" "$(jq -c .notes <<<"$out")" '. == []'

explain --claims "$ENG"
like "text: each hidden tool as NAME: hidden at step N (REASON) by FILE:LINE: rule" "$out" \
	"^  gh_echo: hidden at step 3 \(insufficient_scope\) by $T/gw.conf:$L_SCOPES: \[group \"github\"\] scopes: the token lacks mcp:github; a token with scope \"mcp:tools mcp:github\" may call it$"
like "text: fs_slow by the deny line" "$out" "^  fs_slow: hidden at step 4 \(tool_denied\) by $T/gw.conf:$L_DENY: \[tenant \"acme\"\] deny"
like "text: the tenant and its section's line, then the visible tools" "$(flat "$(head -n 3 <<<"$out")")" \
	"^tenant: acme \($T/gw.conf:[0-9]+\) visible \([0-9]+\): +fs_echo $"
like "… then the hidden ones" "$(grep -A1 '^hidden' <<<"$out" | flat)" '^hidden \([0-9]+\): +fs_slow: hidden at step 4'
is "text: exit 0" "$rc" 0

# --- --tool: the decision and the rate-limit keys ---------------------------------------------
explain --claims "$ENG" --tool gh_echo
like "--tool gh_echo (hidden): exit 2, the step, the reason and the line" "rc=$rc $(flat "$out")" \
	"^rc=2 .*gh_echo: hidden at step 3 \(insufficient_scope\) by $T/gw.conf:$L_SCOPES: "
explain --claims "$ENG" --tool fs_echo
like "--tool fs_echo (visible): exit 0, its upstream and its name there" "rc=$rc $(flat "$out")" \
	'^rc=0 tenant: acme .* fs_echo: visible \(from \[upstream "fs"\], where it is echo; credentials = none\)'
like "… the rate limits: the tenant's limit-token override with its line, keyed by the token" "$out" \
	"^  token: 10/1 s \(from $T/gw.conf:$L_LIMIT: \[tenant \"acme\"\] limit-token\); keyed by this token's digest \(one bucket per token\)$"
like "… [limits] tool with its line, keyed by the tool within the tenant" "$out" \
	"^  tool: 600/60 s \(from $T/gw.conf:$L_TOOL: \[limits\] tool\); keyed by tool \"fs_echo\" within tenant \"acme\"$"
like "… unlimited where nothing is set; the gateway's one bucket, the tenant's" "$(flat "$out")" \
	'rate limits of a call, in the order they are taken .*  gateway: unlimited \(from \[limits\] gateway, not set\); keyed by nothing: one bucket for the whole gateway .*  tenant: unlimited \(from \[limits\] tenant, not set\); keyed by tenant "acme" '
like "… the ip class: the client address, X-Forwarded-For not read without trusted-proxies" "$out" \
	'^  ip: unlimited \(from \[limits\] ip, not set\); keyed by the client address \(REMOTE_ADDR: no trusted-proxies, so X-Forwarded-For is not read\), an IPv6 client by its /64$'
is "… the five classes, in the order they are taken" "$(sed -n 's/^  \([a-z]*\): .*; keyed by .*/\1/p' <<<"$out" | paste -sd' ')" "gateway ip tenant token tool"
explain --claims "$ENG" --tool fs_echo --json
jcheck "--tool --json: the decision and five limits (rate, where it comes from, the key)" \
	"$(jq -c '{d: .decision, l: [.limits[] | [.limit, .on, .n, .per, .burst, .section, .line]], k: [.limits[] | .key], t: .limits[4].tool}' <<<"$out")" \
	'.d.visible and .d.upstream == "fs" and .d.upstream_name == "echo" and .d.credentials == "none" and .l == [["gateway",false,0,1,0,"limits",null],["ip",false,0,1,0,"limits",null],["tenant",false,0,1,0,"limits",null],["token",true,10,1,0,"tenant",'"$L_LIMIT"'],["tool",true,600,60,0,"limits",'"$L_TOOL"']] and .k[3] == "this token'"'"'s digest (one bucket per token)" and .k[4] == "tool \"fs_echo\" within tenant \"acme\"" and .t == "fs_echo"'

# more limits: trusted proxies, [limits] gateway and ip (a burst), the tenant's
# limit-tool = 0 (unlimited for it) and its limit-ip (not read: the ip limit is taken
# before the tenant is known; mcpgate -t warns)
awk '{ print }
	/^resource = / { print "trusted-proxies = 10.0.0.0/8 ::1" }
	/^\[limits\]$/ { print "gateway = 5000/1"; print "ip = 100/1 burst 20" }
	/^\[tenant "acme"\]$/ { print "limit-ip = 1/1"; print "limit-tool = 0" }' "$T/gw.conf" > "$T/lim.conf"
L_IP=$(line "$T/lim.conf" '[limits]' 'ip =')
L_LTOOL=$(line "$T/lim.conf" '[tenant "acme"]' 'limit-tool =')
L_LTOKEN=$(line "$T/lim.conf" '[limits]' 'token =')
out=$(timeout 60 "$MCPGATE_BIN" explain -c "$T/lim.conf" --claims "$ENG" --tool fs_echo 2> "$T/err"); rc=$?
like "limits: [limits] ip with its burst (not the tenant's limit-ip), keyed by the address behind the trusted proxies" "rc=$rc $(flat "$out")" \
	"^rc=0 .*  gateway: 5000/1 s \(from $T/lim.conf:[0-9]+: \[limits\] gateway\); keyed by nothing: one bucket for the whole gateway   ip: 100/1 s burst 20 \(from $T/lim.conf:$L_IP: \[limits\] ip\); keyed by the client address \(X-Forwarded-For only from trusted-proxies: 10.0.0.0/8 ::1\), an IPv6 client by its /64 "
like "… the tenant's limit-tool = 0: unlimited for it, from its line" "$out" \
	"^  tool: unlimited \(from $T/lim.conf:$L_LTOOL: \[tenant \"acme\"\] limit-tool\); keyed by tool \"fs_echo\" within tenant \"acme\"$"
out=$(timeout 60 "$MCPGATE_BIN" explain -c "$T/lim.conf" --claims '{"scope":"mcp:tools","sub":"bot"}' --tool fs_echo 2> "$T/err"); rc=$?
like "no tenant claim: tenant \"*\" ([tenant \"*\"] has no override: [limits] token), the tool within it" "rc=$rc $(flat "$out")" \
	"^rc=0 .*  tenant: unlimited \(from \[limits\] tenant, not set\); keyed by tenant \"\*\" \(every token without a tenant claim\)   token: 120/60 s \(from $T/lim.conf:[0-9]+: \[limits\] token\); .*  tool: 600/60 s \(from $T/lim.conf:[0-9]+: \[limits\] tool\); keyed by tool \"fs_echo\" within tenant \"\*\" $"
out=$(timeout 60 "$MCPGATE_BIN" explain -c "$T/lim.conf" --claims '{"scope":"mcp:tools","org":"initech"}' --tool fs_echo 2> "$T/err"); rc=$?
like "an unknown tenant: exit 2, yet its requests are counted under its own name at [limits]' rates" "rc=$rc $(flat "$out")" \
	"^rc=2 tenant: initech is not configured.*  tenant: unlimited \(from \[limits\] tenant, not set\); keyed by tenant \"initech\"   token: 120/60 s \(from $T/lim.conf:$L_LTOKEN: \[limits\] token\)"
# a group's limit-tool where it is the tightest: [group "admin"] (by its glob) 1/60 over
# the upstream's own [group "fs"] 300/60 burst 2 (no glob) and [limits] tool 600/60
awk '{ print }
	/^\[group "admin"\]$/ { print "limit-tool = 1/60" }
	/^\[group "github"\]$/ { print "limit-tool = 900/60" }
	END { print "[group \"fs\"]"; print "limit-tool = 300/60 burst 2" }' "$T/gw.conf" > "$T/glim.conf"
L_GADMIN=$(line "$T/glim.conf" '[group "admin"]' 'limit-tool =')
L_GFS=$(line "$T/glim.conf" '[group "fs"]' 'limit-tool =')
out=$(timeout 60 "$MCPGATE_BIN" explain -c "$T/glim.conf" --claims "$ENG" --tool fs_echo 2> "$T/err"); rc=$?
like "limits: fs_echo in its upstream's [group \"fs\"] (no glob), 300/60 burst 2 tighter than [limits] 600/60: the group's, from its line" \
	"rc=$rc $(flat "$out")" \
	"^rc=0 .*  tool: 300/60 s burst 2 \(from $T/glim.conf:$L_GFS: \[group \"fs\"\] limit-tool\); keyed by tool \"fs_echo\" within tenant \"acme\" $"
out=$(timeout 60 "$MCPGATE_BIN" explain -c "$T/glim.conf" --claims "$ENG" --tool fs_test_error_handling --json 2> "$T/err"); rc=$?
jcheck "… fs_test_error_handling in [group \"fs\"] and [group \"admin\"] (1/60): admin's, the tightest (--json: section group, its name and line)" \
	"$(jq -c '.limits[4] | {rc: '"$rc"', rate, n, per, section, group, line, key}' <<<"$out")" \
	'.rc == 0 and .rate == "1/60 s" and .n == 1 and .per == 60 and .section == "group" and .group == "admin" and .line == '"$L_GADMIN"' and .key == "tool \"fs_test_error_handling\" within tenant \"acme\""'
out=$(timeout 60 "$MCPGATE_BIN" explain -c "$T/glim.conf" --claims "$ENG" --tool gh_echo 2> "$T/err"); rc=$?
like "… gh_echo in [group \"github\"] (900/60, looser than [limits] 600/60): [limits] tool, even for a hidden tool" \
	"rc=$rc $(flat "$out")" \
	"^rc=2 .*  tool: 600/60 s \(from $T/glim.conf:$L_TOOL: \[limits\] tool\); keyed by tool \"gh_echo\" within tenant \"acme\" $"
explain --claims "$ENG" --tool no_such_tool
like "--tool of a tool no upstream offers: exit 2, said so" "rc=$rc $(flat "$out")" '^rc=2 .*no_such_tool: not in the catalog'
explain --claims "$ENG" --tool fs_slow --json
jcheck "--tool fs_slow --json: exit 2, denied" "$(jq -c '.decision + {rc: '"$rc"'}' <<<"$out")" '.rc == 2 and .reason == "tool_denied" and .step == 4'

# --- other callers ----------------------------------------------------------------------------
explain --claims '{"scope":"mcp:tools mcp:github","org":"acme","roles":"engineering"}' --json
jcheck "acme engineer with mcp:github (groups claim as a string): every gh_ tool too; only fs_slow hidden" \
	"$(jq -c '{gh: (.visible | map(select(startswith("gh_"))) | length), h: [.hidden[].tool]}' <<<"$out")" \
	'.gh > 400 and .h == ["fs_slow"]'
explain --claims '{"scope":"mcp:tools mcp:github","org":"acme","roles":["sales"]}' --json
jcheck "acme, not in engineering: gh_ tools hidden by [group \"github\"] members (gw.conf:$L_MEMBERS), no step-up" \
	"$(jq -c '[.hidden[] | select(.tool | startswith("gh_"))] | {n: length, lines: (map(.line) | unique), r: (map(.reason) | unique), up: (map(.step_up) | any)}' <<<"$out")" \
	'.n > 400 and .lines == ['"$L_MEMBERS"'] and .r == ["group_forbidden"] and (.up | not)'
explain --claims '{"scope":"mcp:tools","org":"contractors"}' --json
jcheck "contractors (read-only): only the read-only-tools of fs; the others by access-mode (gw.conf:$L_RO)" \
	"$(jq -c '{v: .visible, ro: [.hidden[] | select(.tool | startswith("fs_")) | [.reason, .line]] | unique}' <<<"$out")" \
	'.v == ["fs_echo", "fs_test_simple_text"] and .ro == [["read_only_mode", '"$L_RO"']]'
explain --claims '{"scope":"mcp:tools","org":"nobeta"}' --json
jcheck "nobeta (no feature beta): fs_test_sampling feature_disabled by [group \"beta\"] feature (gw.conf:$L_FEATURE)" \
	"$(jq -c '{v: .visible, s: (.hidden[] | select(.tool == "fs_test_sampling") | [.step, .reason, .line]), e: (.hidden[] | select(.tool == "fs_echo") | [.reason, .line])}' <<<"$out")" \
	'.v == [] and .s == [3, "feature_disabled", '"$L_FEATURE"'] and .e == ["group_forbidden", '"$L_NOBETA"']'
explain --claims '{"scope":"mcp:tools","sub":"bot"}' --json
jcheck "no tenant claim: [tenant \"*\"]: fs_echo*; fs_slow by allow (gw.conf:$L_ALLOW), gh_echo by its groups (gw.conf:$L_STAR_GROUPS)" \
	"$(jq -c '{t: .tenant, v: .visible, slow: (.hidden[] | select(.tool == "fs_slow") | [.step, .reason, .line]), gh: (.hidden[] | select(.tool == "gh_echo") | [.step, .reason, .line])}' <<<"$out")" \
	'.t == "*" and (.v | length) > 400 and (.v | all(startswith("fs_echo"))) and .slow == [4, "tool_denied", '"$L_ALLOW"'] and .gh == [3, "group_forbidden", '"$L_STAR_GROUPS"']'
explain --claims '{"scope":"mcp:tools mcp:github","org":"globex","roles":["engineering"]}' --json
jcheck "globex (an included file): gh_test_* hidden by ITS deny line (tenants.d/globex.conf:$L_GLOBEX_DENY)" \
	"$(jq -c '[.hidden[] | select(.tool | startswith("gh_test_"))] | {n: length, f: (map(.file) | unique), l: (map(.line) | unique)}' <<<"$out")" \
	'.n > 5 and (.f | length) == 1 and (.f[0] | endswith("/tenants.d/globex.conf")) and .l == ['"$L_GLOBEX_DENY"']'
explain --claims '{"scope":"mcp:tools","org":"initech"}'
like "an unknown tenant: every /mcp request is 403 tenant_forbidden, every tool hidden at step 2" \
	"rc=$rc $(head -n 4 <<<"$out" | flat)" \
	"^rc=0 tenant: initech is not configured: every /mcp request is 403 tenant_forbidden \($T/gw.conf: no \[tenant \"initech\"\] .* visible \(0\): hidden \([0-9]+\): +fs_echo: hidden at step 2 \(tenant_forbidden\) by $T/gw.conf: no \[tenant \"initech\"\]"
is "… every one of them" "$(grep -c 'hidden at step 2 (tenant_forbidden)' <<<"$out")" "$(grep -c '^  ' <<<"$out")"
explain --claims '{"scope":"mcp:tools","org":"initech"}' --tool fs_echo
is "… --tool for it: exit 2" "$rc" 2
explain --claims '{"scope":"other","org":"acme"}'
like "a token without required-scopes: a step 1 note" "$(cat "$T/err")" '^note: step 1: the token lacks required scope mcp:tools'
explain --claims '{"active":false}'
like "an inactive token: a step 1 note" "$(cat "$T/err")" 'step 1: the token would be refused \(token is not active\)'

# --- errors and exit codes ---------------------------------------------------------------------
explain --claims 'not json'
like "claims that are not JSON: exit 1, said so" "rc=$rc $(cat "$T/err")" '^rc=1 mcpgate explain: --claims is not JSON'
explain --claims '{"org": 7}'
like "a tenant claim that is not a string: exit 1" "rc=$rc $(cat "$T/err")" '^rc=1 .*tenant claim'
explain --claims '[]'
is "claims that are not an object: exit 1" "$rc" 1
explain --tool fs_echo
like "no --claims: exit 1 with the usage" "rc=$rc $(flat "$(cat "$T/err")")" '^rc=1 usage: mcpgate explain'
explain --claims '{}' stray
is "a stray argument: exit 1" "$rc" 1
sed 's/^groups = github fs admin beta$/groups = github fs admin beta nosuch/' "$T/gw.conf" > "$T/bad.conf"
L_BAD=$(line "$T/bad.conf" '[tenant "acme"]' 'groups =')
out=$("$MCPGATE_BIN" explain -c "$T/bad.conf" --claims '{}' 2>&1); rc=$?
like "a configuration error: exit 1, as FILE:LINE: key: reason" "rc=$rc $out" "^rc=1 $T/bad.conf:$L_BAD: groups: no \[group \"nosuch\"\]"
out=$("$MCPGATE_BIN" explain -c "$T/missing.conf" --claims '{}' 2>&1); rc=$?
is "a missing configuration file: exit 1" "$rc" 1

# --- an upstream that is down; no policy ---------------------------------------------------------
DOWN=$(free_port)
{ cat "$T/gw.conf"; printf '[upstream "dead"]\nurl = http://127.0.0.1:%s/mcp\nprefix = dd_\ntimeout-ms = 2000\n' "$DOWN"; } |
	sed 's/^groups = github fs admin beta$/groups = github fs admin beta dead/' > "$T/down.conf"
out=$("$MCPGATE_BIN" explain -c "$T/down.conf" --claims "$ENG" --json 2> "$T/err"); rc=$?
jcheck "an upstream that is down: a note, the others' tools still explained, exit 1 (the answer lacks its tools)" \
	"$(jq -c '{rc: '"$rc"', notes, n: (.visible | length)}' <<<"$out")" \
	'.rc == 1 and (.notes | any(test("\\[upstream \"dead\"\\] is left out"))) and .n > 400'
like "… and says so on stderr, pointing at --catalog" "$(cat "$T/err")" \
	'^mcpgate explain: 1 of 3 upstreams could not be asked .*--catalog FILE'
out=$("$MCPGATE_BIN" explain -c "$T/down.conf" --claims "$ENG" 2> "$T/err"); rc=$?
like "… in text, the note on stderr, then the failure" "rc=$rc $(flat "$(cat "$T/err")")" \
	'^rc=1 note: \[upstream "dead"\] is left out.* mcpgate explain: 1 of 3 upstreams could not be asked'
out=$("$MCPGATE_BIN" explain -c "$T/down.conf" --claims "$ENG" --tool fs_echo 2> "$T/err"); rc=$?
is "… with --tool of a visible tool too: exit 1, not 0" "$rc" 1
# --- --save-catalog, then --catalog: the same answer without the upstreams ------------------------
explain --claims "$ENG" --json --save-catalog "$T/snap.json"
printf '%s' "$out" > "$T/live.json"
jcheck "--save-catalog: each upstream's capabilities and records under its own names" \
	"$(jq -c '{up: keys, gh: (.gh.tools | length), fs: (.fs.tools | length), names: ([.gh.tools[].name] | map(select(startswith("gh_"))) | length), caps: (.gh.caps | has("tools"))}' "$T/snap.json" 2>/dev/null)" \
	'.up == ["fs", "gh"] and .gh > 500 and .gh == .fs and .names == 0 and .caps'
# with the upstreams unreachable (the same configuration pointing elsewhere: its rules name
# offline.conf), from the snapshot
sed "s|^url = .*|url = http://127.0.0.1:$DOWN/mcp|" "$T/gw.conf" > "$T/offline.conf"
timeout 60 "$MCPGATE_BIN" explain -c "$T/offline.conf" --claims "$ENG" --json --catalog "$T/snap.json" > "$T/off.json" 2> "$T/err"; rc=$?
jcheck "--catalog: with the upstreams out of reach, the same visible and hidden tools as explained live" \
	"$(jq -nc --slurpfile a "$T/live.json" --slurpfile b "$T/off.json" --argjson rc "$rc" \
		'def norm: del(.decide_us, .config) | tostring | gsub("offline[.]conf"; "gw.conf");
		 {rc: $rc, same: (($a[0] | norm) == ($b[0] | norm)), n: ($b[0].visible | length)}' 2>/dev/null)" \
	'.rc == 0 and .same and .n > 400'
jq '{gh: .gh, other: .fs}' "$T/snap.json" > "$T/partial.json"
out=$(timeout 60 "$MCPGATE_BIN" explain -c "$T/offline.conf" --claims "$ENG" --json --catalog "$T/partial.json" 2> "$T/err"); rc=$?
jcheck "--catalog without an upstream: it is left out with a note, and a name that is no upstream is noted" \
	"$(jq -c --argjson rc "$rc" '{rc: $rc, notes, fs: (.visible | map(select(startswith("fs_"))) | length)}' <<<"${out:-null}")" \
	'.rc == 0 and .fs == 0 and (.notes | any(test("\\[upstream \"fs\"\\] is left out.*not in --catalog"))) and (.notes | any(test("\"other\" names no \\[upstream\\]")))'
printf '[1,' > "$T/broken.json"
out=$("$MCPGATE_BIN" explain -c "$T/gw.conf" --claims "$ENG" --catalog "$T/broken.json" 2>&1); rc=$?
like "--catalog that is not JSON: exit 1, FILE:LINE and the parser's reason" "rc=$rc $out" "^rc=1 .*--catalog $T/broken.json:1: "
like "… and says what it expected" "$out" 'expected \{"<upstream>": its tools/list result'
# One upstream's own tools/list result, bare or as the JSON-RPC answer: that upstream's tools.
awk '/^\[upstream "gh"\]/{skip = 1} /^\[/ && !/^\[upstream "gh"\]/{skip = 0} /^\[(group|tenant) /{exit} !skip' \
	"$T/offline.conf" > "$T/one.conf"
printf '[tenant "acme"]\ngroups = fs\ndeny = fs_slow\n' >> "$T/one.conf"
check "a configuration with one upstream (fs) and a tenant that denies fs_slow" "$MCPGATE_BIN" -t -c "$T/one.conf"
WANT=$(jq -c '[.fs.tools[].name | "fs_" + . | select(. != "fs_slow")] | sort' "$T/snap.json")
jq '{tools: .fs.tools}' "$T/snap.json" > "$T/bare.json"
jq '{jsonrpc: "2.0", id: 1, result: {tools: .fs.tools}}' "$T/snap.json" > "$T/rpc.json"
for f in bare rpc; do
	out=$(timeout 60 "$MCPGATE_BIN" explain -c "$T/one.conf" --claims "$ENG" --json --catalog "$T/$f.json" 2> "$T/err"); rc=$?
	jcheck "--catalog with the upstream's $f tools/list result, one upstream: its tools, fs_slow hidden" \
		"$(jq -c --argjson rc "$rc" --argjson want "$WANT" '{rc: $rc, same: ((.visible | sort) == $want), n: (.visible | length),
			slow: (.hidden | map(select(.tool == "fs_slow")) | length), notes}' <<<"${out:-null}" 2>/dev/null)" \
		'.rc == 0 and .same and .n > 400 and .slow == 1 and (.notes | length) == 0'
done
out=$("$MCPGATE_BIN" explain -c "$T/offline.conf" --claims "$ENG" --catalog "$T/bare.json" 2>&1); rc=$?
like "--catalog with one tools/list result and two upstreams: exit 1, whose tools is not said, --save-catalog's form named" \
	"rc=$rc $(flat "$out")" '^rc=1 .*one tools/list result, but the configuration has 2 \[upstream\] sections.*--save-catalog'
printf '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}' > "$T/rpcerr.json"
: > "$T/empty.json"
printf '{}' > "$T/none.json"
printf '[]' > "$T/array.json"
printf '{"fs": 42}' > "$T/num.json"
for f in empty:'--catalog [^ ]*empty.json:1: .*expected \{' rpcerr:'a JSON-RPC error answer, not a tools/list result; expected' \
	none:'names no \[upstream\] of the configuration; expected' array:'not a JSON object; expected' \
	num:'neither a tools/list result nor a tools array; expected'; do
	out=$("$MCPGATE_BIN" explain -c "$T/one.conf" --claims "$ENG" --catalog "$T/${f%%:*}.json" 2>&1); rc=$?
	like "--catalog ${f%%:*}.json: exit 1 with the reason and what was expected" "rc=$rc $(flat "$out")" "^rc=1 .*${f#*:}"
done
out=$("$MCPGATE_BIN" explain -c "$T/gw.conf" --claims "$ENG" --catalog "$T/snap.json" --save-catalog "$T/x.json" 2>&1); rc=$?
is "--catalog and --save-catalog together: a usage error" "$rc" 1

# Prompts, resources and templates one by one: with no [group] prompts or resources here,
# each is visible exactly when its upstream as a whole is, hidden at the same step for
# the same reason.
jcheck "prompts, resources and templates: each as its upstream (no group grants them on its own)" \
	"$(jq -c '(.upstreams | map({(.upstream): .}) | add) as $u |
		{p: (.prompts.visible | all(($u[(if startswith("gh_") then "gh" else "fs" end)].visible))),
		 h: (.prompts.hidden | all(.step == $u.gh.step and .reason == $u.gh.reason and (.prompt | startswith("gh_")))),
		 np: ((.prompts.visible + .prompts.hidden) | length), t: (.templates.visible | length),
		 r: (.resources.visible | length)}' "$T/live.json" 2>/dev/null)" \
	'.p and .h and .np >= 8 and .t >= 1 and .r >= 1'
# mcpgate -t against the saved catalog: a pattern matching nothing in it is named.
sed 's/^tools = \*_test_error_handling$/tools = *_test_error_handling nope_*/' "$T/gw.conf" > "$T/nope.conf"
out=$("$MCPGATE_BIN" -t -c "$T/nope.conf" --catalog "$T/snap.json" 2>&1); rc=$?
like "-t --catalog with the saved catalog: exit 0, a tools pattern that matches nothing named at its line" \
	"rc=$rc $(flat "$out")" "^rc=0 .*warning: [^ ]*nope\.conf:$(grep -n '^tools = \*_test_error_handling nope_\*$' "$T/nope.conf" | cut -d: -f1): tools: nope_\* matches no tool in the catalog"
unlike "… and not the patterns that match" "$out" '(\*_test_error_handling|gh_\*|fs_test_sampling) matches no'

awk '/^\[tenant /{skip = 1} /^\[/ && !/^\[tenant /{skip = 0} !skip && !/^include/' "$T/gw.conf" > "$T/open.conf"
out=$("$MCPGATE_BIN" explain -c "$T/open.conf" --claims '{"scope":"mcp:tools"}' 2>&1); rc=$?
like "no [tenant]: policy off, every tool visible" "rc=$rc $(flat "$out")" '^rc=0 policy: off .*hidden \(0\):'

tap_done
