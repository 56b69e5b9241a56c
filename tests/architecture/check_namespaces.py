#!/usr/bin/env python3
"""The namespace rule: code under engine/ lives in the namespace its folder names.

A file under engine/FOLDER/SUB declares its named namespaces as
hiera::engine::FOLDER::SUB or deeper (engine/worker/kernel_host.h may open
hiera::engine::worker::kernel_host); engine/common, the shared vocabulary, is
hiera::engine itself. Anonymous namespaces, `namespace x = ...` aliases and
namespaces outside hiera (std specialisations, test helpers) are not checked.
Exits 1 listing file:line, the namespace, and the one its folder names.

  python3 tests/architecture/check_namespaces.py [--root DIR] [--table FILE]

The table (layers.json beside this script) is read only for its `scan` list;
only folders under engine/ are checked. Python 3 standard library only.
"""

import argparse
import json
import os
import re
import sys

SOURCE_SUFFIXES = (".h", ".cpp", ".cu")
NAMESPACE = re.compile(r"^\s*namespace\s+(hiera(?:::\w+)*)\s*\{")
# The vocabulary folder is the engine's own namespace, not a namespace of its own.
FOLDER_NAMESPACE_OVERRIDES = {"engine/common": "hiera::engine"}


def expected_namespace(folder):
    if folder in FOLDER_NAMESPACE_OVERRIDES:
        return FOLDER_NAMESPACE_OVERRIDES[folder]
    return "hiera::" + folder.replace("/", "::")


def within(namespace, expected):
    return namespace == expected or namespace.startswith(expected + "::")


def check_file(root, rel):
    folder = os.path.dirname(rel)
    expected = expected_namespace(folder)
    problems = []
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            match = NAMESPACE.match(line)
            if match and not within(match.group(1), expected):
                problems.append(f"{rel}:{number}: namespace {match.group(1)}: {folder} is {expected}")
    return problems


def engine_sources(root, scan):
    for top in scan:
        if not (top == "engine" or top.startswith("engine/")):
            continue
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")))
    parser.add_argument("--table", default=os.path.join(here, "layers.json"))
    args = parser.parse_args()
    with open(args.table, encoding="utf-8") as fh:
        scan = json.load(fh)["scan"]
    files = list(engine_sources(args.root, scan))
    problems = [p for rel in files for p in check_file(args.root, rel)]
    if problems:
        print("Namespace rule: each engine file's namespaces follow its folder (tests/architecture/check_namespaces.py)")
        for p in problems:
            print("  " + p)
        return 1
    print(f"Namespace rule: {len(files)} engine files pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
