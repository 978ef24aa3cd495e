#!/usr/bin/env bash
# tests/docs/guide.sh — docs/GUIDE.md stays true for a new user who follows it:
#   1. the apt-get line of §1 names every build dependency of debian/control
#      (Build-Depends), and every pkg-config module configure.ac checks for comes
#      with one of those packages (dpkg -S of its .pc file, where it is installed);
#   2. §3's "set at least" list names every key of the file §3 has the user copy
#      (deploy/mcpgate.conf.example) whose value still names an example host
#      (example.com, example.org, example.net): nothing the user is not told to change
#      points at a host that is not theirs;
#   3. every document that pins the MCP Inspector (the GUIDE, deploy/README.md, the
#      demo's printed commands) pins the same version and states, where it names the
#      Inspector, the Node version that version's package.json asks for (engines.node:
#      from tests/node_modules, else npm's cache, else the registry; skipped when none
#      answers).
# Prints TAP.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/tap.sh"
command -v python3 >/dev/null || { echo "Bail out! python3 missing"; exit 1; }
GUIDE=$top/docs/GUIDE.md

# section N: the text of the GUIDE's "## N." section.
section() { awk -v n="## $1." 'index($0, n) == 1 { on = 1; next } /^## / { on = 0 } on' "$GUIDE"; }

# 1. build dependencies
guide_pkgs=$(section 1 | python3 -c '
import re, sys
text = sys.stdin.read().replace("\\\n", " ")
pkgs = set()
for line in text.split("\n"):
    m = re.match(r"\s*apt-get install (.*)", line)
    if m and not m.group(1).lstrip().startswith(("../", "./", "/")):
        pkgs.update(w for w in m.group(1).split("#")[0].split() if not w.startswith("-"))
print(" ".join(sorted(pkgs)))')
deps=$(python3 - "$top/debian/control" <<'EOF'
import re, sys
src = open(sys.argv[1]).read()
m = re.search(r'^Build-Depends:(.*?)(?=^\S)', src, re.S | re.M)
names = set()
for alt in m.group(1).replace('\n', ' ').split(','):
    name = alt.split('|')[0].strip().split(' ')[0].split('(')[0].strip()
    if name:
        names.add('debhelper' if name == 'debhelper-compat' else name)
print(' '.join(sorted(names)))
EOF
)
check "debian/control has Build-Depends ($(wc -w <<<"$deps"))" test "$(wc -w <<<"$deps")" -ge 5
check "GUIDE §1 has an apt-get line of build packages ($(wc -w <<<"$guide_pkgs"))" test "$(wc -w <<<"$guide_pkgs")" -ge 5
missing=
for d in $deps; do
	grep -qw -- "$d" <<<"$guide_pkgs" || missing="$missing $d"
done
is "GUIDE §1's apt-get line names every Build-Depends of debian/control" "${missing# }" ""
missing=
for tool in dpkg-dev debhelper build-essential; do
	grep -qw -- "$tool" <<<"$guide_pkgs" || missing="$missing $tool"
done
is "… and what dpkg-buildpackage itself needs (dpkg-dev, debhelper, build-essential)" "${missing# }" ""
# configure.ac's pkg-config modules, each from a package of Build-Depends
mods=$(sed -n 's/^PKG_CHECK_MODULES(\[[A-Z_]*\], *\[\([a-z0-9_-]*\).*/\1/p' "$top/configure.ac" | sort -u)
check "configure.ac checks pkg-config modules ($(wc -w <<<"$mods"))" test "$(wc -w <<<"$mods")" -ge 5
unowned=
for m in $mods; do
	pc=$(pkg-config --variable=pcfiledir "$m" 2>/dev/null) || continue
	owner=$(dpkg -S "$(readlink -f "$pc/$m.pc")" 2>/dev/null | head -n 1 | cut -d: -f1) || continue
	[ -n "$owner" ] || continue
	grep -qw -- "$owner" <<<"$deps" || unowned="$unowned $m($owner)"
done
is "every pkg-config module of configure.ac comes with a package of Build-Depends" "${unowned# }" ""

# 2. the keys §3 has the user set
s3=$(section 3)
copied=$(sed -n 's/^cp \([^ ]*\) mcpgate\.conf$/\1/p' <<<"$s3" | head -n 1)
is "GUIDE §3 copies mcpgate.conf.example" "$copied" mcpgate.conf.example
example=$top/deploy/$copied
set_keys=$(awk '/^```ini/ { on = 1; next } /^```/ { on = 0 } on' <<<"$s3" |
	sed -n 's/^\([a-z][a-z0-9-]*\) *= .*/\1/p' | sort -u)
check "§3's list sets keys ($(wc -w <<<"$set_keys"))" test "$(wc -w <<<"$set_keys")" -ge 4
hosts=$(sed -n 's/^\([a-z][a-z0-9-]*\) *= *\(.*\)$/\1 \2/p' "$example" |
	grep -E '[./]example\.(com|org|net)\b' | cut -d' ' -f1 | sort -u)
check "the example names example hosts (resource, issuer: $(wc -w <<<"$hosts"))" test "$(wc -w <<<"$hosts")" -ge 2
missing=
for k in $hosts; do
	grep -qx -- "$k" <<<"$set_keys" || missing="$missing $k"
done
is "every key of $copied set to an example host is in §3's list" "${missing# }" ""

# 3. the Inspector: one pinned version, and the Node its package asks for
docs=("$GUIDE" "$top/deploy/README.md" "$top/deploy/demo")
versions=$(grep -ho '@modelcontextprotocol/inspector@[0-9][0-9.]*' "${docs[@]}" | sed 's/.*@//' | sort -u)
is "the GUIDE, deploy/README.md and deploy/demo pin one Inspector version" "$(wc -w <<<"$versions")" 1
version=$(head -n 1 <<<"$versions")
engines=
for pj in "$top"/tests/node_modules/@modelcontextprotocol/inspector/package.json \
	"$HOME"/.npm/_npx/*/node_modules/@modelcontextprotocol/inspector/package.json; do
	{ [ -f "$pj" ] && [ "$(jq -r .version "$pj" 2>/dev/null)" = "$version" ]; } || continue
	engines=$(jq -r '.engines.node // empty' "$pj")
	break
done
if [ -z "$engines" ] && command -v npm >/dev/null 2>&1; then
	engines=$(cd "$top/tests" && timeout 60 npm view "@modelcontextprotocol/inspector@$version" engines.node 2>/dev/null)
fi
if [ -z "$engines" ]; then
	pass "the Node the Inspector $version asks for # SKIP no copy here and no registry"
else
	want=$(sed -n 's/^>= *\([0-9][0-9.]*\)$/\1/p' <<<"$engines")
	check "the Inspector $version asks for a Node version ($engines)" test -n "$want"
	for f in "${docs[@]}"; do
		stated=$(python3 - "$f" <<'EOF'
import re, sys
text = re.sub(r'\s+', ' ', open(sys.argv[1]).read())
for m in re.finditer(r'MCP Inspector|inspector@', text):
    n = re.search(r'Node (\d+(?:\.\d+)*) or later', text[m.start():m.start() + 600])
    if n:
        print(n.group(1))
        break
EOF
)
		norm() { awk -F. '{ printf "%d.%d.%d\n", $1, $2, $3 }' <<<"$1"; }
		is "${f#"$top"/} states the Node the Inspector asks for ($engines) where it names it" \
			"$( [ -n "$stated" ] && norm "$stated")" "$(norm "$want")"
	done
fi
tap_done
