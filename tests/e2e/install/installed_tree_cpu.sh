#!/usr/bin/env bash
# An installed tree works on its own: `cmake --install BUILD --prefix TMP`,
# then `hiera optimize` of a small module from TMP/bin on a CPU worker, run
# from a directory outside the source tree, with the configuration, knowledge
# and runner the prefix holds. Asserts that the prefix has the runner (with
# its templates), knowledge/, the torch-python finder and the configuration
# schema; that `hiera doctor` from TMP reports the installed knowledge and
# worker; that the run verified a candidate, and that the runner the worker
# started was the installed one (its modules were imported from TMP: their
# bytecode cache is written there). Exits 77 (skip) without a python3 that imports torch or
# without hiera-worker. Usage: installed_tree_cpu.sh BUILD_DIR SOURCE_DIR
set -u
build="$1"
source_dir="$2"
py="$("$source_dir/scripts/find-torch-python")" || { echo "SKIP: no python3 that imports torch"; exit 77; }
[ -x "$build/bin/hiera-worker" ] || { echo "SKIP: hiera-worker was not built (no CUDA toolkit)"; exit 77; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$(realpath "$work")/prefix"
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "cmake --install exited $?"; }
for f in bin/hiera bin/hiera-worker libexec/hiera/find-torch-python share/hiera/python/hiera_runner/__main__.py \
         share/hiera/python/hiera_runner/templates/scalars.py.tmpl share/hiera/knowledge/gpus \
         share/hiera/knowledge/templates share/hiera/config.schema.json; do
  [ -e "$prefix/$f" ] || fail "the installed tree has no $f"
done
[ -x "$prefix/libexec/hiera/find-torch-python" ] || fail "libexec/hiera/find-torch-python is not executable"
[ -e "$prefix/share/hiera/python/hiera_runner/__pycache__" ] && fail "__pycache__ was installed"

# A module whose no-op ops the built-in proposer removes (S1), sized for a CPU.
mkdir -p "$work/project"
cat >"$work/project/noop_relu.py" <<'PY'
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        y = y * 1.0
        return y + 0.0


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return []
PY
cd "$work/project" || exit 1
unset PYTHONDONTWRITEBYTECODE HIERA_PYTHONPATH HIERA_KNOWLEDGE_DIR HIERA_CONFIG

HIERA_PYTHON="$py" "$prefix/bin/hiera" doctor >doctor.out 2>doctor.err || { cat doctor.out doctor.err; fail "hiera doctor exited $?"; }
grep -q "^ok   knowledge: $prefix/share/hiera/knowledge (" doctor.out || { cat doctor.out; fail "doctor: not the installed knowledge"; }
grep -qx "ok   worker: hiera-worker [0-9.]* ($prefix/bin/hiera worker)" doctor.out || { cat doctor.out; fail "doctor: not the installed worker"; }
grep -qx "ok   python: $py, torch .*" doctor.out || { cat doctor.out; fail "doctor: no python with torch"; }
HIERA_PYTHON="$py" "$prefix/bin/hiera" optimize noop_relu.py --llm none --budget 2 --workers 1 --device cpu --quiet \
  --json result.json >report.md 2>optimize.err
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] || { tail -30 optimize.err; fail "hiera optimize exited $rc (0 or 3 expected)"; }
"$py" - result.json <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
attempts = r.get("attempts", [])
passed = [a for a in attempts if a.get("verdict") == "passed"]
print("outcome %s, %d candidates, %d verified" % (r.get("outcome"), len(attempts), len(passed)))
if r.get("target") != "noop_relu.py::Model":
    sys.exit("FAIL: target %r" % r.get("target"))
if not passed:
    sys.exit("FAIL: no verified candidate: %s" % json.dumps(attempts)[:2000])
PY
ls "$prefix"/share/hiera/python/hiera_runner/__pycache__/server*.pyc >/dev/null 2>&1 ||
  fail "the worker did not run the installed runner ($prefix/share/hiera/python has no bytecode cache)"
echo "ok: the installed tree optimized noop_relu.py with its own runner"
