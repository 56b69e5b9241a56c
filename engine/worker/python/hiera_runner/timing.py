"""Timing the reference and the candidate (and any baselines, such as
torch.compile of the reference), interleaved, on the same inputs.

CUDA: an event pair around each call, the L2 flushed before it (a write of 2x
the L2 size), a device-wide synchronize after it (work on side streams counts,
and Python launch overhead is part of a module's cost), warm-up first.
CPU (tests, CPU tasks): time.perf_counter with the same structure.

The timer and synchronisation functions are captured at import, before any
candidate runs, so a candidate that replaces them cannot fool the clock.
"""

import statistics
import time

import torch

_perf_counter = time.perf_counter
_Event = torch.cuda.Event
_synchronize = torch.cuda.synchronize
_elapsed_time = torch.cuda.Event.elapsed_time
_record = torch.cuda.Event.record

WARMUP = 3
DEFAULT_L2_BYTES = 128 << 20


def percentile(sorted_values, q):
    """Linear interpolation between closest ranks (numpy's default)."""
    if not sorted_values:
        return float("nan")
    pos = (len(sorted_values) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize(times_ms):
    s = sorted(times_ms)
    return {"median_ms": statistics.median(s), "min_ms": s[0], "p10_ms": percentile(s, 0.10),
            "p90_ms": percentile(s, 0.90), "trials": len(s)}


def l2_bytes(device):
    try:
        size = int(getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or 0)
    except Exception:
        size = 0
    return size if size > 0 else DEFAULT_L2_BYTES


class _CudaClock(object):
    def __init__(self, device):
        self.device = device
        # A write of twice the L2 evicts whatever the previous call left there.
        self.flush_buffer = torch.empty(2 * l2_bytes(device) // 4, dtype=torch.int32, device=device)

    def measure(self, fn):
        self.flush_buffer.zero_()
        start, end = _Event(enable_timing=True), _Event(enable_timing=True)
        _record(start)
        fn()
        _record(end)
        _synchronize(self.device)
        return _elapsed_time(start, end)


class Clock(object):
    """The trusted side's clock for the isolated timing rounds: flush() the
    L2 from here (it is the GPU's, whichever process runs next), then
    measure_call(fn) -> (ms, fn's result) with CUDA events (or perf_counter)
    and a device-wide synchronize."""

    def __init__(self, device):
        self.device = device
        self.cuda = device.type == "cuda"
        if self.cuda:
            self.flush_buffer = torch.empty(2 * l2_bytes(device) // 4, dtype=torch.int32, device=device)

    def flush(self):
        if self.cuda:
            self.flush_buffer.zero_()
            _synchronize(self.device)

    def measure_call(self, fn):
        if not self.cuda:
            t0 = _perf_counter()
            out = fn()
            return (_perf_counter() - t0) * 1e3, out
        start, end = _Event(enable_timing=True), _Event(enable_timing=True)
        _record(start)
        out = fn()
        _record(end)
        _synchronize(self.device)
        return _elapsed_time(start, end), out


class _CpuClock(object):
    def measure(self, fn):
        t0 = _perf_counter()
        fn()
        return (_perf_counter() - t0) * 1e3


def time_sides(sides, device, trials, warmup=WARMUP):
    """sides: [(name, zero-argument callable)], each timed `trials` times,
    interleaved: trial i runs them in the order rotated by i, so that each
    side takes every position equally often and none always follows another.
    Returns {name: stats}."""
    clock = _CudaClock(device) if device.type == "cuda" else _CpuClock()
    times = {name: [] for name, _ in sides}
    with torch.no_grad():
        for _ in range(warmup):
            for _, fn in sides:
                fn()
        if device.type == "cuda":
            _synchronize(device)
        for i in range(trials):
            shift = i % len(sides)
            for name, fn in sides[shift:] + sides[:shift]:
                times[name].append(clock.measure(fn))
    return {name: summarize(ms) for name, ms in times.items()}


def time_pair(reference_fn, candidate_fn, device, trials, warmup=WARMUP):
    """Both zero-argument callables timed `trials` times each, interleaved
    (the order alternating, so neither always follows the other).
    Returns {"reference": stats, "candidate": stats, "speedup": ref/cand medians}."""
    stats = time_sides([("reference", reference_fn), ("candidate", candidate_fn)], device, trials, warmup)
    ref, cand = stats["reference"], stats["candidate"]
    speedup = ref["median_ms"] / cand["median_ms"] if cand["median_ms"] > 0 else None
    return {"reference": ref, "candidate": cand, "speedup": speedup}
