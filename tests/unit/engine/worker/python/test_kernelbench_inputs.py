"""KernelBench's inputs drawn on threads give what torch.manual_seed + get_inputs() gives."""

import unittest

import torch

from hiera_runner import inputs


def get_inputs():
    a = torch.rand(64, 33)
    b = torch.randn(7, 5, dtype=torch.float64)
    c = torch.randint(0, 100, (9,))
    d = torch.empty(17).uniform_(-2, 3)
    return [a, [b, c], d, 3]


def get_inputs_untraceable():
    # rand_like takes no generator: it draws from the global one.
    return [torch.rand_like(torch.empty(40)), torch.rand(8)]


def serial(fn, seeds):
    out = []
    for s in seeds:
        torch.manual_seed(s)
        out.append(fn())
    return out


def same(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


class SeededInputsTest(unittest.TestCase):
    SEEDS = [11, 12345, 7, 2 ** 31 + 5, 99]

    def test_threads_give_the_serial_values(self):
        got = list(inputs.seeded_cpu_inputs(get_inputs, self.SEEDS))
        self.assertEqual(len(got), 5)
        self.assertTrue(same(got, serial(get_inputs, self.SEEDS)))

    def test_a_draw_from_the_global_generator_falls_back_to_serial(self):
        got = list(inputs.seeded_cpu_inputs(get_inputs_untraceable, self.SEEDS))
        self.assertTrue(same(got, serial(get_inputs_untraceable, self.SEEDS)))

    def test_one_worker_draws_in_order(self):
        got = list(inputs.seeded_cpu_inputs(get_inputs, self.SEEDS, workers=1))
        self.assertTrue(same(got, serial(get_inputs, self.SEEDS)))

    def test_the_seeded_mode_injects_its_generator(self):
        g = torch.Generator().manual_seed(5)
        with inputs._Seeded(g, inputs._random_callables()):
            x = torch.rand(10)
        torch.manual_seed(5)
        self.assertTrue(torch.equal(x, torch.rand(10)))


if __name__ == "__main__":
    unittest.main()
