"""Runs generated S3 replacements and compares them with torch.

    python3 run_replacements.py CASES.json WORK_DIR                  # CPU emulation
    python3 run_replacements.py CASES.json WORK_DIR --device cuda    # the real kernels on a GPU, timed

CASES.json: {"cases": [{"name", "inputs": {name: shape}, "module_tensors":
{"bn.weight": shape}, "setup": [python statements], "misaligned": [input
names], "reference": {output name: python expression}, "replacements":
[{"statements": [...], "kernels": {name: source}}]}]}.

Each kernel is compiled with the host compiler behind cuda_emulation.h; the
replacement's statements run exactly as the emitted forward runs them, with
`_kernel`, `_grid` (a 2-SM device, so grid-stride loops take several trips)
and `nvrtc_runtime` (arguments packed as the real one packs them: tensors as
pointers, ints as int32, floats as float32, int64 wrappers) standing in for
the GPU ones, on CPU tensors. Inputs named in "misaligned" are views 4 bytes
off a 16-byte boundary (the scalar kernels' path). Prints one line per output;
exits 0 when all match (allclose, NaN where torch has NaN), 1 when not, 77
when there is no host compiler.

With --device cuda the kernels are compiled by hiera_runner.nvrtc_runtime and
launched on CUDA tensors with the device's SM count (cases marked "gpu_only",
e.g. the 512^3 Laplacian, run only there), and each case is timed: the
median of the replacements' statements against the reference expressions
(CUDA events, 20 runs after a warm-up, L2 flushed before each), and for
cases with "bound_bytes" the share of the DRAM bound: at --peak-gbs (default
4800, an H200's specification) and at the copy bandwidth measured in the
same run (MEASURING.md's ceiling).
"""

import ctypes
import hashlib
import json
import os
import shutil
import subprocess
import sys
import types

import torch
import torch.nn.functional as F  # noqa: F401 (reference expressions use it)

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "..", "..", "..", "..", "..", "..", "..", "engine", "worker", "python")
sys.path.insert(0, RUNNER)
from hiera_runner import static_checks  # noqa: E402 (after the runner's path)


def static_findings(case, helpers):
    """The worker's static checks on the replacements as the emitted module holds
    them (helpers and definitions at module level, statements in forward): a
    generated candidate they reject never reaches the GPU."""
    definitions = dict.fromkeys(d for r in case["replacements"] for d in r.get("definitions", []))
    statements = [s for r in case["replacements"] for s in r["statements"]]
    module = "\n".join([helpers] + list(definitions) + ["def forward():"] + ["    " + s for s in statements]) + "\n"
    return static_checks.check(module)


class int64(object):
    def __init__(self, value):
        self.value = value


class uint64(int64):
    pass


def dense(t):
    """Contiguous in one of the layouts the kernels index: row-major, or channels_last
    (the kernels of s3_channels_last_conv_epilogue walk NHWC memory)."""
    if t.is_contiguous():
        return True
    if t.dim() == 4:
        return t.is_contiguous(memory_format=torch.channels_last)
    return t.dim() == 5 and t.is_contiguous(memory_format=torch.channels_last_3d)


class EmulatedKernel(object):
    def __init__(self, library, name):
        self.launch = getattr(library, "hiera_launch_" + name)
        self.launch.restype = None

    def __call__(self, grid, block, *args, shared_mem=0):
        def dims(v):
            v = tuple(v) if isinstance(v, tuple) else (v,)
            return v + (1,) * (3 - len(v))
        holders = []
        for a in args:
            if isinstance(a, torch.Tensor):
                if not dense(a):
                    raise TypeError("a tensor with gaps or overlaps in memory reached a kernel")
                holders.append(ctypes.c_void_p(a.data_ptr()))
            elif a is None:
                holders.append(ctypes.c_void_p(None))
            elif isinstance(a, uint64):
                holders.append(ctypes.c_uint64(a.value))
            elif isinstance(a, int64):
                holders.append(ctypes.c_int64(a.value))
            elif hasattr(a, "to_ctype"):  # hiera_runner.nvrtc_runtime's int64(), float64(), ...
                holders.append(a.to_ctype())
            elif isinstance(a, bool):
                holders.append(ctypes.c_bool(a))
            elif isinstance(a, int):
                if not -(1 << 31) <= a < (1 << 31):
                    raise OverflowError("%d does not fit in int32" % a)
                holders.append(ctypes.c_int32(a))
            elif isinstance(a, float):
                holders.append(ctypes.c_float(a))
            else:
                raise TypeError("cannot pass a %s to a kernel" % type(a).__name__)
        params = (ctypes.c_void_p * max(1, len(holders)))()
        for i, h in enumerate(holders):
            params[i] = ctypes.addressof(h)
        self.launch(*[ctypes.c_uint(int(d)) for d in dims(grid) + dims(block)], params)


