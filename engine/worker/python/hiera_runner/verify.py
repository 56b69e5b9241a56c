"""The verification rules of JOB_PROTOCOL.md, for PyTorch modules.

Per trial: fresh inputs (own seed, cycling distributions); the reference runs
twice on copies (its outputs, and whether it is itself deterministic); the
candidate runs on poisoned memory (CUDA) and is compared with the reference
(count, shape, dtype, NaN/Inf, unwritten output, values); its inputs are
compared with a copy (input_mutation); it runs again on a fresh copy of the
same inputs and must agree bit for bit (determinism). Each rule reports under
its own `check` name, once (the first trial that broke it).
"""

import copy
import math

import torch

from . import inputs as inputs_mod

DEFAULT_TOLERANCE = {torch.float16: 1e-2, torch.bfloat16: 1e-2}  # others: 1e-4
POISON_WORD = 0x7FFF7FFF  # NaN read as float16/bfloat16/float32/float64; a huge int
_POISON_INT = {torch.int32: 0x7FFF7FFF, torch.int64: 0x7FFF7FFF7FFF7FFF, torch.int16: 0x7FFF}


# What a candidate may raise: SystemExit (sys.exit()) and GeneratorExit too;
# only KeyboardInterrupt (the runner being stopped) passes through.
_CANDIDATE_EXCEPTIONS = (Exception, SystemExit, GeneratorExit)


class CandidateError(Exception):
    """The candidate raised while running: reported as `runtime`."""

    def __init__(self, exc, where):
        Exception.__init__(self, str(exc))
        self.exc = exc
        self.where = where  # "construction", "forward", ...


class ReferenceError_(Exception):
    """The reference itself failed: the job cannot run (a JSON-RPC error)."""


# --- memory poisoning -----------------------------------------------------

