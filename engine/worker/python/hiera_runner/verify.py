"""The verification rules of JOB_PROTOCOL.md, for PyTorch modules: the
comparisons (count, shape, dtype, NaN/Inf, unwritten output, values, chunk
by chunk), the float64 arbiter, the keyed digest that judges determinism,
and the memory poison the candidate's process applies to itself. The trial
loop that uses them is trials.py; each rule reports under its own `check`
name, once (the first trial that broke it).
"""

import copy
import math

import torch

from . import inputs as inputs_mod

# The engine's engine/common/default_tolerance.h, by torch dtype: 1e-4 for any other.
DEFAULT_TOLERANCE = {torch.float16: 1e-2, torch.bfloat16: 1e-2}
OTHER_TOLERANCE = 1e-4
POISON_WORD = 0x7FFF7FFF  # NaN read as float16/bfloat16/float32/float64; a huge int
# Finite in every float type (float32 1.5e16, float16 203.25, bfloat16 1.5e16): an
# element that is NaN after a NaN-poisoned call and this after a call poisoned with
# it was never written; one that is NaN after both was computed as NaN.
FINITE_POISON_WORD = 0x5A5A5A5A
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
        self.large_bytes = max(self.large_bytes, 2 * int(nbytes))

    def __call__(self, word=POISON_WORD, every_free_block=False):
        torch.cuda.empty_cache()
        free, _ = torch.cuda.mem_get_info(self.device)
        large = min(self.large_bytes, max(0, free // 2))
        blocks = []
        # Free blocks of segments that cannot be released (a library's workspace in them): each
        # taken at its exact size, so the best fit lands on it, and poisoned too.
        index = self.device.index if self.device.index is not None else torch.cuda.current_device()
        # With every_free_block, also the free blocks of segments that cannot be released (a
        # library's workspace in them), each at its exact size so the best fit lands on it; a
        # request reaches a block only from its own pool (small: at most 1 MiB).
        for seg in (torch.cuda.memory_snapshot() if every_free_block else ()):
            if seg.get("device") != index:
                continue
            small = seg.get("segment_type") == "small"
            for b in seg.get("blocks", []):
                size = b.get("size", 0)
                if b.get("state") == "inactive" and size >= 512 and (size <= (1 << 20)) == small:
                    blocks.append(torch.empty(size // 4, dtype=torch.int32, device=self.device))
        if large >= 4:
            blocks.append(torch.empty(large // 4, dtype=torch.int32, device=self.device))
        for size, count in self._SMALL:
            for _ in range(count):
                blocks.append(torch.empty(size // 4, dtype=torch.int32, device=self.device))
        for b in blocks:
            b.fill_(word - (1 << 32) if word >= (1 << 31) else word)
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
    depend on the fill are memory the candidate never wrote). Chunk by chunk."""
    problems = []
    for i, (r, a, c) in enumerate(zip(ref, ordinary, filled)):
        if not all(isinstance(t, torch.Tensor) and t.shape == r.shape and t.dtype == r.dtype for t in (r, a, c)) \
                or r.numel() == 0:
            continue
        rf, af, cf = r.detach().reshape(-1), a.detach().reshape(-1), c.detach().reshape(-1)
        if r.is_floating_point():
            def marked(lo):
                cc, rr, aa = cf[lo:lo + CHUNK].to(r.device), rf[lo:lo + CHUNK], af[lo:lo + CHUNK].to(r.device)
                return torch.isnan(cc) & ~torch.isnan(rr) & ~torch.isnan(aa)
        elif r.dtype != torch.bool and not r.is_complex():
            top = torch.iinfo(r.dtype).max

            def marked(lo):
                cc, rr, aa = cf[lo:lo + CHUNK].to(r.device), rf[lo:lo + CHUNK], af[lo:lo + CHUNK].to(r.device)
                return (cc == top) & (rr != top) & (aa != top)
        else:
            continue
        n, first = 0, None
        for lo in range(0, rf.numel(), CHUNK):
            mask = marked(lo)
            k = int(mask.sum())
            if k and first is None:
                first = lo + int(mask.nonzero()[0])
            n += k
        if n:
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
        default = DEFAULT_TOLERANCE.get(dtype, OTHER_TOLERANCE)
        atol = default if self.atol is None else float(self.atol)
        rtol = default if self.rtol is None else float(self.rtol)
        return atol, rtol


class Stats(object):
    def __init__(self):
        self.max_abs = 0.0
        self.max_rel = 0.0
        self.mismatches = 0
        self.arbitrated = 0  # elements a float64 run of the reference accepted (arbitrate_values)
        self.max_abs_float64 = 0.0    # the candidate's worst error against that float64 run
        self.reference_float64 = 0.0  # the reference's own worst error against it
        self.nan_samples = {}  # output name -> (count, flat indices) of NaN the poison may explain

    def as_dict(self):
        out = {"max_abs_error": self.max_abs, "max_rel_error": self.max_rel, "mismatches": self.mismatches}
        if self.arbitrated:
            out["float64_arbitrated"] = self.arbitrated
            out["max_abs_error_float64"] = self.max_abs_float64
            out["reference_error_float64"] = self.reference_float64
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


CHUNK = 1 << 24  # elements compared at a time: float64 temporaries stay small at any output size
NAN_SAMPLES = 64
# A chunk whose every element is finite in both and within this fraction of its tolerance passes on
# one float32 screen: float32's rounding (2**-24 of a value) cannot carry such an element past the
# bound, where float64's would decide. Any other chunk is compared in float64, as before.
SCREEN_MARGIN = 0.5
SCREEN = True  # tests turn the screen off to compare its verdicts with float64's


def _screenable(atol, rtol):
    """Tolerances float32 holds without underflow: 0, or normal numbers."""
    return all(t == 0.0 or 1e-30 <= t < 1e30 for t in (atol, rtol))


def _screened(r, c, atol, rtol, stats):
    """True when every element of the chunk is finite in both and within
    SCREEN_MARGIN of atol + rtol*|r|, judged in float32 (float64 for float64
    outputs) in a few passes and one synchronisation; stats then hold the
    chunk's worst absolute and relative errors (in that precision). False
    leaves stats alone: the chunk is compared in float64."""
    work = torch.float64 if r.dtype == torch.float64 else torch.float32
    r32, c32 = r.to(work), c.to(work)
    diff = (c32 - r32).abs_()
    mag = r32.abs()
    ok = diff <= mag.mul(rtol * SCREEN_MARGIN).add_(atol * SCREEN_MARGIN)  # NaN and Inf are never <=
    rel = torch.where(mag > 0, diff / mag, torch.zeros_like(diff))
    passed, max_abs, max_rel = torch.stack([ok.all().to(work), diff.max(), rel.max()]).tolist()
    if passed != 1.0:
        return False
    stats.max_abs = max(stats.max_abs, max_abs)
    stats.max_rel = max(stats.max_rel, max_rel)
    return True


def _compare_float(r, c, tolerance, poisoned, stats, name):
    """Chunk by chunk over the flattened tensors, so no float64 copy of a
    whole output is ever made. With `poisoned`, NaN where the reference has
    a number may be memory never written: it is reported as "nan_unresolved"
    with samples in stats.nan_samples[name], for the caller to decide."""
    atol, rtol = tolerance.for_dtype(r.dtype)
    shape = list(r.shape)
    if r.is_complex():
        r, c = torch.view_as_real(r), torch.view_as_real(c)
        shape = list(r.shape)
    rf, cf = r.reshape(-1), c.reshape(-1)
    n_total = rf.numel()
    nan_c = nan_r = bad_n = 0
    first_c = first_r = None
    worst = None  # (excess, index, cand, ref, diff)
    samples = []
    screen = SCREEN and _screenable(atol, rtol)
    for lo in range(0, n_total, CHUNK):
        if screen and _screened(rf[lo:lo + CHUNK], cf[lo:lo + CHUNK], atol, rtol, stats):
            continue
        r64 = rf[lo:lo + CHUNK].to(torch.float64)
        c64 = cf[lo:lo + CHUNK].to(torch.float64)
        r_nan, c_nan = torch.isnan(r64), torch.isnan(c64)
        r_fin, c_fin = torch.isfinite(r64), torch.isfinite(c64)
        same_nonfinite = (r_nan & c_nan) | (~r_fin & ~r_nan & (c64 == r64))
        bad_c = ~c_fin & ~same_nonfinite
        bad_r = ~r_fin & ~same_nonfinite & c_fin
        k_c, k_r = int(bad_c.sum()), int(bad_r.sum())
        if k_c:
            idx = bad_c.nonzero().reshape(-1)
            if first_c is None:
                i = int(idx[0])
                first_c = (lo + i, c64[i].item(), r64[i].item())
            if len(samples) < NAN_SAMPLES:
                samples.extend(int(lo + j) for j in idx[:NAN_SAMPLES - len(samples)].tolist())
        if k_r and first_r is None:
            i = int(bad_r.nonzero()[0])
            first_r = (lo + i, c64[i].item(), r64[i].item())
        nan_c += k_c
        nan_r += k_r
        both = r_fin & c_fin
        if bool(both.any()):
            diff = torch.where(both, (c64 - r64).abs(), torch.zeros_like(r64))
            bound = atol + rtol * r64.abs()
            bad = both & (diff > bound)
            stats.max_abs = max(stats.max_abs, float(diff.max()))
            denom = r64.abs()
            rel = torch.where(both & (denom > 0), diff / torch.where(denom > 0, denom, torch.ones_like(denom)),
                              torch.zeros_like(diff))
            stats.max_rel = max(stats.max_rel, float(rel.max()))
            k = int(bad.sum())
            if k:
                excess = torch.where(bad, diff - bound, torch.full_like(diff, -1.0))
                i = int(excess.argmax())
                if worst is None or float(excess[i]) > worst[0]:
                    worst = (float(excess[i]), lo + i, c64[i].item(), r64[i].item(), diff[i].item())
                bad_n += k
        del r64, c64
    problems = []
    if nan_c:
        i, cv, rv = first_c
        if poisoned:
            stats.nan_samples[name] = (nan_c, samples)
            problems.append(("nan_unresolved", "%s: %d of %d elements are NaN/Inf where the reference is not "
                             "(first at index %s: reference %s)" % (name, nan_c, n_total, _index(i, shape), _fmt(rv))))
        else:
            problems.append(("nan_inf", "%s: %d of %d elements are NaN/Inf where the reference is not (first at index "
                             "%s: candidate %s, reference %s)" % (name, nan_c, n_total, _index(i, shape), _fmt(cv),
                                                                  _fmt(rv))))
    if nan_r:
        i, cv, rv = first_r
        problems.append(("nan_inf", "%s: the reference has NaN/Inf at %d element(s) where the candidate has finite "
                         "values (first at index %s: candidate %s, reference %s)"
                         % (name, nan_r, _index(i, shape), _fmt(cv), _fmt(rv))))
    stats.mismatches += nan_c + nan_r + bad_n
    if bad_n:
        _, i, cv, rv, d = worst
        problems.append(("values", "%s: %d of %d elements differ beyond atol %s + rtol %s*|ref| (worst at index %s: "
                         "candidate %s, reference %s, abs error %s)" % (name, bad_n, n_total, _fmt(atol), _fmt(rtol),
                                                                         _index(i, shape), _fmt(cv), _fmt(rv), _fmt(d))))
    return problems


def fingerprint(leaves, key):
    """A keyed digest of the outputs' bits: two calls whose outputs differ in
    any bit get different digests unless one knows `key` (kept by the
    trusted side). Chunked, so it needs no copy of an output."""
    out = []
    weights = None
    for x in leaves:
        if not isinstance(x, torch.Tensor):
            out.append(("value", repr(x)))
            continue
        bits = _bits(x).reshape(-1)
        if weights is None or weights.device != bits.device:
            g = torch.Generator(device="cpu").manual_seed(key)
            weights = torch.randint(-(1 << 62), 1 << 62, (1 << 16,), dtype=torch.int64, generator=g).to(bits.device)
        total = 0
        span = weights.numel()
        for lo in range(0, bits.numel(), CHUNK):
            part = bits[lo:lo + CHUNK].to(torch.int64)
            n = part.numel()
            full = n - n % span
            if full:
                total += int((part[:full].view(-1, span) * weights).sum())
            if n - full:
                total += int((part[full:] * weights[:n - full]).sum())
            total += int(part.sum()) * 1000003
        out.append((str(x.dtype), tuple(x.shape), total & ((1 << 64) - 1)))
    return out


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


# Floating dtypes the arbiter judges: float32, and half precision, whose own rounding (scores rounded
# to bfloat16 before a softmax) can put the reference further from the exact math than a candidate.
_ARBITRATED = (torch.float32, torch.float16, torch.bfloat16)


def _to_float64(obj):
    if isinstance(obj, torch.Tensor):
        return obj.to(torch.float64) if obj.dtype in _ARBITRATED else obj
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_float64(x) for x in obj)
    if isinstance(obj, dict):
        return {k: _to_float64(v) for k, v in obj.items()}
    return obj


def float64_reference(reference, args, device, seed):
    """The reference's outputs computed in float64 (a copy of the module and
    of its float32 and half-precision inputs), or None where it cannot run that way."""
    if not isinstance(reference, torch.nn.Module):
        return None
    if device.type == "cuda":
        # A float64 copy of the inputs, parameters and outputs: only where it fits beside what is resident.
        # Counted at float64's 8 bytes an element: half-precision inputs grow fourfold.
        need = 2 * 8 * (sum(a.numel() for a in args if isinstance(a, torch.Tensor)) +
                        sum(p.numel() for p in reference.parameters()))
        free, _ = torch.cuda.mem_get_info(device)
        if need > free // 3:
            return None
    try:
        model = copy.deepcopy(reference).to(torch.float64)
        return flatten(call(model, _to_float64(inputs_mod.clone(args)), device, seed))
    except Exception:
        return None


def arbitrate_values(problems, reference, original, device, seed, ref_out, cand_out, tolerance, stats):
    """Judges value mismatches again against the reference run in float64.
    float32: an element passes when the candidate is within the tolerance of
    that exact value, widened by twice the float32 reference's own worst
    error over the tensor. Summing the same terms in another order (a stencil, a reduction)
    on inputs of magnitude 1e3 differs from the reference by more than a fixed
    atol near cancellations, where the reference is no more right than the
    candidate. A wrong result stays wrong: its error is far above both.
    float16/bfloat16: within the dtype's tolerance of the exact value, not
    widened (the reference's own half-precision error is large enough to hide a
    downcast): a candidate that keeps more precision than the reference (a fused
    attention's float32 scores, where the reference rounds them to bfloat16 and
    a softmax over large inputs turns that rounding into another maximum) passes;
    one that keeps less does not."""
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
    if r.dtype not in _ARBITRATED or t.dtype != torch.float64 or r.shape != c.shape or r.shape != t.shape:
        return False
    widen = r.dtype == torch.float32
    atol, rtol = tolerance.for_dtype(r.dtype)
    rf, cf, tf = r.detach().reshape(-1), c.detach().reshape(-1), t.detach().reshape(-1)

    def chunks():
        for lo in range(0, rf.numel(), CHUNK):
            r64 = rf[lo:lo + CHUNK].to(torch.float64)
            c64 = cf[lo:lo + CHUNK].to(torch.float64).to(r64.device)
            t64 = tf[lo:lo + CHUNK].to(r64.device)
            yield r64, c64, t64, torch.isfinite(r64) & torch.isfinite(c64) & torch.isfinite(t64)

    # The reference's worst float32 error anywhere in the tensor: its error at one element can be
    # zero by luck where another summation order rounds by an ulp of the terms.
    reference_error = 0.0
    for r64, _, t64, finite in chunks():
        reference_error = max(reference_error, float(torch.where(finite, (r64 - t64).abs(), torch.zeros_like(r64)).max()))
    n = 0
    worst = 0.0
    for r64, c64, t64, finite in chunks():
        first_bound = atol + rtol * r64.abs()
        error = torch.where(finite, (c64 - t64).abs(), torch.zeros_like(c64))
        bound = first_bound + 2.0 * reference_error if widen else atol + rtol * t64.abs()
        if bool((error > bound).any()):
            return False
        worst = max(worst, float(error.max()))
        n += int((finite & ((c64 - r64).abs() > first_bound)).sum())
    stats.mismatches -= n
    stats.arbitrated += n
    stats.max_abs_float64 = max(stats.max_abs_float64, worst)
    stats.reference_float64 = max(stats.reference_float64, reference_error)
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