class Compiler(object):
    def __init__(self, work):
        self.work = work
        self.cxx = shutil.which("c++") or shutil.which("g++")
        if not self.cxx:
            return
        runtime = self.build(open(os.path.join(HERE, "cuda_emulation_runtime.cpp")).read(), "runtime", ["-lpthread"])
        ctypes.CDLL(runtime, mode=ctypes.RTLD_GLOBAL)

    def build(self, text, stem, extra=()):
        key = hashlib.sha256((self.cxx + text).encode()).hexdigest()[:20]
        library = os.path.join(self.work, "%s_%s.so" % (stem, key))
        if not os.path.exists(library):
            source = library[:-3] + ".cpp"
            with open(source, "w") as f:
                f.write(text)
            # include/: the emulation's cuda_fp16.h and cuda_bf16.h, for kernels of half types.
            subprocess.run([self.cxx, "-std=c++20", "-O1", "-shared", "-fPIC", "-w", "-I", os.path.join(HERE, "include"),
                            "-o", library + ".tmp", source] + list(extra), check=True)
            os.replace(library + ".tmp", library)
        return library

    def kernel(self, source, name):
        text = '#include "%s"\n%s\nHIERA_EMULATED_LAUNCHER(%s)\n' % (os.path.join(HERE, "cuda_emulation.h"), source, name)
        return EmulatedKernel(ctypes.CDLL(self.build(text, name)), name)


def module_namespace(tensors):
    root = types.SimpleNamespace()
    for path, tensor in tensors.items():
        node = root
        parts = path.split(".")
        for part in parts[:-1]:
            if not hasattr(node, part):
                setattr(node, part, types.SimpleNamespace())
            node = getattr(node, part)
        setattr(node, parts[-1], tensor)
    return root


def misaligned(shape, device):
    numel = 1
    for d in shape:
        numel *= d
    return torch.randn(numel + 1, device=device)[1:].view(shape)


class CudaCompiler(object):
    """The real thing: NVRTC through hiera_runner.nvrtc_runtime."""

    def __init__(self):
        from hiera_runner import nvrtc_runtime
        self.runtime = nvrtc_runtime

    def kernel(self, source, name):
        return self.runtime.compile(source, name)


_flush = []


