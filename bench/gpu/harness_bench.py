#!/usr/bin/env python3
"""Where a candidate's evaluation spends its time, how much device memory it
holds, and how many candidates a minute the PyTorch runner evaluates.

Cases, each at the sizes users have today:
  elementwise  x * sigmoid(x) * 0.5 + 1 on 8192 x 16384 float32 (512 MiB in, 512 MiB out); the
               candidates are ten distinct NVRTC kernels (hiera_runner.nvrtc_runtime), each a
               cold compile: candidates a minute, the phase breakdown, overhead beyond the
               candidate's own calls.
  level2       a KernelBench level 2 shape: conv2d 64 -> 64 (3x3) + ReLU + bias on
               128 x 64 x 256 x 256 float32 (2.1 GB in): the phase breakdown and overhead.
  delivery     a deliver job of a level 2 candidate with KernelBench's criterion and the
               torch.compile baseline, as the optimizer's last job is: its phases.
  start        seconds from starting a candidate process to its ready message (one, four at once),
               against importing torch and starting CUDA in a plain process.
  level1       softmax over rows of 4096 x 393216 float32 (6.4 GB in, 6.4 GB out): peak device
               memory of the evaluation against the reference's own peak.

Each case calls the runner's `evaluate` in this process, as `hiera worker`
does, with `--runner DIR` choosing the hiera_runner package (the current one,
or an older checkout for a side-by-side figure).

usage: harness_bench.py [--runner DIR] [--cases elementwise,level2,level1] [--out FILE.json] [--profile FILE]
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def src(text):
    return textwrap.dedent(text).lstrip("\n")


ELEMENTWISE_REFERENCE = src('''
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return x * torch.sigmoid(x) * 0.5 + 1.0

    def get_inputs():
        return [torch.rand(8192, 16384)]

    def get_init_inputs():
        return []
''')


def elementwise_candidate(k):
    """Ten distinct correct kernels: block size and unrolling vary, so each is its own compile."""
    block = [128, 256, 512, 1024][k % 4]
    unroll = 1 + k % 3
    return src('''
        import torch
        import torch.nn as nn
        from hiera_runner import nvrtc_runtime as rt

        SRC = r"""
        extern "C" __global__ void silu_affine_%(k)d(const float* __restrict__ x, float* __restrict__ y, long long n) {
          long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * %(unroll)d;
          #pragma unroll
          for (int u = 0; u < %(unroll)d; ++u, ++i) {
            if (i < n) { float v = x[i]; y[i] = v / (1.0f + expf(-v)) * 0.5f + 1.0f; }
          }
        }
        """

        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.k = rt.compile(SRC, "silu_affine_%(k)d")

            def forward(self, x):
                x = x.contiguous()
                y = torch.empty_like(x)
                n = x.numel()
                per_block = %(block)d * %(unroll)d
                self.k((n + per_block - 1) // per_block, %(block)d, x, y, rt.int64(n))
                return y
    ''' % {"k": k, "block": block, "unroll": unroll})


# The same problem `hiera bench bench/gpu/kernelbench_level2` runs.
with open(os.path.join(HERE, "kernelbench_level2", "conv2d_relu_biasadd.py")) as _f:
    LEVEL2_REFERENCE = _f.read()

LEVEL2_CANDIDATE = src('''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class ModelNew(nn.Module):
        def __init__(self, channels, bias_shape):
            super().__init__()
            self.conv = nn.Conv2d(channels, channels, 3)
            self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

        def forward(self, x):
            return F.conv2d(x, self.conv.weight, self.conv.bias).relu_().add_(self.bias)
''')

LEVEL1_REFERENCE = src('''
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return torch.softmax(x, dim=1)

    def get_inputs():
        return [torch.rand(4096, 393216)]

    def get_init_inputs():
        return []
''')

LEVEL1_CANDIDATE = src('''
    import torch
    import torch.nn as nn

    class ModelNew(nn.Module):
        def forward(self, x):
            return torch.nn.functional.softmax(x, dim=-1)
''')


def params(reference, candidate, **kw):
    p = {"task": {"kind": "pytorch", "device": "cuda", "reference": {"source": reference},
                  "candidate": {"source": candidate}}, "trials": 5, "timing_trials": 50, "seed": 1234}
    p.update(kw)
    return p


def evaluate(ev, p):
    t0 = time.perf_counter()
    try:
        r = ev.evaluate(p)
    except Exception as e:  # an old runner's job error (out of memory, ...)
        return {"error": "%s: %s" % (type(e).__name__, str(e)[:500])}, time.perf_counter() - t0
    return r, time.perf_counter() - t0


def candidate_calls(r, timing_trials):
    """Calls of the candidate an evaluation makes: 3 a trial (torch >= 2.1: the
    fill pass), the warm-up, the timed rounds."""
    return 3 * len(r.get("trials", [])) + 3 + timing_trials


def summarise(name, results, walls, timing_trials):
    rows = []
    for r, wall in zip(results, walls):
        row = {"wall_s": round(wall, 3), "verdict": r.get("verdict", "error"),
               "failures": [f.get("check") + ": " + f.get("message", "")[:200] for f in r.get("failures", [])],
               "error": r.get("error")}
        t = r.get("timing") or {}
        if t:
            cand = t["candidate"]["median_ms"]
            own = candidate_calls(r, timing_trials) * cand / 1e3
            row.update({"candidate_median_ms": cand, "reference_median_ms": t["reference"]["median_ms"],
                        "speedup": t.get("speedup"), "own_runs_s": round(own, 3),
                        "overhead_s": round(wall - own, 3), "boundary": t.get("boundary")})
        if r.get("phases_ms"):
            row["phases_ms"] = r["phases_ms"]
        if r.get("sandbox"):
            row["sandbox"] = r["sandbox"]
        rows.append(row)
    out = {"case": name, "candidates": rows, "mean_wall_s": round(statistics.mean(walls), 3)}
    out["candidates_per_minute"] = round(60.0 / statistics.mean(walls), 2)
    overheads = [x["overhead_s"] for x in rows if "overhead_s" in x]
    if overheads:
        out["median_overhead_s"] = round(statistics.median(overheads), 3)
    return out


def run_elementwise(ev, n):
    results, walls = [], []
    for k in range(n):
        r, wall = evaluate(ev, params(ELEMENTWISE_REFERENCE, elementwise_candidate(k)))
        results.append(r)
        walls.append(wall)
        print("elementwise %d: %.2f s %s" % (k, wall, r.get("verdict", r.get("error"))), flush=True)
    return summarise("elementwise", results, walls, 50)


def run_level2(ev, n):
    results, walls = [], []
    for k in range(n):
        r, wall = evaluate(ev, params(LEVEL2_REFERENCE, LEVEL2_CANDIDATE, seed=1234 + k))
        results.append(r)
        walls.append(wall)
        print("level2 %d: %.2f s %s" % (k, wall, r.get("verdict", r.get("error"))), flush=True)
    return summarise("level2", results, walls, 50)


def run_level1(ev):
    import torch
    from hiera_runner import inputs, loader
    dev = torch.device("cuda", 0)
    ref = loader.load(LEVEL1_REFERENCE, "reference")
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(dev)
    base = torch.cuda.memory_allocated(dev)
    x = inputs.make(ref.get("get_inputs"), 1, "uniform", dev)
    with torch.no_grad():
        y = ref.get("Model")()(*x)
    torch.cuda.synchronize(dev)
    ref_peak = torch.cuda.max_memory_allocated(dev) - base
    in_bytes = sum(t.numel() * t.element_size() for t in x)
    out_bytes = y.numel() * y.element_size()
    del x, y
    ref.unload()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(dev)
    base = torch.cuda.memory_allocated(dev)
    r, wall = evaluate(ev, params(LEVEL1_REFERENCE, LEVEL1_CANDIDATE, timing_trials=10))
    trusted_peak = torch.cuda.max_memory_allocated(dev) - base
    out = summarise("level1", [r], [wall], 10)
    # The candidate's copy of the inputs (cuMemAlloc, outside the allocator's statistics); its
    # outputs are read in place, in its own process's memory, so no copy of them is made.
    exchange_in = in_bytes if "error" not in r and r.get("sandbox") else 0
    exchange_out = 0
    out.update({"reference_peak_bytes": ref_peak, "input_bytes": in_bytes, "output_bytes": out_bytes,
                "trusted_allocator_peak_bytes": trusted_peak, "exchange_input_bytes": exchange_in,
                "exchange_output_bytes": exchange_out,
                "verification_peak_bytes": trusted_peak + exchange_in + exchange_out,
                "bound_bytes": ref_peak + in_bytes + out_bytes})
    out["within_bound"] = out["verification_peak_bytes"] <= out["bound_bytes"]
    print("level1: %.2f s %s, peak %.2f GB against a bound of %.2f GB" % (
        wall, r.get("verdict", r.get("error")), out["verification_peak_bytes"] / 1e9, out["bound_bytes"] / 1e9),
        flush=True)
    return out


def run_delivery(ev_unused):
    """A deliver job as the optimizer sends one at the end of a run (KernelBench's criterion and the
    torch.compile baseline included): its phases, so the delivery's share of a bench run is known."""
    from hiera_runner import deliver
    p = params(LEVEL2_REFERENCE, LEVEL2_CANDIDATE, seed=1234 + 7777, kernelbench=True, baselines=["compile"])
    t0 = time.perf_counter()
    try:
        r = deliver.deliver(p)["evaluation"]
    except Exception as e:
        r = {"error": "%s: %s" % (type(e).__name__, str(e)[:500])}
    wall = time.perf_counter() - t0
    print("delivery: %.2f s %s %s" % (wall, r.get("verdict", r.get("error")), r.get("phases_ms")), flush=True)
    return summarise("delivery", [r], [wall], 50)


