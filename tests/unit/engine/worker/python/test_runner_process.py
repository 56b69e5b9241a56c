"""`python3 -m hiera_runner` as the engine sees it: frames over pipes."""

import json
import os
import select
import subprocess
import sys
import tempfile
import time
import unittest

import torch

import fixtures
from fixtures import candidate, frame, request
from hiera_runner import framing

TIMEOUT_S = 60


class Runner(object):
    def __init__(self):
        env = dict(os.environ, PYTHONPATH=fixtures.PACKAGE_DIR, PYTHONUNBUFFERED="1")
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "hiera_runner"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, env=env)
        self.reader = framing.FrameReader()

    def send(self, message):
        data = message if isinstance(message, bytes) else frame(message)
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def receive(self):
        """The next frame as a dict, or None at end of stream."""
        deadline = time.time() + TIMEOUT_S
        while True:
            item = self.reader.next()
            if item is not None:
                assert not isinstance(item, framing.FramingError), item
                return json.loads(item.decode())
            left = deadline - time.time()
            if left <= 0:
                raise AssertionError("no reply within %d s; stderr: %s" % (TIMEOUT_S, self.stderr_text()))
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                data = os.read(self.proc.stdout.fileno(), 1 << 16)
                if not data:
                    return None
                self.reader.feed(data)

    def call(self, rid, method, params=None):
        self.send(request(rid, method, params))
        return self.receive()

    def stderr_text(self):
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", "replace")

    def close(self):
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except (OSError, BrokenPipeError):
                pass
        try:
            self.proc.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()


