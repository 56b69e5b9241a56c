#!/usr/bin/env python3
"""CPU cost per call and side-by-side GPU time of two sets of delivered modules.

OLD_DIR and NEW_DIR hold delivered modules (the `best.delivered_source` of a run's result.json, or
a best.py) of the same problems under the same file names; each module defines Model, ModelNew,
get_inputs and get_init_inputs. For every pair the script checks that both ModelNew give bitwise
equal outputs (`same_new`), measures the CPU time per call with the GPU kept busy by
torch.cuda._sleep (`cpu_us_old`, `cpu_us_new`, `cpu_us_ref`, `cpu_us_compile`), and times the
reference, old, new and torch.compile(reference) side by side with hiera_runner.timing (60 trials).

usage: launch_overhead.py OLD_DIR NEW_DIR [--only PREFIX ...] [--out FILE.json]

Made the launch-path record of 2026-11-30
(bench/results/2026-11-30-samples-fusion-launch-path-h200-cb0d577/launch-overhead.json).
"""
import argparse
import glob
import importlib.util
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "engine", "worker", "python"))

torch = timing = None  # imported in main(), so that --help needs no torch


def load(path, tag):
    spec = importlib.util.spec_from_file_location("m_%s_%s" % (tag, os.path.basename(path)[:-3]), path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def cpu_cost(fn, calls=30):
    torch.cuda.synchronize()
    torch.cuda._sleep(int(3e9))
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t = (time.perf_counter() - t0) / calls * 1e6
    torch.cuda.synchronize()
    return round(t, 1)


def measure(old_path, new_path, trials):
    old, new = load(old_path, "old"), load(new_path, "new")
    torch.manual_seed(0)
    ref = old.Model(*old.get_init_inputs()).cuda().eval()
    mods = {}
    for tag, m in (("old", old), ("new", new)):
        c = m.ModelNew(*m.get_init_inputs()).cuda().eval()
        c.load_state_dict(ref.state_dict(), strict=False)
        mods[tag] = c
    torch.manual_seed(1)
    args = [a.cuda() if torch.is_tensor(a) else a for a in old.get_inputs()]
    r = {}
    with torch.no_grad():
        outs = {k: v(*args) for k, v in mods.items()}
        for k in outs:
            a, b = outs["old"], outs[k]
            a = a if isinstance(a, (tuple, list)) else [a]
            b = b if isinstance(b, (tuple, list)) else [b]
            r["same_" + k] = all(torch.equal(x, y) for x, y in zip(a, b))
        for k, v in mods.items():
            r["cpu_us_" + k] = cpu_cost(lambda v=v: v(*args))
        r["cpu_us_ref"] = cpu_cost(lambda: ref(*args))
        compiled = torch.compile(ref)
        for _ in range(3):
            compiled(*args)
        r["cpu_us_compile"] = cpu_cost(lambda: compiled(*args))
        for k, v in mods.items():
            r["cpu_us_%s_after_compile" % k] = cpu_cost(lambda v=v: v(*args))
        sides = [("reference", lambda: ref(*args)), ("old", lambda: mods["old"](*args)),
                 ("new", lambda: mods["new"](*args)), ("compile", lambda: compiled(*args))]
        t = timing.time_sides(sides, torch.device("cuda"), trials)
        r["ms"] = {k: round(v["median_ms"], 4) for k, v in t.items()}
        r["new_over_compile"] = round(t["compile"]["median_ms"] / t["new"]["median_ms"], 3)
        r["old_over_compile"] = round(t["compile"]["median_ms"] / t["old"]["median_ms"], 3)
        torch._dynamo.reset()
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old_dir")
    ap.add_argument("new_dir")
    ap.add_argument("--only", nargs="*", default=[], help="file-name prefixes to measure")
    ap.add_argument("--trials", type=int, default=60)
    ap.add_argument("--out", help="JSON file for the figures")
    a = ap.parse_args()
    global torch, timing
    import torch
    from hiera_runner import timing
    out = {}
    for path in sorted(glob.glob(os.path.join(a.new_dir, "*.py"))):
        name = os.path.basename(path)[:-3]
        if a.only and not any(name.startswith(o) for o in a.only):
            continue
        old_path = os.path.join(a.old_dir, os.path.basename(path))
        if not os.path.exists(old_path):
            print(name, "has no module in", a.old_dir, file=sys.stderr)
            continue
        out[name] = measure(old_path, path, a.trials)
        print(name, json.dumps(out[name]), flush=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
