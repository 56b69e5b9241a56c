#!/usr/bin/env python3
"""Checks the sample problems on CPU and, with --estimate, estimates their eager time on an H200.

Check (default): every problem file (samples/<group>/NN_name.py, or the paths
given) is imported, its CPU_SIZES are applied to the module globals, the Model
is built from get_init_inputs() under torch.manual_seed(0), and forward runs
twice on the same CPU inputs under no_grad. The outputs must be tensors (or
tuples/lists of tensors), finite, bit-identical between the two calls, and the
inputs must be left unchanged. A third call on inputs redrawn like the worker's
"large" trials (normal x 1e3) must stay finite too.

Estimate (--estimate): each problem is loaded again at its FULL sizes, the
model is moved to the 'meta' device (no memory, no compute) and get_inputs()
runs with torch's factory functions redirected to 'meta'. One forward runs
under a TorchDispatchMode that sees every ATen op and charges it
max(bytes / HBM bandwidth, flops / peak) plus a launch cost. That is a
roofline ESTIMATE of PyTorch eager on an H200, not a measurement.

Runs with torch 1.13 (CPU) and torch 2.x. Exit code 0 when every file passes,
1 when any fails (each failure names its file), 2 on bad usage.
"""

import argparse
import contextlib
import importlib.util
import os
import sys
import time
import traceback
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_unflatten

sys.dont_write_bytecode = True  # importing the problems must not leave __pycache__ folders in samples/

SAMPLES_DIR = os.path.dirname(os.path.abspath(__file__))
CPU_FORWARD_LIMIT_S = 1.0  # the CI budget for one forward at CPU_SIZES
CPU_INPUT_ELEMENT_LIMIT = 1 << 20  # more than this at CPU_SIZES means the sizes were not applied
LARGE_SCALE = 1e3          # the worker's "large" input distribution (inputs.py)

# --- H200 model for the estimate (documented in README.md) -------------------
HBM_BYTES_PER_S = 4.8e12
MATMUL_FLOPS = {"fp32": 50e12, "half": 600e12}  # SGEMM without TF32; dense bf16/fp16 tensor cores, realistic
CONV_FLOPS = {"fp32": 40e12, "half": 300e12}    # cuDNN; fp32 convs may use TF32 by default but rarely reach it
CONV_FULL_WIDTH = 64   # output channels per group below which cuDNN under-fills its tiles
CONV_MIN_EFFICIENCY = 1.0 / 16
LAUNCH_S = 4e-6        # per kernel: launch and tail, what a chain of tiny ops is bound by

# ATen ops that launch nothing or only allocate.
_FREE_OPS = {
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "detach", "alias",
    "lift_fresh", "_unsafe_view", "view", "_reshape_alias", "reshape", "expand", "permute", "t",
    "transpose", "slice", "select", "unsqueeze", "squeeze", "as_strided", "split", "split_with_sizes",
    "chunk", "unbind", "unflatten", "flatten", "view_as", "expand_as", "narrow", "contiguous_noop",
    "_local_scalar_dense", "sym_size", "sym_stride", "sym_numel", "size", "stride", "is_same_size",
}
# Ops that hide several CUDA kernels behind one ATen call: (extra passes over their first input, extra kernels).
# logsumexp = amax, sub, exp, sum, log (read, read+write, read+write, read); group norm = stats pass + apply.
_EXTRA_WORK = {"logsumexp": (5.0, 4), "native_group_norm": (1.0, 1)}
_TRAINING_BATCH_NORMS = {"native_batch_norm", "_native_batch_norm_legit", "cudnn_batch_norm"}
_WRITE_ONLY_OPS = {"fill_", "zero_", "zeros", "ones", "full", "zeros_like", "ones_like", "full_like",
                   "scalar_tensor", "randn", "rand", "normal_", "uniform_"}


