#!/usr/bin/env bash
# tests/lint/check.sh [SRC-DIR] — the source rules `make check` and `make lint` enforce,
# as TAP. Each rule is first shown to catch what it is for (a small tree written here
# that breaks it), then run over SRC-DIR ($MCPGATE_SRCDIR/src by default) and its folders
# (src/ is one folder per concern, and a folder is a layer):
#   layers   every #include "x.h" points into the file's own folder or a folder below
#            it, in the order docs/ARCHITECTURE.md §1 gives ("**Layers.**", the one
#            place it is written); a file in a folder not in that order fails too, as
#            does an include of a header no folder holds.
#   banned   no call of a function with a safer form in use here (comments and string
#            literals do not count).
#   libs     a library's headers are included only by the modules named for it (the
#            table below; docs/ARCHITECTURE.md §1).
#   words    no work-tracker words (issue numbers, TODO, FIXME, XXX) and no pointer to a
#            document outside the repository: comments explain the code as it is.
#   catalog  outside catalog.c, a catalog document's members are read through catalog.h
#            (catalog_count, catalog_key, catalog_upstreams, ...), never with
#            json_object_get: a document read from the state file has its index parsed
#            only when one of those needs it, so a direct read would find nothing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/tap.sh"
src=${1:-${MCPGATE_SRCDIR:-$here/../..}/src}

# The design document: its "**Layers.**" line names the folders, lowest first.
doc=${2:-$(dirname "$src")/docs/ARCHITECTURE.md}
# folder_order DOC: the folders of its **Layers.** line, one a line.
folder_order() {
	grep -m1 '^\*\*Layers\.\*\*' "$1" | grep -o '`[a-z_]*/`' | tr -d '`/'
}
# The libraries only some modules may include: the header's start, then those modules.
LIBS='
fcgi      front front_fcgi front_crew
curl/     httpc curlload introspect upstream_pool
dlfcn     dynload
hiredis/  rstore
sodium    secret
cjose/    jws joseload
openssl/  none
'
BANNED='strcpy strcat strncpy strncat sprintf vsprintf gets strtok atoi atol atoll rand srand
system popen tmpnam tempnam mktemp alloca asctime ctime gmtime localtime'

# sources DIR: the .c and .h files under DIR (its folders too), one a line, sorted.
sources() {
	find "$1" -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort
}

# code FILE: the file with comments and string/character literals blanked, lines kept.
code() {
	awk '
	{
		out = ""; s = $0
		while (s != "") {
			c = substr(s, 1, 1)
			if (incom) {
				if (substr(s, 1, 2) == "*/") { incom = 0; s = substr(s, 3); out = out "  "; continue }
				out = out " "; s = substr(s, 2); continue
			}
			if (substr(s, 1, 2) == "/*") { incom = 1; s = substr(s, 3); out = out "  "; continue }
			if (substr(s, 1, 2) == "//") break
			if (c == "\"" || c == "\047") {
				q = c; out = out c; s = substr(s, 2)
				while (s != "" && substr(s, 1, 1) != q) {
					if (substr(s, 1, 1) == "\\") { s = substr(s, 2); out = out " " }
					s = substr(s, 2); out = out " "
				}
				out = out q; s = substr(s, 2); continue
			}
			out = out c; s = substr(s, 2)
		}
		print out
	}' "$1"
}

# layers DIR ORDER: prints each include that points into a folder above the file's, a
# file in a folder ORDER (the folders, lowest first, one a line) does not name, or an
# include of a header no folder holds; status 1 then. autoconf.h is configure's (base).
layers() {
	local dir=$1 f folder line inc bad=0 i=0 name h
	declare -A rank=() home=()
	while read -r name; do [ -n "$name" ] && rank[$name]=$i && i=$((i + 1)); done <<< "$2"
	[ "$i" -gt 0 ] || { echo "no **Layers.** line naming the folders"; return 1; }
	home[autoconf]=base
	while IFS= read -r f; do
		h=${f#"$dir"/}
		case $h in */*) folder=${h%%/*};; *) folder="";; esac	# src/ itself: no folder
		h=$(basename "$f"); home[${h%.*}]=$folder
	done < <(sources "$dir"; find "$dir" -type f -name '*.def')
	while IFS= read -r f; do
		h=${f#"$dir"/}; folder=${h%%/*}
		if [ "$folder" = "$h" ] || [ -z "${rank[$folder]+x}" ]; then
			echo "$h: in no layer (its folder is not on the **Layers.** line of docs/ARCHITECTURE.md)"; bad=1; continue
		fi
		while IFS=: read -r line inc; do
			inc=${inc%.h}; inc=${inc%.def}	# x.def: a table its readers include
			if [ -z "${home[$inc]+x}" ]; then
				echo "$h:$line: includes $inc, which no folder holds"; bad=1
			elif [ -z "${rank[${home[$inc]}]+x}" ] || [ "${rank[${home[$inc]}]}" -gt "${rank[$folder]}" ]; then
				echo "$h:$line: includes $inc.h of ${home[$inc]}/, a layer above $folder/"; bad=1
			fi
		done < <(grep -n '^#include "' "$f" | sed 's/^\([0-9]*\):#include "\([^"]*\)".*/\1:\2/')
	done < <(sources "$dir")
	return $bad
}

# libs DIR: prints each include of a library header by a module not named for it; status 1 then.
libs() {
	local f base lib mods bad=0 hits
	while IFS= read -r f; do
		base=$(basename "$f"); base=${base%.*}
		while read -r lib mods; do
			[ -n "$lib" ] || continue
			case " $mods " in *" $base "*) continue;; esac
			hits=$(grep -n "^#include <$lib" "$f" | sed "s|^|${f#"$1"/}:|")
			[ -z "$hits" ] || { echo "$hits: only: $mods"; bad=1; }
		done <<< "$LIBS"
	done < <(sources "$1")
	return $bad
}

