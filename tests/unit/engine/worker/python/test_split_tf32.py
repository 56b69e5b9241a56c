"""split_tf32 (3xTF32 GEMMs): the split's bits and error bound, the operands'
layout as a factorisation of the product, the weight cache, the TF32 switch
restored, the kernel compiled by NVRTC, and on a GPU the product against a
float64 one (skipped without a GPU)."""

import unittest

import torch

import fixtures  # noqa: F401
from hiera_runner import nvrtc_runtime as rt
from hiera_runner import split_tf32

HAS_CUDA = torch.cuda.is_available()


def low_bits(t):
    return torch.bitwise_and(t.view(torch.int32), 0x1FFF)


class SplitTest(unittest.TestCase):
    def test_parts_are_tf32_numbers_within_2_to_the_minus_22(self):
        torch.manual_seed(0)
        for x in (torch.randn(4096), torch.randn(4096) * 1e6, torch.randn(4096) * 1e-6, -torch.rand(4096)):
            big, small = split_tf32.split(x)
            self.assertEqual(int(low_bits(big).abs().sum()), 0)
            self.assertEqual(int(low_bits(small).abs().sum()), 0)
            error = (big.double() + small.double() - x.double()).abs()
            self.assertTrue(bool((error <= x.double().abs() * 2.0 ** -22).all()), float((error / x.double().abs()).max()))
            # TF32 alone is 2**-12 off at most, and for most elements more than 2**-22.
            self.assertTrue(bool(((big.double() - x.double()).abs() <= x.double().abs() * 2.0 ** -11).all()))

    def test_rounds_to_nearest_ties_away_from_zero(self):
        one_and_half_ulp = 1.0 + 2.0 ** -11  # halfway between TF32's 1 and 1 + 2**-10
        big, small = split_tf32.split(torch.tensor([one_and_half_ulp, -one_and_half_ulp, 1.0 + 2.0 ** -12]))
        self.assertEqual(big.tolist(), [1.0 + 2.0 ** -10, -(1.0 + 2.0 ** -10), 1.0])
        self.assertEqual(small.tolist(), [-(2.0 ** -11), 2.0 ** -11, 2.0 ** -12])

    def test_infinities_keep_a_zero_small_part(self):
        big, small = split_tf32.split(torch.tensor([float("inf"), -float("inf"), 2.0]))
        self.assertEqual(big.tolist(), [float("inf"), -float("inf"), 2.0])
        self.assertEqual(small.tolist(), [0.0, 0.0, 0.0])

    def test_rows_hold_the_parts_in_each_operands_order(self):
        x = torch.randn(3, 5, 8)
        big, small = split_tf32.split(x)
        self.assertTrue(torch.equal(split_tf32.split_rows(x, 0), torch.cat([big, big, small], -1)))
        self.assertTrue(torch.equal(split_tf32.split_rows(x, 1), torch.cat([big, small, big], -1)))

    def test_the_tripled_product_is_the_float32_product(self):
        # In float32 on the CPU the three products add up to x @ w.T with float32's own error (over a sum three
        # times as long) times a few.
        torch.manual_seed(1)
        x, w = torch.randn(64, 256), torch.randn(32, 256)
        exact = x.double() @ w.double().T
        float32_error = float(((x @ w.T).double() - exact).abs().max() / exact.abs().max())
        tripled = split_tf32.split_rows(x, 0) @ split_tf32.split_rows(w, 1).T
        self.assertLess(float((tripled.double() - exact).abs().max() / exact.abs().max()), 4 * float32_error)
        # Without the small parts (TF32 alone) the error is a thousand times larger.
        big_only = split_tf32.split(x)[0] @ split_tf32.split(w)[0].T
        self.assertGreater(float((big_only.double() - exact).abs().max() / exact.abs().max()), 1e-4)


