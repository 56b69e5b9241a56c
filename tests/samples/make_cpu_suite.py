"""Copies a sample suite with every problem shrunk to its CPU_SIZES, for CPU
runs of `hiera bench` in CI: the sizes are re-assigned at the end of each
file, which get_inputs()/get_init_inputs() read when they are called.
Usage: make_cpu_suite.py SAMPLES_DIR OUT_DIR [--filter REGEX]"""
import argparse
import ast
import os
import re
import shutil
import sys


def cpu_sizes(source, path):
    for node in ast.parse(source, path).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "CPU_SIZES" for t in node.targets):
            return ast.literal_eval(node.value)
    raise SystemExit("%s: no CPU_SIZES" % path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("samples")
    parser.add_argument("out")
    parser.add_argument("--filter", default="")
    args = parser.parse_args()
    pattern = re.compile(args.filter)
    count = 0
    for group in sorted(os.listdir(args.samples)):
        folder = os.path.join(args.samples, group)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if not re.match(r"^\d+_.*\.py$", name) or not pattern.search("%s/%s" % (group, name)):
                continue
            with open(os.path.join(folder, name)) as f:
                source = f.read()
            sizes = cpu_sizes(source, os.path.join(folder, name))
            os.makedirs(os.path.join(args.out, group), exist_ok=True)
            with open(os.path.join(args.out, group, name), "w") as f:
                f.write(source.rstrip("\n") + "\n\n\n# CPU sizes (tests/samples/make_cpu_suite.py)\n")
                for key, value in sizes.items():
                    f.write("%s = %r\n" % (key, value))
            count += 1
    print("%d problems copied at their CPU sizes to %s" % (count, args.out))
    return 0 if count else 1


if __name__ == "__main__":
    sys.exit(main())
