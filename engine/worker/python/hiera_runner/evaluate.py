"""The `evaluate` job for kind "pytorch": load, construct, verify, time.

The reference runs here; the candidate runs in a sandboxed process of its
own (isolation.py) and only exchanges tensors with this one (trials.py).
Failures of the candidate are results (verdict "failed"); failures of the
reference or of the parameters mean the job cannot run (JSON-RPC errors).
A candidate cannot break this process's CUDA context: its own process is
ended and the next candidate gets a fresh one.
"""

import time

import torch

from . import baselines as baselines_mod, ceilings, device as device_mod, exchange, inputs as inputs_mod
from . import isolation, loader, static_checks, trials as trials_mod, verify
from .jsonrpc import INVALID_PARAMS, RpcError

MIN_TRIALS = 5


class Job(object):
    """A loaded task: both modules, both models, the device. Shared by
    evaluate and profile."""

    def __init__(self, task, seed):
        if not isinstance(task, dict):
            raise RpcError(INVALID_PARAMS, "params.task must be an object")
        kind = task.get("kind", "pytorch")
        if kind != "pytorch":
            raise RpcError(INVALID_PARAMS, "the Python runner serves kind \"pytorch\" tasks, not %r" % (kind,))
        self.task = task
        self.seed = seed
        self.reference_source = _source(task, "reference")
        self.candidate_source = _source(task, "candidate", required=False)
        self.device = device_mod.select(task)
        self.reference_module = None
        self.reference = None

    def load_reference(self):
        try:
            self.reference_module = loader.load(self.reference_source, "reference")
        except loader.LoadError as e:
            raise RpcError(INVALID_PARAMS, "the reference could not be loaded: %s" % e.message)
        for name in ("Model", "get_inputs"):
            if not callable(self.reference_module.get(name)):
                raise RpcError(INVALID_PARAMS, "the reference defines no %s (KernelBench format: Model, get_inputs, "
                               "get_init_inputs)" % name)
        try:
            self.reference = self._construct(self.reference_module, "Model")
        except Exception as e:
            raise RpcError(INVALID_PARAMS, "the reference could not be constructed: %s"
                           % loader.describe_exception(e, "<reference>", "reference"))

    def _construct(self, loaded, class_name):
        # The same seed before each construction: parameters drawn in the same
        # order get the same values in the reference and the candidate.
        get_init = self.reference_module.get("get_init_inputs")
        torch.manual_seed(self.seed)
        init = list(get_init()) if callable(get_init) else []
        torch.manual_seed(self.seed)
        model = loaded.get(class_name)(*init)
        if hasattr(model, "to"):
            model = model.to(self.device)
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return model

    def second_inputs(self):
        expr = self.task.get("second_inputs")
        if expr in (None, ""):
            return None
        if not isinstance(expr, str):
            raise RpcError(INVALID_PARAMS, "task.second_inputs must be a Python expression (a string) or null")
        namespace = self.reference_module.module.__dict__

        def make():
            value = eval(expr, namespace)
            return value() if callable(value) else value
        return make

    def unload(self):
        if self.reference_module is not None:
            self.reference_module.unload()
        self.reference = None


def _source(task, role, required=True):
    part = task.get(role)
    src = part.get("source") if isinstance(part, dict) else None
    if not isinstance(src, str):
        if required:
            raise RpcError(INVALID_PARAMS, "params.task.%s.source must be a string" % role)
        return None
    return src


def _int_param(params, name, default, minimum):
    value = params.get(name, default)
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise RpcError(INVALID_PARAMS, "params.%s must be an integer" % name)
    return max(minimum, int(value))


def _failed(failures, trials=None, restart=False):
    result = {"verdict": "failed", "failures": failures, "trials": trials or []}
    if restart:
        result["restart"] = True
    return result


class Phases(object):
    """Milliseconds per phase of a job, for the report: where the time goes."""

    def __init__(self):
        self.ms = {}

    def __call__(self, name):
        return _Phase(self, name)


class _Phase(object):
    def __init__(self, phases, name):
        self.phases, self.name = phases, name

    def __enter__(self):
        self.t0 = time.perf_counter()

    def __exit__(self, *exc):
        self.phases.ms[self.name] = self.phases.ms.get(self.name, 0.0) + (time.perf_counter() - self.t0) * 1e3
        return False


class SecondShape(object):
    """The inputs of the second-shape trial: make() (called like get_inputs)
    and how they were chosen."""

    def __init__(self, make, how):
        self.make = make
        self.how = how


