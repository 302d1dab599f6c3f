#!/usr/bin/env python3
"""Checks that each folder's library links only downward and that CMake and #includes agree.

Layers (docs/architecture.md): a folder may use only folders of a lower rank. For every
product folder, the afasim_* libraries its CMakeLists.txt links (DEPS of afasim_library, or
target_link_libraries of an executable) must be exactly the folders its sources #include:
an included folder that is not linked relies on someone else's link line; a linked folder
that is never included is over-linking. Exit status 1 and one line per violation.

Usage: check_layers.py [REPO_ROOT]
"""
import os
import re
import sys

# Rank of each folder, bottom to top (docs/architecture.md "afasim as built").
LAYERS = ["sim", "config", "ssd", "perf", "datapac", "raid", "pool", "qos", "controller", "store", "serve",
          "http", "nbd", "api", "redfish", "workload", "reliability", "sweep", "app"]
RANK = {name: i for i, name in enumerate(LAYERS)}
LIB_TO_FOLDER = {"afasim_" + name: name for name in LAYERS}
LIB_TO_FOLDER["afasim"] = "app"

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)


def cmake_deps(text):
    """The afasim_* libraries a folder's CMakeLists.txt links its product target to."""
    deps = set()
    for m in re.finditer(r"afasim_library\(\s*(\w+)(.*?)\)", text, re.S):
        body = m.group(2)
        if "DEPS" in body:
            deps.update(re.findall(r"\bafasim_\w+", body.split("DEPS", 1)[1]))
    for m in re.finditer(r"target_link_libraries\(\s*afasim(?:_app)?\s(.*?)\)", text, re.S):
        deps.update(re.findall(r"\bafasim_\w+", m.group(1)))
    return {LIB_TO_FOLDER[d] for d in deps if d in LIB_TO_FOLDER}


def included_folders(folder_path, folder):
    found = {}
    for name in sorted(os.listdir(folder_path)):
        if not name.endswith((".h", ".cpp")):
            continue
        with open(os.path.join(folder_path, name), encoding="utf-8") as f:
            for inc in INCLUDE.findall(f.read()):
                if inc in RANK and inc != folder:
                    found.setdefault(inc, name)
    return found


def check(root):
    problems = []
    for folder in LAYERS:
        path = os.path.join(root, folder)
        cmake = os.path.join(path, "CMakeLists.txt")
        if not os.path.exists(cmake):
            continue
        with open(cmake, encoding="utf-8") as f:
            linked = cmake_deps(f.read()) - {folder}  # app/'s executable links app/'s own library
        included = included_folders(path, folder)
        for dep in sorted(linked | set(included)):
            if RANK[dep] >= RANK[folder]:
                problems.append(f"{folder}/ uses {dep}/, which is not below it")
        for dep in sorted(set(included) - linked):
            problems.append(f"{folder}/{included[dep]} includes {dep}/ but {folder}/CMakeLists.txt does not link it")
        for dep in sorted(linked - set(included)):
            problems.append(f"{folder}/CMakeLists.txt links {dep}/ but no file of {folder}/ includes it (over-linking)")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = check(root)
    for p in problems:
        print(p)
    if not problems:
        print(f"layers: {len(LAYERS)} folders link only downward; CMake and #includes agree")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