class AllocatorPoison(object):
    """Fills the CUDA caching allocator's free memory with the poison word, so
    an output the candidate allocates and never writes reads back as NaN (or
    0x7fff7fff for ints). Best effort: empty_cache() first releases cached free
    segments, then blocks from large to small soak up the free space (the
    allocator picks the best fit, so smaller fragments go to smaller blocks)."""

    _SMALL = ((1 << 20, 8), (256 << 10, 8), (64 << 10, 16), (16 << 10, 32), (4 << 10, 64), (512, 128))

    def __init__(self, device, large_bytes=64 << 20):
        self.device = device
        self.large_bytes = large_bytes
        self.active = True

    def fit(self, nbytes):
        """Grows the large block to cover outputs of nbytes (several times over)."""
        self.large_bytes = max(self.large_bytes, 4 * int(nbytes))

    def __call__(self):
        torch.cuda.empty_cache()
        free, _ = torch.cuda.mem_get_info(self.device)
        large = min(self.large_bytes, max(0, free // 2))
        blocks = []
        if large >= 4:
            blocks.append(torch.empty(large // 4, dtype=torch.int32, device=self.device))
        for size, count in self._SMALL:
            for _ in range(count):
                blocks.append(torch.empty(size // 4, dtype=torch.int32, device=self.device))
        for b in blocks:
            b.fill_(POISON_WORD)
        del blocks  # back to the cache, poisoned


class NoPoison(object):
    """CPU: allocations come from malloc, nothing can be pre-filled."""
    active = False

    def fit(self, nbytes):
        pass

    def __call__(self):
        pass


class FillPass(object):
    """A context in which torch.empty* fills new tensors with NaN (ints: their
    maximum): torch's deterministic mode with fill_uninitialized_memory
    (torch >= 2.1). It covers what the allocator poison cannot: memory the
    candidate frees and reallocates within its own call, and the CPU. Used for
    one extra call per trial whose outputs are checked for `unwritten_output`
    alone (deterministic mode may pick other algorithms, so values and bits
    are judged on the ordinary calls)."""

    @staticmethod
    def available():
        try:
            import torch.utils.deterministic as det
        except ImportError:
            return False
        return hasattr(det, "fill_uninitialized_memory") and \
            hasattr(torch, "is_deterministic_algorithms_warn_only_enabled")

    def __enter__(self):
        import warnings
        det = torch.utils.deterministic
        self._saved = (torch.are_deterministic_algorithms_enabled(),
                       torch.is_deterministic_algorithms_warn_only_enabled(), det.fill_uninitialized_memory)
        self._warnings = warnings.catch_warnings()
        self._warnings.__enter__()
        warnings.simplefilter("ignore")  # "this operation is not deterministic" warnings: not our point here
        torch.use_deterministic_algorithms(True, warn_only=True)
        det.fill_uninitialized_memory = True
        return self

    def __exit__(self, *exc):
        enabled, warn_only, fill = self._saved
        torch.use_deterministic_algorithms(enabled, warn_only=warn_only)
        torch.utils.deterministic.fill_uninitialized_memory = fill
        self._warnings.__exit__(*exc)
        return False


def unwritten_after_fill(ref, ordinary, filled):
    """[(check, message)] for outputs of a FillPass call holding fill values
    where neither the reference nor the ordinary call has them (values that
    depend on the fill are memory the candidate never wrote)."""
    problems = []
    for i, (r, a, c) in enumerate(zip(ref, ordinary, filled)):
        if not all(isinstance(t, torch.Tensor) and t.shape == r.shape and t.dtype == r.dtype for t in (r, a, c)) \
                or r.numel() == 0:
            continue
        a, c = a.detach().to(r.device), c.detach().to(r.device)
        if r.is_floating_point():
            mask = torch.isnan(c) & ~torch.isnan(r) & ~torch.isnan(a)
        elif r.dtype != torch.bool and not r.is_complex():
            top = torch.iinfo(r.dtype).max
            mask = (c == top) & (r != top) & (a != top)
        else:
            continue
        n = int(mask.sum())
        if n:
            first = int(mask.reshape(-1).nonzero()[0])
            problems.append(("unwritten_output", "output %d: %d of %d elements were never written (with new tensors "
                             "filled with NaN/max, they reach the output; first at index %s)"
                             % (i, n, r.numel(), _index(first, list(r.shape)))))
    return problems


def poison_for(device, output_bytes=0):
    if device.type == "cuda":
        return AllocatorPoison(device, large_bytes=max(64 << 20, 4 * output_bytes))
    return NoPoison()


# --- outputs ----------------------------------------------------------------

def flatten(out):
    """A module's return value -> list of leaves (tensors, numbers, None)."""
    if isinstance(out, (list, tuple)):
        leaves = []
        for x in out:
            leaves.extend(flatten(x))
        return leaves
    if isinstance(out, dict):
        leaves = []
        for k in sorted(out, key=str):
            leaves.extend(flatten(out[k]))
        return leaves
    return [out]


def nbytes(leaves):
    return sum(t.numel() * t.element_size() for t in leaves if isinstance(t, torch.Tensor))


def _as_tensor(x):
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, (bool, int, float)):
        return torch.tensor(x)
    return None


def _bits(t):
    """An integer view of t's bytes, for bit-for-bit comparison."""
    t = t.detach()
    if t.is_complex():
        t = torch.view_as_real(t)
    t = t.contiguous()
    size = t.element_size()
    if t.dtype == torch.bool:
        return t.to(torch.uint8)
    return t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[size])


def bitwise_equal(a, b):
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return bool(torch.equal(_bits(a), _bits(b.to(a.device))))
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return False
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def outputs_bitwise_equal(a, b):
    return len(a) == len(b) and all(bitwise_equal(x, y) for x, y in zip(a, b))


def _index(flat, shape):
    idx = []
    for dim in reversed(shape):
        idx.append(flat % dim if dim else 0)
        flat //= max(dim, 1)
    return "(%s)" % ", ".join(str(i) for i in reversed(idx)) if shape else "()"


def _fmt(v):
    return "%.6g" % v


class Tolerance(object):
    def __init__(self, numerics):
        numerics = numerics or {}
        self.atol = numerics.get("atol")
        self.rtol = numerics.get("rtol")

    def for_dtype(self, dtype):
        default = DEFAULT_TOLERANCE.get(dtype, 1e-4)
        atol = default if self.atol is None else float(self.atol)
        rtol = default if self.rtol is None else float(self.rtol)
        return atol, rtol


class Stats(object):
    def __init__(self):
        self.max_abs = 0.0
        self.max_rel = 0.0
        self.mismatches = 0
        self.arbitrated = 0  # elements a float64 run of the reference accepted (arbitrate_values)

    def as_dict(self):
        out = {"max_abs_error": self.max_abs, "max_rel_error": self.max_rel, "mismatches": self.mismatches}
        if self.arbitrated:
            out["float64_arbitrated"] = self.arbitrated
        return out


def compare(ref, cand, tolerance, poisoned, stats, label="output"):
    """Compares two output lists; returns [(check, message)] and updates stats."""
    problems = []
    if len(ref) != len(cand):
        return [("count", "the candidate returns %d output(s), the reference %d" % (len(cand), len(ref)))]
    for i, (r, c) in enumerate(zip(ref, cand)):
        problems.extend(compare_one(r, c, tolerance, poisoned, stats, "%s %d" % (label, i)))
    return problems


def compare_one(r, c, tolerance, poisoned, stats, name):
    if r is None or c is None:
        if r is None and c is None:
            return []
        return [("dtype", "%s: the candidate returns %s, the reference %s" % (name, _kind(c), _kind(r)))]
    rt, ct = _as_tensor(r), _as_tensor(c)
    if rt is None or ct is None:
        if r == c:
            return []
        return [("values", "%s: the candidate returns %r, the reference %r" % (name, c, r))]
    if isinstance(r, torch.Tensor) != isinstance(c, torch.Tensor):
        return [("dtype", "%s: the candidate returns %s, the reference %s" % (name, _kind(c), _kind(r)))]
    if tuple(rt.shape) != tuple(ct.shape):
        return [("shape", "%s has shape %s, the reference %s" % (name, list(ct.shape), list(rt.shape)))]
    if rt.dtype != ct.dtype:
        return [("dtype", "%s has dtype %s, the reference %s" % (name, _dtype(ct.dtype), _dtype(rt.dtype)))]
    rt = rt.detach()
    ct = ct.detach().to(rt.device)
    if rt.numel() == 0:
        return []
    if not (rt.is_floating_point() or rt.is_complex()):
        return _compare_exact(rt, ct, poisoned, stats, name)
    return _compare_float(rt, ct, tolerance, poisoned, stats, name)


def _kind(x):
    if x is None:
        return "None"
    if isinstance(x, torch.Tensor):
        return "a tensor"
    return "a %s" % type(x).__name__


def _dtype(d):
    return str(d).replace("torch.", "")


def _compare_exact(r, c, poisoned, stats, name):
    problems = []
    bad = c != r
    poison = _POISON_INT.get(r.dtype)
    if poisoned and poison is not None:
        unwritten = bad & (c == poison)
        n = int(unwritten.sum())
        if n:
            first = int(unwritten.reshape(-1).nonzero()[0])
            problems.append(("unwritten_output", "%s: %d of %d elements were never written (still the poison 0x%x; first at index %s)"
                             % (name, n, r.numel(), poison, _index(first, list(r.shape)))))
            bad = bad & ~unwritten
            stats.mismatches += n
    n = int(bad.sum())
    if n:
        first = int(bad.reshape(-1).nonzero()[0])
        problems.append(("values", "%s: %d of %d elements differ (exact match required for %s; first at index %s: candidate %s, reference %s)"
                         % (name, n, r.numel(), _dtype(r.dtype), _index(first, list(r.shape)),
                            c.reshape(-1)[first].item(), r.reshape(-1)[first].item())))
        stats.mismatches += n
        diff = (c.to(torch.float64) - r.to(torch.float64)).abs()
        stats.max_abs = max(stats.max_abs, float(diff.max()))
    return problems


def _compare_float(r, c, tolerance, poisoned, stats, name):
    atol, rtol = tolerance.for_dtype(r.dtype)
    shape = list(r.shape)
    if r.is_complex():
        r, c = torch.view_as_real(r), torch.view_as_real(c)
        shape = list(r.shape)
    r64 = r.to(torch.float64).reshape(-1)
    c64 = c.to(torch.float64).reshape(-1)
    problems = []
    r_nan, c_nan = torch.isnan(r64), torch.isnan(c64)
    r_fin, c_fin = torch.isfinite(r64), torch.isfinite(c64)
    accounted = torch.zeros_like(r_nan)
    if poisoned:
        unwritten = c_nan & ~r_nan
        n = int(unwritten.sum())
        if n:
            first = int(unwritten.nonzero()[0])
            problems.append(("unwritten_output", "%s: %d of %d elements were never written (NaN poison left where the reference has none; first at index %s)"
                             % (name, n, r64.numel(), _index(first, shape))))
            accounted |= unwritten
            stats.mismatches += n
    # Candidate NaN/Inf where the reference has something else, or the reverse.
    same_nonfinite = (r_nan & c_nan) | (~r_fin & ~r_nan & (c64 == r64))
    bad_c = ~c_fin & ~same_nonfinite & ~accounted
    bad_r = ~r_fin & ~same_nonfinite & ~accounted & c_fin
    n_c, n_r = int(bad_c.sum()), int(bad_r.sum())
    if n_c:
        first = int(bad_c.nonzero()[0])
        problems.append(("nan_inf", "%s: %d of %d elements are NaN/Inf where the reference is not (first at index %s: candidate %s, reference %s)"
                         % (name, n_c, r64.numel(), _index(first, shape), _fmt(c64[first].item()), _fmt(r64[first].item()))))
    if n_r:
        first = int(bad_r.nonzero()[0])
        problems.append(("nan_inf", "%s: the reference has NaN/Inf at %d element(s) where the candidate has finite values (first at index %s: candidate %s, reference %s)"
                         % (name, n_r, _index(first, shape), _fmt(c64[first].item()), _fmt(r64[first].item()))))
    stats.mismatches += n_c + n_r
    both = r_fin & c_fin
    if bool(both.any()):
        diff = torch.where(both, (c64 - r64).abs(), torch.zeros_like(r64))
        bound = atol + rtol * r64.abs()
        bad = both & (diff > bound)
        stats.max_abs = max(stats.max_abs, float(diff.max()))
        denom = r64.abs()
        rel = torch.where(both & (denom > 0), diff / torch.where(denom > 0, denom, torch.ones_like(denom)), torch.zeros_like(diff))
        stats.max_rel = max(stats.max_rel, float(rel.max()))
        n = int(bad.sum())
        if n:
            worst = int(torch.where(bad, diff - bound, torch.full_like(diff, -1.0)).argmax())
            problems.append(("values", "%s: %d of %d elements differ beyond atol %s + rtol %s*|ref| (worst at index %s: candidate %s, reference %s, abs error %s)"
                             % (name, n, r64.numel(), _fmt(atol), _fmt(rtol), _index(worst, shape),
                                _fmt(c64[worst].item()), _fmt(r64[worst].item()), _fmt(diff[worst].item()))))
            stats.mismatches += n
    return problems


# --- the trial loop -----------------------------------------------------------

def call(model, args, device, seed):
    """One forward under no_grad, seeded (so random ops inside agree), and
    synchronised on CUDA so asynchronous errors surface here."""
    torch.manual_seed(seed)
    with torch.no_grad():
        out = model(*args)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return out


class Verification(object):
    def __init__(self):
        self.failures = []   # [{"check", "message"}], one per check
        self.trials = []     # trial records
        self._seen = set()

    def fail(self, check, message):
        if check not in self._seen:
            self._seen.add(check)
            self.failures.append({"check": check, "message": message})

    @property
    def passed(self):
        return not self.failures


def run_trials(reference, candidate, get_inputs, device, seed, trials, numerics, allow,
               second_inputs=None, poison=None, source=None):
    """Runs every trial; returns a Verification. Raises CandidateError when
    the candidate raises and ReferenceError_ when the reference does.
    second_inputs: None or a zero-argument callable returning an input list."""
    tolerance = Tolerance(numerics)
    result = Verification()
    plan = [(seed + t, inputs_mod.distribution_for(t), get_inputs, False) for t in range(trials)]
    if second_inputs is not None:
        plan.append((seed + trials, inputs_mod.distribution_for(trials), second_inputs, True))
    fill_pass = FillPass() if FillPass.available() else None
    for trial_seed, dist, make_inputs, is_second in plan:
        try:
            args = inputs_mod.make(make_inputs, trial_seed, dist, device, None if is_second else source)
        except Exception as e:
            raise ReferenceError_("%s failed: %s: %s" % ("second_inputs" if is_second else "get_inputs()", type(e).__name__, e))
        record = {"seed": trial_seed, "distribution": dist, "sizes": inputs_mod.shapes(args)}
        if is_second:
            record["second"] = True
        stats = Stats()
        problems = _one_trial(reference, candidate, args, device, trial_seed, tolerance, allow, poison, stats,
                              fill_pass)
        record.update(stats.as_dict())
        result.trials.append(record)
        where = "trial %d (seed %d, %s%s)" % (len(result.trials) - 1, trial_seed, dist, ", second inputs" if is_second else "")
        for check, message in problems:
            result.fail(check, "%s: %s" % (where, message))
    return result


def _one_trial(reference, candidate, args, device, seed, tolerance, allow, poison, stats, fill_pass=None):
    problems = []
    original = inputs_mod.clone(args)
    ref_args = inputs_mod.clone(args)
    try:
        ref_out = flatten(call(reference, ref_args, device, seed))
        ref_out2 = flatten(call(reference, inputs_mod.clone(original), device, seed))
    except Exception as e:
        raise ReferenceError_("the reference raised %s: %s" % (type(e).__name__, e))
    ref_deterministic = outputs_bitwise_equal(ref_out, ref_out2)
    del ref_out2
    # Inputs the reference itself writes are outputs too ("inout"): compared by value.
    ref_mutated = [not bitwise_equal(o, r) if isinstance(o, torch.Tensor) else False
                   for o, r in zip(original, ref_args)]

    poisoned = bool(poison is not None and poison.active)
    if poison is not None:
        poison.fit(nbytes(ref_out))
        poison()
    try:
        out_a = flatten(call(candidate, args, device, seed))
    except _CANDIDATE_EXCEPTIONS as e:
        raise CandidateError(e, "forward")
    found = compare(ref_out, out_a, tolerance, poisoned, stats)
    if any(check == "values" for check, _ in found):
        found = arbitrate_values(found, reference, original, device, seed, ref_out, out_a, tolerance, stats)
    problems.extend(found)

    for k, (o, r, c) in enumerate(zip(original, ref_args, args)):
        if not isinstance(o, torch.Tensor):
            continue
        if ref_mutated[k]:
            problems.extend(compare_one(r, c, tolerance, False, stats, "input %d after the call" % k))
        elif "inplace" not in allow and not bitwise_equal(o, c):
            n = _count_changed(o, c)
            problems.append(("input_mutation", "the candidate modified input %d (%d of %d elements changed); "
                             "inputs are read-only unless numerics.allow has \"inplace\"" % (k, n, o.numel())))

    if poison is not None:
        poison()
    try:
        out_b = flatten(call(candidate, inputs_mod.clone(original), device, seed))
    except _CANDIDATE_EXCEPTIONS as e:
        raise CandidateError(e, "forward (second call)")
    if not outputs_bitwise_equal(out_a, out_b):
        if ref_deterministic:
            problems.append(("determinism", "two calls on the same inputs gave different outputs (%s); "
                             "the candidate must be bit-for-bit deterministic and keep no state between calls"
                             % _first_difference(out_a, out_b)))
        else:
            # The reference is not bitwise deterministic itself: hold the
            # candidate to the tolerance between its two calls instead.
            again = compare(out_a, out_b, tolerance, False, Stats())
            if again:
                problems.append(("determinism", "two calls on the same inputs disagree beyond the tolerance: %s" % again[0][1]))

    if fill_pass is not None:
        try:
            with fill_pass:
                out_c = flatten(call(candidate, inputs_mod.clone(original), device, seed))
        except _CANDIDATE_EXCEPTIONS as e:
            raise CandidateError(e, "forward (with new tensors filled)")
        problems.extend(unwritten_after_fill(ref_out, out_a, out_c))
    return problems


def _to_float64(obj):
    if isinstance(obj, torch.Tensor):
        return obj.to(torch.float64) if obj.dtype == torch.float32 else obj
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_float64(x) for x in obj)
    if isinstance(obj, dict):
        return {k: _to_float64(v) for k, v in obj.items()}
    return obj


def float64_reference(reference, args, device, seed):
    """The reference's outputs computed in float64 (a copy of the module and
    of the float32 inputs), or None where it cannot run that way."""
    if not isinstance(reference, torch.nn.Module):
        return None
    try:
        model = copy.deepcopy(reference).to(torch.float64)
        return flatten(call(model, _to_float64(inputs_mod.clone(args)), device, seed))
    except Exception:
        return None


def arbitrate_values(problems, reference, original, device, seed, ref_out, cand_out, tolerance, stats):
    """Judges float32 value mismatches again against the reference run in
    float64: an element passes when the candidate is within the tolerance of
    that exact value, widened by twice the float32 reference's own worst
    error over the tensor. Summing the same terms in another order (a stencil, a reduction)
    on inputs of magnitude 1e3 differs from the reference by more than a fixed
    atol near cancellations, where the reference is no more right than the
    candidate. A wrong result stays wrong: its error is far above both."""
    truth = float64_reference(reference, original, device, seed)
    if truth is None or len(truth) != len(ref_out):
        return problems
    kept = [p for p in problems if p[0] != "values"]
    for check, message in problems:
        if check != "values":
            continue
        index = _output_index(message)
        if index is None or not _arbitrated(ref_out[index], cand_out[index], truth[index], tolerance, stats):
            kept.append((check, message))
    return kept


def _output_index(message):
    prefix = message.split(":", 1)[0]
    if prefix.startswith("output ") and prefix[7:].isdigit():
        return int(prefix[7:])
    return None


def _arbitrated(r, c, t, tolerance, stats):
    if not all(isinstance(x, torch.Tensor) for x in (r, c, t)):
        return False
    if r.dtype != torch.float32 or t.dtype != torch.float64 or r.shape != c.shape or r.shape != t.shape:
        return False
    atol, rtol = tolerance.for_dtype(r.dtype)
    r64 = r.detach().to(torch.float64).reshape(-1)
    c64 = c.detach().to(torch.float64).reshape(-1).to(r64.device)
    t64 = t.detach().reshape(-1).to(r64.device)
    finite = torch.isfinite(r64) & torch.isfinite(c64) & torch.isfinite(t64)
    first_bound = atol + rtol * r64.abs()
    was_bad = finite & ((c64 - r64).abs() > first_bound)
    # The reference's worst float32 error anywhere in the tensor: its error at one element can be
    # zero by luck where another summation order rounds by an ulp of the terms.
    reference_error = float(torch.where(finite, (r64 - t64).abs(), torch.zeros_like(r64)).max())
    still_bad = finite & ((c64 - t64).abs() > first_bound + 2.0 * reference_error)
    if bool(still_bad.any()):
        return False
    n = int(was_bad.sum())
    stats.mismatches -= n
    stats.arbitrated += n
    return True


def _count_changed(a, b):
    try:
        return int((_bits(a) != _bits(b.to(a.device))).sum())
    except Exception:
        return a.numel()


def _first_difference(a, b):
    if len(a) != len(b):
        return "%d outputs, then %d" % (len(a), len(b))
    for i, (x, y) in enumerate(zip(a, b)):
        if bitwise_equal(x, y):
            continue
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.shape == y.shape and x.dtype == y.dtype:
            diff = (_bits(x) != _bits(y.to(x.device))).reshape(-1)
            n = int(diff.sum())
            first = int(diff.nonzero()[0])
            xs, ys = x.reshape(-1)[first].item(), y.reshape(-1)[first].item()
            if isinstance(xs, float):
                xs, ys = _fmt(xs), _fmt(ys)
            return "output %d: %d element(s) differ, first at index %s: %s then %s" % (
                i, n, _index(first, list(x.shape)), xs, ys)
        return "output %d differs" % i
    return "outputs differ"
