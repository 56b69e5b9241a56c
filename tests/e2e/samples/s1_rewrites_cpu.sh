#!/usr/bin/env bash
# The S1 rewrites of the built-in proposer on the sample suite, verified on CPU
# torch: every problem shrunk to its CPU_SIZES (tests/samples/make_cpu_suite.py),
# the real `hiera bench` with the built-in proposers only (no LLM) and the plan
# limited to S1, a CPU worker; every S1 candidate of the knowledge proposer
# must pass the worker's verification (a wrong rewrite fails this test), and
# the suite must have had S1 candidates at all. The torch.compile proposer's
# candidates take turns with them where torch has torch.compile (each must
# then pass too); on a torch without it (CPU CI's 1.13) none may be proposed.
# Exits 77 (skip) without a python3 that imports torch or without
# hiera-worker. Usage: s1_rewrites_cpu.sh HIERA_BIN
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
import torch
out = sys.argv[1]
problems = sorted(glob.glob(os.path.join(out, "problems", "*", "*.json")))
tried = correct = compiled = 0
bad = []
for path in problems:
    r = json.load(open(path))
    name = "%s/%s" % (r["group"], r["name"])
    if not r["correct"]:
        bad.append("%s: not correct (%s)" % (name, r.get("error")))
        continue
    attempts = json.load(open(os.path.join(r["run_dir"], "result.json")))["attempts"]
    mine = [a for a in attempts if a["proposer"] == "knowledge" and a["verdict"] in ("passed", "failed")]
    tried += len(mine)
    correct += sum(1 for a in mine if a["correct"])
    if any(not a["correct"] for a in mine):
        bad.append("%s: %d of %d S1 candidates failed verification (run: %s)"
                   % (name, sum(1 for a in mine if not a["correct"]), len(mine), r["run_dir"]))
    for a in attempts:
        if a["proposer"] != "torch.compile":
            continue
        compiled += 1
        if not hasattr(torch, "compile"):
            bad.append("%s: %s (torch.compile) was proposed although torch %s has no torch.compile"
                       % (name, a["id"], torch.__version__))
print("%d problems, %d S1 candidates of the knowledge proposer, %d verified; %d torch.compile candidates"
      % (len(problems), tried, correct, compiled))
for b in bad:
    print("FAIL " + b)
if len(problems) < 50 or tried < 3:
    print("FAIL: too few problems (%d) or S1 candidates (%d) to say anything" % (len(problems), tried))
    sys.exit(1)
sys.exit(1 if bad else 0)
PY
