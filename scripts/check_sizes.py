#!/usr/bin/env python3
"""Checks the size rule of issue 11 for product code: no function over 70 lines, no file
over 600 lines.

Functions are found by brace matching on the source with comments and literals removed: a
`{` whose preceding declaration ends in `)` (optionally followed by const, override,
noexcept, an initializer list or a trailing return type) opens a function body; its length is
counted from the line of that `{` to the line of the matching `}`, both included. Lambdas
inside a function count toward it. Exit status 1 and one line per violation.

Usage: check_sizes.py [REPO_ROOT] [FOLDER...]   (default: every product folder)
"""
import os
import re
import sys

# Product code: every top-level folder with C++ sources except these (tests, benchmarks and
# build trees are not product code). A new layer is held to the rule without editing this.
# (config/ holds the presets and their reader: its C++ files are product code.)
NOT_PRODUCT = {"tests", "bench", "build", "cmake", "scripts", "docs"}
MAX_FUNCTION_LINES = 70
MAX_FILE_LINES = 600

CODE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
NOT_FUNCTION = re.compile(r'\b(namespace|class|struct|enum|union|extern)\b[^;{]*$')


def blank(m):
    return re.sub(r"[^\n]", " ", m.group(0))


def functions(text):
    """(start line, end line, name) of each function body in `text`."""
    code = CODE.sub(blank, text)
    out = []
    stack = []  # (is_function, start line, name)
    last = 0    # end of the last statement or block boundary
    for i, ch in enumerate(code):
        if ch == "{":
            head = code[last:i]
            line = code.count("\n", 0, i) + 1
            inside_function = any(f for f, _, _ in stack)
            is_fn = (not inside_function and not NOT_FUNCTION.search(head.strip() + " ") and
                     re.search(r"\)\s*(const|override|final|noexcept|mutable|->[^{;]*|:[^{;]*|\s)*$", head) is not None
                     and "=" not in head.split("(")[0])
            name = re.findall(r"([\w:~<>]+)\s*\(", head)
            stack.append((is_fn, line, name[0] if name else "?"))
            last = i + 1
        elif ch == "}":
            if stack:
                is_fn, start, name = stack.pop()
                if is_fn:
                    out.append((start, code.count("\n", 0, i) + 1, name))
            last = i + 1
        elif ch == ";":
            last = i + 1
    return out


def product_folders(root):
    out = []
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        if name.startswith(".") or not os.path.isdir(d) or name.startswith("build"):
            continue
        if name in NOT_PRODUCT:
            continue
        if any(n.endswith((".h", ".cpp")) for n in os.listdir(d)):
            out.append(name)
    return out


def check(root, folders):
    problems = []
    paths = []
    for folder in folders:
        d = os.path.join(root, folder)
        paths += [os.path.join(folder, n) for n in sorted(os.listdir(d)) if n.endswith((".h", ".cpp"))]
    for rel in paths:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        lines = text.count("\n")
        if lines > MAX_FILE_LINES:
            problems.append(f"{rel}: {lines} lines (at most {MAX_FILE_LINES})")
        for start, end, name in functions(text):
            n = end - start + 1
            if n > MAX_FUNCTION_LINES:
                problems.append(f"{rel}:{start}: {name} is {n} lines (at most {MAX_FUNCTION_LINES})")
    return problems, len(paths)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folders = sys.argv[2:] or product_folders(root)
    problems, n = check(root, folders)
    for p in problems:
        print(p)
    if not problems:
        print(f"sizes: {n} files, every function at most {MAX_FUNCTION_LINES} lines, every file at most {MAX_FILE_LINES}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
