"""inputs.make with a cache key: the host copy of a trial's inputs is drawn
once per (reference source, seed, distribution) and handed out as new tensors."""

import unittest

import torch

import fixtures  # noqa: F401  (puts hiera_runner on sys.path)
from hiera_runner import inputs


class InputCacheTest(unittest.TestCase):
    def setUp(self):
        self.saved = inputs.CACHE
        inputs.CACHE = inputs.InputCache(1 << 20)
        self.calls = 0

    def tearDown(self):
        inputs.CACHE = self.saved

    def get_inputs(self):
        self.calls += 1
        return [torch.rand(4, 8), torch.arange(5)]

    def test_the_same_trial_is_drawn_once_and_handed_out_as_new_tensors(self):
        first = inputs.make(self.get_inputs, 7, "normal", "cpu", "SOURCE")
        first[0].fill_(0.0)  # a candidate writing into its inputs must not reach the cache
        second = inputs.make(self.get_inputs, 7, "normal", "cpu", "SOURCE")
        self.assertEqual(self.calls, 1)
        uncached = inputs.make(self.get_inputs, 7, "normal", "cpu")
        self.assertEqual(self.calls, 2)
        self.assertTrue(torch.equal(second[0], uncached[0]))
        self.assertTrue(torch.equal(second[1], torch.arange(5)))
        self.assertFalse(torch.equal(second[0], torch.zeros(4, 8)))
        self.assertEqual((inputs.CACHE.hits, inputs.CACHE.misses), (1, 1))

    def test_a_hit_keeps_requires_grad(self):
        def get_inputs():
            return [torch.rand(3, requires_grad=True), torch.rand(3)]
        first = inputs.make(get_inputs, 1, "uniform", "cpu", "GRAD")
        second = inputs.make(get_inputs, 1, "uniform", "cpu", "GRAD")
        self.assertEqual([t.requires_grad for t in first], [True, False])
        self.assertEqual([t.requires_grad for t in second], [True, False])
        self.assertTrue(torch.equal(first[0].detach(), second[0].detach()))

    def test_seed_distribution_and_source_each_make_a_new_entry(self):
        a = inputs.make(self.get_inputs, 7, "normal", "cpu", "SOURCE")
        b = inputs.make(self.get_inputs, 8, "normal", "cpu", "SOURCE")
        c = inputs.make(self.get_inputs, 7, "large", "cpu", "SOURCE")
        inputs.make(self.get_inputs, 7, "normal", "cpu", "OTHER SOURCE")
        self.assertEqual(self.calls, 4)
        self.assertFalse(torch.equal(a[0], b[0]))
        self.assertGreater(c[0].abs().max().item(), 10.0)  # "large": randn * 1e3
        self.assertEqual(len(inputs.CACHE.entries), 4)

    def test_least_recently_used_entries_leave_beyond_the_limit(self):
        inputs.CACHE = inputs.InputCache(3 * (4 * 8 * 4 + 5 * 8))  # three trials' bytes
        for seed in (1, 2, 3):
            inputs.make(self.get_inputs, seed, "uniform", "cpu", "SOURCE")
        inputs.make(self.get_inputs, 1, "uniform", "cpu", "SOURCE")  # seed 1 used again: seed 2 is the oldest
        inputs.make(self.get_inputs, 4, "uniform", "cpu", "SOURCE")
        self.assertEqual([key[1] for key in inputs.CACHE.entries], [3, 1, 4])
        self.assertEqual(inputs.CACHE.bytes, 3 * (4 * 8 * 4 + 5 * 8))
        self.assertEqual(self.calls, 4)

    def test_an_input_larger_than_the_limit_is_not_kept(self):
        inputs.CACHE = inputs.InputCache(16)
        inputs.make(self.get_inputs, 1, "uniform", "cpu", "SOURCE")
        inputs.make(self.get_inputs, 1, "uniform", "cpu", "SOURCE")
        self.assertEqual(self.calls, 2)
        self.assertEqual(len(inputs.CACHE.entries), 0)


if __name__ == "__main__":
    unittest.main()
