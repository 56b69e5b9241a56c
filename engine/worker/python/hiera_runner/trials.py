"""Verification trials and timing rounds with the candidate in its own
process (isolation.py). The reference, the inputs, every comparison and
every clock the verdict reads stay here, on the trusted side.

Per trial: inputs drawn on the device from the trial's seed; the candidate
gets its own copy in shared memory; the reference runs on ours. The
candidate runs on pristine copies: once on memory poisoned with NaN
(values, counts, NaN/Inf, its inputs afterwards), once on memory poisoned
with a finite pattern where NaN is unresolved (bit-for-bit determinism by
keyed digest, and whether NaN was computed or never written), and, where
torch has it, once with new tensors filled (memory freed and reused inside
the call): on the CPU always, on CUDA only when values were wrong.
At most the trial's inputs, the reference's outputs, one copy of the inputs
(the candidate's) and the candidate's outputs are resident at a time.

Timing: fresh inputs every round, the L2 flushed from here before each
call, sides interleaved; the candidate's CUDA events are cross-checked with
the wall time of the call across the process boundary, and the outputs of
rounds drawn at random (unknown to the candidate until after its call) are
compared with the reference's outputs of the same round.
"""

import random
import statistics

import torch

from . import inputs as inputs_mod, kernelbench_inputs, load_probe, timing, verify
from .isolation import CandidateFailure
from .verify import Stats, Tolerance

CHECKED_ROUNDS = 5
# A candidate's reported call time may fall short of the call's wall time (less the
# exchange's own round trip) by this much before the report is taken for a false one.
CROSS_CHECK_FRACTION = 0.25
# Below this a process boundary's jitter (launch, context switch, scheduling) is not told from a
# false clock; the speed-of-light check is the guard for calls that short.
CROSS_CHECK_FLOOR_MS = 0.5
CROSS_CHECK_FLOOR_CPU_MS = 2.0  # a CPU's scheduler jitter; the GPU's figure is the one that matters


CALIBRATION_ROUNDS = 9
MIN_ROUNDS = 15
SETTLED_SPREAD = 0.03  # (p90 - p10) / median below which more rounds move the median by less than the noise


def _settled(times):
    """Whether every side's times are tight enough to stop before the
    rounds asked for (at least MIN_ROUNDS are always taken)."""
    for ms in times.values():
        if len(ms) < MIN_ROUNDS:
            return False
        s = sorted(ms)
        med = statistics.median(s)
        if med <= 0 or (timing.percentile(s, 0.9) - timing.percentile(s, 0.1)) / med > SETTLED_SPREAD:
            return False
    return True


class TrialFailure(Exception):
    """The candidate failed in a way that ends the trials (it raised, died,
    hung or broke the exchange): a failed result with these failures."""

    def __init__(self, failures, trials):
        Exception.__init__(self, failures[0]["message"] if failures else "")
        self.failures = failures
        self.trials = trials


def _failure_dict(e):
    message = e.message
    if e.where not in ("forward", "load") and not message.startswith("in "):
        message = "in %s: %s" % (e.where, message)
    return {"check": e.check, "message": message}


