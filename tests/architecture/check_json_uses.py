#!/usr/bin/env python3
"""The JSON rule: nlohmann/json outside the JSON zones is named in its folder's README.

The design keeps JSON in protocol/, engine/eval (the job protocol's client) and
engine/worker (docs/architecture.md). Every other source file under the layer
table's `scan` folders that mentions nlohmann (an include, nlohmann::json) is
a remaining use, and must be named, with why, in the "JSON here" section of
the README.md of its folder (the nearest folder above it that has one):

    ## JSON here
    - `knowledge_base.cpp`: the knowledge/ data files are JSON
    - `recipe.{h,cpp}`, `kernels/node_args.cpp`: ...

Names are backticked paths relative to that README's folder; `stem.{h,cpp}`
names both. Exits 1 listing each problem: a use that no README names, a
folder without a README, and a name that is stale (the file is gone, does not
mention nlohmann, or belongs to another README). Python 3 standard library only.

  python3 tests/architecture/check_json_uses.py [--root DIR] [--table FILE] [-v]
"""

import argparse
import json
import os
import re
import sys

from check_includes import is_under

SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh")
# Where JSON belongs by design: not checked.
JSON_ZONES = ("protocol", "engine/eval", "engine/worker")
USES_JSON = re.compile(r"\bnlohmann\b")
HEADING = re.compile(r"^(#+)\s+(.*?)\s*#*\s*$")
NAME = re.compile(r"`([^`\s]+)`")
BRACES = re.compile(r"\{([^{}]*)\}")
SECTION = "JSON here"


def expand(name):
    """`recipe.{h,cpp}` -> [recipe.h, recipe.cpp]; one brace group at a time."""
    m = BRACES.search(name)
    if not m:
        return [name]
    out = []
    for part in m.group(1).split(","):
        out.extend(expand(name[:m.start()] + part + name[m.end():]))
    return out


def uses_json(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        return USES_JSON.search(fh.read()) is not None


def json_section(readme_path):
    """The names in a README's "JSON here" section (expanded, in order), or None without one."""
    with open(readme_path, encoding="utf-8", errors="replace") as fh:
        lines = fh.read().splitlines()
    names, level = None, None
    for line in lines:
        m = HEADING.match(line)
        if m:
            if level is not None and len(m.group(1)) <= level:
                break
            if level is None and m.group(2) == SECTION:
                level, names = len(m.group(1)), []
            continue
        if level is not None:
            for token in NAME.findall(line):
                for name in expand(token):
                    if name.endswith(SOURCE_SUFFIXES):
                        names.append(name)
    return names


def readme_for(rel, tops, root):
    """The folder (relative to root) of the nearest README.md above rel, within its scan folder; or None."""
    top = next(t for t in tops if is_under(rel, t))
    folder = os.path.dirname(rel)
    while True:
        if os.path.isfile(os.path.join(root, folder, "README.md")):
            return folder
        if folder == top or not folder:
            return None
        folder = os.path.dirname(folder)


def check(root, tops):
    problems = []
    uses = []
    for top in tops:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for f in sorted(filenames):
                if not f.endswith(SOURCE_SUFFIXES):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")
                if any(is_under(rel, z) for z in JSON_ZONES):
                    continue
                if uses_json(os.path.join(root, rel)):
                    uses.append(rel)

    by_readme = {}
    for rel in uses:
        folder = readme_for(rel, tops, root)
        if folder is None:
            problems.append(f"{rel}: uses nlohmann/json, and no folder above it has a README.md "
                            f"(write one with a '{SECTION}' section naming it)")
            continue
        by_readme.setdefault(folder, []).append(rel)

    readmes = set(by_readme)
    for top in tops:
        for dirpath, _, filenames in os.walk(os.path.join(root, top)):
            if "README.md" in filenames:
                folder = os.path.relpath(dirpath, root).replace(os.sep, "/")
                if not any(is_under(folder, z) for z in JSON_ZONES):
                    readmes.add(folder)

    for folder in sorted(readmes):
        readme = f"{folder}/README.md"
        names = json_section(os.path.join(root, readme))
        files = by_readme.get(folder, [])
        if names is None:
            if files:
                problems.append(f"{readme}: has no '## {SECTION}' section, but these use nlohmann/json: "
                                + ", ".join(os.path.relpath(f, folder) for f in files))
            continue
        named = {os.path.normpath(os.path.join(folder, n)).replace(os.sep, "/") for n in names}
        for rel in files:
            if rel not in named:
                problems.append(f"{rel}: uses nlohmann/json but {readme} ('{SECTION}') does not name it "
                                f"(add `{os.path.relpath(rel, folder)}` with why)")
        for name in names:
            rel = os.path.normpath(os.path.join(folder, name)).replace(os.sep, "/")
            path = os.path.join(root, rel)
            if not os.path.isfile(path):
                problems.append(f"{readme}: '{SECTION}' names `{name}`, which does not exist (delete it)")
            elif not uses_json(path):
                problems.append(f"{readme}: '{SECTION}' names `{name}`, which no longer uses nlohmann/json (delete it)")
            elif rel not in files:
                problems.append(f"{readme}: '{SECTION}' names `{name}`, which belongs to the README nearer to it")
    return problems, uses, by_readme


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(here)), help="project root")
    parser.add_argument("--table", default=os.path.join(here, "layers.json"), help="layer table (its `scan` folders)")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    with open(args.table, encoding="utf-8") as fh:
        tops = [t for t in json.load(fh)["scan"] if os.path.isdir(os.path.join(args.root, t))]
    problems, uses, by_readme = check(args.root, tops)
    if problems:
        print(f"JSON rule: {len(problems)} problem(s):")
        for p in problems:
            print("  " + p)
        return 1
    print(f"JSON rule: {len(uses)} files outside {', '.join(JSON_ZONES)} use nlohmann/json, "
          f"each named in one of {len(by_readme)} README(s)")
    if args.verbose:
        for folder in sorted(by_readme):
            print(f"  {folder}/README.md: " + ", ".join(os.path.relpath(f, folder) for f in by_readme[folder]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
