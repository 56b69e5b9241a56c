#!/usr/bin/env python3
"""CPU check of the generalisation suite (tests/generalisation/patterns and models).

For every problem file (a .py that defines `class Model(...Module...)`, the rule hiera bench
discovers problems by): import it, check Model / get_inputs / get_init_inputs, build the model
and its inputs on the `meta` device at the problem's full size (torch's tensor factories are
patched while the problem's code runs, so nothing full-size is allocated), run forward under
no_grad and check that it returns tensors. Along the way a dispatch mode counts what the
forward does (GEMM/conv FLOPs, bytes in and out of every op) and rejects random ops in the
forward (active dropout, rand*, normal_, ...): every problem must be deterministic. A problem
whose estimated work is tiny also runs for real on CPU, twice, and must be finite and
deterministic; at the suite's sizes that is rarely the case, and that is by design.

Problems that use an op the installed torch cannot run on `meta` (or that needs a newer torch)
are reported as skipped with the reason; the check fails if more than a quarter are skipped.
Exit status: 0 when every problem passes or skips (within the quarter), 1 otherwise, naming
each failing problem and its error.

    python3 tests/generalisation/check_suite.py [-v] [--filter REGEX]
"""
import argparse
import functools
import importlib.util
import math
import re
import sys
import time
import traceback
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
GROUPS = ("patterns", "models")
MODEL_CLASS = re.compile(r"(?:^|\n)class\s+Model\s*\([^)]*Module[^)]*\)\s*:")  # as problem_discovery.cpp
PATTERN_NAME = re.compile(r"^(attention|stencil2d|stencil3d|norm|reduction|gemm|elementwise)_\d\d_[a-z0-9_]+$")
ESTIMATE = re.compile(r"^# eager on H200, estimated: ~(\d+(?:\.\d+)?) ms \(.+\)$")
MAX_BYTES = 8e9          # inputs + weights of one problem
CHEAP_FLOPS = 2e8        # run for real on CPU only below these
CHEAP_BYTES = 1e8

FACTORIES = ("randn", "rand", "randint", "ones", "zeros", "empty", "full", "arange", "linspace",
             "eye", "tensor", "as_tensor")
RANDOM_OPS = {"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "normal", "normal_", "uniform_", "bernoulli",
              "bernoulli_", "multinomial", "exponential_", "geometric_", "cauchy_", "log_normal_",
              "random_", "native_dropout", "rrelu_with_noise"}


class Skip(Exception):
    pass


