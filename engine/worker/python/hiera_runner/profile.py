"""The `profile` job for kind "pytorch": a per-kernel breakdown of one side.

torch.profiler records CPU and CUDA activity; on CUDA the kernels (with grid
and block) are read from its Chrome trace, which carries them in every torch
version; on CPU the operators' self time stands in for kernels. Hardware
counters are the native worker's business (CUPTI), not the runner's.
"""

import json
import os
import tempfile

import torch

from . import inputs as inputs_mod
from .evaluate import Job, _int_param
from .jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RpcError
from . import static_checks

WARMUP = 2
_GPU_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")


def profile(params):
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params must be an object")
    which = params.get("which", "reference")
    if which not in ("reference", "candidate"):
        raise RpcError(INVALID_PARAMS, "params.which must be \"reference\" or \"candidate\"")
    calls = _int_param(params, "calls", 5, 1)
    seed = _int_param(params, "seed", 1234, -(1 << 62))
    job = Job(params.get("task"), seed)
    try:
        job.load_reference()
        args = inputs_mod.make(job.reference_module.get("get_inputs"), seed, inputs_mod.distribution_for(0), job.device,
                               job.reference_source)
        if which == "candidate":
            return {"kernels": _candidate_kernels(job, args, seed, calls),
                    "metrics": {"unavailable": "hardware counters are read by the native worker"}}
        try:
            kernels = run(job.reference, args, job.device, calls)
        except Exception as e:
            raise RpcError(INVALID_PARAMS, "the reference raised %s: %s" % (type(e).__name__, e))
        return {"kernels": kernels, "metrics": {"unavailable": "hardware counters are read by the native worker"}}
    finally:
        job.unload()


def _candidate_kernels(job, args, seed, calls):
    """The candidate profiles itself in its own process; what it reports is
    shown, never judged (a verdict reads the trusted side's clocks only)."""
    from . import isolation
    if job.candidate_source is None:
        raise RpcError(INVALID_PARAMS, "params.task.candidate.source must be a string")
    allow = static_checks.normalise_allow((job.task.get("numerics") or {}).get("allow"))
    findings = static_checks.check(job.candidate_source, allow | static_checks.native_precisions(job.reference_source))
    if findings:  # it would be run: refuse what the evaluation would reject unrun
        raise RpcError(INVALID_PARAMS, "the candidate fails the static checks: " + "; ".join(findings))
    from .evaluate import init_inputs
    proc = isolation.acquire(job.device)
    try:
        proc.wait_ready()
        try:
            proc.load(job.candidate_source, init_inputs(job), seed)
        except isolation.CandidateFailure as e:
            raise RpcError(INVALID_PARAMS, "the candidate could not be loaded: %s" % e.message)
        try:
            kernels = proc.profile(proc.stage(args), calls)
        except isolation.CandidateFailure as e:
            raise RpcError(INTERNAL_ERROR, "the candidate raised " + e.message)
        return [_kernel_record(k) for k in kernels[:2000] if isinstance(k, dict)]
    finally:
        proc.close()
        isolation.prepare_spare(job.device)


def _kernel_record(k):
    def num(v):
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 else 0
    return {"name": str(k.get("name", "?"))[:300], "grid": _dims(k.get("grid")), "block": _dims(k.get("block")),
            "calls": num(k.get("calls")), "total_ns": num(k.get("total_ns")), "mean_ns": num(k.get("mean_ns"))}


def run(model, args, device, calls):
    """Warm-up, then `calls` profiled calls; returns the kernel list, the
    costliest first."""
    from torch.profiler import ProfilerActivity, profile as torch_profile
    cuda = device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with torch.no_grad():
        for _ in range(WARMUP):
            model(*args)
        if cuda:
            torch.cuda.synchronize(device)
        with torch_profile(activities=activities) as prof:
            for _ in range(calls):
                model(*args)
            if cuda:
                torch.cuda.synchronize(device)
    return _cuda_kernels(prof) if cuda else _cpu_operators(prof)


def _cuda_kernels(prof):
    fd, path = tempfile.mkstemp(suffix=".json", prefix="hiera_profile_")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    finally:
        os.unlink(path)
    events = trace.get("traceEvents", trace) if isinstance(trace, dict) else trace
    groups = {}
    for ev in events:
        if not isinstance(ev, dict) or ev.get("ph") != "X":
            continue
        if str(ev.get("cat", "")).lower() not in _GPU_CATEGORIES:
            continue
        args = ev.get("args") or {}
        grid = _dims(args.get("grid"))
        block = _dims(args.get("block"))
        key = (ev.get("name", "?"), tuple(grid) if grid else None, tuple(block) if block else None)
        g = groups.setdefault(key, [0, 0.0])
        g[0] += 1
        g[1] += float(ev.get("dur", 0.0))  # microseconds
    out = []
    for (name, grid, block), (n, total_us) in groups.items():
        total_ns = int(round(total_us * 1000))
        out.append({"name": name, "grid": list(grid) if grid else None, "block": list(block) if block else None,
                    "calls": n, "total_ns": total_ns, "mean_ns": total_ns // n})
    out.sort(key=lambda k: -k["total_ns"])
    return out


def _dims(v):
    if isinstance(v, (list, tuple)) and len(v) == 3 and all(isinstance(x, (int, float)) for x in v):
        return [int(x) for x in v]
    return None


def _cpu_operators(prof):
    out = []
    for e in prof.key_averages():
        self_us = float(getattr(e, "self_cpu_time_total", 0.0) or 0.0)
        if self_us <= 0 or e.count <= 0:
            continue
        total_ns = int(round(self_us * 1000))
        out.append({"name": e.key, "grid": None, "block": None, "calls": int(e.count),
                    "total_ns": total_ns, "mean_ns": total_ns // int(e.count)})
    out.sort(key=lambda k: -k["total_ns"])
    return out
