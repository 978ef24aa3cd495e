#!/usr/bin/env bash
# tests/docs/man.sh — the manual pages (man/) stay clean and complete:
#   1. mandoc -T lint finds nothing in mcpgate(8) and mcpgate.conf(5) (every level,
#      style included; only "referenced manual not found", which depends on the
#      manuals this machine has installed, is set aside);
#   2. every section and key of src/config/config_keys.c is an `.It Ic KEY` of its own
#      section in mcpgate.conf(5), and every key there is a key of the tables;
#   3. every option `mcpgate -h` prints, and every long option of main.c, explain.c,
#      pins_cmd.c and validate.c, is in mcpgate(8);
#   4. every field of the log lines (the access, audit, rate-limit and batch lines the
#      sources write) is described in mcpgate(8).
# Prints TAP. Env: MCPGATE_BIN (default src/mcpgate).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_need mandoc:mandoc python3:python3

M8=$top/man/mcpgate.8
M5=$top/man/mcpgate.conf.5
mg_init || exit 1

# 1. lint
for page in "$M8" "$M5"; do
	out=$(mandoc -T lint "$page" 2>&1 | grep -v -e 'referenced manual not found' -e 'mandoc\.db')
	is "mandoc -T lint $(basename "$page"): nothing to say" "$out" ""
	check "… and it renders" sh -c "mandoc -T utf8 '$page' | grep -q ."
done

# 2. configuration keys, section by section, both ways
python3 - "$top/src/config/config_keys.c" "$M5" >"$MG_DIR/keys.out" <<'EOF'
import re, sys
src = open(sys.argv[1]).read()
man = open(sys.argv[2]).read()
tables = dict(re.findall(r'static const struct cfg_key (\w+)\[\] = \{(.*?)\n\};', src, re.S))
kinds = re.findall(r'\[K_\w+\] = \{ "(\w+)", (\w+),', src)
# the man page: .Ss [section]\& or .Ss [section \(dqNAME\(dq]\&, then its .It Ic KEY entries
page = {}
cur = None
for line in man.split('\n'):
    m = re.match(r'\.Ss \[(\w+)', line)
    if m:
        cur = m.group(1)
        page[cur] = set()
        continue
    if line.startswith('.Ss ') or line.startswith('.Sh '):
        cur = None
        continue
    m = re.match(r'\.It Ic ([a-z][a-z0-9-]*)', line)
    if m and cur:
        page[cur].add(m.group(1))
for name, table in kinds:
    keys = set(re.findall(r'\{ "([a-z0-9-]+)", T_', tables[table]))
    got = page.get(name, set())
    print(f"{name}\t{len(keys)}\t{' '.join(sorted(keys - got)) or '-'}\t{' '.join(sorted(got - keys)) or '-'}")
extra = set(page) - {n for n, _ in kinds}
print(f"sections\t{len(kinds)}\t-\t{' '.join(sorted(extra)) or '-'}")
EOF
while IFS=$'\t' read -r section n missing unknown; do
	if [ "$section" = sections ]; then
		is "mcpgate.conf(5): no section the configuration lacks" "$unknown" -
		continue
	fi
	check "[$section]: the tables hold keys ($n)" test "$n" -gt 0
	is "[$section]: every key of config_keys.c in mcpgate.conf(5) (missing)" "$missing" -
	is "[$section]: no key there that config_keys.c lacks (unknown)" "$unknown" -
done <"$MG_DIR/keys.out"
like "mcpgate.conf(5): include" "$(cat "$M5")" '^\.Ic include No = Ar GLOB'

# 3. command-line options
help=$("$MCPGATE_BIN" -h)
opts=$( { grep -oE '(^|[ [|])--?[a-z][a-z-]*' <<<"$help" | sed 's/^[ [|]//'
	sed -n 's/^[[:space:]]*{ "\([a-z-]*\)", [a-z_]*_argument,.*/--\1/p' "$top/src/front/main.c" "$top/src/serve/explain.c" \
		"$top/src/serve/pins_cmd.c" "$top/src/serve/validate.c"
	} | sort -u)
