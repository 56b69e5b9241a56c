"""Runs knowledge-proposer candidates against their references on the CPU:
builds Model and ModelNew with the same constructor arguments, copies the
reference's state_dict into ModelNew (its parameters must have the same
names and shapes), runs both on get_inputs() and compares the outputs with
torch.allclose; a half-type output that misses is judged again against the
reference run in float64 (below, half_arbitrated). Also runs the runner's static checks on each candidate.

    python3 compare_candidate.py [--emulate-kernels WORK_DIR] REFERENCE.py=CANDIDATE.py [...]

With --emulate-kernels the candidates' generated CUDA kernels run on the CPU:
nvrtc_runtime.compile builds them behind kernels/cpu_emulation/cuda_emulation.h
with the host compiler (in WORK_DIR, cached by content), and _kernel/_grid
see device 0 with 2 SMs (exits 77 without a host compiler); cuDNN's TF32 flag
is off, as the CPU reference computes. Float32 kernels only.

Prints one JSON line per pair, in order: {"candidate", "ok", "max_abs_diff",
"static_findings", "error"}; exits 0 when every candidate matches and passes
the static checks, else 1. One process for all pairs: torch imports once.
"""

import copy
import json
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "..", "engine", "worker", "python"))

import torch  # noqa: E402

from hiera_runner import static_checks  # noqa: E402


def load(path, name):
    with open(path) as f:
        source = f.read()
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    exec(compile(source, path, "exec"), module.__dict__)
    return module, source


def flatten(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flatten(v)]
    return [value]


def as_float64(value):
    if isinstance(value, torch.Tensor):
        return value.double() if value.is_floating_point() else value
    if isinstance(value, (tuple, list)):
        return type(value)(as_float64(v) for v in value)
    return value


def half_arbitrated(e, g, truth):
    """The worker's float64 arbiter rule, applied to bfloat16/float16: the candidate within
    the tolerance of the exact value, widened by twice the reference's own worst error.
    oneDNN rounds a convolution with its bias once on some CPUs, where cuDNN (and a candidate
    that adds the bias in its epilogue) rounds twice; which path runs depends on the CPU's ISA."""
    if truth is None or truth.shape != e.shape:
        return False
    t = truth.double()
    reference_error = (e.double() - t).abs().max().item()
    bound = 1e-2 + 1e-2 * t.abs() + 2.0 * reference_error
    return bool(((g.double() - t).abs() <= bound).all())


def float64_outputs(model, inputs):
    try:
        with torch.no_grad():
            return flatten(copy.deepcopy(model).double()(*[as_float64(t) for t in inputs]))
    except Exception:  # a reference that cannot run in float64 keeps the plain comparison
        return None


def compare(reference_path, candidate_path, index):
    reference, reference_source = load(reference_path, "hiera_reference_%d" % index)
    candidate, candidate_source = load(candidate_path, "hiera_candidate_%d" % index)
    # As the worker checks: the precisions the reference itself uses are no downcast.
    findings = static_checks.check(candidate_source, static_checks.native_precisions(reference_source))
    result = {"candidate": candidate_path, "ok": False, "max_abs_diff": None, "static_findings": findings,
              "error": None}
    try:
        if not issubclass(candidate.ModelNew, candidate.Model):
            raise AssertionError("ModelNew does not subclass Model")
        init = reference.get_init_inputs()
        torch.manual_seed(1234)
        model = reference.Model(*init)
        new = candidate.ModelNew(*init)
        new.load_state_dict(model.state_dict())
        torch.manual_seed(1234)
        inputs = reference.get_inputs()
        with torch.no_grad():
            expected = flatten(model(*[t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]))
            got = flatten(new(*[t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]))
        if len(expected) != len(got):
            raise AssertionError("%d outputs, expected %d" % (len(got), len(expected)))
        worst = 0.0
        truths = None
        for position, (e, g) in enumerate(zip(expected, got)):
            if not isinstance(e, torch.Tensor):
                if e != g:
                    raise AssertionError("output %r, expected %r" % (g, e))
                continue
            if e.shape != g.shape or e.dtype != g.dtype:
                raise AssertionError("output %s %s, expected %s %s" % (tuple(g.shape), g.dtype, tuple(e.shape), e.dtype))
            if e.numel():
                worst = max(worst, (e.double() - g.double()).abs().max().item())
            # Half types at the task's default tolerance (numerics.atol / rtol: 0.01), float32 tighter.
            loose = e.dtype in (torch.float16, torch.bfloat16)
            if not torch.allclose(e, g, rtol=1e-2 if loose else 1e-4, atol=1e-2 if loose else 1e-5):
                if loose and truths is None:
                    truths = float64_outputs(model, inputs) or []
                truth = truths[position] if loose and position < len(truths) else None
                if not (loose and half_arbitrated(e, g, truth)):
                    raise AssertionError("outputs differ by up to %g" % worst)
        result["max_abs_diff"] = worst
        result["ok"] = not result["static_findings"]
    except Exception as e:  # reported, not raised: the test prints the line
        result["error"] = "%s: %s" % (type(e).__name__, e)
    return result


def emulate_kernels(work):
    """nvrtc_runtime.compile -> the CPU emulation; torch.cuda's device queries answered for a 2-SM device."""
    sys.path.insert(0, os.path.join(HERE, "kernels", "cpu_emulation"))
    import run_replacements
    from hiera_runner import nvrtc_runtime
    os.makedirs(work, exist_ok=True)
    compiler = run_replacements.Compiler(work)
    if not compiler.cxx:
        print("no host C++ compiler (c++ or g++) on PATH")
        sys.exit(77)
    nvrtc_runtime.compile = lambda source, name, options=(): compiler.kernel(source, name)
    torch.cuda.current_device = lambda: 0
    torch.cuda.get_device_properties = lambda device: types.SimpleNamespace(multi_processor_count=2)
    # CPU torch computes float32 convolutions without TF32: the TF32 implicit-GEMM kernels take their
    # 3xTF32 form, as on a GPU whose cuDNN may not use TF32 (their TF32 form: the emulation unit test).
    torch.backends.cudnn.allow_tf32 = False


def main():
    args = sys.argv[1:]
    if args[:1] == ["--emulate-kernels"]:
        emulate_kernels(args[1])
        args = args[2:]
    ok = True
    for index, pair in enumerate(args):
        reference_path, candidate_path = pair.split("=", 1)
        result = compare(reference_path, candidate_path, index)
        ok = ok and result["ok"]
        print(json.dumps(result))
        sys.stdout.flush()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
