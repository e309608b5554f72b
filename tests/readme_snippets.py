#!/usr/bin/env python3
"""Extracts README.md's C++ snippets for tests/readme_test.cpp.

Each ```cpp block becomes OUTDIR/readme_snippet_N.inc (N from 1, in the
order of the README), with a #line directive so that a compiler error names
the README's own line; OUTDIR/readme_snippets.hpp counts them, so that a new
snippet fails the test until the test runs it too.

usage: readme_snippets.py README.md OUTDIR
"""
import os
import sys


def main(readme, outdir):
    os.makedirs(outdir, exist_ok=True)
    lines = open(readme, encoding="utf-8").read().split("\n")
    snippets, current, start = [], None, 0
    for number, line in enumerate(lines, 1):
        if current is None and line.strip() in ("```cpp", "```c++"):
            current, start = [], number + 1
        elif current is not None and line.strip() == "```":
            snippets.append((start, current))
            current = None
        elif current is not None:
            current.append(line)
    if current is not None:
        sys.exit(f"{readme}: a ```cpp block is not closed")
    for n, (start, body) in enumerate(snippets, 1):
        text = f'#line {start} "README.md"\n' + "\n".join(body) + "\n"
        write_if_changed(os.path.join(outdir, f"readme_snippet_{n}.inc"), text)
    # Written every time: the build's stamp that the snippets are current.
    with open(os.path.join(outdir, "readme_snippets.hpp"), "w", encoding="utf-8") as f:
        f.write(f"// Generated from README.md by tests/readme_snippets.py.\n"
                f"#pragma once\ninline constexpr int kReadmeSnippets = {len(snippets)};\n")


def write_if_changed(path, text):
    if os.path.exists(path) and open(path, encoding="utf-8").read() == text:
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