class Trials(object):
    def __init__(self, job, proc, numerics, allow):
        self.job = job
        self.proc = proc
        self.device = job.device
        self.tolerance = Tolerance(numerics)
        self.allow = allow
        self.key = random.SystemRandom().getrandbits(62)
        self.ref_deterministic = None
        self.ref_mutates = False
        self.cuda = job.device.type == "cuda"
        self.harness_gap_ms = None  # measured before the candidate was loaded (calibrate)
        self.harness_gap_spread_ms = None
        self.idle_round_trip_ms = None  # the load probe's round trip at calibration

    def calibrate(self, seed, rounds=CALIBRATION_ROUNDS):
        """Before the candidate is loaded, on inputs of the task's sizes."""
        args = inputs_mod.make(self.job.reference_module.get("get_inputs"), seed, "uniform", self.device)
        clock = timing.Clock(self.device)
        gaps = self.proc.calibrate(self.proc.stage(args), rounds, clock.flush)
        self.harness_gap_ms = gaps[len(gaps) // 2]
        self.harness_gap_spread_ms = _interquartile(gaps)
        self.idle_round_trip_ms = _median_of(load_probe.round_trip_ms() for _ in range(rounds))

    # --- verification --------------------------------------------------------------
    def run(self, seed, trials, result):
        """The first shape's trials, into `result` (a Verification). Raises
        TrialFailure when the candidate fails hard and verify.ReferenceError_
        when the reference does."""
        get_inputs = self.job.reference_module.get("get_inputs")
        plan = [(seed + t, inputs_mod.distribution_for(t), get_inputs, None) for t in range(trials)]
        return self._run_plan(plan, result)

    def run_second(self, seed, trials, second, result):
        """The second-shape trial, appended to `result` (a Verification whose
        first-shape trials passed). Apart from run() so that evaluate can time
        the candidate first: a torch.compile candidate that has seen a second
        shape recompiles with a dynamic batch size, and its calls at the first
        shape then run that program, while the torch.compile baseline saw one."""
        # The first trial's distribution: what the second shape tests is the shape, so a failure
        # there is one the first shape passed (attention on inputs x1e3 flips near-tied softmax
        # maxima at any shape, and was reported as specialized to the first).
        return self._run_plan([(seed + trials, inputs_mod.distribution_for(0), second.make, second)], result)

    def _run_plan(self, plan, result):
        first_sizes = result.trials[0]["sizes"] if result.trials else None
        args = None
        for trial_seed, dist, make, second_shape in plan:
            if second_shape is not None and result.failures:
                break  # "specialized to a shape" says something only of a candidate right at the first
            args = None  # the last trial's inputs go before this one's are drawn
            try:
                args = inputs_mod.make(make, trial_seed, dist, self.device)
            except Exception as e:
                raise verify.ReferenceError_("%s failed: %s: %s" % ("the second shape's inputs" if second_shape else
                                                                    "get_inputs()", type(e).__name__, e))
            record = {"seed": trial_seed, "distribution": dist, "sizes": inputs_mod.shapes(args)}
            if first_sizes is None:
                first_sizes = record["sizes"]
            if second_shape is not None:
                record["second"] = True
                if second_shape.how:
                    record["second_shape"] = second_shape.how
            stats = Stats()
            where = "trial %d (seed %d, %s%s)" % (len(result.trials), trial_seed, dist,
                                                   ", second shape" if second_shape else "")
            try:
                problems = self._one(args, lambda: inputs_mod.make(make, trial_seed, dist, self.device),
                                     trial_seed, stats)
            except CandidateFailure as e:
                record.update(stats.as_dict())
                result.trials.append(record)
                if second_shape is not None:
                    raise TrialFailure([_specialized(first_sizes, record["sizes"], "%s: %s" % (e.check, e.message))],
                                       result.trials)
                raise TrialFailure([_failure_dict(e)], result.trials)
            record.update(stats.as_dict())
            result.trials.append(record)
            if second_shape is not None and problems:
                result.fail("shape_generality", _specialized(first_sizes, record["sizes"],
                                                             "; ".join("%s: %s" % p for p in problems))["message"])
                continue
            for check, message in problems:
                result.fail(check, "%s: %s" % (where, message))
        return result

    def _one(self, args, regenerate, seed, stats):
        job, proc, device = self.job, self.proc, self.device
        staged = proc.stage(args)
        copies = staged[2]
        try:
            ref_out = verify.flatten(verify.call(job.reference, args, device, seed))
        except Exception as e:
            raise verify.ReferenceError_("the reference raised %s: %s" % (type(e).__name__, e))
        ref_mutated = [isinstance(a, torch.Tensor) and not verify.bitwise_equal(a, c) for a, c in zip(args, copies)]
        self.ref_mutates = self.ref_mutates or any(ref_mutated)
        pristine = (lambda: args) if not any(ref_mutated) else regenerate
        if self.ref_deterministic is None:
            # Once per job, by digest: the first outputs go before the second run, so two
            # sets of reference outputs are never resident at once.
            digest = verify.fingerprint(ref_out, self.key)
            del ref_out
            if any(ref_mutated):
                args = regenerate()
                proc.stage(args)
            try:
                ref_out = verify.flatten(verify.call(job.reference, args, device, seed))
            except Exception as e:
                raise verify.ReferenceError_("the reference raised %s: %s" % (type(e).__name__, e))
            self.ref_deterministic = verify.fingerprint(ref_out, self.key) == digest
            pristine = (lambda: args) if not any(ref_mutated) else regenerate
        limit = 2 * verify.nbytes(ref_out) + (64 << 20)
        out_bytes = verify.nbytes(ref_out)

        # Call A: NaN poison. Values, counts, NaN, inputs afterwards.
        proc.run(staged, seed, poison="nan" if self.cuda else None, output_bytes=out_bytes)
        outs = proc.fetch(limit)
        problems = verify.compare(ref_out, outs, self.tolerance, self.cuda, stats)
        if any(check == "values" for check, _ in problems):
            problems = verify.arbitrate_values(problems, job.reference, pristine(), device, seed, ref_out, outs,
                                               self.tolerance, stats)
        digest_a = verify.fingerprint(outs, self.key)
        for k, (a, c) in enumerate(zip(args, copies)):
            if c is None:
                continue
            if ref_mutated[k]:
                problems.extend(verify.compare_one(a, c, self.tolerance, False, stats, "input %d after the call" % k))
            elif "inplace" not in self.allow and not verify.bitwise_equal(a, c):
                aliased = [j for j, o in enumerate(outs) if verify.bitwise_equal(o, c)]
                if aliased:
                    problems.append(("aliasing", "output %d is input %d written in place (the reference leaves its "
                                     "inputs alone and returns new tensors)" % (aliased[0], k)))
                    continue
                n = verify._count_changed(a, c)
                problems.append(("input_mutation", "the candidate modified input %d (%d of %d elements changed); inputs "
                                 "are read-only unless numerics.allow has \"inplace\"" % (k, n, a.numel())))
        del outs

        # Call B: on a pristine copy. Determinism; and where call A left NaN, a finite poison tells
        # NaN computed from memory never written.
        unresolved = any(check == "nan_unresolved" for check, _ in problems)
        proc.run(proc.stage(pristine()), seed, poison="finite" if unresolved else None, output_bytes=out_bytes)
        outs = proc.fetch(limit)
        problems, unwritten = _resolve_nan(problems, stats, outs)
        if verify.fingerprint(outs, self.key) != digest_a and not unwritten:
            if self.ref_deterministic:
                problems.append(("determinism", "two calls on the same inputs gave different outputs (%s); the candidate "
                                 "must be bit-for-bit deterministic and keep no state between calls"
                                 % _which_differ(digest_a, verify.fingerprint(outs, self.key))))
            else:
                again = verify.compare(ref_out, outs, self.tolerance, False, Stats())
                if again:
                    problems.append(("determinism", "two calls on the same inputs disagree beyond the tolerance: %s"
                                     % again[0][1]))
        del outs

        # Call C, on the CPU (where nothing poisons malloc'd memory): new tensors filled with NaN.
        # On CUDA the allocator's poison stands in for it, except for memory the candidate frees and
        # reuses within its own call: so there call C runs only when values were wrong, to say whether
        # they were never written (on the H200, a fill pass on every call took a 2 GB problem's
        # verification from 1 s to 4.9 s).
        wrong_values = any(check == "values" for check, _ in problems)
        if (not self.cuda or wrong_values) and verify.FillPass.available():
            proc.run(proc.stage(pristine()), seed, fill=True, output_bytes=out_bytes)
            outs = proc.fetch(limit)
            if not unwritten and not any(check == "nan_inf" for check, _ in problems):
                problems.extend(verify.unwritten_after_fill(ref_out, ref_out, outs))
            del outs
        return problems

    # --- timing --------------------------------------------------------------------
    def time(self, seed, rounds, baselines, warmup=timing.WARMUP):
        """Interleaved rounds of the reference, the candidate and the
        baselines on fresh inputs; -> the timing dict of evaluate's result.
        Raises TrialFailure when the candidate's times or outputs do not hold."""
        clock = timing.Clock(self.device)
        self._warm_up(seed, warmup, baselines)
        rounds_seen = self._timed_rounds(seed, rounds, baselines, clock)
        try:
            boundary = self._cross_check(*rounds_seen)
        except TrialFailure:
            if self.cuda:
                raise
            # A loaded CPU can delay an honest candidate's every call for a while (CI's
            # parallel tests); a false clock fails again on fresh rounds, a burst of load need not.
            rounds_seen = self._timed_rounds(seed + 1, rounds, baselines, clock)
            boundary = self._cross_check(*rounds_seen)
            boundary["remeasured"] = True
        times = rounds_seen[0]
        measured = {name: timing.summarize(ms) for name, ms in times.items()}
        measured["boundary"] = boundary
        return measured

    def _warm_up(self, seed, warmup, baselines):
        job, proc, device = self.job, self.proc, self.device
        args = inputs_mod.make(job.reference_module.get("get_inputs"), seed, "uniform", device)
        staged = proc.stage(args)
        for _ in range(warmup):
            verify.call(job.reference, args, device, seed)
            proc.run(staged, seed)
            for _, fn in baselines.sides_for(args):
                fn()

    def _timed_rounds(self, seed, rounds, baselines, clock):
        """Fresh inputs each round, sides interleaved, outputs of rounds drawn
        at random checked; -> (times by side, the candidate's boundary walls,
        the exchange's pings, the load probe's round trips)."""
        job, proc, device = self.job, self.proc, self.device
        get_inputs = job.reference_module.get("get_inputs")
        checked = set(random.SystemRandom().sample(range(min(rounds, MIN_ROUNDS)), min(rounds, CHECKED_ROUNDS)))
        times = {"reference": [], "candidate": []}
        walls, pings, loads = [], [], []
        for i in range(rounds):
            if i >= MIN_ROUNDS and _settled(times):
                break
            round_seed = seed + 7919 * (i + 1)
            args = inputs_mod.make(get_inputs, round_seed, inputs_mod.distribution_for(i), device)
            staged = proc.stage(args)
            ref_out, out = [], None
            sides = [("reference", None), ("candidate", None)] + [(n, fn) for n, fn in baselines.sides_for(args)]
            shift = i % len(sides)
            for name, fn in sides[shift:] + sides[:shift]:
                clock.flush()
                if name == "reference":
                    ms, out = clock.measure_call(lambda: verify.call(job.reference, args, device, round_seed))
                    ref_out = verify.flatten(out)
                    times["reference"].append(ms)
                elif name == "candidate":
                    reply, wall = proc.run(staged, round_seed, timed=True)
                    times["candidate"].append(float(reply["elapsed_ms"]))
                    walls.append(wall)
                    loads.append(load_probe.round_trip_ms())
                else:
                    ms, _ = clock.measure_call(fn)
                    times.setdefault(name, []).append(ms)
            clock.flush()
            pings.append(proc.ping(staged))
            if i in checked and not self.ref_mutates:
                self._check_round(i, ref_out, round_seed)
            del args, staged, ref_out, out, sides
        return times, walls, pings, loads

    def _check_round(self, i, ref_out, round_seed):
        outs = self.proc.fetch(2 * verify.nbytes(ref_out) + (64 << 20))
        problems = verify.compare(ref_out, outs, self.tolerance, False, Stats())
        del outs
        if any(check == "values" for check, _ in problems):
            args = inputs_mod.make(self.job.reference_module.get("get_inputs"), round_seed,
                                   inputs_mod.distribution_for(i), self.device)
            outs = self.proc.fetch(2 * verify.nbytes(ref_out) + (64 << 20))
            problems = verify.arbitrate_values(problems, self.job.reference, args, self.device, round_seed, ref_out,
                                               outs, self.tolerance, Stats())
            del outs
        if problems:
            raise TrialFailure([{"check": "timing", "message": "the outputs of timed call %d (fresh inputs, seed %d) do "
                                 "not match the reference's: %s: %s" % (i, round_seed, problems[0][0], problems[0][1])}],
                               [])

    def _cross_check(self, times, walls, pings, loads):
        """Per round, the time the candidate's call took across the process
        boundary less the harness's gap, the delay the machine's load added
        then (the trusted load probe's round trip beyond its idle one) and the
        candidate's own clock's reading; their median must stay within a
        fraction of the call, a floor and the noise of what the trusted side
        measured itself (interquartile ranges of the harness gap, the
        reference's times and the probe's round trips). On a GPU the
        candidate's own spread is reported, never allowed for: a candidate
        that slows some calls would widen it to hide a false clock. On the CPU
        it is allowed for too: there a loaded machine delays the candidate
        process's every wake-up by more than any trusted probe shows (honest
        0.2 ms calls took 10 ms with three busy loops on two cores), so a
        false clock within that spread passes there (tests/adversarial 33)."""
        events, reference = times["candidate"], times["reference"]
        floor_ms = CROSS_CHECK_FLOOR_MS if self.cuda else CROSS_CHECK_FLOOR_CPU_MS
        ev = statistics.median(events)
        wall = statistics.median(walls)
        s = sorted(walls)
        spread = timing.percentile(s, 0.9) - timing.percentile(s, 0.1)
        idle = self.idle_round_trip_ms
        known = [x for x in loads if x is not None]
        if idle is None or len(known) != len(walls):
            loads, known = [idle or 0.0] * len(walls), []
            idle = idle or 0.0
        noise = max(self.harness_gap_spread_ms or 0.0, _interquartile(sorted(reference)), _interquartile(sorted(known)))
        if not self.cuda:
            noise = max(noise, spread)
        # The harness's own gap, measured before any candidate code ran in that process; the
        # round trip seen since is reported, never trusted (the candidate answers it).
        gap = self.harness_gap_ms if self.harness_gap_ms is not None else statistics.median(pings)
        unexplained = statistics.median(w - gap - max(0.0, l - idle) - e for w, l, e in zip(walls, loads, events))
        out = {"candidate_wall_median_ms": wall, "exchange_median_ms": statistics.median(pings),
               "harness_gap_ms": gap, "events_median_ms": ev, "wall_spread_ms": spread,
               "load_delay_median_ms": statistics.median(max(0.0, l - idle) for l in loads),
               "trusted_noise_ms": noise, "unexplained_median_ms": unexplained}
        allowed = CROSS_CHECK_FRACTION * ev + floor_ms + 2.0 * noise
        if unexplained > allowed:
            raise TrialFailure([{"check": "timing", "message": (
                "the candidate's own clock says %.4g ms a call, but its calls took %.4g ms across the process boundary "
                "(%.4g ms of that is the harness's own, %.4g ms the machine's load): %.4g ms a call are unaccounted "
                "for, more than the %.4g ms allowed (noise %.4g ms); its reported times do not "
                "measure its calls" % (ev, wall, gap, out["load_delay_median_ms"], unexplained, allowed, noise))}], [])
        # Longer than its calls: the load allowed for above does not count here.
        if statistics.median(e - w for w, e in zip(walls, events)) > 2.0 * noise + floor_ms:
            raise TrialFailure([{"check": "timing", "message": (
                "the candidate's own clock says %.4g ms a call, longer than the %.4g ms its calls took across the "
                "process boundary: its reported times do not measure its calls" % (ev, wall))}], [])
        return out

    # --- KernelBench's criterion ---------------------------------------------------
    def kernelbench(self, draws=None):
        """KernelBench's correctness check as it applies it: seeds from
        torch.manual_seed(42), torch.rand inputs from get_inputs() under each
        trial's seed on the CPU then moved, outputs compared by
        torch.allclose(atol=rtol=1e-4 for float32, 1e-2 for half types).
        `draws`: the inputs (kernelbench_inputs.SeededDraws), when the job
        started drawing them ahead; else they are drawn now."""
        job, proc, device = self.job, self.proc, self.device
        if draws is None:
            draws = kernelbench_draws(job)
        seeds = draws.seeds
        trials = len(seeds)
        max_abs, passed, message, tol_used = 0.0, True, "", None
        for k, (s, raw) in enumerate(zip(seeds, draws)):
            raw = list(raw) if isinstance(raw, (list, tuple)) else [raw]
            args = [x.to(device) if isinstance(x, torch.Tensor) else x for x in raw]
            staged = proc.stage(args)
            with torch.no_grad():
                ref_out = verify.flatten(job.reference(*args))
            proc.run(staged, s)
            outs = proc.fetch(2 * verify.nbytes(ref_out) + (64 << 20))
            if len(outs) != len(ref_out):
                passed, message = False, "trial %d: %d outputs, the reference %d" % (k, len(outs), len(ref_out))
            for i, (r, c) in enumerate(zip(ref_out, outs)):
                if not (isinstance(r, torch.Tensor) and isinstance(c, torch.Tensor)):
                    continue
                tol = 1e-2 if r.dtype in (torch.float16, torch.bfloat16) else 1e-4
                tol_used = tol if tol_used is None else max(tol_used, tol)
                if r.shape != c.shape:
                    passed, message = False, "trial %d: output %d has shape %s, the reference %s" % (
                        k, i, list(c.shape), list(r.shape))
                    continue
                c = c.to(r.dtype) if c.dtype != r.dtype else c
                if r.is_floating_point():
                    d = float((r.double() - c.double()).abs().max()) if r.numel() else 0.0
                    max_abs = max(max_abs, d)
                if not torch.allclose(r, c, atol=tol, rtol=tol):
                    if passed:
                        message = "trial %d (seed %d): output %d is not allclose(atol=rtol=%g); max abs error %.4g" % (
                            k, s, i, tol, max_abs)
                    passed = False
            del outs, ref_out, args, staged, raw
        tol_used = 1e-4 if tol_used is None else tol_used
        return {"passed": passed, "trials": trials, "atol": tol_used, "rtol": tol_used, "max_abs_error": max_abs,
                "message": message or "all %d trials allclose" % trials}


KERNELBENCH_TRIALS = 5


def kernelbench_draws(job):
    """KernelBench's five trials' inputs for the job's reference, started on
    threads now (kernelbench_inputs.SeededDraws)."""
    return kernelbench_inputs.SeededDraws(job.reference_module.get("get_inputs"),
                                          kernelbench_inputs.kernelbench_seeds(KERNELBENCH_TRIALS))


def _specialized(first, second, reason):
    return {"check": "shape_generality", "message": "specialized to shape %s: at the second shape %s the candidate "
            "fails (%s)" % (_sizes(first), _sizes(second), reason)}


def _sizes(sizes):
    return ", ".join("%s %s" % (k, v) for k, v in sorted((sizes or {}).items())) or "(no tensor inputs)"


def _which_differ(a, b):
    diffs = [str(i) for i, (x, y) in enumerate(zip(a, b)) if x != y]
    if len(a) != len(b):
        return "%d outputs, then %d" % (len(a), len(b))
    return "output %s differ%s" % (", ".join(diffs), "s" if len(diffs) == 1 else "")


def _poison_bits(dtype):
    size = torch.empty((), dtype=dtype).element_size()
    word = {1: 0x5A, 2: 0x5A5A, 4: 0x5A5A5A5A, 8: 0x5A5A5A5A5A5A5A5A}[size]
    return word - (1 << (8 * size)) if word >= (1 << (8 * size - 1)) else word


def _resolve_nan(problems, stats, outs_b):
    """nan_unresolved after call A, decided by call B's values at the same
    elements: the finite poison there means never written, NaN means computed."""
    out, unwritten = [], False
    for check, message in problems:
        if check != "nan_unresolved":
            out.append((check, message))
            continue
        name = message.split(":", 1)[0]
        count, samples = stats.nan_samples.get(name, (0, []))
        index = int(name.split()[-1]) if name.split()[-1].isdigit() else None
        poisoned_b = 0
        if index is not None and index < len(outs_b) and isinstance(outs_b[index], torch.Tensor) and samples:
            flat = outs_b[index].reshape(-1)
            picked = flat[torch.tensor(samples, device=flat.device)]
            poisoned_b = int((verify._bits(picked) == _poison_bits(flat.dtype)).sum())
        if poisoned_b * 2 > len(samples) > 0:
            unwritten = True
            out.append(("unwritten_output", "%s: %d elements were never written (the poison is still there: NaN after "
                        "one call, the finite pattern 0x5a5a... after another)" % (name, count)))
        else:
            out.append(("nan_inf", message))
    return out, unwritten


def _interquartile(sorted_values):
    return timing.percentile(sorted_values, 0.75) - timing.percentile(sorted_values, 0.25)


def _median_of(values):
    known = sorted(v for v in values if v is not None)
    return known[len(known) // 2] if known else None