def discover(paths):
    """The problem files under the given files/directories, sorted."""
    files = []
    for p in paths:
        if os.path.isfile(p):
            files.append(os.path.abspath(p))
            continue
        if not os.path.isdir(p):
            raise FileNotFoundError("no such file or directory: %s" % p)
        for root, dirs, names in os.walk(p):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
            for n in sorted(names):
                if n.endswith(".py") and n[:2].isdigit() and n[2:3] == "_":
                    files.append(os.path.abspath(os.path.join(root, n)))
    return sorted(set(files))


def rel(path):
    try:
        shown = os.path.relpath(path, os.path.dirname(SAMPLES_DIR))
    except ValueError:
        return path
    return path if shown.startswith("..") else shown


class ProblemError(Exception):
    pass


def load(path):
    """A fresh module object for the file (never shared between calls)."""
    name = "hiera_sample_%d" % load.counter
    load.counter += 1
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for attr in ("Model", "get_inputs", "get_init_inputs"):
        if not callable(getattr(module, attr, None)):
            raise ProblemError("defines no %s (KernelBench format)" % attr)
    doc = (module.__doc__ or "").strip()
    if not doc or "\n" in doc:
        raise ProblemError("must start with a one-line docstring")
    return module


load.counter = 0


def apply_cpu_sizes(module):
    sizes = getattr(module, "CPU_SIZES", None)
    if not isinstance(sizes, dict) or not sizes:
        raise ProblemError("defines no CPU_SIZES dict")
    for name, value in sizes.items():
        if not hasattr(module, name):
            raise ProblemError("CPU_SIZES names %r, which is not a module-level constant" % name)
        if type(value) is not type(getattr(module, name)):
            raise ProblemError("CPU_SIZES[%r] is a %s but the constant is a %s"
                               % (name, type(value).__name__, type(getattr(module, name)).__name__))
        setattr(module, name, value)


def build(module):
    torch.manual_seed(0)
    init = list(module.get_init_inputs())
    torch.manual_seed(0)
    return module.Model(*init)


def make_inputs(module):
    torch.manual_seed(0)
    raw = module.get_inputs()
    if not isinstance(raw, (list, tuple)):
        raise ProblemError("get_inputs() must return a list, not %s" % type(raw).__name__)
    return list(raw)


def tensors_of(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)) and out and all(isinstance(o, torch.Tensor) for o in out):
        return list(out)
    raise ProblemError("forward must return a tensor or a tuple of tensors, not %s" % type(out).__name__)


def same_bits(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.is_floating_point():
        # Bits, not values: NaN != NaN, and -0.0 == 0.0 would hide a difference.
        view = {8: torch.int64, 4: torch.int32, 2: torch.int16}[a.element_size()]
        return torch.equal(a.contiguous().view(view), b.contiguous().view(view))
    return torch.equal(a, b)


def check(path):
    """Raises ProblemError on the first broken rule; returns the CPU forward seconds."""
    module = load(path)
    apply_cpu_sizes(module)
    model = build(module)
    inputs = make_inputs(module)
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor) and x.device.type != "cpu":
            raise ProblemError("input %d is on %s; get_inputs must create CPU tensors" % (i, x.device))
    elements = sum(x.numel() for x in inputs if isinstance(x, torch.Tensor))
    if elements > CPU_INPUT_ELEMENT_LIMIT:
        raise ProblemError("inputs at CPU_SIZES hold %d elements (limit %d): does get_inputs read the module "
                           "constants at call time?" % (elements, CPU_INPUT_ELEMENT_LIMIT))
    before = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    with torch.no_grad():
        start = time.perf_counter()
        first = tensors_of(model(*inputs))
        seconds = time.perf_counter() - start
        second = tensors_of(model(*inputs))
    for i, (x, b) in enumerate(zip(inputs, before)):
        if isinstance(x, torch.Tensor) and not same_bits(x, b):
            raise ProblemError("forward modified its input %d" % i)
    if len(first) != len(second):
        raise ProblemError("two calls returned different numbers of outputs")
    for i, (a, b) in enumerate(zip(first, second)):
        if a.is_floating_point() and not bool(torch.isfinite(a).all()):
            raise ProblemError("output %d has NaN or Inf values" % i)
        if not same_bits(a, b):
            raise ProblemError("output %d differs between two calls on the same inputs" % i)
    if seconds > CPU_FORWARD_LIMIT_S:
        raise ProblemError("forward at CPU_SIZES took %.2f s (limit %.1f s); make CPU_SIZES smaller"
                           % (seconds, CPU_FORWARD_LIMIT_S))
    torch.manual_seed(1)
    large = [torch.randn(x.shape).mul(LARGE_SCALE).to(x.dtype) if isinstance(x, torch.Tensor) and x.is_floating_point()
             else x for x in inputs]
    with torch.no_grad():
        for i, a in enumerate(tensors_of(model(*large))):
            if a.is_floating_point() and not bool(torch.isfinite(a).all()):
                raise ProblemError("output %d has NaN or Inf values for inputs of magnitude %g (the worker's "
                                   "\"large\" trials)" % (i, LARGE_SCALE))
    return seconds


