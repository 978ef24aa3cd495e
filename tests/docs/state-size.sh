#!/usr/bin/env bash
# tests/docs/state-size.sh — the size of the state file the documents state stays true:
# mcpgate builds state files (one CGI request each, cache-entries 64, the default 4096
# and 65536), and every document that gives the size as "X MB plus Y kB per
# cache-entries" (mcpgate.conf(5), README.md, deploy/mcpgate.conf.example,
# docs/ARCHITECTURE.md) is within 10% of each real size, and so is the figure it gives
# for the default ("Z MB at the default 4096"), when it gives one.
# Prints TAP. Env: MCPGATE_BIN (default src/mcpgate).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_need python3:python3
mg_init || exit 1

sizes=
for n in 64 4096 65536; do
	mkdir -m 0700 "$MG_DIR/s$n"
	printf '[gateway]\nresource = http://127.0.0.1:1/mcp\nstate = %s\n[auth]\nissuer = http://127.0.0.1:2\ncache-entries = %s\n' \
		"$MG_DIR/s$n/state" "$n" >"$MG_DIR/s$n.conf"
	env -i PATH="$PATH" MCPGATE_CONFIG="$MG_DIR/s$n.conf" REQUEST_METHOD=GET SCRIPT_NAME=/cgi-bin/mcpgate \
		PATH_INFO=/mcp/health "$MCPGATE_BIN" >"$MG_DIR/s$n.out" 2>&1
	size=$(stat -c %s "$MG_DIR/s$n/state" 2>/dev/null || echo 0)
	check "a CGI run with cache-entries = $n builds a state file ($size bytes)" test "$size" -gt 0
	sizes="$sizes $n=$size"
done

# shellcheck disable=SC2086 # $sizes: one word per size
python3 - "$top" $sizes >"$MG_DIR/verdicts" <<'EOF'
import re, sys
top, real = sys.argv[1], dict(tuple(map(int, a.split('='))) for a in sys.argv[2:])
docs = ['man/mcpgate.conf.5', 'README.md', 'deploy/mcpgate.conf.example', 'docs/ARCHITECTURE.md']
num = r'(\d+(?:\.\d+)?)'
for doc in docs:
    text = open(f'{top}/{doc}').read()
    text = re.sub(r'\n\.(Ic|Ql|Li) ', ' ', text)            # roff macros that name the key
    text = re.sub(r'[`#\s]+', ' ', text)                     # Markdown quotes, comment marks, lines
    m = re.search(num + r' MB plus ' + num + r' kB per cache-entries', text)
    if not m:
        print(f'not\t{doc} gives the state file size as "X MB plus Y kB per cache-entries"\tnot found')
        continue
    base, per = float(m.group(1)) * 1e6, float(m.group(2)) * 1e3
    for n, size in sorted(real.items()):
        said = base + per * n
        ok = abs(said - size) <= 0.1 * size
        print(f'{"ok" if ok else "not"}\t{doc}: {m.group(1)} MB plus {m.group(2)} kB per cache-entries is within 10% '
              f'of the real size at cache-entries = {n}\tstated {said:.0f}, real {size}')
    d = re.search(num + r' MB at the default (\d+)', text[m.end():m.end() + 200])
    if d and int(d.group(2)) in real:
        size, said = real[int(d.group(2))], float(d.group(1)) * 1e6
        ok = abs(said - size) <= 0.1 * size
        print(f'{"ok" if ok else "not"}\t{doc}: {d.group(1)} MB at the default is within 10% of the real size'
              f'\tstated {said:.0f}, real {size}')
EOF
while IFS=$'\t' read -r verdict desc detail; do
	if [ "$verdict" = ok ]; then pass "$desc"; else fail "$desc" "$detail"; fi
done <"$MG_DIR/verdicts"
tap_done
