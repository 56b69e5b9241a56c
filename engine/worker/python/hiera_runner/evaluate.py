"""The `evaluate` job for kind "pytorch": load, construct, verify, time.

Failures of the candidate are results (verdict "failed"); failures of the
reference or of the parameters mean the job cannot run (JSON-RPC errors).
A candidate that leaves the CUDA context broken gets "restart": true in its
result: the runner replies, then exits with code 3 so the parent restarts it.
"""

import torch

from . import baselines as baselines_mod, ceilings, device as device_mod, inputs as inputs_mod, loader
from . import static_checks, timing, verify
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
        self.candidate_module = None
        self.reference = None
        self.candidate = None

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

    def load_candidate(self):
        """Raises loader.LoadError (compile/runtime) or verify.CandidateError."""
        if self.candidate_source is None:
            raise RpcError(INVALID_PARAMS, "params.task.candidate.source is missing")
        self.candidate_module = loader.load(self.candidate_source, "candidate")
        if not callable(self.candidate_module.get("ModelNew")):
            raise loader.LoadError("compile", "the candidate defines no ModelNew")
        try:
            self.candidate = self._construct(self.candidate_module, "ModelNew")
        except verify._CANDIDATE_EXCEPTIONS as e:
            raise verify.CandidateError(e, "construction")

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
        for m in (self.reference_module, self.candidate_module):
            if m is not None:
                m.unload()
        self.reference = self.candidate = None


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


def _runtime_failure(exc, where, job, trials=None):
    """A candidate exception -> a failed result; restart when CUDA broke."""
    message = loader.describe_exception(exc, "<candidate>", "candidate")
    if where != "forward":
        message = "in %s: %s" % (where, message)
    restart = job.device.type == "cuda" and device_mod.context_broken(job.device)
    if restart:
        message += " (the CUDA context is broken; the runner restarts)"
    return _failed([{"check": "runtime", "message": message}], trials, restart)


def evaluate(params):
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

    # Static checks first: a candidate that would tamper with timers or the
    # process is not run at all.
    if job.candidate_source is None:
        raise RpcError(INVALID_PARAMS, "params.task.candidate.source must be a string")
    findings = static_checks.check(job.candidate_source,
                                   allow | static_checks.native_precisions(job.reference_source))
    if findings:
        return _failed([{"check": "static", "message": f} for f in findings])

    try:
        job.load_reference()
        try:
            job.load_candidate()
        except loader.LoadError as e:
            if job.device.type == "cuda" and device_mod.context_broken(job.device):
                return _failed([{"check": e.check, "message": e.message + " (the CUDA context is broken; the runner restarts)"}],
                               restart=True)
            return _failed([{"check": e.check, "message": e.message}])
        except verify.CandidateError as e:
            return _runtime_failure(e.exc, e.where, job)

        get_inputs = job.reference_module.get("get_inputs")
        poison = verify.poison_for(job.device)
        try:
            result = verify.run_trials(job.reference, job.candidate, get_inputs, job.device, seed, trials,
                                       numerics, allow, second_inputs=job.second_inputs(), poison=poison,
                                       source=job.reference_source)
        except verify.CandidateError as e:
            return _runtime_failure(e.exc, e.where, job)
        except verify.ReferenceError_ as e:
            raise RpcError(INVALID_PARAMS, str(e))
        if not result.passed:
            return _failed(result.failures, result.trials)

        # Timing, on the first trial's inputs, the same for every side.
        args = inputs_mod.make(get_inputs, seed, inputs_mod.distribution_for(0), job.device, job.reference_source)
        ref_args, cand_args = inputs_mod.clone(args), args
        baselines = baselines_mod.Baselines(baseline_names)
        try:
            baselines.prepare(job.reference, args, job.device, seed, numerics)
            try:
                measured = _time(job, ref_args, cand_args, baselines, timing_trials)
            except verify._CANDIDATE_EXCEPTIONS as e:
                return _runtime_failure(e, "timing", job, result.trials)
        finally:
            baselines.release()

        sol = _speed_of_light(params, task, job, ref_args, allow)
        if sol is not None and measured["candidate"]["median_ms"] < sol:
            return _failed([{"check": "speed_of_light", "message":
                             "the candidate's median %.6g ms is below the speed-of-light bound %.6g ms "
                             "(max of flops/peak and bytes/bandwidth): the measurement or the result is wrong"
                             % (measured["candidate"]["median_ms"], sol)}], result.trials)
        out = {"verdict": "passed", "failures": [], "trials": result.trials, "timing": measured}
        if sol is not None:
            out["speed_of_light_ms"] = sol
        return out
    finally:
        job.unload()


def _time(job, ref_args, cand_args, baselines, trials):
    """The timing result: reference, candidate and speedup, and with
    baselines asked for, their stats (or why they have none)."""
    sides = [("reference", lambda: job.reference(*ref_args)), ("candidate", lambda: job.candidate(*cand_args))]
    measured = timing.time_sides(sides + baselines.sides, job.device, trials)
    ref, cand = measured["reference"], measured["candidate"]
    measured["speedup"] = ref["median_ms"] / cand["median_ms"] if cand["median_ms"] > 0 else None
    if baselines.names:
        baselines.report(measured)
    return measured


def _speed_of_light(params, task, job, args, allow):
    c = ceilings.find_ceilings(params, task)
    if c is None:
        return None
    flops = params.get("flops", task.get("flops"))
    bytes_ = params.get("bytes", task.get("bytes"))
    dtype = torch.float32
    try:
        with torch.no_grad():
            outs = verify.flatten(job.reference(*inputs_mod.clone(args)))
        for o in outs:
            if isinstance(o, torch.Tensor) and o.is_floating_point():
                dtype = o.dtype
                break
    except Exception:
        pass
    return ceilings.speed_of_light_ms(flops, bytes_, c, dtype, allow)