def _meta_factory(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs.get("device") is None:
            kwargs["device"] = "meta"
        return fn(*args, **kwargs)
    return wrapper


class MetaFactories:
    """torch.<factory>(...) without an explicit device creates a meta tensor while active."""

    def __enter__(self):
        self.saved = {name: getattr(torch, name) for name in FACTORIES if hasattr(torch, name)}
        for name, fn in self.saved.items():
            setattr(torch, name, _meta_factory(fn))
        return self

    def __exit__(self, *exc):
        for name, fn in self.saved.items():
            setattr(torch, name, fn)
        return False


try:
    from torch.utils._python_dispatch import TorchDispatchMode
except ImportError:  # a torch without dispatch modes: no counting, no random-op check
    TorchDispatchMode = None


def _numel(shape):
    return math.prod(int(s) for s in shape)


def _tensors(obj):
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _tensors(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _tensors(item)


if TorchDispatchMode is not None:
    class Counter(TorchDispatchMode):
        """Counts GEMM/conv FLOPs and op bytes; records random ops."""

        def __init__(self):
            super().__init__()
            self.flops = {"fp32": 0.0, "tc": 0.0, "conv": 0.0}
            self.bytes = 0.0
            self.random_ops = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            name = func.overloadpacket.__name__
            if name in RANDOM_OPS or (name == "dropout" and kwargs.get("train", args[2] if len(args) > 2 else False)):
                self.random_ops.add(name)
            ins = [t for t in _tensors(args) if t.dim() > 0]
            outs = list(_tensors(out))
            if name in ("mm", "addmm", "bmm", "baddbmm"):
                a, b = (args[1], args[2]) if name in ("addmm", "baddbmm") else (args[0], args[1])
                f = 2.0 * _numel(a.shape) * b.shape[-1]
                self.flops["tc" if a.dtype in (torch.float16, torch.bfloat16) else "fp32"] += f
            elif name in ("convolution", "cudnn_convolution", "_convolution"):
                w = args[1]
                self.flops["conv"] += 2.0 * _numel(outs[0].shape) * _numel(w.shape[1:])
            is_view = func._schema.returns and any(r.alias_info is not None and not r.alias_info.is_write
                                                   for r in func._schema.returns)
            if not is_view:
                self.bytes += sum(t.numel() * t.element_size() for t in ins + outs)
            return out

        def eager_ms(self):
            """A rough H200 eager estimate: each op through DRAM at 3.3 TB/s, GEMMs at 50 TFLOP/s
            (fp32, TF32 off), convs at 200 TFLOP/s (TF32 in cuDNN), bf16/fp16 at 600 TFLOP/s."""
            return 1e3 * (self.bytes / 3.3e12 + self.flops["fp32"] / 50e12 + self.flops["conv"] / 200e12
                          + self.flops["tc"] / 600e12)
else:
    Counter = None


def defines_model(path):
    return MODEL_CLASS.search(path.read_text()) is not None


def discover(filter_re):
    problems = []
    for group in GROUPS:
        for path in sorted((HERE / group).glob("*.py")):
            pid = f"{group}/{path.stem}"
            if defines_model(path) and (filter_re is None or filter_re.search(pid)):
                problems.append((pid, path))
    return problems


def load(pid, path):
    spec = importlib.util.spec_from_file_location("gen_" + re.sub(r"\W", "_", pid), path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except AttributeError as e:
        raise Skip(f"needs a newer torch at import ({e})")
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, name):
            raise AssertionError(f"no {name}")
    return module


def skip_reason(error):
    """An error that says the op is unsupported here (meta, or an older torch), not a bug."""
    text = f"{type(error).__name__}: {error}"
    if isinstance(error, NotImplementedError):
        return text
    if isinstance(error, AttributeError) and re.search(r"module 'torch(\.nn\.functional|\.\w+)*' has no attribute", text):
        return "needs a newer torch: " + text
    if re.search(r"\bmeta\b", text) and re.search(r"not (implemented|supported)|no kernel|Could not run", text):
        return text
    if "item()" in text or "data-dependent" in text or "Cannot copy out of meta" in text:
        return text
    return None


def check_static(pid, path):
    first = path.read_text().splitlines()[0] if path.read_text() else ""
    if not ESTIMATE.match(first):
        raise AssertionError("first line is not '# eager on H200, estimated: ~N ms (reasoning)'")
    if pid.startswith("patterns/") and not PATTERN_NAME.match(path.stem):
        raise AssertionError("a pattern file is named <family>_<nn>_<what>.py")
    return float(ESTIMATE.match(first).group(1))


def build_meta(module):
    with MetaFactories():
        init = module.get_init_inputs()
        model = module.Model(*init)
        inputs = module.get_inputs()
    model = model.to("meta")
    inputs = [t.to("meta") if isinstance(t, torch.Tensor) else t for t in inputs]
    return model, inputs


def check_model_state(model):
    for name, sub in model.named_modules():
        if isinstance(sub, torch.nn.modules.dropout._DropoutNd) and sub.training and sub.p > 0:
            raise AssertionError(f"dropout {name or 'model'} (p={sub.p}) is active: call self.eval() or use p=0.0")


def run_one(pid, path, verbose):
    stated = check_static(pid, path)
    module = load(pid, path)
    try:
        model, inputs = build_meta(module)
        check_model_state(model)
        weight_bytes = sum(t.numel() * t.element_size() for t in list(model.parameters()) + list(model.buffers()))
        input_bytes = sum(t.numel() * t.element_size() for t in inputs if isinstance(t, torch.Tensor))
        if weight_bytes + input_bytes > MAX_BYTES:
            raise AssertionError(f"inputs + weights are {(weight_bytes + input_bytes) / 1e9:.1f} GB (> 8 GB)")
        counter = Counter() if Counter is not None else None
        with torch.no_grad(), MetaFactories():
            if counter is not None:
                with counter:
                    out = model(*inputs)
            else:
                out = model(*inputs)
    except (AssertionError, Skip):
        raise
    except Exception as e:
        reason = skip_reason(e)
        if reason:
            raise Skip(reason)
        raise
    outs = list(_tensors(out))
    if not outs:
        raise AssertionError("forward returned no tensor")
    if counter is not None and counter.random_ops:
        raise AssertionError(f"random ops in forward: {sorted(counter.random_ops)}")
    shapes = ", ".join("x".join(str(s) for s in t.shape) + f" {str(t.dtype).replace('torch.', '')}" for t in outs)
    info = f"-> {shapes}; in {input_bytes / 1e6:.0f} MB, weights {weight_bytes / 1e6:.0f} MB"
    if counter is not None:
        flops = sum(counter.flops.values())
        info += f"; {flops / 1e9:.0f} GFLOP, {counter.bytes / 1e9:.1f} GB moved, ~{counter.eager_ms():.1f} ms (stated ~{stated:g})"
        if flops < CHEAP_FLOPS and counter.bytes < CHEAP_BYTES:
            info += "; " + run_real(module)
    return info


def run_real(module):
    results = []
    for _ in range(2):
        torch.manual_seed(0)
        model = module.Model(*module.get_init_inputs())
        torch.manual_seed(1)
        inputs = module.get_inputs()
        with torch.no_grad():
            results.append([t.float() for t in _tensors(model(*inputs))])
    for a, b in zip(*results):
        if not torch.isfinite(a).all():
            raise AssertionError("CPU run: non-finite output")
        if not torch.equal(a, b):
            raise AssertionError("CPU run: two runs differ")
    return "ran on CPU"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="print shapes and the counted work per problem")
    parser.add_argument("--filter", help="only problems whose group/name matches this regex")
    args = parser.parse_args()
    start = time.monotonic()
    torch.set_num_threads(2)
    problems = discover(re.compile(args.filter) if args.filter else None)
    if not problems:
        print("FAIL: no problems found under", HERE)
        return 1
    failed, skipped = [], []
    for pid, path in problems:
        t0 = time.monotonic()
        try:
            info = run_one(pid, path, args.verbose)
            status = "ok  "
        except Skip as e:
            skipped.append((pid, str(e)))
            status, info = "skip", str(e)
        except Exception as e:
            failed.append((pid, f"{type(e).__name__}: {e}"))
            status, info = "FAIL", f"{type(e).__name__}: {e}"
            if args.verbose:
                traceback.print_exc()
        if args.verbose or status != "ok  ":
            print(f"{status} {pid} ({time.monotonic() - t0:.2f} s) {info}")
    elapsed = time.monotonic() - start
    print(f"{len(problems)} problems: {len(problems) - len(failed) - len(skipped)} ok, {len(skipped)} skipped, "
          f"{len(failed)} failed ({elapsed:.1f} s, torch {torch.__version__})")
    for pid, err in failed:
        print(f"FAIL {pid}: {err}")
    if len(skipped) * 4 > len(problems):
        print(f"FAIL: {len(skipped)} of {len(problems)} problems skipped (more than a quarter)")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
