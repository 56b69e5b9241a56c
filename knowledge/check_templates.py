#!/usr/bin/env python3
"""Fills every code template with its example values (template_examples/) and
checks the result: CUDA templates compile with NVRTC for sm_80 and sm_90
(through hiera_runner.nvrtc_runtime, the compiler S3 candidates use; no GPU
needed, only libnvrtc), Python templates parse, and the CUDA source inside
the nvrtc_module.py example compiles too.

    python3 knowledge/check_templates.py [--keep DIR]   # exit 0 when all pass

The unit tests check that each example fills exactly its template's
placeholders; this script checks that the filled code is real code.
"""

import argparse
import ast
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "engine", "worker", "python"))

from hiera_runner import nvrtc_runtime  # noqa: E402

PLACEHOLDER = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")


def fill(text, values):
    return PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


def check(example, keep):
    name = example["template"]
    values = example["values"]
    with open(os.path.join(HERE, "templates", name)) as f:
        filled = fill(f.read(), values)
    if keep:
        with open(os.path.join(keep, name), "w") as f:
            f.write(filled)
    if name.endswith(".cu"):
        for arch in ("compute_80", "compute_90"):
            nvrtc_runtime.compile_to_ptx(filled, values["kernel_name"], arch=arch)
    elif name.endswith(".py"):
        ast.parse(filled, filename=name)
        if "kernel_source" in values:
            nvrtc_runtime.compile_to_ptx(values["kernel_source"], values["kernel_name"], arch="compute_90")
    else:
        raise ValueError("no check for %s" % name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", help="write the filled templates to this directory")
    args = parser.parse_args()
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    failures = 0
    examples_dir = os.path.join(HERE, "template_examples")
    for file in sorted(os.listdir(examples_dir)):
        with open(os.path.join(examples_dir, file)) as f:
            example = json.load(f)
        try:
            check(example, args.keep)
            print("ok    %s" % example["template"])
        except Exception as e:  # report every template, then fail
            failures += 1
            print("FAIL  %s: %s" % (example["template"], e))
    templates = set(os.listdir(os.path.join(HERE, "templates")))
    covered = {f[:-len(".json")] for f in os.listdir(examples_dir)}
    for missing in sorted(templates - covered):
        failures += 1
        print("FAIL  %s: no example in template_examples/" % missing)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
