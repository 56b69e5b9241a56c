"""Inputs (seeds, distributions), timing statistics and the speed-of-light bound."""

import unittest

import torch

import fixtures  # noqa: F401
from hiera_runner import ceilings, inputs, timing


class InputsTest(unittest.TestCase):
    @staticmethod
    def get_inputs():
        return [torch.rand(100, 50), torch.randint(0, 7, (5,)), 3, torch.rand(2, dtype=torch.float64)]

    def test_distributions_cycle(self):
        self.assertEqual([inputs.distribution_for(t) for t in range(5)],
                         ["uniform", "normal", "large", "uniform", "normal"])

    def test_distributions_shape_floats_and_keep_the_rest(self):
        u = inputs.make(self.get_inputs, 5, "uniform", torch.device("cpu"))
        n = inputs.make(self.get_inputs, 5, "normal", torch.device("cpu"))
        big = inputs.make(self.get_inputs, 5, "large", torch.device("cpu"))
        self.assertGreaterEqual(float(u[0].min()), 0.0)
        self.assertLess(float(u[0].max()), 1.0)
        self.assertLess(float(n[0].min()), 0.0)  # negatives
        self.assertGreater(float(big[0].abs().max()), 100.0)  # large magnitudes
        for x in (u, n, big):
            self.assertEqual(x[0].shape, (100, 50))
            self.assertEqual(x[0].dtype, torch.float32)
            self.assertEqual(x[3].dtype, torch.float64)
            self.assertEqual(x[2], 3)
        # Integer tensors are get_inputs' own, drawn under the seed.
        self.assertTrue(torch.equal(u[1], n[1]))
        torch.manual_seed(5)
        self.assertTrue(torch.equal(u[1], self.get_inputs()[1]))

    def test_same_seed_same_inputs_other_seed_other_inputs(self):
        a = inputs.make(self.get_inputs, 9, "normal", torch.device("cpu"))
        b = inputs.make(self.get_inputs, 9, "normal", torch.device("cpu"))
        c = inputs.make(self.get_inputs, 10, "normal", torch.device("cpu"))
        self.assertTrue(torch.equal(a[0], b[0]))
        self.assertFalse(torch.equal(a[0], c[0]))

    def test_half_precision_inputs(self):
        x = inputs.make(lambda: [torch.zeros(8, dtype=torch.float16), torch.zeros(8, dtype=torch.bfloat16)],
                        1, "large", torch.device("cpu"))
        self.assertEqual((x[0].dtype, x[1].dtype), (torch.float16, torch.bfloat16))
        self.assertTrue(bool(torch.isfinite(x[0]).all()))

    def test_clone_is_deep_for_tensors(self):
        a = [torch.ones(3), 2, (torch.zeros(2),)]
        b = inputs.clone(a)
        b[0].add_(1)
        b[2][0].add_(1)
        self.assertEqual(float(a[0].sum()), 3.0)
        self.assertEqual(float(a[2][0].sum()), 0.0)
        self.assertEqual(inputs.shapes(a), {"input0": [3], "input1": 2})


class TimingTest(unittest.TestCase):
    def test_percentiles_and_summary(self):
        s = timing.summarize([5.0, 1.0, 3.0, 2.0, 4.0])
        self.assertEqual(s, {"median_ms": 3.0, "min_ms": 1.0, "p10_ms": 1.4, "p90_ms": 4.6, "trials": 5})
        self.assertAlmostEqual(timing.percentile([1.0, 2.0], 0.5), 1.5)

    def test_time_pair_on_cpu_interleaves_and_counts(self):
        order = []
        r = timing.time_pair(lambda: order.append("r"), lambda: order.append("c"), torch.device("cpu"), 4, warmup=1)
        self.assertEqual("".join(order), "rc" + "rc" + "cr" + "rc" + "cr")
        self.assertEqual(r["reference"]["trials"], 4)
        self.assertEqual(r["candidate"]["trials"], 4)
        self.assertGreater(r["speedup"], 0)

    def test_l2_default_without_a_gpu(self):
        if not torch.cuda.is_available():
            self.assertEqual(timing.l2_bytes(0), 128 << 20)


class SpeedOfLightTest(unittest.TestCase):
    C = {"copy_gbs": 4000.0, "gemm_tflops": {"float32": 50.0, "tf32": 400.0, "bfloat16": 800.0}}

    def test_memory_bound_and_compute_bound(self):
        # 4 GB over 4000 GB/s = 1 ms; 1e9 float32 flops as 3xTF32 (400 / 3 TFLOP/s, above float32's 50) = 7.5 us.
        self.assertAlmostEqual(ceilings.speed_of_light_ms(1e9, 4e9, self.C), 1.0)
        self.assertAlmostEqual(ceilings.speed_of_light_ms(1e12, 4e6, self.C), 7.5)
        # Without a TF32 rate float32's own 50 TFLOP/s bounds.
        no_tf32 = {"copy_gbs": 4000.0, "gemm_tflops": {"float32": 50.0}}
        self.assertAlmostEqual(ceilings.speed_of_light_ms(1e12, 4e6, no_tf32), 20.0)
        # Where float32's rate is above a third of TF32's, it stays.
        fast_fp32 = {"copy_gbs": 4000.0, "gemm_tflops": {"float32": 200.0, "tf32": 400.0}}
        self.assertAlmostEqual(ceilings.speed_of_light_ms(1e12, 4e6, fast_fp32), 5.0)

    def test_peak_by_dtype(self):
        self.assertAlmostEqual(ceilings.speed_of_light_ms(8e11, None, self.C, torch.bfloat16), 1.0)
        self.assertAlmostEqual(ceilings.speed_of_light_ms(4e11, None, self.C, torch.float32, {"tf32"}), 1.0)
        # No float16 peak listed: the highest one bounds (still a lower bound on time).
        self.assertAlmostEqual(ceilings.speed_of_light_ms(8e11, None, self.C, torch.float16), 1.0)

    def test_nothing_to_bound(self):
        self.assertIsNone(ceilings.speed_of_light_ms(None, None, self.C))
        self.assertIsNone(ceilings.speed_of_light_ms(1e9, 1e9, None))
        self.assertIsNone(ceilings.speed_of_light_ms(1e9, None, {"copy_gbs": 1.0}))

    def test_find_ceilings_accepts_a_probe_result(self):
        probe = {"name": "NVIDIA H200", "measured": {"copy_gbs": 4300.0, "gemm_tflops": {"float32": 51.0}}}
        self.assertEqual(ceilings.find_ceilings({"ceilings": probe}, {}), probe["measured"])
        self.assertEqual(ceilings.find_ceilings({}, {"ceilings": self.C}), self.C)
        self.assertIsNone(ceilings.find_ceilings({}, {}))


if __name__ == "__main__":
    unittest.main()
