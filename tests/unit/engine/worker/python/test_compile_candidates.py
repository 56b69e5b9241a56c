"""torch.compile candidates (engine/propose/compile_proposer.cpp) in the runner:
the proposer's golden texts load and behave, a torch without torch.compile
fails them at construction saying so, their first call's wall time is in
phases_ms, and torch.compile's caches of a candidate process are never the
trusted runner's."""

import copy
import os
import re
import stat
import tempfile
import unittest

import torch

import fixtures
from fixtures import params, src
from hiera_runner import evaluate as ev
from hiera_runner import isolation, loader, sandbox

GOLDEN_DIR = os.path.join(fixtures.ROOT, "tests", "fixtures", "propose", "compile")
REFERENCE = os.path.join(GOLDEN_DIR, "reference.py")
GOLDEN = {"reference_default": None, "reference_max_autotune": "max-autotune-no-cudagraphs",
          "best_default": None}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def init_inputs(module):
    return list(module.get("get_init_inputs")())


class FakeCompile(object):
    """torch.compile's stand-in (torch 1.13 has none): the function as it is,
    each call recorded."""

    def __init__(self):
        self.calls = []

    def __call__(self, fn, mode=None, **kwargs):
        self.calls.append((fn, mode))
        return fn


class GoldenCandidatesTest(unittest.TestCase):
    def setUp(self):
        self.had = hasattr(torch, "compile")
        self.saved = getattr(torch, "compile", None)

    def tearDown(self):
        if self.had:
            torch.compile = self.saved
        elif hasattr(torch, "compile"):
            del torch.compile

    def test_each_golden_module_computes_what_its_base_does_through_torch_compile(self):
        reference = loader.load(read(REFERENCE), "reference")
        init = init_inputs(reference)
        for name, mode in GOLDEN.items():
            with self.subTest(name):
                fake = FakeCompile()
                torch.compile = fake
                loaded = loader.load(read(os.path.join(GOLDEN_DIR, name + ".py.golden")), "candidate")
                # The base: the reference's Model, or the candidate's own ModelNew (the best so far).
                base = loaded.get("Model") if name.startswith("reference") else loaded.get("_HieraEagerModelNew")
                torch.manual_seed(7)
                model = base(*init)
                torch.manual_seed(7)
                new = loaded.get("ModelNew")(*init)
                self.assertIsInstance(new, base)
                x = torch.rand(4, 512)
                with torch.no_grad():
                    self.assertTrue(torch.equal(new(x), model(x)))
                    new(x)
                # Compiled once, on the first call, the base's forward bound to this instance, in the mode.
                self.assertEqual(len(fake.calls), 1)
                fn, got_mode = fake.calls[0]
                self.assertIs(fn.__self__, new)
                self.assertEqual(got_mode, mode)
                # The same parameters under the same names: the subclass adds none.
                self.assertEqual(list(new.state_dict()), list(model.state_dict()))
                # A copy compiles its own forward (never the original's parameters).
                twin = copy.deepcopy(new)
                with torch.no_grad():
                    twin.linear.weight.zero_()
                    twin.linear.bias.zero_()
                    self.assertTrue(torch.equal(twin(x), torch.zeros(4, 1024)))
                    self.assertTrue(torch.equal(new(x), model(x)))
                self.assertEqual(len(fake.calls), 2)
                self.assertIs(fake.calls[1][0].__self__, twin)
                loaded.unload()
        reference.unload()

    def test_without_torch_compile_construction_fails_saying_so(self):
        if hasattr(torch, "compile"):
            del torch.compile
        loaded = loader.load(read(os.path.join(GOLDEN_DIR, "reference_default.py.golden")), "candidate")
        with self.assertRaises(RuntimeError) as raised:
            loaded.get("ModelNew")(512, 1024, 0.5)
        self.assertEqual(str(raised.exception), "torch.compile is not available in torch %s (it needs torch 2.0 or "
                         "newer)" % torch.__version__)
        loaded.unload()