def median_ms(fn, runs=20):
    """Median of `runs` CUDA-event timings, L2 flushed before each (a write of twice its size, outside the events)."""
    if not _flush:
        l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 64 << 20)
        _flush.append(torch.empty(2 * l2 // 4, dtype=torch.float32, device="cuda"))
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        _flush[0].zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def copy_gbs():
    """The device-memory ceiling measured as MEASURING.md asks: a 1 GiB device-to-device copy, bytes read + written."""
    a = torch.randn(256 << 20, device="cuda")
    b = torch.empty_like(a)
    ms = median_ms(lambda: b.copy_(a))
    del a, b
    return 2 * (256 << 20) * 4 / (ms * 1e6)


def run_case(case, compiler, device="cpu", peak_gbs=4800.0, measured_gbs=None, helpers=""):
    torch.manual_seed(1)
    env = {}
    for name, shape in case["inputs"].items():
        env[name] = misaligned(shape, device) if name in case.get("misaligned", []) else torch.randn(shape, device=device)
    modules = {}
    for path, shape in case["module_tensors"].items():
        t = torch.randn(shape, device=device)
        modules[path] = t.abs() + 0.5 if path.endswith("running_var") else t
    for path, tensor in modules.items():
        if path in env:  # a get_attr node reads the same tensor
            env[path] = tensor
    self_ns = module_namespace(modules)
    scope = dict(env, torch=torch, F=F, self=self_ns)
    for statement in case.get("setup", []):
        exec(statement, scope)
    expected = {name: eval(expression, dict(scope)) for name, expression in case["reference"].items()}

    sources = {}
    for replacement in case["replacements"]:
        sources.update(replacement["kernels"])
    compiled = {}
    used = set()

    def _kernel(name):
        used.add(name)
        if name not in compiled:
            compiled[name] = compiler.kernel(sources[name], name)
        return compiled[name]

    # The CPU emulation pretends to be a 2-SM device so that grid-stride loops take several trips.
    sm_count = torch.cuda.get_device_properties(0).multi_processor_count if device == "cuda" else 2

    def _grid(n, block, blocks_per_sm=4):
        return max(1, min((n + block - 1) // block, sm_count * blocks_per_sm))

    runtime = compiler.runtime if device == "cuda" else types.SimpleNamespace(int64=int64, uint64=uint64)
    scope.update(_kernel=_kernel, _grid=_grid, nvrtc_runtime=runtime)
    exec(helpers, scope)  # the emitted module's _divider
    for definition in dict.fromkeys(d for r in case["replacements"] for d in r.get("definitions", [])):
        exec(definition, scope)  # module-level helpers of the replacements, once each
    statements = [s for replacement in case["replacements"] for s in replacement["statements"]]
    for statement in statements:
        exec(statement, scope)
    failures = 0
    for finding in static_findings(case, helpers):
        print("FAIL %s: the worker's static checks reject it: %s" % (case["name"], finding))
        failures += 1
    for name, want in expected.items():
        got = scope[name]
        if got.shape != want.shape:
            ok, detail = False, "shape %s, torch %s" % (tuple(got.shape), tuple(want.shape))
        elif got.dtype != want.dtype:
            ok, detail = False, "dtype %s, torch %s" % (got.dtype, want.dtype)
        else:
            tolerance = case.get("tolerance") or 0.0  # half and bfloat16 results: within their rounding
            rtol, atol = (tolerance, tolerance) if tolerance else (1e-4, 1e-5)
            got, want = got.float(), want.float()
            ok = torch.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
            detail = "max error %.3g" % (got - want).abs().nan_to_num().max().item()
        print("%-4s %s: %s %s (kernels %s)" % ("ok" if ok else "FAIL", case["name"], name, detail, ", ".join(sorted(used))))
        failures += not ok
    if device == "cuda":
        code = compile_statements(statements)
        ours = median_ms(lambda: exec(code, scope))
        theirs = median_ms(lambda: [eval(e, scope) for e in case["reference"].values()])
        line = "time %s: %.4f ms, torch %.4f ms (%.2fx)" % (case["name"], ours, theirs, theirs / ours)
        if case.get("bound_bytes"):
            bound = case["bound_bytes"] / (peak_gbs * 1e6)
            line += ", DRAM bound %.4f ms at %.0f GB/s: %.0f%%" % (bound, peak_gbs, 100.0 * bound / ours)
            if measured_gbs:
                copy_bound = case["bound_bytes"] / (measured_gbs * 1e6)
                line += "; at the measured copy's %.0f GB/s %.4f ms: %.0f%%" % (measured_gbs, copy_bound, 100.0 * copy_bound / ours)
        print(line)
    return failures


def compile_statements(statements):
    return compile("\n".join(statements), "<replacement>", "exec")


def main():
    import argparse
    parser = argparse.ArgumentParser(description="Runs generated S3 replacements against torch.")
    parser.add_argument("cases")
    parser.add_argument("work")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--peak-gbs", type=float, default=4800.0)
    args = parser.parse_args()
    with open(args.cases) as f:
        suite = json.load(f)
    cases, helpers = suite["cases"], suite.get("helpers", "")
    os.makedirs(args.work, exist_ok=True)
    if args.device == "cuda":
        compiler = CudaCompiler()
    else:
        compiler = Compiler(args.work)
        if not compiler.cxx:
            print("no host C++ compiler (c++ or g++) on PATH")
            return 77
        cases = [c for c in cases if not c.get("gpu_only")]
    measured = None
    if args.device == "cuda":
        measured = copy_gbs()
        print("copy %.0f GB/s (1 GiB device-to-device, read + write)" % measured)
    failures = sum(run_case(case, compiler, args.device, args.peak_gbs, measured, helpers) for case in cases)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
