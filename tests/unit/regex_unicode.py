#!/usr/bin/env python3
"""tests/unit/regex_unicode.py [--check] — writes src/base/regex_uni.c, the Unicode
general categories regex.c's \\p{...} knows (Letter, Number, Decimal_Number), from this
Python's unicodedata. --check: exit 1 when the file differs from what it would write
(another Unicode version, or an edit by hand)."""
import os
import sys
import unicodedata

SETS = [  # (C name, the categories it holds, the names \p{...} takes)
    ("letter", ("Lu", "Ll", "Lt", "Lm", "Lo"), ("L", "Letter")),
    ("number", ("Nd", "Nl", "No"), ("N", "Number")),
    ("digit", ("Nd",), ("Nd", "Decimal_Number", "digit")),
]


def ranges(cats):
    out, start, last = [], None, None
    for cp in range(0x110000):
        if unicodedata.category(chr(cp)) in cats:
            if start is None:
                start = cp
            last = cp
        elif start is not None:
            out.append((start, last))
            start = None
    if start is not None:
        out.append((start, last))
    return out


def render():
    lines = [
        "/* regex_uni — the Unicode general categories \\p{...} names (Unicode %s), as sorted"
        % unicodedata.unidata_version,
        " * ranges of code points. Written by tests/unit/regex_unicode.py from Python's",
        " * unicodedata: edit that, not this. */",
        '#include "autoconf.h"',
        "",
        "#include <string.h>",
        "",
        '#include "regex_int.h"',
        "",
    ]
    for name, cats, _ in SETS:
        rs = ranges(cats)
        lines.append("static const struct range %s[] = {" % name)
        row = []
        for lo, hi in rs:
            row.append("{ 0x%x, 0x%x }," % (lo, hi))
            if len(row) == 4:
                lines.append("\t" + " ".join(row))
                row = []
        if row:
            lines.append("\t" + " ".join(row))
        lines.append("};")
        lines.append("")
    lines += [
        "static const struct {",
        "\tconst char *name;",
        "\tconst struct range *set;",
        "\tsize_t n;",
        "} names[] = {",
    ]
    for name, _, aliases in SETS:
        for a in aliases:
            lines.append('\t{ "%s", %s, sizeof(%s) / sizeof(%s[0]) },' % (a, name, name, name))
    lines += [
        "};",
        "",
        "const struct range *",
        "regex_uni_set(const char *name, size_t len, size_t *n)",
        "{",
        "\tsize_t i;",
        "",
        "\tfor (i = 0; i < sizeof(names) / sizeof(names[0]); i++)",
        "\t\tif (strlen(names[i].name) == len && memcmp(names[i].name, name, len) == 0) {",
        "\t\t\t*n = names[i].n;",
        "\t\t\treturn names[i].set;",
        "\t\t}",
        "\treturn NULL;",
        "}",
        "",
    ]
    return "\n".join(lines)


def main():
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(top, "src", "base", "regex_uni.c")
    text = render()
    if sys.argv[1:] == ["--check"]:
        with open(path) as f:
            same = f.read() == text
        print("%s: %s" % (path, "as written" if same else "differs"))
        return 0 if same else 1
    with open(path, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
