"""evaluate's "baselines": ["compile"]: torch.compile of the reference timed
in the same loop as the reference and the candidate, or the reason it is not.
torch 1.13 has no torch.compile: stand-ins (patched in as torch.compile) drive
the paths a real one takes; the real one runs where torch has it."""

import unittest
from unittest import mock

import torch

import fixtures
from fixtures import candidate, params
from hiera_runner import baselines, evaluate as ev, jsonrpc, timing

HAS_COMPILE = hasattr(torch, "compile")


def run(**kw):
    kw.setdefault("baselines", ["compile"])
    return ev.evaluate(params(fixtures.GOOD, **kw))


class CountingCompile(object):
    """A stand-in for torch.compile: returns the model itself (optionally
    wrapped), counting what it compiled and how often the result was called."""

    def __init__(self, wrap=None):
        self.compiled = []
        self.calls = 0
        self.wrap = wrap

    def __call__(self, model):
        self.compiled.append(model)

        def compiled(*args):
            self.calls += 1
            out = model(*args)
            return self.wrap(out, self.calls) if self.wrap else out
        return compiled


class WithoutTorchCompileTest(unittest.TestCase):
    @unittest.skipIf(HAS_COMPILE, "this torch has torch.compile")
    def test_the_reason_is_reported_and_the_rest_is_timed(self):
        r = run(timing_trials=3)
        self.assertEqual(r["verdict"], "passed", r["failures"])
        t = r["timing"]
        self.assertEqual(t["baselines"], {})
        self.assertEqual(t["baseline_errors"], {
            "compile": "torch.compile is not available in torch %s (it needs torch 2.0 or newer)" % torch.__version__})
        self.assertTrue(t["baseline_errors"]["compile"].startswith("torch.compile is not available in torch 1.13"))
        self.assertEqual(t["reference"]["trials"], 3)
        self.assertEqual(t["candidate"]["trials"], 3)
        self.assertGreater(t["speedup"], 0)

    def test_no_baselines_asked_none_reported(self):
        r = ev.evaluate(params(fixtures.GOOD))
        self.assertNotIn("baselines", r["timing"])
        self.assertNotIn("baseline_errors", r["timing"])
        self.assertEqual(sorted(r["timing"]), ["boundary", "candidate", "reference", "speedup"])


class StandInCompileTest(unittest.TestCase):
    def evaluate_with(self, fake, **kw):
        with mock.patch.object(torch, "compile", fake, create=True):
            return run(**kw)

    def test_stats_like_the_reference_and_compilation_untimed(self):
        fake = CountingCompile()
        r = self.evaluate_with(fake, timing_trials=4)
        self.assertEqual(r["verdict"], "passed", r["failures"])
        t = r["timing"]
        self.assertEqual(t["baseline_errors"], {})
        self.assertEqual(sorted(t["baselines"]), ["compile"])
        s = t["baselines"]["compile"]
        self.assertEqual(sorted(s), sorted(t["reference"]))
        self.assertEqual(s["trials"], 4)
        self.assertLessEqual(s["min_ms"], s["p10_ms"])
        self.assertLessEqual(s["p10_ms"], s["median_ms"])
        self.assertLessEqual(s["median_ms"], s["p90_ms"])
        self.assertNotIn("compile", t)  # under baselines only
        # The reference itself was compiled; warm-ups and the check before the loop, then the loop's own.
        self.assertEqual([type(m).__name__ for m in fake.compiled], ["Model"])
        self.assertEqual(fake.calls, baselines.WARMUP + 1 + timing.WARMUP + 4)

    def test_a_compile_failure_is_reported_not_raised(self):
        def broken(model):
            raise RuntimeError("inductor exploded\nsecond line of the report")
        r = self.evaluate_with(broken)
        self.assertEqual(r["verdict"], "passed", r["failures"])
        self.assertEqual(r["timing"]["baseline_errors"],
                         {"compile": "torch.compile failed: RuntimeError: inductor exploded"})
        self.assertEqual(r["timing"]["baselines"], {})

    def test_a_failure_at_the_first_call_is_a_compile_failure(self):
        def wrong_shape(out, calls):
            raise ValueError("backend compiler failed")
        r = self.evaluate_with(CountingCompile(wrong_shape))
        self.assertEqual(r["timing"]["baseline_errors"]["compile"],
                         "torch.compile failed: ValueError: backend compiler failed")

    def test_a_mismatch_is_reported_not_timed(self):
        fake = CountingCompile(lambda out, calls: out + 1.0)
        r = self.evaluate_with(fake, timing_trials=3)
        self.assertEqual(r["verdict"], "passed", r["failures"])
        reason = r["timing"]["baseline_errors"]["compile"]
        self.assertTrue(reason.startswith("torch.compile's output differs from the reference: output 0: 32 of 32 "
                                          "elements differ beyond atol"), reason)
        self.assertEqual(r["timing"]["baselines"], {})
        self.assertEqual(fake.calls, baselines.WARMUP + 1)  # never timed

    def test_an_exception_inside_the_timing_loop_is_the_baselines_own(self):
        def fails_late(out, calls):
            if calls > baselines.WARMUP + 1 + timing.WARMUP:
                raise RuntimeError("recompiled and failed")
            return out
        r = self.evaluate_with(CountingCompile(fails_late), timing_trials=3)
        self.assertEqual(r["verdict"], "passed", r["failures"])  # not blamed on the candidate
        self.assertEqual(r["timing"]["baseline_errors"],
                         {"compile": "compile raised during timing: RuntimeError: recompiled and failed"})
        self.assertEqual(r["timing"]["baselines"], {})
        self.assertEqual(r["timing"]["candidate"]["trials"], 3)

    def test_a_failed_candidate_compiles_nothing(self):
        fake = CountingCompile()
        with mock.patch.object(torch, "compile", fake, create=True):
            r = ev.evaluate(params(candidate("return torch.relu(self.lin(x)) * 3.0"), baselines=["compile"]))
        self.assertEqual(r["verdict"], "failed")
        self.assertNotIn("timing", r)
        self.assertEqual(fake.compiled, [])


class ParamsTest(unittest.TestCase):
    def assertRefused(self, value, *words):
        with self.assertRaises(jsonrpc.RpcError) as caught:
            ev.evaluate(params(fixtures.GOOD, baselines=value))
        self.assertEqual(caught.exception.code, jsonrpc.INVALID_PARAMS)
        for w in words:
            self.assertIn(w, caught.exception.message)

    def test_bad_baselines_are_refused_before_anything_runs(self):
        self.assertRefused("compile", "params.baselines must be a list of names such as [\"compile\"]")
        self.assertRefused([1], "params.baselines must be a list")
        self.assertRefused(["compile", "tensorrt"], "unknown baseline 'tensorrt' (known: compile)")

    def test_names_are_kept_once_in_order(self):
        self.assertEqual(baselines.parse({"baselines": ["compile", "compile"]}), ["compile"])
        self.assertEqual(baselines.parse({"baselines": None}), [])
        self.assertEqual(baselines.parse({}), [])


@unittest.skipUnless(HAS_COMPILE, "torch.compile needs torch >= 2.0")
class RealTorchCompileTest(unittest.TestCase):
    def test_the_compiled_reference_is_timed(self):
        r = run(timing_trials=5)
        self.assertEqual(r["verdict"], "passed", r["failures"])
        self.assertEqual(r["timing"]["baseline_errors"], {})
        self.assertEqual(r["timing"]["baselines"]["compile"]["trials"], 5)
        self.assertGreater(r["timing"]["baselines"]["compile"]["median_ms"], 0)


if __name__ == "__main__":
    unittest.main()