def run_start():
    """Seconds from starting a candidate process to its ready message: one alone, then four at once."""
    import torch
    from hiera_runner import isolation
    dev = torch.device("cuda", 0)
    isolation.close_spares()
    out = {"case": "start"}
    for n in (1, 4):
        t0 = time.perf_counter()
        procs = [isolation.CandidateProcess(dev) for _ in range(n)]
        for p in procs:
            p.wait_ready()
        out["ready_s_%d_at_once" % n] = round(time.perf_counter() - t0, 3)
        for p in procs:
            p.close()
    t0 = time.perf_counter()
    import subprocess
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    out["import_torch_s"] = round(time.perf_counter() - t0, 3)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch; torch.empty(1, device='cuda').zero_(); "
                    "torch.cuda.synchronize()"], check=True)
    out["import_torch_and_cuda_s"] = round(time.perf_counter() - t0, 3)
    print("start: %s" % out, flush=True)
    return out


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--runner", default=os.path.join(ROOT, "engine", "worker", "python"),
                    help="the directory holding the hiera_runner package")
    ap.add_argument("--cases", default="elementwise,level2,level1")
    ap.add_argument("--candidates", type=int, default=10)
    ap.add_argument("--level2-candidates", type=int, default=3)
    ap.add_argument("--out")
    ap.add_argument("--label", default="")
    ap.add_argument("--profile", metavar="FILE",
                    help="write cProfile statistics of the trusted side's evaluations (text, by cumulative time)")
    args = ap.parse_args(argv)
    sys.path.insert(0, os.path.abspath(args.runner))
    cache = tempfile.mkdtemp(prefix="hiera-harness-bench-")
    os.environ["HIERA_CACHE_DIR"] = cache  # cold NVRTC compiles for every candidate
    import torch
    from hiera_runner import evaluate as ev
    record = {"label": args.label, "runner": os.path.abspath(args.runner), "torch": torch.__version__,
              "gpu": torch.cuda.get_device_name(0), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "cases": {}}
    profiler = None
    if args.profile:
        import cProfile
        profiler = cProfile.Profile()
        profiler.enable()
    try:
        for case in args.cases.split(","):
            if case == "elementwise":
                record["cases"][case] = run_elementwise(ev, args.candidates)
            elif case == "level2":
                record["cases"][case] = run_level2(ev, args.level2_candidates)
            elif case == "level1":
                record["cases"][case] = run_level1(ev)
            elif case == "delivery":
                record["cases"][case] = run_delivery(ev)
            elif case == "start":
                record["cases"][case] = run_start()
            if args.out:
                with open(args.out, "w") as f:
                    json.dump(record, f, indent=1)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        if profiler is not None:
            import pstats
            profiler.disable()
            with open(args.profile, "w") as f:
                stats = pstats.Stats(profiler, stream=f)
                stats.sort_stats("cumulative").print_stats(70)
                stats.sort_stats("tottime").print_stats(40)
    print(json.dumps({c: {k: v for k, v in r.items() if k != "candidates"} for c, r in record["cases"].items()},
                     indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
