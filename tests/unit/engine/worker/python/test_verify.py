"""verify's default tolerances are the engine's (engine/common/default_tolerance.h):
one figure per element type, whichever side applies it. The float32 screen of a
comparison gives float64's verdicts, messages and counts."""

import os
import re
import unittest

import torch

import fixtures
from hiera_runner import verify


def engine_constant(name):
    with open(os.path.join(fixtures.ROOT, "engine", "common", "default_tolerance.h")) as f:
        match = re.search(r"inline constexpr double %s = ([0-9.e+-]+);" % name, f.read())
    assert match, name
    return float(match.group(1))


class DefaultToleranceTest(unittest.TestCase):
    def test_the_runners_defaults_are_the_engines(self):
        half = engine_constant("kHalfPrecisionTolerance")
        self.assertEqual(verify.DEFAULT_TOLERANCE, {torch.float16: half, torch.bfloat16: half})
        self.assertEqual(verify.OTHER_TOLERANCE, engine_constant("kDefaultTolerance"))


def near_the_bound(dtype, n, seed, atol=1e-4, rtol=1e-4):
    """A reference of mixed magnitudes (zeros, subnormals, 1e-6 to 1e6) and a
    candidate whose errors straddle atol + rtol*|ref|: most well inside, some
    just inside, some just past it, a few far past."""
    g = torch.Generator().manual_seed(seed)
    mags = 10.0 ** (torch.rand(n, generator=g, dtype=torch.float64) * 12 - 6)
    r = mags * torch.sign(torch.randn(n, generator=g, dtype=torch.float64))
    r[torch.rand(n, generator=g) < 0.02] = 0.0
    r[torch.rand(n, generator=g) < 0.01] = 1e-40
    bound = atol + rtol * r.abs()
    scale = torch.rand(n, generator=g, dtype=torch.float64)
    pick = torch.rand(n, generator=g)
    scale = torch.where(pick < 0.01, 1.0 + 1e-6, scale)           # just past
    scale = torch.where((pick >= 0.01) & (pick < 0.02), 1.0 - 1e-6, scale)  # just inside
    scale = torch.where(pick > 0.999, torch.full_like(scale, 50.0), scale)   # far past
    c = r + bound * scale * torch.sign(torch.randn(n, generator=g, dtype=torch.float64))
    return r.to(dtype), c.to(dtype)


class ScreenTest(unittest.TestCase):
    def setUp(self):
        self.saved = (verify.SCREEN, verify.CHUNK)

    def tearDown(self):
        verify.SCREEN, verify.CHUNK = self.saved

    def both(self, r, c, tolerance, poisoned=False):
        out = []
        for screen in (False, True):
            verify.SCREEN = screen
            stats = verify.Stats()
            problems = verify.compare([r], [c], tolerance, poisoned, stats)
            out.append((problems, stats))
        return out

    def assert_same(self, r, c, tolerance=None, poisoned=False):
        (p64, s64), (p32, s32) = self.both(r, c, tolerance or verify.Tolerance({}), poisoned)
        self.assertEqual(p32, p64)
        self.assertEqual(s32.mismatches, s64.mismatches)
        self.assertEqual(s32.nan_samples, s64.nan_samples)
        self.assertAlmostEqual(s32.max_abs, s64.max_abs, delta=1e-6 * max(1.0, s64.max_abs))
        self.assertAlmostEqual(s32.max_rel, s64.max_rel, delta=1e-6 * max(1.0, s64.max_rel))
        return p64

    def test_every_dtype_near_the_bound_in_small_chunks(self):
        verify.CHUNK = 257  # most chunks pass the screen, the rest go to float64
        for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
            atol, rtol = verify.Tolerance({}).for_dtype(dtype)
            for seed in range(3):
                r, c = near_the_bound(dtype, 20000, seed, atol, rtol)
                with self.subTest(dtype=dtype, seed=seed):
                    self.assert_same(r, c)

    def test_a_passing_output_passes_with_the_same_worst_errors(self):
        r, _ = near_the_bound(torch.float32, 5000, 7)
        c = r + (1e-5 * r.abs() + 1e-6) * torch.sign(r)  # a tenth of the tolerance, everywhere
        self.assertEqual(self.assert_same(r, c), [])

    def test_nan_inf_and_poison(self):
        r, c = near_the_bound(torch.float32, 4000, 11)
        r[5], c[5] = float("inf"), float("inf")
        r[9], c[9] = float("nan"), float("nan")
        c[100] = float("nan")
        r[200] = float("-inf")
        for poisoned in (False, True):
            with self.subTest(poisoned=poisoned):
                problems = self.assert_same(r, c, poisoned=poisoned)
                self.assertIn("nan_unresolved" if poisoned else "nan_inf", [p[0] for p in problems])

    def test_complex_and_given_tolerances(self):
        r, c = near_the_bound(torch.float32, 6000, 3, atol=1e-3, rtol=0.0)
        z_r, z_c = torch.complex(r[:3000], r[3000:]), torch.complex(c[:3000], c[3000:])
        self.assert_same(z_r, z_c, verify.Tolerance({"atol": 1e-3, "rtol": 0.0}))
        self.assert_same(r, c, verify.Tolerance({"atol": 0.0, "rtol": 0.0}))
        self.assert_same(r, c, verify.Tolerance({"atol": 1e-300, "rtol": 1e-4}))  # no screen: underflows in float32

    def test_the_screen_leaves_the_reference_alone(self):
        r, c = near_the_bound(torch.float32, 1000, 5)
        kept = r.clone()
        verify.SCREEN = True
        verify.compare([r], [c], verify.Tolerance({}), False, verify.Stats())
        self.assertTrue(torch.equal(r, kept))


if __name__ == "__main__":
    unittest.main()