class FallbackAndCacheTest(unittest.TestCase):
    def test_cpu_and_other_dtypes_take_the_ordinary_product(self):
        x, w, b = torch.randn(4, 8), torch.randn(3, 8), torch.randn(3)
        self.assertTrue(torch.equal(split_tf32.linear(x, w, b), torch.nn.functional.linear(x, w, b)))
        self.assertTrue(torch.equal(split_tf32.matmul(x, w.T), torch.matmul(x, w.T)))
        xd, wd = x.double(), w.double()
        self.assertTrue(torch.equal(split_tf32.linear(xd, wd), torch.nn.functional.linear(xd, wd)))

    def test_a_weight_is_split_once_per_version(self):
        w = torch.nn.Parameter(torch.randn(6, 8))
        calls = []

        def make(t):
            calls.append(1)
            return split_tf32.split_rows(t.detach(), 1)

        first = split_tf32._tf32x3_cached(w, "linear", make)
        self.assertIs(split_tf32._tf32x3_cached(w, "linear", make), first)
        self.assertEqual(len(calls), 1)
        with torch.no_grad():
            w.mul_(2.0)  # a new version: split again
        second = split_tf32._tf32x3_cached(w, "linear", make)
        self.assertEqual(len(calls), 2)
        self.assertTrue(torch.equal(second, split_tf32.split_rows(w.detach(), 1)))
        with torch.inference_mode():
            frozen = torch.randn(6, 8)
        split_tf32._tf32x3_cached(frozen, "linear", make)
        split_tf32._tf32x3_cached(frozen, "linear", make)
        self.assertEqual(len(calls), 4)  # an inference tensor has no version: split each call

    def test_the_switch_is_restored_when_the_product_raises(self):
        before = torch.backends.cuda.matmul.allow_tf32

        def fails():
            self.assertTrue(torch.backends.cuda.matmul.allow_tf32)
            raise ValueError("boom")

        with self.assertRaises(ValueError):
            split_tf32._tf32x3_product(fails)
        self.assertEqual(torch.backends.cuda.matmul.allow_tf32, before)


def nvrtc_available():
    try:
        rt.find_nvrtc()
        return True
    except Exception:
        return False


@unittest.skipUnless(nvrtc_available(), "no NVRTC")
class KernelCompilesTest(unittest.TestCase):
    def test_the_split_kernel_compiles_for_sm_90(self):
        ptx, lowered = rt.compile_to_ptx(split_tf32._TF32X3_KERNEL, "split_tf32_rows", arch="compute_90")
        self.assertEqual(lowered, "split_tf32_rows")
        self.assertIn(".entry split_tf32_rows", ptx)


@unittest.skipUnless(HAS_CUDA, "no CUDA device")
class GpuTest(unittest.TestCase):
    def test_linear_and_matmul_against_float64(self):
        torch.manual_seed(2)
        x, w, b = torch.randn(300, 512, device="cuda"), torch.randn(384, 512, device="cuda"), torch.randn(384, device="cuda")
        before = torch.backends.cuda.matmul.allow_tf32
        got = split_tf32.linear(x, w, b)
        self.assertEqual(torch.backends.cuda.matmul.allow_tf32, before)
        exact = torch.nn.functional.linear(x.double(), w.double(), b.double())
        self.assertLess(float((got.double() - exact).abs().max() / exact.abs().max()), 1e-5)
        # The kernel's rows and the torch split agree bit for bit.
        self.assertTrue(torch.equal(split_tf32.split_rows(x, 0), torch.cat(
            [split_tf32.split(x)[0], split_tf32.split(x)[0], split_tf32.split(x)[1]], -1)))
        a, c = torch.randn(2, 3, 40, 64, device="cuda"), torch.randn(2, 3, 64, 24, device="cuda")
        exact = torch.matmul(a.double(), c.double())
        self.assertLess(float((split_tf32.matmul(a, c).double() - exact).abs().max() / exact.abs().max()), 1e-5)


if __name__ == "__main__":
    unittest.main()
