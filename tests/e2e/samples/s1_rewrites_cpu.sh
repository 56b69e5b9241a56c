#!/usr/bin/env bash
# The S1 rewrites of the built-in proposer on the sample suite, verified on CPU
# torch: every problem shrunk to its CPU_SIZES (tests/samples/make_cpu_suite.py),
# the real `hiera bench` with the knowledge proposer only and the plan limited
# to S1, a CPU worker; every S1 candidate proposed must pass the worker's
# verification (a wrong rewrite fails this test), and the suite must have had
# S1 candidates at all. Exits 77 (skip) without a python3 that imports torch
# or without hiera-worker. Usage: s1_rewrites_cpu.sh HIERA_BIN
set -u
hiera="$1"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
py="$("$root/scripts/find-torch-python")" || { echo "SKIP: no python3 that imports torch"; exit 77; }
[ -x "$(dirname "$hiera")/hiera-worker" ] || { echo "SKIP: hiera-worker was not built (no CUDA toolkit)"; exit 77; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$py" "$root/tests/samples/make_cpu_suite.py" "$root/samples" "$work/suite" || exit 1
cat >"$work/config.json" <<JSON
{"spec": {"spaces": ["S1"]}}
JSON
cd "$work" || exit 1
HIERA_PYTHON="$py" "$hiera" bench suite --out out --llm none --budget 4 --config config.json --quiet \
  >"$work/report.md" 2>"$work/bench.err"
rc=$?
if [ $rc -ne 0 ]; then
  echo "hiera bench exited $rc"; tail -30 "$work/bench.err"; exit 1
fi
"$py" - "$work/out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
problems = sorted(glob.glob(os.path.join(out, "problems", "*", "*.json")))
tried = correct = 0
bad = []
for path in problems:
    r = json.load(open(path))
    c = r["candidates"]
    tried += c["tried"]
    correct += c["correct"]
    if not r["correct"]:
        bad.append("%s/%s: not correct (%s)" % (r["group"], r["name"], r.get("error")))
    elif c["correct"] != c["tried"]:
        bad.append("%s/%s: %d of %d S1 candidates failed verification (run: %s)"
                   % (r["group"], r["name"], c["tried"] - c["correct"], c["tried"], r["run_dir"]))
print("%d problems, %d S1 candidates, %d verified" % (len(problems), tried, correct))
for b in bad:
    print("FAIL " + b)
if len(problems) < 50 or tried < 3:
    print("FAIL: too few problems (%d) or S1 candidates (%d) to say anything" % (len(problems), tried))
    sys.exit(1)
sys.exit(1 if bad else 0)
PY
