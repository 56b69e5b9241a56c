"""How many spare candidate processes the runner keeps started ahead."""

import os
import unittest

import torch

from hiera_runner import isolation


class PaceTest(unittest.TestCase):
    def setUp(self):
        self.saved = os.environ.pop("HIERA_CANDIDATE_SPARES", None)
        self.cuda = torch.device("cuda", 0)  # only its type and name are read: no GPU needed

    def tearDown(self):
        if self.saved is not None:
            os.environ["HIERA_CANDIDATE_SPARES"] = self.saved

    def test_three_until_both_times_are_known(self):
        pace = isolation._Pace()
        self.assertEqual(pace.spares(self.cuda, 3, 6), 3)
        pace.started(self.cuda, 5.0)
        self.assertEqual(pace.spares(self.cuda, 3, 6), 3)

    def test_short_evaluations_keep_more_started(self):
        pace = isolation._Pace()
        pace.started(self.cuda, 5.0)
        pace.finished(self.cuda, 1.25)
        self.assertEqual(pace.spares(self.cuda, 3, 6), 6)  # 5 / 1.25 + 2, within the ceiling
        pace.finished(self.cuda, 0.01)
        self.assertEqual(pace.spares(self.cuda, 3, 6), 6)  # never past the ceiling

    def test_long_evaluations_keep_the_base(self):
        pace = isolation._Pace()
        pace.started(self.cuda, 5.0)
        pace.finished(self.cuda, 30.0)
        self.assertEqual(pace.spares(self.cuda, 3, 6), 3)

    def test_a_lying_start_time_is_ignored(self):
        pace = isolation._Pace()
        pace.started(self.cuda, -4.0)
        pace.started(self.cuda, 1e9)
        pace.finished(self.cuda, 1.0)
        self.assertEqual(pace.spares(self.cuda, 3, 6), 3)

    def test_the_environment_fixes_the_count(self):
        os.environ["HIERA_CANDIDATE_SPARES"] = "2"
        self.assertEqual(isolation._spare_count(self.cuda), 2)
        del os.environ["HIERA_CANDIDATE_SPARES"]
        self.assertEqual(isolation._spare_count(torch.device("cpu")), 1)


if __name__ == "__main__":
    unittest.main()