@unittest.skipIf(hasattr(torch, "compile"), "this torch has torch.compile: the candidate would compile on the CPU")
class EvaluateWithoutTorchCompileTest(unittest.TestCase):
    def test_the_candidate_fails_verification_with_the_reason(self):
        reference = read(REFERENCE).replace("batch_size = 128", "batch_size = 8")
        candidate = read(os.path.join(GOLDEN_DIR, "reference_default.py.golden")).replace(
            "batch_size = 128", "batch_size = 8")
        r = ev.evaluate(params(candidate, reference))
        self.assertEqual(r["verdict"], "failed")
        self.assertEqual(len(r["failures"]), 1, r["failures"])
        self.assertEqual(r["failures"][0]["check"], "runtime")
        self.assertIn("torch.compile is not available in torch %s" % torch.__version__, r["failures"][0]["message"])
        self.assertIn("in construction", r["failures"][0]["message"])


class FirstCallTest(unittest.TestCase):
    def test_the_first_calls_wall_time_is_a_phase_inside_verification(self):
        r = ev.evaluate(params(fixtures.GOOD, timing_trials=3))
        self.assertEqual(r["verdict"], "passed", r.get("failures"))
        phases = r["phases_ms"]
        self.assertIn("first_call", phases)
        self.assertGreater(phases["first_call"], 0.0)
        self.assertLessEqual(phases["first_call"], phases["verification"])

    def test_a_candidate_that_never_ran_has_no_first_call(self):
        r = ev.evaluate(params(fixtures.candidate("return x", init_extra="raise ValueError('no')")))
        self.assertEqual(r["verdict"], "failed")
        self.assertNotIn("first_call", r["phases_ms"])


# Candidates that report, in the message of the exception they raise, the caches their process was
# given, and what became of a write into the trusted runner's cache.
PROBE_ENV = src('''
    import os
    import torch
    import torch.nn as nn

    class ModelNew(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.lin = nn.Linear(n, n)

        def forward(self, x):
            raise RuntimeError("inductor=%s triton=%s threads=%s" % (
                os.environ.get("TORCHINDUCTOR_CACHE_DIR"), os.environ.get("TRITON_CACHE_DIR"),
                os.environ.get("TORCHINDUCTOR_COMPILE_THREADS")))
    ''')
PROBE_WRITE = src('''
    import os
    import torch
    import torch.nn as nn

    class ModelNew(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.lin = nn.Linear(n, n)

        def forward(self, x):
            with open(os.path.join(%r, "inductor", "poison.py"), "w") as f:
                f.write("print('poisoned')\\n")
            raise RuntimeError("the trusted cache took the write")
    ''')