# --- the estimate -------------------------------------------------------------

def footprint(t):
    """Elements actually stored: broadcast (stride 0) dimensions count once."""
    n = 1
    for size, stride in zip(t.shape, t.stride()):
        if stride != 0:
            n *= size
    return n * t.element_size()


def precision(t):
    return "half" if t.dtype in (torch.float16, torch.bfloat16) else "fp32"


def op_flops(name, args, out):
    """(flops, peak flops/s) for the compute-heavy ops; (0, None) for the rest."""
    if name in ("mm", "bmm", "addmm", "baddbmm", "addbmm", "matmul"):
        a = args[1] if name in ("addmm", "baddbmm", "addbmm") else args[0]
        k = a.shape[-1]
        outs = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
        return 2.0 * outs[0].numel() * k, MATMUL_FLOPS[precision(a)]
    if name in ("convolution", "_convolution", "cudnn_convolution", "conv2d", "conv3d"):
        x, w = args[0], args[1]
        transposed = bool(args[6]) if name in ("convolution", "_convolution") and len(args) > 6 else False
        groups = int(args[8]) if name in ("convolution", "_convolution") and len(args) > 8 else 1
        kvol = 1
        for s in w.shape[2:]:
            kvol *= s
        outs = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
        if transposed:
            # weight is [Cin, Cout/groups, k...]: every input point scatters into Cout/groups * kvol outputs.
            cout_per_group = w.shape[1]
            flops = 2.0 * x.numel() * cout_per_group * kvol
        else:
            cout_per_group = w.shape[0] // groups
            flops = 2.0 * outs[0].numel() * w.shape[1] * kvol
        efficiency = max(CONV_MIN_EFFICIENCY, min(1.0, cout_per_group / float(CONV_FULL_WIDTH)))
        return flops, CONV_FLOPS[precision(x)] * efficiency
    return 0.0, None


def _on_cpu(func, args, kwargs):
    """Runs func on zero-filled CPU tensors shaped like the meta ones; results back on meta."""
    def to_cpu(x):
        if isinstance(x, torch.Tensor) and x.device.type == "meta":
            return torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="cpu").zero_()
        return x

    def to_meta(x):
        if isinstance(x, torch.Tensor):
            return torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta")
        return x
    flat, spec = tree_flatten((args, kwargs))
    cpu_args, cpu_kwargs = tree_unflatten([to_cpu(x) for x in flat], spec)
    out = func(*cpu_args, **cpu_kwargs)
    flat_out, out_spec = tree_flatten(out)
    return tree_unflatten([to_meta(x) for x in flat_out], out_spec)


