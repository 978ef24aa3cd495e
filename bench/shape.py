#!/usr/bin/env python3
"""bench/shape.py -- the shape of src/: what a change costs to read and to extend.

Prints the functions over 60 lines (and how many say why they are long: a "Long:"
sentence in the comment above them), the files over 600 lines, the functions with
more than 6 parameters (the widest first), and the error channels: how the functions a
header declares report a failure besides their return value -- through struct gw_error
(the one channel; the configuration loader's struct cfg_errors is a list of them), or through another out-parameter (a "why" or "reason" string, a
caller's buffer for words, an enum gw_err of its own), listed by kind. A function is recognised as this tree writes
one: its return type on the line before, its name at the start of a line, its body from
a lone "{" to a lone "}". Not a test: the figures go in the notes and bench/RESULTS.md.

Usage: bench/shape.py [SRC_DIR]   (default: src)
"""
import glob
import os
import re
import sys


def reasoned(lines, type_line):
    """Whether the comment block just above type_line says why the function is long."""
    k = type_line - 1
    while k >= 0 and lines[k].startswith(("/*", " *")):
        if "Long:" in lines[k]:
            return True
        if lines[k].startswith("/*"):
            break
        k -= 1
    return False


def functions(path):
    """(name, lines, parameters, reasoned) of each function defined in path."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = re.match(r"^([a-z_][a-z0-9_]*)\(", lines[i])
        prev = lines[i - 1] if i > 0 else ""
        if not m or not prev or prev[0] in " \t#/*":
            i += 1
            continue
        sig, j = lines[i], i
        while not sig.rstrip().endswith((")", ";")) and j + 1 < len(lines):
            j += 1
            sig += lines[j]
        if sig.rstrip().endswith(";") or j + 1 >= len(lines) or lines[j + 1] != "{":
            i += 1
            continue
        end = j + 1
        while end < len(lines) and lines[end] != "}":
            end += 1
        params = sig[sig.index("(") + 1:sig.rindex(")")]
        depth = commas = 0
        for ch in params:
            depth += ch == "("
            depth -= ch == ")"
            commas += ch == "," and depth == 0
        n = 0 if params.strip() in ("", "void") else commas + 1
        out.append((m.group(1), end - i + 1, n, reasoned(lines, i - 1)))
        i = end + 1
    return out


PROTO = re.compile(r"\b([a-z_][a-z0-9_]*)\(([^;{}()]*(?:\([^()]*\)[^;{}()]*)*)\)\s*(?:__attribute__\(\(.*?\)\)\s*)*;", re.S)
OTHER = [
    ("a why/reason string", re.compile(r"const\s+char\s*\*\s*\*\s*(why|reason)\b")),
    ("a caller's buffer for words", re.compile(r"\bchar\s*\*\s*(why|reason|err|errbuf|msg)\s*,\s*size_t")),
    ("an enum gw_err out-parameter", re.compile(r"enum\s+gw_err\s*\*")),
]
# A function whose result is its words of failure: "NULL, or why not".
RETURNS_WHY = re.compile(r"/\*(?:(?!\*/).)*?\bor why( not)?\b(?:(?!\*/).)*\*/\s*const\s+char\s*\*\s*([a-z_][a-z0-9_]*)\(", re.S)


def channels(src):
    """{channel: [(header, function)]} of the functions the headers declare."""
    out = {"struct gw_error": []}
    for h in sorted(glob.glob(os.path.join(src, "**", "*.h"), recursive=True)):
        raw = open(h, encoding="utf-8").read()
        for m in RETURNS_WHY.finditer(raw):
            out.setdefault("a result that is its why", []).append((os.path.relpath(h, src), m.group(2)))
        text = re.sub(r"/\*.*?\*/", "", raw, flags=re.S)
        for m in PROTO.finditer(text):
            name, params = m.group(1), m.group(2)
            where = (os.path.relpath(h, src), name)
            if "struct gw_error" in params or "struct cfg_errors" in params:	# a list of them
                out["struct gw_error"].append(where)
            for kind, rx in OTHER:
                if rx.search(params):
                    out.setdefault(kind, []).append(where)
    return out


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "src"
    files = sorted(glob.glob(os.path.join(src, "**", "*.c"), recursive=True))
    long_fns, wide_fns, big_files, widest = [], [], [], (0, "", "")
    for f in files:
        n = sum(1 for _ in open(f, encoding="utf-8"))
        if n > 600:
            big_files.append((n, os.path.relpath(f, src)))
        for name, lines, params, why in functions(f):
            if lines > 60:
                long_fns.append((lines, os.path.relpath(f, src), name, why))
            if params > 6:
                wide_fns.append((params, os.path.relpath(f, src), name))
            widest = max(widest, (params, os.path.relpath(f, src), name))
    print(f"functions over 60 lines: {len(long_fns)}, "
          f"{sum(1 for *_, why in long_fns if not why)} without a written reason")
    for lines, f, name, why in sorted(long_fns, reverse=True):
        print(f"  {lines:4d}  {f}  {name}{'' if why else '  (no reason written)'}")
    print(f"files over 600 lines: {len(big_files)}")
    for n, f in sorted(big_files, reverse=True):
        print(f"  {n:4d}  {f}")
    print(f"functions with more than 6 parameters: {len(wide_fns)}"
          f" (the widest: {widest[0]}, {widest[1]} {widest[2]})")
    for params, f, name in sorted(wide_fns, reverse=True):
        print(f"  {params:4d}  {f}  {name}")
    ch = channels(src)
    print(f"error channels: {sum(1 for v in ch.values() if v)} "
          f"({len(ch['struct gw_error'])} interfaces through struct gw_error)")
    for kind, where in ch.items():
        if kind != "struct gw_error" and where:
            print(f"  {kind}: {len(where)}: " + ", ".join(n for _, n in where))


if __name__ == "__main__":
    main()