check "mcpgate -h and the sources name options ($(wc -w <<<"$opts"))" test "$(wc -w <<<"$opts")" -ge 12
missing=
for o in $opts; do
	case $o in
	--*) pat="Fl -${o#--}" ;;
	*) pat="Fl ${o#-}" ;;
	esac
	grep -qE "(^|[ .])$pat( |$)" "$M8" || missing="$missing $o"
done
is "every option of mcpgate -h, main.c, explain.c, pins_cmd.c and validate.c is in mcpgate(8)" "${missing# }" ""
# … and each form of the usage mcpgate -h prints is a form of the SYNOPSIS, with the
# same options (the command words count as options: explain, validate, pins and its
# status, diff and approve).
forms=$(python3 -c '
import re, sys
usage, forms, cur = sys.stdin.read(), [], None
for line in usage.split("\n"):
    m = re.match(r"(?:usage:)?\s*mcpgate\b(.*)", line)
    if m:
        cur = set(); forms.append(cur); rest = m.group(1)
    elif cur is not None and re.match(r"\s+\[", line):
        rest = line
    else:
        cur = None
        continue
    rest = re.split(r"\s{2,}[a-z(]", rest.strip())[0]	# the words describing the form
    cur.update(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", rest))
    cur.update(w for w in re.findall(r"(?<![\w-])([a-z]+)(?![\w-])", rest) if w in ("explain", "validate", "pins", "status", "diff", "approve"))
syn, man = [], open(sys.argv[1]).read()
body = man.split(".Sh SYNOPSIS", 1)[1].split("\n.Sh ", 1)[0]
for line in body.split("\n"):
    if line == ".Nm":
        syn.append(set())
        continue
    if syn:
        syn[-1].update("-" + f for f in re.findall(r"Fl (-?[a-z][a-z-]*)", line))
        syn[-1].update(re.findall(r"Cm ([a-z]+)", line))
print(len(forms))
for f in forms:
    if f not in syn:
        print("usage form " + " ".join(sorted(f)) + " is not a SYNOPSIS form (those: " +
              "; ".join(" ".join(sorted(x)) for x in syn) + ")")
' "$M8" <<<"$help")
check "mcpgate -h prints usage forms ($(head -n 1 <<<"$forms"))" test "$(head -n 1 <<<"$forms")" -ge 4
is "every usage form of mcpgate -h is a form of mcpgate(8)'s SYNOPSIS, with the same options" "$(sed 1d <<<"$forms")" ""
like "mcpgate(8): the explain command" "$(cat "$M8")" '^\.Cm explain$'

# 4. log fields: the keys of the JSON lines the sources write
fields=$(python3 - "$top/src/serve/router.c" "$top/src/mcp/mcp_access.c" "$top/src/access/limiter.c" \
	"$top/src/mcp/mcp.c" "$top/src/base/log.c" <<'EOF'
import re, sys
keys = set()
for path in sys.argv[1:]:
    src = open(path).read()
    for m in re.finditer(r'(?:log_json\(GW_LOG_\w+,\s*|line = )json_pack\(\s*"\{[^"]*\}",', src):
        depth, i, args, cur = 1, m.end(), [], ''
        while depth and i < len(src):
            c = src[i]
            if c == '(':
                depth += 1
            elif c == ')':
                depth -= 1
                if depth == 0:
                    break
            if c == ',' and depth == 1:
                args.append(cur.strip()); cur = ''
            else:
                cur += c
            i += 1
        args.append(cur.strip())
        for k in args[0::2]:
            if re.fullmatch(r'"[a-z_]+"', k):
                keys.add(k.strip('"'))
    for k in re.findall(r'json_object_set_new\((?:line|o), "([a-z_]+)"', src):
        keys.add(k)
    for k in re.findall(r'log_line_(?:str|int|true)\(&\w+, "([a-z_]+)"', src):
        keys.add(k)
print(' '.join(sorted(keys)))
EOF
)
check "the sources' log lines have fields ($(wc -w <<<"$fields"))" test "$(wc -w <<<"$fields")" -ge 20
missing=
for f in $fields; do
	grep -qE "(^|[ .])Li $f( |$)" "$M8" || missing="$missing $f"
done
is "every log field is described in mcpgate(8) (.Li FIELD)" "${missing# }" ""
tap_done