class CompileCacheSeparationTest(unittest.TestCase):
    def test_the_candidates_caches_are_its_own_and_not_the_trusted_runners(self):
        trusted = isolation.trusted_compile_cache()
        self.assertEqual(os.environ["TORCHINDUCTOR_CACHE_DIR"], os.path.join(trusted, "inductor"))
        self.assertEqual(os.environ["TRITON_CACHE_DIR"], os.path.join(trusted, "triton"))
        st = os.lstat(trusted)
        self.assertTrue(stat.S_ISDIR(st.st_mode))
        self.assertEqual(st.st_uid, os.getuid())
        self.assertEqual(st.st_mode & 0o777, 0o700)  # no other user (the sandbox's nobody) may enter it
        self.assertEqual(isolation.trusted_compile_cache(), trusted)

        with tempfile.TemporaryDirectory() as scratch:
            shared = os.path.join(scratch, "shared")
            env = sandbox.environment(os.path.join(scratch, "c1"), shared, base=dict(os.environ))
            for var in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"):
                path = os.path.realpath(env[var])
                self.assertTrue(path.startswith(os.path.realpath(os.path.join(scratch, "c1")) + os.sep), (var, path))
                self.assertFalse((path + os.sep).startswith(os.path.realpath(trusted) + os.sep), (var, path))
                self.assertNotEqual(path, os.path.realpath(os.environ[var]))
            self.assertEqual(env["TORCHINDUCTOR_COMPILE_THREADS"], str(sandbox.compile_threads()))
            # Two candidate processes never share a compile cache.
            other = sandbox.environment(os.path.join(scratch, "c2"), shared, base=dict(os.environ))
            self.assertNotEqual(other["TORCHINDUCTOR_CACHE_DIR"], env["TORCHINDUCTOR_CACHE_DIR"])

    def test_a_candidate_process_gets_its_own_caches_and_cannot_write_the_trusted_one(self):
        trusted = isolation.trusted_compile_cache()
        r = ev.evaluate(params(PROBE_ENV))
        self.assertEqual(r["verdict"], "failed")
        message = r["failures"][0]["message"]
        found = re.search(r"inductor=(\S+) triton=(\S+) threads=(\S+)", message)
        self.assertIsNotNone(found, message)
        inductor, triton, threads = found.groups()
        for path in (inductor, triton):
            self.assertTrue(path.startswith(os.path.join(tempfile.gettempdir(), "hiera-candidates-")), message)
            self.assertFalse(path.startswith(trusted), message)
        self.assertEqual(threads, str(sandbox.compile_threads()))

        poison = os.path.join(trusted, "inductor", "poison.py")
        r = ev.evaluate(params(PROBE_WRITE % trusted))
        self.assertEqual(r["verdict"], "failed")
        message = r["failures"][0]["message"]
        read_only = not r["sandbox"]["read_only_user_files"].startswith("not in force")
        as_nobody = r["sandbox"]["unprivileged_user"].startswith("runs as nobody")
        if not (read_only or as_nobody):
            if os.path.exists(poison):
                os.remove(poison)
            self.skipTest("neither a mount namespace nor the user nobody here: %s" % r["sandbox"])
        self.assertNotIn("took the write", message)
        self.assertTrue("Read-only file system" in message or "Permission denied" in message, message)
        self.assertFalse(os.path.exists(poison), message)

class CompileThreadsTest(unittest.TestCase):
    def test_the_setting_else_the_cores_up_to_eight(self):
        self.assertEqual(sandbox.compile_threads({"HIERA_CANDIDATE_COMPILE_THREADS": "3"}), 3)
        self.assertEqual(sandbox.compile_threads({"HIERA_CANDIDATE_COMPILE_THREADS": "0"}), 1)
        self.assertEqual(sandbox.compile_threads({}), max(1, min(8, os.cpu_count() or 1)))
        with self.assertRaisesRegex(ValueError, "HIERA_CANDIDATE_COMPILE_THREADS must be a whole number.*'many'"):
            sandbox.compile_threads({"HIERA_CANDIDATE_COMPILE_THREADS": "many"})
        env = sandbox.environment("/tmp/s", "/tmp/c", base={"HIERA_CANDIDATE_COMPILE_THREADS": "5"})
        self.assertEqual(env["TORCHINDUCTOR_COMPILE_THREADS"], "5")


class ProcessTreeMemoryTest(unittest.TestCase):
    def test_the_watch_counts_the_memory_of_the_processes_children(self):
        # A child holding 200 MiB (compile workers are a candidate's children): the
        # tree's resident memory includes it; the parent's own does not.
        import subprocess
        import sys
        import time
        child = subprocess.Popen([sys.executable, "-c",
                                  "import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', "
                                  "'b = bytearray(200 << 20); import sys; sys.stdin.read()'], stdin=subprocess.PIPE);"
                                  " print(p.pid, flush=True); sys.stdin.read()"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            grandchild = int(child.stdout.readline())
            self.assertEqual(isolation._descendants(child.pid), [grandchild])
            deadline = time.time() + 10
            while (isolation._own_rss_bytes(grandchild) or 0) < (200 << 20) and time.time() < deadline:
                time.sleep(0.05)
            own = isolation._own_rss_bytes(child.pid)
            tree = isolation._rss_bytes(child.pid)
            self.assertGreaterEqual(tree - own, 200 << 20)
        finally:
            child.kill()
            child.wait()
            child.stdin.close()
            child.stdout.close()
        self.assertIsNone(isolation._rss_bytes(child.pid))


if __name__ == "__main__":
    unittest.main()