def second_shape(job, seed):
    """The task's second_inputs, else get_inputs() with the leading
    dimension halved (for the inputs that share it, else the first input,
    else every input), the first such choice the reference runs at; None
    where there is none."""
    given = job.second_inputs()
    if given is not None:
        return SecondShape(given, None)
    if job.task.get("second_shape") is False:
        return None
    get_inputs = job.reference_module.get("get_inputs")
    try:
        probe = inputs_mod.make(get_inputs, seed, "uniform", job.device)
    except Exception:
        return None
    dims = [(i, x.shape[0]) for i, x in enumerate(probe) if isinstance(x, torch.Tensor) and x.dim() >= 1
            and x.shape[0] >= 2]
    del probe
    if not dims:
        return None
    choices = []
    for sel in ([i for i, d in dims if d == dims[0][1]], [dims[0][0]], [i for i, _ in dims]):
        if sel not in choices:
            choices.append(sel)
    for sel in choices:
        def make(sel=tuple(sel)):
            raw = get_inputs()
            raw = list(raw) if isinstance(raw, (list, tuple)) else [raw]
            return [x[:max(1, x.shape[0] // 2)].clone() if i in sel else x for i, x in enumerate(raw)]
        try:
            args = inputs_mod.make(make, seed, "uniform", job.device)
            verify.call(job.reference, args, job.device, seed)
        except Exception:
            continue
        finally:
            args = None
        return SecondShape(make, "the leading dimension of input%s %s halved"
                           % ("s" if len(sel) > 1 else "", ", ".join(str(i) for i in sel)))
    return None


def init_inputs(job):
    get_init = job.reference_module.get("get_init_inputs")
    torch.manual_seed(job.seed)
    return list(get_init()) if callable(get_init) else []


def evaluate(params, delivered=False):
    """The evaluate job; `delivered` (deliver.py's own call) checks a delivered module, whose inlined
    hiera_runner.split_tf32 may switch TF32 for its 3xTF32 products."""
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params must be an object")
    trials = _int_param(params, "trials", MIN_TRIALS, MIN_TRIALS)
    timing_trials = _int_param(params, "timing_trials", 50, 1)
    seed = _int_param(params, "seed", 1234, -(1 << 62))
    job = Job(params.get("task"), seed)
    task = job.task
    numerics = task.get("numerics") or {}
    if not isinstance(numerics, dict):
        raise RpcError(INVALID_PARAMS, "task.numerics must be an object")
    allow = static_checks.normalise_allow(numerics.get("allow"))
    baseline_names = baselines_mod.parse(params)

    # Static checks first: what they reject is not run at all.
    if job.candidate_source is None:
        raise RpcError(INVALID_PARAMS, "params.task.candidate.source must be a string")
    findings = static_checks.check(job.candidate_source,
                                   allow | static_checks.native_precisions(job.reference_source), delivered)
    if findings:
        return _failed([{"check": "static", "message": f} for f in findings])

    phases = Phases()
    proc = None
    draws = None  # KernelBench's inputs, drawn on threads while the candidate is verified
    started = time.perf_counter()
    try:
        with phases("reference_load"):
            job.load_reference()
            init = init_inputs(job)
        proc = isolation.acquire(job.device)
        checks = trials_mod.Trials(job, proc, numerics, allow)
        try:
            with phases("candidate_start"):
                proc.wait_ready()
            with phases("calibration"):
                checks.calibrate(seed)  # before the candidate's code is in that process
            if params.get("kernelbench"):
                # After calibration, whose noise figure must not include these threads' load; they end
                # before timing for the same reason.
                draws = trials_mod.kernelbench_draws(job)
            with phases("candidate_load"):
                proc.load(job.candidate_source, init, seed)
        except isolation.CandidateFailure as e:
            return _with(_failed([{"check": e.check, "message": e.message}]), proc, phases)
        except exchange.ExchangeError as e:
            raise RpcError(INVALID_PARAMS, "the reference's get_init_inputs() cannot be handed over: %s" % e)
        with phases("second_shape"):
            second = second_shape(job, seed)
        result = verify.Verification()
        failed = _verification_step(lambda: checks.run(seed, trials, result), result, proc, phases)
        if failed is not None:  # the second shape's trial comes after timing
            return failed

        baselines = baselines_mod.Baselines(baseline_names)
        isolation.trusted_compile_cache()  # before the "compile" baseline compiles: never a cache a candidate writes
        try:
            with phases("baselines"):
                args = inputs_mod.make(job.reference_module.get("get_inputs"), seed, "uniform", job.device)
                baselines.prepare(job.reference, args, job.device, seed, numerics)
                del args
            if draws is not None:
                with phases("kernelbench_inputs"):  # what the draws still took once the rest was done
                    draws.wait()
            try:
                with phases("timing"):
                    measured = checks.time(seed, timing_trials, baselines)
                if baselines.names:
                    baselines.report(measured)
            except trials_mod.TrialFailure as e:
                return _with(_failed(e.failures, result.trials), proc, phases)
            except isolation.CandidateFailure as e:
                return _with(_failed([{"check": e.check, "message": "in timing: " + e.message}], result.trials),
                             proc, phases)
        finally:
            baselines.release()
        if second is not None:
            # After timing, so every candidate is timed having seen only the shape it is timed at, as the
            # torch.compile baseline has (trials.run_second says why).
            failed = _verification_step(lambda: checks.run_second(seed, trials, second, result), result, proc,
                                        phases)
            if failed is not None:
                return failed
        ref, cand = measured["reference"], measured["candidate"]
        measured["speedup"] = ref["median_ms"] / cand["median_ms"] if cand["median_ms"] > 0 else None

        args = inputs_mod.make(job.reference_module.get("get_inputs"), seed, "uniform", job.device)
        sol = _speed_of_light(params, task, job, args, allow)
        del args
        if sol is not None and measured["candidate"]["median_ms"] < sol:
            return _with(_failed([{"check": "speed_of_light", "message":
                                   "the candidate's median %.6g ms is below the speed-of-light bound %.6g ms "
                                   "(max of flops/peak and bytes/bandwidth): the measurement or the result is wrong"
                                   % (measured["candidate"]["median_ms"], sol)}], result.trials), proc, phases)
        out = {"verdict": "passed", "failures": [], "trials": result.trials, "timing": measured}
        if sol is not None:
            out["speed_of_light_ms"] = sol
        if params.get("kernelbench"):
            try:
                with phases("kernelbench"):
                    out["kernelbench"] = checks.kernelbench(draws)
            except isolation.CandidateFailure as e:
                out["kernelbench"] = {"passed": False, "trials": trials_mod.KERNELBENCH_TRIALS, "atol": 1e-4, "rtol": 1e-4, "max_abs_error": None,
                                      "message": "%s: %s" % (e.check, e.message)}
        return _with(out, proc, phases)
    finally:
        if draws is not None:
            draws.stop()
        if proc is not None:
            proc.close()
        job.unload()
        isolation.job_finished(job.device, time.perf_counter() - started)
        isolation.prepare_spare(job.device)


def _verification_step(step, result, proc, phases):
    """Runs step, which adds trials to `result`, in the verification phase.
    -> None when every trial so far passed, else the failed reply."""
    try:
        with phases("verification"):
            step()
    except trials_mod.TrialFailure as e:
        return _with(_failed(e.failures, e.trials), proc, phases)
    except isolation.CandidateFailure as e:
        return _with(_failed([{"check": e.check, "message": e.message}], result.trials or None), proc, phases)
    except verify.ReferenceError_ as e:
        raise RpcError(INVALID_PARAMS, str(e))
    if not result.passed:
        return _with(_failed(result.failures, result.trials), proc, phases)
    return None


def _with(result, proc, phases):
    """Adds the sandbox's protections and the phase times to a result:
    "first_call" is the candidate's first forward, inside "verification"
    (where a torch.compile'd candidate compiles; the timing's warm-up calls
    come after it)."""
    if proc is not None and proc.ready is not None:
        result["sandbox"] = proc.protections
    result["phases_ms"] = {k: round(v, 3) for k, v in phases.ms.items()}
    if proc is not None and proc.first_call_ms is not None:
        result["phases_ms"]["first_call"] = round(proc.first_call_ms, 3)
    return result


def _speed_of_light(params, task, job, args, allow):
    c = ceilings.find_ceilings(params, task)
    if c is None:
        return None
    flops = params.get("flops", task.get("flops"))
    bytes_ = params.get("bytes", task.get("bytes"))
    dtype = torch.float32
    try:
        with torch.no_grad():
            outs = verify.flatten(job.reference(*args))
        for o in outs:
            if isinstance(o, torch.Tensor) and o.is_floating_point():
                dtype = o.dtype
                break
    except Exception:
        pass
    return ceilings.speed_of_light_ms(flops, bytes_, c, dtype, allow)
