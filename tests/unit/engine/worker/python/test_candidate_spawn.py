"""The candidate process the runner starts before it imports torch: when it is
started, which job adopts it, and that a wrong guess of the device ends it."""

import os
import subprocess
import sys
import unittest

import torch

from hiera_runner import candidate_spawn, isolation


class LikelyDeviceTest(unittest.TestCase):
    def setUp(self):
        self.saved = {k: os.environ.get(k) for k in ("CUDA_VISIBLE_DEVICES", "HIERA_DEVICE")}

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def test_hidden_devices_mean_no_guess(self):
        for hidden in ("", "-1", "none"):
            os.environ["CUDA_VISIBLE_DEVICES"] = hidden
            self.assertIsNone(candidate_spawn.likely_cuda_device(), hidden)

    def test_the_guess_follows_the_device_node_and_hiera_device(self):
        os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        os.environ["HIERA_DEVICE"] = "3"
        expected = "cuda:3" if os.path.exists("/dev/nvidiactl") else None
        self.assertEqual(candidate_spawn.likely_cuda_device(), expected)


class EarlyProcessTest(unittest.TestCase):
    """On the CPU, with the process started for "cpu" by hand (start_early's
    guess is only ever a CUDA device): the mechanics are the same."""

    def setUp(self):
        isolation.close_spares()
        self.saved = os.environ.pop("HIERA_CANDIDATE_SPARES", None)

    def tearDown(self):
        isolation.close_spares()
        if self.saved is not None:
            os.environ["HIERA_CANDIDATE_SPARES"] = self.saved

    def test_the_first_spare_of_its_device_is_the_early_process(self):
        early = candidate_spawn.spawn("cpu")
        candidate_spawn._early = early
        proc = isolation.acquire(torch.device("cpu"))
        try:
            self.assertEqual(proc.proc.pid, early.proc.pid)
            self.assertIsNone(candidate_spawn._early)
            ready = proc.wait_ready()
            self.assertEqual(ready["op"], "ready")
            self.assertEqual(ready["pid"], early.proc.pid)
        finally:
            proc.close()
        self.assertIsNotNone(early.proc.poll())
        self.assertFalse(os.path.exists(early.scratch))

    def test_a_process_for_another_device_is_ended_not_adopted(self):
        early = candidate_spawn.spawn("cpu")
        early.device_name = "cuda:0"  # as if the guess had been a GPU this runner does not use
        candidate_spawn._early = early
        proc = isolation.acquire(torch.device("cpu"))
        try:
            self.assertNotEqual(proc.proc.pid, early.proc.pid)
            self.assertEqual(early.proc.wait(timeout=10), -9)
            self.assertFalse(os.path.exists(early.scratch))
        finally:
            proc.close()

    def test_hello_ends_a_process_nobody_adopts(self):
        early = candidate_spawn.spawn("cpu")
        candidate_spawn._early = early
        self.assertIsNone(candidate_spawn.take_early(None))
        self.assertIsNotNone(early.proc.poll())


class RunnerStartTest(unittest.TestCase):
    def test_without_a_gpu_the_runner_starts_no_process_before_torch(self):
        # A runner whose CUDA is hidden answers end of input with no candidate process left behind.
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONPATH=os.pathsep.join(sys.path))
        run = subprocess.run([sys.executable, "-c",
                              "import sys; from hiera_runner import candidate_spawn as c; c.start_early(); "
                              "sys.exit(c._early is not None)"], env=env, timeout=60)
        self.assertEqual(run.returncode, 0)


if __name__ == "__main__":
    unittest.main()
