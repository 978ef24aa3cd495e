#!/usr/bin/env python3
"""bench/shape.py -- the shape of src/: what a change costs to read and to extend.

Prints the functions over 60 lines (and how many say why they are long: a "Long:"
sentence in the comment above them), the files over 600 lines, and the functions with
more than 6 parameters (the widest first). A function is recognised as this tree writes
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


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "src"
    files = sorted(glob.glob(os.path.join(src, "**", "*.c"), recursive=True))
    long_fns, wide_fns, big_files = [], [], []
    for f in files:
        n = sum(1 for _ in open(f, encoding="utf-8"))
        if n > 600:
            big_files.append((n, os.path.relpath(f, src)))
        for name, lines, params, why in functions(f):
            if lines > 60:
                long_fns.append((lines, os.path.relpath(f, src), name, why))
            if params > 6:
                wide_fns.append((params, os.path.relpath(f, src), name))
    print(f"functions over 60 lines: {len(long_fns)}, "
          f"{sum(1 for *_, why in long_fns if not why)} without a written reason")
    for lines, f, name, why in sorted(long_fns, reverse=True):
        print(f"  {lines:4d}  {f}  {name}{'' if why else '  (no reason written)'}")
    print(f"files over 600 lines: {len(big_files)}")
    for n, f in sorted(big_files, reverse=True):
        print(f"  {n:4d}  {f}")
    print(f"functions with more than 6 parameters: {len(wide_fns)}"
          f" (widest: {max((p for p, _, _ in wide_fns), default=0)})")
    for params, f, name in sorted(wide_fns, reverse=True):
        print(f"  {params:4d}  {f}  {name}")


if __name__ == "__main__":
    main()