class RunnerSessionTest(unittest.TestCase):
    """One runner serves the whole class, in order (the names fix the order)."""

    @classmethod
    def setUpClass(cls):
        cls.runner = Runner()

    @classmethod
    def tearDownClass(cls):
        cls.runner.close()

    def test_01_hello(self):
        reply = self.runner.call(1, "hello", {"engine_version": "0.1.0"})
        self.assertEqual(reply, {"jsonrpc": "2.0", "id": 1, "result": {
            "worker_version": "0.1.0", "python": sys.executable, "torch": torch.__version__,
            "cuda": torch.cuda.is_available(),
            "device": reply["result"]["device"] if torch.cuda.is_available() else None}})

    def test_02_hello_from_another_version_is_refused(self):
        reply = self.runner.call(2, "hello", {"engine_version": "0.2.0"})
        self.assertEqual(reply["id"], 2)
        self.assertEqual(reply["error"]["code"], -32600)
        self.assertIn("0.2.0", reply["error"]["message"])
        self.assertIn("0.1.0", reply["error"]["message"])

    def test_03_evaluate_passes(self):
        reply = self.runner.call(3, "evaluate", fixtures.params(fixtures.GOOD, timing_trials=3))
        self.assertEqual(reply["id"], 3)
        result = reply["result"]
        self.assertEqual(result["verdict"], "passed", result)
        self.assertEqual(result["failures"], [])
        self.assertEqual(len(result["trials"]), 6)  # five and the second shape
        self.assertEqual(result["timing"]["candidate"]["trials"], 3)
        self.assertEqual(set(result["timing"]), {"reference", "candidate", "speedup", "boundary"})
        self.assertEqual(set(result["timing"]["boundary"]), {"candidate_wall_median_ms", "exchange_median_ms",
                                                               "harness_gap_ms", "events_median_ms", "wall_spread_ms",
                                                               "trusted_noise_ms", "unexplained_median_ms",
                                                               "load_delay_median_ms"})
        self.assertEqual(result["sandbox"]["dies_with_parent"], "in force")
        self.assertEqual(set(result["phases_ms"]), {"reference_load", "candidate_start", "calibration", "candidate_load",
                                                      "second_shape", "verification", "first_call", "baselines",
                                                      "timing"})

    def test_04_candidate_that_raises_then_keeps_serving(self):
        bad = candidate("y = self.lin(x)\nraise IndexError('tile index out of range')")
        reply = self.runner.call(4, "evaluate", fixtures.params(bad))
        self.assertEqual(reply["result"]["verdict"], "failed")
        self.assertEqual(reply["result"]["failures"], [{"check": "runtime", "message":
                         "IndexError: tile index out of range (candidate line 13: "
                         "`raise IndexError('tile index out of range')`)"}])
        self.assertNotIn("restart", reply["result"])
        self.assertEqual(self.runner.call(5, "hello", {})["result"]["worker_version"], "0.1.0")

    def test_05_candidate_that_prints_does_not_corrupt_the_stream(self):
        # The candidate runs in a process of its own, whose stdout and stderr are a file of its sandbox:
        # nothing it prints or writes on fd 1 reaches the runner's frames or even its stderr.
        noisy = candidate("print('Content-Length: 5\\r\\n\\r\\nhello')\nos.write(1, b'raw bytes on fd 1\\n')\n"
                          "return torch.relu(self.lin(x)) * 2.0", imports="import os\nprint('at import')")
        reply = self.runner.call(6, "evaluate", fixtures.params(noisy))
        self.assertEqual(reply["id"], 6)
        self.assertEqual(reply["result"]["verdict"], "passed", reply["result"])
        text = self.runner.stderr_text()
        self.assertNotIn("at import", text)
        self.assertNotIn("raw bytes on fd 1", text)

    def test_06_protocol_errors_get_replies_and_the_loop_goes_on(self):
        self.runner.send(b"Content-Length: 9\r\n\r\n{not json")
        self.assertEqual(self.runner.receive()["error"]["code"], -32700)
        self.assertEqual(self.runner.call(7, "no_such_method", {})["error"]["code"], -32601)
        reply = self.runner.call(8, "evaluate", {"task": {"kind": "cuda", "reference": {"source": ""}}})
        self.assertEqual(reply["error"]["code"], -32602)
        # A notification gets no reply: the next reply is the next request's.
        self.runner.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 8}})
        self.assertEqual(self.runner.call(9, "hello", {})["id"], 9)

    def test_07_frames_in_pieces_and_several_in_one_write(self):
        data = frame(request(10, "hello", {})) + frame(request(11, "hello", {}))
        self.runner.send(data[:7])
        time.sleep(0.05)
        self.runner.send(data[7:30])
        time.sleep(0.05)
        self.runner.send(data[30:])
        self.assertEqual([self.runner.receive()["id"], self.runner.receive()["id"]], [10, 11])

    def test_08_profile(self):
        reply = self.runner.call(12, "profile", {"task": fixtures.task(fixtures.GOOD), "which": "candidate"})
        result = reply["result"]
        self.assertTrue(result["kernels"])
        k = result["kernels"][0]
        self.assertEqual(set(k), {"name", "grid", "block", "calls", "total_ns", "mean_ns"})
        self.assertGreater(k["calls"], 0)
        self.assertEqual(result["metrics"], {"unavailable": "hardware counters are read by the native worker"})

    def test_99_shutdown(self):
        self.assertEqual(self.runner.call(99, "shutdown", {}), {"jsonrpc": "2.0", "id": 99, "result": None})
        self.assertIsNone(self.runner.receive())  # EOF: nothing after the reply
        self.assertEqual(self.runner.proc.wait(timeout=TIMEOUT_S), 0)


class CandidateDeathTest(unittest.TestCase):
    def test_a_candidate_calling_os_exit_fails_and_the_runner_goes_on(self):
        # The candidate's process dies, not the runner: the evaluation fails with the reason and the
        # runner answers the next request.
        runner = Runner()
        try:
            dies = candidate("os._exit(1)", imports="import os")
            reply = runner.call(1, "evaluate", fixtures.params(dies))
            self.assertEqual(reply["result"]["verdict"], "failed")
            self.assertEqual(reply["result"]["failures"],
                             [{"check": "runtime", "message": "the candidate process exited with code 1 during forward"}])
            self.assertNotIn("restart", reply["result"])
            self.assertEqual(runner.call(2, "hello", {})["result"]["worker_version"], "0.1.0")
        finally:
            runner.close()


if __name__ == "__main__":
    unittest.main()
