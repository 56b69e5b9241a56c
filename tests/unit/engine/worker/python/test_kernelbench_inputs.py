"""KernelBench's inputs drawn on threads give what torch.manual_seed + get_inputs() gives, whatever the
job's own thread does with torch's global generator meanwhile."""

import threading
import unittest

import torch
import torch.nn.functional as F

from hiera_runner import kernelbench_inputs as inputs


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
        got = list(inputs.SeededDraws(get_inputs, self.SEEDS))
        self.assertEqual(len(got), 5)
        self.assertTrue(same(got, serial(get_inputs, self.SEEDS)))

    def test_a_draw_from_the_global_generator_falls_back_to_serial(self):
        got = list(inputs.SeededDraws(get_inputs_untraceable, self.SEEDS))
        self.assertTrue(same(got, serial(get_inputs_untraceable, self.SEEDS)))

    def test_one_worker_draws_in_order(self):
        got = list(inputs.SeededDraws(get_inputs, self.SEEDS, workers=1))
        self.assertTrue(same(got, serial(get_inputs, self.SEEDS)))

    def test_the_seeded_mode_injects_its_generator(self):
        g = torch.Generator().manual_seed(5)
        with inputs._Seeded(g, inputs._random_callables()):
            x = torch.rand(10)
        torch.manual_seed(5)
        self.assertTrue(torch.equal(x, torch.rand(10)))


class DrawsAheadTest(unittest.TestCase):
    SEEDS = [3, 1 << 33, 17, 4, 5]

    def test_the_global_generator_used_meanwhile_changes_nothing(self):
        gate = threading.Event()

        def gated():
            gate.wait(10)
            return get_inputs()
        draws = inputs.SeededDraws(gated, self.SEEDS)
        # The job's thread reseeds and draws from the global generator while the draws wait, then run.
        torch.manual_seed(0)
        torch.rand(1000)
        gate.set()
        for _ in range(50):
            torch.manual_seed(1)
            torch.randn(100)
        got = list(draws)
        self.assertIsNone(draws.serial_reason)
        self.assertTrue(same(got, serial(get_inputs, self.SEEDS)))

    def test_a_global_draw_is_named_and_every_trial_drawn_again(self):
        draws = inputs.SeededDraws(get_inputs_untraceable, self.SEEDS)
        got = list(draws)
        self.assertEqual(draws.serial_reason,
                         "get_inputs() calls rand_like, which draws from the global generator")
        self.assertTrue(same(got, serial(get_inputs_untraceable, self.SEEDS)))

    def test_a_draw_that_fails_on_a_thread_fails_on_the_jobs_thread(self):
        calls = []

        def broken():
            calls.append(threading.current_thread().name)
            raise ValueError("no inputs today")
        draws = inputs.SeededDraws(broken, self.SEEDS)
        with self.assertRaisesRegex(ValueError, "no inputs today"):
            list(draws)
        self.assertEqual(draws.serial_reason, "a draw on a thread failed: ValueError: no inputs today")
        self.assertEqual(calls, ["hiera-kernelbench-inputs", threading.current_thread().name])

    def test_stopped_draws_start_no_more(self):
        gate, calls = threading.Event(), []

        def counted():
            calls.append(1)
            gate.wait(10)
            return [torch.rand(4)]
        draws = inputs.SeededDraws(counted, self.SEEDS)
        while not calls:
            gate.wait(0.01)
        draws.stop()
        gate.set()
        draws.wait()
        self.assertEqual(len(calls), 1)

    def test_seeds_are_kernelbenchs(self):
        # KernelBench: torch.manual_seed(42), then one randint(0, 2**32 - 1, (1,)) per trial.
        torch.manual_seed(42)
        expected = [int(torch.randint(0, 2 ** 32 - 1, (1,)).item()) for _ in range(5)]
        state = torch.get_rng_state()
        self.assertEqual(inputs.kernelbench_seeds(5), expected)
        self.assertTrue(torch.equal(torch.get_rng_state(), state))

    def test_random_functions_are_told_apart_by_name(self):
        for fn in (torch.rand_like, torch.randn_like, F.dropout, torch.Tensor.log_normal_, F.rrelu):
            self.assertTrue(inputs._draws_randomly(fn), fn)
        for fn in (F.normalize, F.batch_norm, torch.ones, torch.Tensor.add_, torch.randperm):
            self.assertEqual(inputs._draws_randomly(fn), fn is torch.randperm, fn)


if __name__ == "__main__":
    unittest.main()
