"""Baselines timed beside the reference and the candidate in `evaluate`
(params "baselines": ["compile"]), so a speedup can be read against what the
user would get without hiera.

"compile": torch.compile(reference) in its default mode. It is compiled and
warmed up before the timing loop (compilation is not timed), and its output
must match the reference's within the task's tolerance, or it is reported in
baseline_errors with the reason instead of being timed.
"""

import torch

from . import inputs as inputs_mod, verify
from .jsonrpc import INVALID_PARAMS, RpcError

WARMUP = 3
_MAX_REASON = 600


class BaselineError(Exception):
    """The baseline cannot be timed; the message is the reason reported."""


def parse(params):
    """params.baselines -> a list of known names, each once; bad input is refused."""
    value = params.get("baselines")
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RpcError(INVALID_PARAMS, "params.baselines must be a list of names such as [\"compile\"]")
    names = []
    for name in value:
        if name not in KNOWN:
            raise RpcError(INVALID_PARAMS, "params.baselines: unknown baseline %r (known: %s)"
                           % (name, ", ".join(KNOWN)))
        if name not in names:
            names.append(name)
    return names


class Guarded(object):
    """A baseline's timed call: an exception inside the timing loop is kept
    (and the calls after it skipped) instead of being taken for the candidate's."""

    def __init__(self, fn):
        self.fn = fn
        self.error = None

    def __call__(self, *args):
        if self.error is None:
            try:
                return self.fn(*args)
            except Exception as e:
                self.error = e
        return None


class Baselines(object):
    """The baselines a job asked for: those ready to time, and why the
    others are not."""

    def __init__(self, names):
        self.names = list(names)
        self.sides = []    # [(name, Guarded)] to time
        self.errors = {}   # name -> reason
        self.compiled = False

    def prepare(self, reference, args, device, seed, numerics):
        """Builds and checks each baseline for the reference on args."""
        for name in self.names:
            self.compiled = self.compiled or (name == "compile" and hasattr(torch, "compile"))
            try:
                fn = _BUILDERS[name](reference, args, device, seed, numerics)
                self.sides.append((name, Guarded(fn)))
            except BaselineError as e:
                self.errors[name] = str(e)

    def sides_for(self, args):
        """[(name, zero-argument callable)] running each baseline on args
        (fresh inputs each timing round)."""
        return [(name, lambda g=guarded: g(args)) for name, guarded in self.sides]

    def release(self):
        """Drops compiled code: the runner lives on, each job's reference is new."""
        self.sides = []
        if self.compiled:
            dynamo = getattr(torch, "_dynamo", None)
            if dynamo is not None and hasattr(dynamo, "reset"):
                dynamo.reset()

    def report(self, into):
        """Adds "baselines" (stats) and "baseline_errors" to a timing dict whose
        sides were timed (the timing's stats are read from into[name])."""
        stats, errors = {}, dict(self.errors)
        for name, guarded in self.sides:
            timed = into.pop(name)
            if guarded.error is not None:
                errors[name] = _reason("%s raised during timing" % name, guarded.error)
            else:
                stats[name] = timed
        into["baselines"] = stats
        into["baseline_errors"] = errors


def _reason(prefix, exc):
    lines = str(exc).strip().splitlines()
    text = "%s: %s: %s" % (prefix, type(exc).__name__, lines[0] if lines else "")
    return text if len(text) <= _MAX_REASON else text[:_MAX_REASON - 3] + "..."


def _compile(reference, args, device, seed, numerics):
    compile_fn = getattr(torch, "compile", None)
    if compile_fn is None:
        raise BaselineError("torch.compile is not available in torch %s (it needs torch 2.0 or newer)"
                            % torch.__version__)
    own_args = inputs_mod.clone(args)
    try:
        compiled = compile_fn(reference)
        for _ in range(WARMUP):  # the first call compiles
            verify.call(compiled, own_args, device, seed)
        out = verify.flatten(verify.call(compiled, inputs_mod.clone(args), device, seed))
    except Exception as e:
        raise BaselineError(_reason("torch.compile failed", e))
    expected = verify.flatten(verify.call(reference, inputs_mod.clone(args), device, seed))
    problems = verify.compare(expected, out, verify.Tolerance(numerics), False, verify.Stats())
    if problems:
        raise BaselineError("torch.compile's output differs from the reference: %s" % problems[0][1])
    def run(args=None):
        with torch.no_grad():
            return compiled(*(own_args if args is None else args))
    return run


_BUILDERS = {"compile": _compile}
KNOWN = tuple(_BUILDERS)