class CostCounter(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.kernels = 0
        self.bytes = 0.0
        self.flops = 0.0
        self.seconds = 0.0
        self.live = 0   # bytes of op results alive now, and the most alive at once (eager's peak temporaries)
        self.peak = 0

    def _allocated(self, t):
        nbytes = footprint(t)
        self.live += nbytes
        self.peak = max(self.peak, self.live)
        weakref.finalize(t, self._freed, nbytes)

    def _freed(self, nbytes):
        self.live -= nbytes

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        try:
            out = func(*args, **kwargs)
        except (NotImplementedError, RuntimeError):
            out = _on_cpu(func, args, kwargs)  # an op with no meta kernel in this torch: shapes from a CPU run
        name = func.overloadpacket.__name__
        schema = func._schema
        # A view/alias op (its result aliases an input without writing) launches nothing.
        is_view = any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)
        if name in _FREE_OPS or is_view:
            return out
        seen = set()
        moved = 0
        reads = [] if name in _WRITE_ONLY_OPS else tree_flatten((args, kwargs))[0]
        for t in reads:
            if isinstance(t, torch.Tensor) and id(t) not in seen:
                seen.add(id(t))
                moved += footprint(t)
        written = set()
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor) and id(t) not in written:
                written.add(id(t))
                moved += footprint(t)
                if id(t) not in seen:  # a new tensor, not an in-place result
                    self._allocated(t)
        extra_passes, extra_kernels = _EXTRA_WORK.get(name, (0.0, 0))
        if name in _TRAINING_BATCH_NORMS and len(args) > 5 and args[5] is True:
            extra_passes, extra_kernels = 1.0, 1  # batch statistics (instance norm): a reduction pass first
        if args and isinstance(args[0], torch.Tensor):
            moved += extra_passes * footprint(args[0])
        flops, peak = op_flops(name, args, out)
        t_mem = moved / HBM_BYTES_PER_S
        t_compute = flops / peak if peak else 0.0
        self.kernels += 1 + extra_kernels
        self.bytes += moved
        self.flops += flops
        self.seconds += max(t_mem, t_compute) + LAUNCH_S * (1 + extra_kernels)
        return out


_FACTORIES = ("randn", "rand", "randint", "zeros", "ones", "empty", "full", "arange", "linspace", "eye",
              "randn_like", "rand_like", "zeros_like", "ones_like", "empty_like", "full_like", "tensor")


@contextlib.contextmanager
def factories_on_meta():
    """Makes torch.randn(...) & co. create 'meta' tensors, so full-size inputs cost nothing."""
    saved = {}
    for name in _FACTORIES:
        fn = getattr(torch, name, None)
        if fn is None:
            continue
        saved[name] = fn

        def on_meta(*args, _fn=fn, _name=name, **kwargs):
            if _name.endswith("_like") or _name == "tensor":
                return _fn(*args, **kwargs).to("meta")
            kwargs["device"] = "meta"
            kwargs.pop("generator", None)
            return _fn(*args, **kwargs)
        setattr(torch, name, on_meta)
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(torch, name, fn)


def describe(t):
    dt = str(t.dtype).replace("torch.", "")
    return "%s[%s]" % (dt, ", ".join(str(s) for s in t.shape))


def estimate(path):
    """A dict with the H200 eager estimate of one problem at its full sizes."""
    module = load(path)
    model = build(module)  # parameters are small next to activations; built for real, then moved
    model = model.to("meta")
    with factories_on_meta():
        torch.manual_seed(0)
        inputs = list(module.get_inputs())
    inputs = [x.to("meta") if isinstance(x, torch.Tensor) else x for x in inputs]
    counter = CostCounter()
    with torch.no_grad(), counter:
        out = tensors_of(model(*inputs))
    param_bytes = sum(footprint(p) for p in list(model.parameters()) + list(model.buffers()))
    input_bytes = sum(footprint(x) for x in inputs if isinstance(x, torch.Tensor))
    return {
        "inputs": [describe(x) for x in inputs if isinstance(x, torch.Tensor)],
        "outputs": [describe(o) for o in out],
        "dtypes": sorted({str(x.dtype).replace("torch.", "") for x in inputs if isinstance(x, torch.Tensor)
                          and x.is_floating_point()}),
        "input_mib": input_bytes / 2.0 ** 20,
        "param_mib": param_bytes / 2.0 ** 20,
        # One eager forward: inputs, parameters and the most temporaries alive at once (outputs included).
        "peak_gib": (input_bytes + param_bytes + counter.peak) / 2.0 ** 30,
        "kernels": counter.kernels,
        "gbytes": counter.bytes / 1e9,
        "gflops": counter.flops / 1e9,
        "ms": counter.seconds * 1e3,
        "doc": (module.__doc__ or "").strip(),
    }


