"""timing.time_sides: any number of sides, interleaved in rotating order."""

import unittest

import torch

import fixtures  # noqa: F401  (puts hiera_runner on sys.path)
from hiera_runner import timing


class TimeSidesTest(unittest.TestCase):
    def test_three_sides_rotate_so_each_takes_every_position(self):
        order = []
        sides = [(name, (lambda n=name: order.append(n))) for name in ("r", "c", "b")]
        stats = timing.time_sides(sides, torch.device("cpu"), 4, warmup=1)
        self.assertEqual("".join(order), "rcb" + "rcb" + "cbr" + "brc" + "rcb")
        self.assertEqual(sorted(stats), ["b", "c", "r"])
        for s in stats.values():
            self.assertEqual(s["trials"], 4)
            self.assertLessEqual(s["min_ms"], s["median_ms"])

    def test_time_pair_is_two_sides_with_a_speedup(self):
        order = []
        r = timing.time_pair(lambda: order.append("r"), lambda: order.append("c"), torch.device("cpu"), 3, warmup=0)
        self.assertEqual("".join(order), "rc" + "cr" + "rc")
        self.assertEqual(sorted(r), ["candidate", "reference", "speedup"])
        self.assertAlmostEqual(r["speedup"], r["reference"]["median_ms"] / r["candidate"]["median_ms"])


if __name__ == "__main__":
    unittest.main()
