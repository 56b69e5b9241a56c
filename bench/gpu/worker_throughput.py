#!/usr/bin/env python3
"""Candidates evaluated per minute: hiera's worker versus a load_inline loop.

The same 10 candidate CUDA kernels (variants of y = relu(a*x + b)) are each
compiled, verified against the reference (5 trials) and timed (50 trials):
  * by `hiera worker` over the job protocol (NVRTC, cubin cache cleared first);
  * by a loop that builds each with torch.utils.cpp_extension.load_inline in a
    fresh build directory (the cold nvcc + torch-headers build a naive
    optimizer pays per candidate), then verifies and times it with torch.
Both run in this one process on the same GPU, one after the other; the ratio
of candidates per minute is the figure (MEASURING.md: ratios, same run).

usage: worker_throughput.py --worker PATH/hiera [--out FILE.json] [--candidates 10]
                            [--paths worker,inline] [--inline-range A:B]
A cold load_inline build costs about a minute, so the ten can be split over
several runs with --inline-range (candidates A..B-1) and --paths inline; the
rate is per candidate.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

N = 1 << 24
REFERENCE = r'''
extern "C" __global__ void fused_ref(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = a * x[i] + b; y[i] = v > 0.f ? v : 0.f; }
}'''

def candidate(k):
    """Ten distinct, correct kernels: block size, grid-stride, vector width."""
    block = [128, 256, 512, 1024][k % 4]
    if k % 3 == 0:
        body = r'''
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float v = fmaf(a, x[i], b); y[i] = fmaxf(v, 0.f); }'''
        grid = "1056" if k < 5 else "2112"
    elif k % 3 == 1:
        body = r'''
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  if (i + 3 < n) {
    float4 v = *reinterpret_cast<const float4*>(x + i);
    v.x = fmaxf(fmaf(a, v.x, b), 0.f); v.y = fmaxf(fmaf(a, v.y, b), 0.f);
    v.z = fmaxf(fmaf(a, v.z, b), 0.f); v.w = fmaxf(fmaf(a, v.w, b), 0.f);
    *reinterpret_cast<float4*>(y + i) = v;
  } else { for (; i < n; ++i) y[i] = fmaxf(fmaf(a, x[i], b), 0.f); }'''
        grid = f"(N/4+{block}-1)/{block}"
    else:
        body = r'''
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(fmaf(a, __ldg(x + i), b), 0.f);'''
        grid = f"(N+{block}-1)/{block}"
    source = (f'// candidate {k}\nextern "C" __global__ void __launch_bounds__({block}) fused_{k}('
              'const float* __restrict__ x, float* __restrict__ y, float a, float b, int n) {' + body + '\n}\n')
    return source, f"fused_{k}", grid, str(block)

def frame(message):
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body

def read_frame(stream):
    length = None
    while True:
        line = stream.readline()
        if not line:
            raise RuntimeError("worker closed its output")
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return json.loads(stream.read(length))

def run_worker(hiera, candidates, cache_dir):
    proc = subprocess.Popen([hiera, "worker", "--cache-dir", cache_dir], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    def call(i, method, params):
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": i, "method": method, "params": params}))
        proc.stdin.flush()
        reply = read_frame(proc.stdout)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]
    call(0, "hello", {"engine_version": "0.1.0"})
    call(1, "probe", {})  # measured once per device and cached; not part of the per-candidate cost
    verdicts = []
    phases = []
    start = time.perf_counter()
    for k in range(candidates):
        source, name, grid, block = candidate(k)
        task = {"kind": "cuda",
                "reference": {"source": REFERENCE, "kernel": "fused_ref"},
                "candidate": {"source": source, "kernel": name},
                "contract": {"sizes": {"N": N},
                             "args": [{"name": "x", "role": "input", "type": "float32", "extent": "N"},
                                      {"name": "y", "role": "output", "type": "float32", "extent": "N"},
                                      {"name": "a", "role": "scalar", "type": "float32", "value": "2"},
                                      {"name": "b", "role": "scalar", "type": "float32", "value": "-1"},
                                      {"name": "n", "role": "scalar", "type": "int32", "value": "N"}],
                             "reference_launch": {"grid": ["(N+255)/256", "1", "1"], "block": ["256", "1", "1"]},
                             "candidate_launch": {"grid": [grid, "1", "1"], "block": [block, "1", "1"]},
                             "flops": "3*N", "bytes": "8*N"},
                "numerics": {"atol": 1e-4, "rtol": 1e-4}}
        result = call(10 + k, "evaluate", {"task": task, "trials": 5, "timing_trials": 50, "seed": 1000 + k})
        verdicts.append(result["verdict"])
        phases.append(result.get("phases_ms"))
        print("worker candidate %d: %s %s" % (k, result["verdict"], result.get("phases_ms")), flush=True)
    elapsed = time.perf_counter() - start
    call(99, "shutdown", {})
    proc.wait(timeout=30)
    return elapsed, verdicts, phases

def run_load_inline(indexes):
    import torch
    from torch.utils.cpp_extension import load_inline
    verdicts = []
    per_candidate = []
    start = time.perf_counter()
    for k in indexes:
        t0 = time.perf_counter()
        source, name, grid, block = candidate(k)
        grid_expr = grid.replace("N", "n")
        launcher = source.replace('extern "C" ', "") + f'''
#include <torch/extension.h>
torch::Tensor run(torch::Tensor x, double a, double b) {{
  auto y = torch::empty_like(x);
  int n = x.numel();
  {name}<<<{grid_expr}, {block}>>>(x.data_ptr<float>(), y.data_ptr<float>(), (float)a, (float)b, n);
  return y;
}}'''
        build = tempfile.mkdtemp(prefix="hiera-load-inline-")
        module = load_inline(name=f"cand_{k}_{os.getpid()}", cpp_sources="torch::Tensor run(torch::Tensor x, double a, double b);",
                             cuda_sources=launcher, functions=["run"], build_directory=build,
                             extra_cuda_cflags=["-O3", "-arch=sm_90"], verbose=False)
        ok = True
        for trial in range(5):
            g = torch.Generator(device="cuda").manual_seed(1000 + k * 10 + trial)
            x = [torch.rand, torch.randn, lambda *s, **kw: torch.randn(*s, **kw) * 1e3][trial % 3](N, device="cuda", generator=g)
            expected = torch.relu(2 * x - 1)
            ok &= torch.allclose(module.run(x, 2.0, -1.0), expected, atol=1e-4, rtol=1e-4)
        x = torch.randn(N, device="cuda")
        flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size // 4 + 1, device="cuda")
        times = []
        for _ in range(3):
            module.run(x, 2.0, -1.0)
        for _ in range(50):
            flush.zero_()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(); module.run(x, 2.0, -1.0); e.record()
            torch.cuda.synchronize()
            times.append(s.elapsed_time(e))
        verdicts.append("passed" if ok else "failed")
        shutil.rmtree(build, ignore_errors=True)
        per_candidate.append(time.perf_counter() - t0)
        print("load_inline candidate %d: %s in %.1f s" % (k, verdicts[-1], per_candidate[-1]), flush=True)
    return time.perf_counter() - start, verdicts, per_candidate

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker", required=True, help="path to the hiera executable")
    parser.add_argument("--out", default=None)
    parser.add_argument("--candidates", type=int, default=10)
    parser.add_argument("--paths", default="worker,inline", help="which paths to run: worker, inline or both")
    parser.add_argument("--inline-range", default=None,
                        help="A:B: the load_inline loop builds candidates A..B-1 (default: all); each cold build "
                             "costs about a minute, and the rate is per candidate")
    args = parser.parse_args()
    paths = set(args.paths.split(","))
    first, last = 0, args.candidates
    if args.inline_range:
        first, last = (int(v) for v in args.inline_range.split(":"))
    result = {"candidates": args.candidates, "n": N}
    verdicts = []
    if "worker" in paths:
        cache_dir = tempfile.mkdtemp(prefix="hiera-bench-cache-")  # cold NVRTC cache
        worker_s, worker_verdicts, phases = run_worker(args.worker, args.candidates, cache_dir)
        result["worker"] = {"seconds": worker_s, "per_minute": 60 * args.candidates / worker_s,
                            "verdicts": worker_verdicts, "phases_ms": phases}
        verdicts += worker_verdicts
    if "inline" in paths:
        inline_s, inline_verdicts, per_candidate = run_load_inline(range(first, last))
        count = last - first
        result["load_inline"] = {"candidates": list(range(first, last)), "seconds": inline_s,
                                 "per_minute": 60 * count / inline_s, "verdicts": inline_verdicts,
                                 "per_candidate_s": per_candidate}
        verdicts += inline_verdicts
    if "worker" in result and "load_inline" in result:
        result["ratio"] = result["worker"]["per_minute"] / result["load_inline"]["per_minute"]
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0 if all(v == "passed" for v in verdicts) else 1

if __name__ == "__main__":
    sys.exit(main())