def print_markdown(rows):
    """One table per group (folder), as README.md shows them."""
    group = None
    for path, e in rows:
        folder = os.path.basename(os.path.dirname(path))
        if folder != group:
            group = folder
            print("\n### %s\n" % group)
            print("| file | what it is | inputs (full size) | dtype | peak GiB | est. eager ms |")
            print("|---|---|---|---|---:|---:|")
        shapes = ", ".join(e["inputs"]).replace("bfloat16", "bf16").replace("float32", "f32")
        print("| `%s` | %s | %s | %s | %.1f | %.2f |" % (os.path.basename(path), e["doc"].rstrip("."), shapes,
                                                        "/".join(e["dtypes"]) or "-", e["peak_gib"], e["ms"]))


def summary(exc):
    """The first line of an exception, short (torch's dispatcher errors run to pages)."""
    if isinstance(exc, SyntaxError):
        return "%s: %s (line %s)" % (type(exc).__name__, exc.msg, exc.lineno)
    lines = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines() or [type(exc).__name__]
    text = lines[0]
    return text if len(text) <= 300 else text[:297] + "..."


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", help="problem files or folders (default: every group in samples/)")
    parser.add_argument("--estimate", action="store_true",
                        help="also print an H200 eager-time ESTIMATE per problem at full sizes")
    parser.add_argument("--markdown", action="store_true", help="with --estimate: print the README table rows")
    args = parser.parse_args(argv)
    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    try:
        files = discover(args.paths or [SAMPLES_DIR])
    except FileNotFoundError as e:
        print("check_samples: %s" % e, file=sys.stderr)
        return 2
    if not files:
        print("check_samples: no problem files (NN_name.py) under %s" % " ".join(args.paths or [SAMPLES_DIR]),
              file=sys.stderr)
        return 2
    failures = []
    start = time.perf_counter()
    for path in files:
        try:
            seconds = check(path)
            print("ok    %-60s cpu forward %6.1f ms" % (rel(path), seconds * 1e3))
        except Exception as e:  # every failure is reported with its file, then the next file runs
            failures.append(path)
            detail = str(e) if isinstance(e, ProblemError) else summary(e)
            print("FAIL  %s: %s" % (rel(path), detail))
    if args.estimate:
        print("\nH200 eager-time ESTIMATE at full sizes (roofline model, not a measurement):")
        print("%-55s %8s %8s %9s %9s %9s %8s" % ("problem", "kernels", "GB", "GFLOP", "in MiB", "peak GiB", "est ms"))
        rows = []
        for path in files:
            if path in failures:
                continue
            try:
                e = estimate(path)
            except Exception as exc:
                failures.append(path)
                print("FAIL  %s: estimate: %s" % (rel(path), summary(exc)))
                continue
            flag = "" if 1.0 <= e["ms"] <= 15.0 else "  (outside 1-15 ms)"
            print("%-55s %8d %8.2f %9.1f %9.0f %9.2f %8.2f%s" % (rel(path), e["kernels"], e["gbytes"], e["gflops"],
                                                                 e["input_mib"], e["peak_gib"], e["ms"], flag))
            rows.append((path, e))
        if args.markdown:
            print_markdown(rows)
    elapsed = time.perf_counter() - start
    if failures:
        print("\ncheck_samples: %d of %d problem(s) FAILED: %s" % (len(set(failures)), len(files),
                                                                   ", ".join(rel(f) for f in sorted(set(failures)))),
              file=sys.stderr)
        return 1
    print("\ncheck_samples: all %d problems pass (%.1f s)" % (len(files), elapsed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
