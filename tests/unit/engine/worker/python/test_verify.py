"""verify's default tolerances are the engine's (engine/common/default_tolerance.h):
one figure per element type, whichever side applies it."""

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


if __name__ == "__main__":
    unittest.main()