# banned DIR: prints each call of a banned function; status 1 then.
banned() {
	local f hits bad=0 re
	re="(^|[^A-Za-z0-9_.>])($(echo $BANNED | tr ' ' '|'))[[:space:]]*\\("
	while IFS= read -r f; do
		hits=$(code "$f" | grep -nE "$re" | sed "s|^|${f#"$1"/}:|")
		[ -z "$hits" ] || { echo "$hits"; bad=1; }
	done < <(sources "$1")
	return $bad
}

# words DIR: prints each line with a tracker word or an outside pointer; status 1 then.
words() {
	local hits
	hits=$(cd "$1" && sources . | sed 's|^\./||' | tr '\n' '\0' | xargs -0r grep -nHiE \
		'\bissue ?#?[0-9]|#[0-9]+ \(issue|\bTODO\b|\bFIXME\b|\bXXX\b|\.\./shared|DESIGN(\.md)? ?§')
	[ -z "$hits" ] || { echo "$hits"; return 1; }
}

# catalog DIR: prints each direct read of a catalog document's member (json_object_get of
# a document named *doc with one of its member names, or a catalog_kinds[] name) outside
# catalog.c; status 1 then.
CATALOG_MEMBERS='tools|routes|prompts|promptRoutes|resources|resourceRoutes|resourceTemplates|templateRoutes|upstreams|records|index'
catalog() {
	local hits
	hits=$(cd "$1" && sources . | sed 's|^\./||' | grep -v '\(^\|/\)catalog\.c$' | tr '\n' '\0' | xargs -0r grep -nHE \
		"json_object_get\([A-Za-z_>.-]*doc, *(\"($CATALOG_MEMBERS)\"|catalog_kinds\[)")
	[ -z "$hits" ] || { echo "$hits"; return 1; }
}

# --- each rule catches what it is for ------------------------------------------------------
t=$(mktemp -d /tmp/mcpgate-lint.XXXXXX)
trap 'rm -rf "$t"' EXIT
# Trees shaped like src/: each breaking file in a folder.
mkdir -p "$t/up/base" "$t/up/mcp" "$t/up/state" "$t/none/new" "$t/ban/base" "$t/word/mcp" "$t/lib/access" "$t/cat/serve" "$t/cat/model"
order=$(printf 'base\nstate\nmcp\n')
printf '#include "mcp.h"\n' > "$t/up/base/buf.c"
printf 'struct mcp;\n' > "$t/up/mcp/mcp.h"; printf 'struct state;\n' > "$t/up/state/state.h"
printf '#include "buf.h"\n' > "$t/none/new/newthing.c"
printf 'void f(char *d) { strcpy(d, "x"); }\n' > "$t/ban/base/buf.c"
printf '/* the checks in the order of iss%s #4 */\n' ue > "$t/word/mcp/mcp.c"
printf '#include <cjose/cjose.h>\n' > "$t/lib/access/auth.c"
printf 'n = json_array_size(json_object_get(w->cat.doc, "tools"));\n' > "$t/cat/serve/h_health.c"
printf 'json_t *items = json_object_get(doc, k->array);\n' > "$t/cat/model/catalog.c"	# its own
for r in layers:up layers:none banned:ban words:word libs:lib catalog:cat; do
	if out=$(${r%%:*} "$t/${r#*:}" "$order"); then fail "${r%%:*} fails on a tree that breaks it (${r#*:})"
	else pass "${r%%:*} fails on a tree that breaks it: $out"; fi
done
printf '#include "state.h"\n#include "buf.h"\n' > "$t/up/mcp/session.c"	# down
printf '#include "session.h"\n' > "$t/up/mcp/mcp.c"; : > "$t/up/mcp/session.h"	# across
printf '/* strcpy(d, s) would be wrong here */\nconst char *s = "strcat(";\nint my_rand(void);\nint x = my_rand();\n' > "$t/ban/mcp.c"
rm "$t/up/base/buf.c" "$t/ban/base/buf.c"
printf '#include "buf.h"\n' > "$t/up/base/buf.h"
out=$(layers "$t/up" "$order") && pass "layers: an include across or down is fine" || fail "layers: an include across or down is fine" "$out"
out=$(banned "$t/ban") && pass "banned: comments, strings and longer names do not count" || fail "banned: comments, strings and longer names do not count" "$out"

# --- the tree ---------------------------------------------------------------------------------
[ -d "$src" ] || { echo "Bail out! no source directory $src"; exit 1; }
order=$(folder_order "$doc")
out=$(layers "$src" "$order") && pass "layers: every include in src/ points across or down ($(echo $order | sed 's/ / < /g'))" || fail "layers: every include in src/ points across or down" "$out"
# The order names each folder of src/ once, and no other.
out=$(diff <(echo "$order" | sort) <(find "$src" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)) &&
	pass "layers: the **Layers.** line names every folder of src/, once" || fail "layers: the **Layers.** line names every folder of src/, once" "$out"
out=$(banned "$src") && pass "banned: no $(echo $BANNED | wc -w) banned functions called in src/" || fail "banned: none called in src/" "$out"
out=$(libs "$src") && pass "libs: each library's headers included only where docs/ARCHITECTURE.md §1 says" || fail "libs: each library's headers included only where docs/ARCHITECTURE.md §1 says" "$out"
out=$(words "$src") && pass "words: no tracker words or outside pointers in src/" || fail "words: no tracker words or outside pointers in src/" "$out"
out=$(catalog "$src") && pass "catalog: no catalog document read but through catalog.h in src/" || fail "catalog: no catalog document read but through catalog.h in src/" "$out"
tap_done
