#!/usr/bin/env python3
"""The include rule: each folder includes only what the layer table allows.

Reads a layer table (default: layers.json beside this script; see
docs/architecture.md), scans every .h/.cpp/.cu under the table's `scan`
folders and exits 1 listing each include that crosses the table the wrong way:
file:line, the include, the rule broken. Python 3 standard library only.

  python3 tests/architecture/check_includes.py [--root DIR] [--table FILE] [-v]

Rules:
  * every scanned source file lies in a layer (the longest layer folder that
    contains it); a folder missing from the table fails;
  * a project-rooted include ("engine/eval/worker_pool.h") names a layer that
    the including layer is, or lists in may_include, or that a
    known_exceptions entry allows from it;
  * a `restricted` header ("protocol/lsp_types.h", <cuda...>) is included only
    from the folders listed for it;
  * every known exception is still needed (a stale one fails: delete its line);
  * the may_include graph has no cycle.
Includes under a `generated` prefix (hiera/version.h) and includes relative
to the including file's folder that are not found are ignored; relative ones
that are found are checked like project-rooted ones.
"""

import argparse
import json
import os
import re
import sys

SOURCE_SUFFIXES = (".h", ".cpp", ".cu")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def is_under(path, folder):
    return path == folder or path.startswith(folder + "/")


def layer_of(path, layers):
    """The longest layer folder containing `path`, or None."""
    best = None
    for name in layers:
        if is_under(path, name) and (best is None or len(name) > len(best)):
            best = name
    return best


def find_cycle(layers):
    state = {}

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in layers[node].get("may_include", []):
            if nxt not in layers:
                continue
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, stack)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for name in sorted(layers):
        if name not in state:
            found = visit(name, [])
            if found:
                return found
    return None


def check(root, table):
    layers = table["layers"]
    generated = table.get("generated", [])
    restricted = {k: v for k, v in table.get("restricted", {}).items() if k != "about"}
    exceptions = table.get("known_exceptions", [])
    used = [False] * len(exceptions)
    problems = []

    for name, layer in sorted(layers.items()):
        for target in layer.get("may_include", []):
            if target not in layers:
                problems.append(f"layers.json: {name} may_include {target}, which is not a layer")
    for i, ex in enumerate(exceptions):
        for key in ("from", "to"):
            if layer_of(ex.get(key, ""), layers) is None:
                problems.append(f"layers.json: known_exceptions[{i}] {key} {ex.get(key)!r} is not in any layer")
    cycle = find_cycle(layers)
    if cycle:
        problems.append("layers.json: may_include has a cycle: " + " -> ".join(cycle))

    files = []
    for top in table["scan"]:
        base = os.path.join(root, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(SOURCE_SUFFIXES):
                    files.append(os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/"))

    for rel in files:
        src_layer = layer_of(rel, layers)
        if src_layer is None:
            problems.append(f"{rel}: lies in no layer of the table (add its folder to layers.json)")
            continue
        allowed = set(layers[src_layer].get("may_include", [])) | {src_layer}
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            lines = fh.readlines()
        for lineno, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            bracket, inc = m.group(1), m.group(2)
            shown = f'"{inc}"' if bracket == '"' else f"<{inc}>"
            where = f"{rel}:{lineno}: #include {shown}"

            for prefix, who in restricted.items():
                if shown.startswith(prefix) and not any(is_under(src_layer, w) for w in who):
                    problems.append(f"{where}: {prefix} is restricted to {', '.join(who)} ({src_layer} is not)")
            if bracket != '"' or any(inc.startswith(g) for g in generated):
                continue

            target_path = None
            top = inc.split("/", 1)[0]
            if "/" in inc and os.path.isdir(os.path.join(root, top)):
                target_path = os.path.normpath(inc).replace(os.sep, "/")
            else:
                local = os.path.normpath(os.path.join(os.path.dirname(rel), inc)).replace(os.sep, "/")
                if os.path.exists(os.path.join(root, local)):
                    target_path = local
            if target_path is None:
                continue
            target = layer_of(target_path, layers)
            if target is None:
                problems.append(f"{where}: includes {target_path}, which lies in no layer of the table")
                continue
            if target in allowed:
                continue
            hit = None
            for i, ex in enumerate(exceptions):
                if is_under(src_layer, ex["from"]) and is_under(target_path, ex["to"]):
                    hit = i
                    break
            if hit is not None:
                used[hit] = True
                continue
            may = ", ".join(sorted(allowed - {src_layer})) or "nothing outside itself"
            problems.append(f"{where}: {src_layer} may not include {target} (it may include: {may})")

    for i, ex in enumerate(exceptions):
        if not used[i]:
            problems.append(f"layers.json: known_exceptions[{i}] {ex['from']} -> {ex['to']} is no longer needed: delete it")
    return problems, files, sum(used)


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(here)), help="project root")
    parser.add_argument("--table", default=os.path.join(here, "layers.json"), help="layer table")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    with open(args.table, encoding="utf-8") as fh:
        table = json.load(fh)
    problems, files, used = check(args.root, table)
    if problems:
        print(f"include rule: {len(problems)} problem(s) in {len(files)} files:")
        for p in problems:
            print("  " + p)
        return 1
    print(f"include rule: {len(files)} files in {len(table['layers'])} layers pass "
          f"({used} known exception(s) still in use)")
    if args.verbose:
        for ex in table.get("known_exceptions", []):
            print(f"  exception {ex['from']} -> {ex['to']}: {ex['reason']} (waits on {ex['waits_on']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
