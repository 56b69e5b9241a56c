import unittest

import fixtures
from fixtures import src
from hiera_runner import static_checks


def findings(body, allow=(), delivered=False):
    return static_checks.check(src(body), allow, delivered)


class StaticChecksTest(unittest.TestCase):
    def assertFlags(self, body, *words, allow=(), line=None):
        found = findings(body, allow)
        self.assertTrue(found, "expected a finding for:\n" + src(body))
        text = "\n".join(found)
        for w in words:
            self.assertIn(w, text)
        if line is not None:
            self.assertTrue(any(f.startswith("line %d:" % line) for f in found), found)
        return found

    def assertClean(self, body, allow=()):
        self.assertEqual(findings(body, allow), [])

    def test_good_candidate_is_clean(self):
        self.assertEqual(static_checks.check(fixtures.GOOD), [])
        self.assertClean('''
            import torch, time
            try:
                import triton
            except ImportError:
                triton = None
            def f(x):
                t = time.perf_counter()      # reading a timer is fine
                torch.cuda.synchronize() if torch.cuda.is_available() else None
                s = torch.cuda.current_stream()
                return x.float().to(torch.float32)
        ''')

    # --- threads and processes
    def test_threads_and_processes(self):
        self.assertFlags("import threading\n", "threading", line=1)
        self.assertFlags("x = 1\nfrom threading import Thread\n", "threading", line=2)
        self.assertFlags("import multiprocessing as mp\n", "multiprocessing")
        self.assertFlags("import subprocess\n", "subprocess")
        self.assertFlags("import concurrent.futures\n", "concurrent.futures")
        self.assertFlags("from concurrent.futures import ThreadPoolExecutor\n", "concurrent.futures")
        self.assertFlags("from concurrent import futures\n", "concurrent.futures")
        self.assertFlags("import os\nos.system('ls')\n", "os.system", line=2)
        self.assertFlags("import os\npid = os.fork()\n", "os.fork", line=2)
        self.assertFlags("import os\nos.popen('ls')\n", "os.popen")
        self.assertFlags("from os import system\n", "os.system")
        self.assertFlags("m = __import__('subprocess')\n", "subprocess")
        self.assertFlags("import importlib\nm = importlib.import_module('threading')\n", "threading", line=2)

    # --- streams
    def test_streams(self):
        self.assertFlags("import torch\ns = torch.cuda.Stream()\n", "torch.cuda.Stream", line=2)
        self.assertFlags("import torch\nwith torch.cuda.stream(s):\n    pass\n", "torch.cuda.stream")
        self.assertFlags("import torch\ntorch.cuda.set_stream(s)\n", "torch.cuda.set_stream")
        self.assertFlags("import torch as t\ns = t.cuda.Stream()\n", "torch.cuda.Stream")
        self.assertFlags("from torch.cuda import Stream\ns = Stream()\n", "torch.cuda.Stream", line=2)
        self.assertFlags("from torch import cuda\ns = cuda.Stream()\n", "torch.cuda.Stream")

    def test_streams_and_threads_in_cpp_strings(self):
        self.assertFlags('''
            cuda_src = """
            #include <torch/extension.h>
            void f() {
              cudaStream_t s;
              cudaStreamCreate(&s);
            }
            """
        ''', "cudaStreamCreate", line=5)
        self.assertFlags('cpp = "void g() { std::thread t([]{}); t.join(); }"\n', "std::thread")

    # --- timers and synchronisation
    def test_timer_and_sync_tampering(self):
        self.assertFlags("import torch\ntorch.cuda.synchronize = lambda *a: None\n", "torch.cuda.synchronize", line=2)
        self.assertFlags("import torch\ntorch.cuda.Event = object\n", "torch.cuda.Event")
        self.assertFlags("import torch\ntorch.cuda.Event.elapsed_time = lambda s, e: 0.001\n",
                         "torch.cuda.Event.elapsed_time")
        self.assertFlags("import time\ntime.perf_counter = lambda: 0.0\n", "time.perf_counter")
        self.assertFlags("import time\ntime.time = lambda: 0.0\n", "time.time")
        self.assertFlags("from torch import cuda\ncuda.synchronize = None\n", "torch.cuda.synchronize")
        self.assertFlags("import time\nsetattr(time, 'perf_counter', lambda: 0)\n", "time.perf_counter")
        self.assertFlags("import torch\nsetattr(torch.cuda, 'synchronize', print)\n", "torch.cuda.synchronize")
        self.assertFlags("from unittest import mock\np = mock.patch('time.perf_counter')\n", "time.perf_counter")
        self.assertFlags("import sys\nsys.modules['time'] = object()\n", "sys.modules")
        self.assertFlags("import torch\ndel torch.cuda.synchronize\n", "torch.cuda.synchronize")

    # --- fallbacks
    def test_try_except_fallback_to_the_reference(self):
        found = self.assertFlags('''
            import torch
            class ModelNew(torch.nn.Module):
                def forward(self, x):
                    try:
                        return fast(x)
                    except Exception:
                        return Model()(x)
        ''', "try/except", "Model", line=6)
        self.assertEqual(len(found), 1)
        self.assertFlags('''
            class ModelNew(Model):
                def forward(self, x):
                    try:
                        return fast(x)
                    except RuntimeError:
                        return super().forward(x)
        ''', "super().forward", line=5)
        self.assertFlags('''
            class ModelNew:
                def forward(self, x, y):
                    try:
                        return fast(x, y)
                    except Exception:
                        return x
        ''', "returns its input unchanged")
        self.assertFlags('''
            def forward(self, x):
                try:
                    return fast(x)
                except:
                    return x.clone()
        ''', "returns its input unchanged")
        # However the handler is written: it swallows the exception and the code after it computes the output.
        for handler in ("y = torch.relu(x) * 2", "pass", "y = None", "print('slow path')\n                        y = slow(x)",
                        "if x.is_cuda:\n                            raise\n                        y = slow(x)"):
            found = self.assertFlags('''
                import torch
                def forward(self, x):
                    try:
                        y = fast(x)
                    except Exception:
                        %s
                    return y if y is not None else slow(x)
            ''' % handler, "swallows the exception", line=5)
            self.assertEqual(len(found), 1, found)
        self.assertFlags('''
            try:
                _ext = build_kernels()
            except Exception:
                _ext = None
        ''', "swallows the exception", line=3)
        self.assertFlags("import contextlib\nwith contextlib.suppress(Exception):\n    y = fast(x)\n", "contextlib.suppress")
        # A handler that does something else is fine.
        self.assertClean('''
            def forward(self, x):
                try:
                    return fast(x)
                except ValueError:
                    raise RuntimeError("bad shape")
        ''')

    # --- network, raw memory, the harness's frames
    def test_network_raw_memory_and_introspection(self):
        self.assertFlags("import socket\n", "socket", "network access", line=1)
        self.assertFlags("from urllib.request import urlopen\n", "urllib", "network access")
        self.assertFlags("import http.client\n", "http.client", "network access")
        self.assertFlags("import sys\nf = sys._getframe(1)\n", "sys._getframe", line=2)
        self.assertFlags("import gc\nobjs = gc.get_objects()\n", "gc.get_objects")
        self.assertFlags("import inspect\nst = inspect.stack()\n", "inspect.stack")
        self.assertFlags("m = __import__('so' + 'cket')\n", "computed")
        self.assertFlags("import importlib\nname = 'x'\nm = importlib.import_module(name)\n", "computed", line=3)

    # --- precision
    def test_downcasts(self):
        self.assertFlags("y = x.half()\n", ".half()", "fp16", line=1)
        self.assertFlags("y = x.bfloat16()\n", ".bfloat16()", "bf16")
        self.assertFlags("import torch\ny = x.to(torch.float16)\n", "torch.float16", line=2)
        self.assertFlags("import torch\ny = x.to(dtype=torch.bfloat16)\n", "torch.bfloat16")
        self.assertFlags("import torch\ny = torch.zeros(3, dtype=torch.half)\n", "torch.half")
        self.assertFlags("from torch import float16\ny = x.to(float16)\n", "torch.float16")
        self.assertFlags("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n", "allow_tf32", "tf32")
        self.assertFlags("import torch\ntorch.set_float32_matmul_precision('high')\n", "tf32")
        self.assertFlags("import torch\ntorch.set_float32_matmul_precision('medium')\n", "tf32")
        self.assertFlags("import torch\nwith torch.autocast('cuda'):\n    pass\n", "autocast")
        self.assertFlags("import torch\ntorch.backends.cuda.matmul.fp32_precision = 'tf32'\n", "tf32")
        self.assertClean("import torch\ntorch.set_float32_matmul_precision('highest')\n")
        self.assertClean("import torch\ntorch.backends.cuda.matmul.allow_tf32 = False\n")
        # The switches by their own name, whatever holds them.
        self.assertFlags("import torch\nm = torch.backends.cuda.matmul\nm.allow_tf32 = True\n", "m.allow_tf32", "tf32", line=3)
        self.assertFlags("import torch\nm = torch.backends.cuda.matmul\nm.fp32_precision = p\n", "fp32_precision", line=3)
        self.assertFlags("import torch\nsetattr(torch.backends.cuda.matmul, 'allow_tf32', True)\n", "setattr", "tf32")
        self.assertFlags("import torch\nsetattr(torch.backends.cudnn.conv, 'fp32_precision', 'tf32')\n", "setattr")
        self.assertClean("import torch\nm = torch.backends.cuda.matmul\nm.fp32_precision = 'ieee'\nm.allow_tf32 = False\n")
        # What those switches call underneath.
        self.assertFlags("import torch\ntorch._C._set_cublas_allow_tf32(True)\n", "torch._C._set_cublas_allow_tf32", "tf32")
        self.assertFlags("import torch\ntorch._C._set_float32_matmul_precision('high')\n", "tf32")
        self.assertClean("import torch\ntorch._C._set_cublas_allow_tf32(False)\n")

    def test_split_tf32_only_through_linear_and_matmul(self):
        use = "from hiera_runner import split_tf32 as s\ny = s.linear(x, w, b)\nz = s.matmul(y, w)\n"
        self.assertClean(use)
        # Its other names switch TF32 for whatever they are handed.
        self.assertFlags(use + "q = s._tf32x3_product(f, x, w)\n", "other than through s.linear", line=4)
        self.assertFlags(use + "t = s\n", "other than through", line=4)
        self.assertFlags(use + "f = getattr(s, 'linear')\n", "other than through", line=4)
        self.assertFlags("from hiera_runner.split_tf32 import linear\n", "imports from hiera_runner.split_tf32")
        self.assertFlags("import hiera_runner.split_tf32 as t\nt.split(x)\n", "other than through", line=2)
        # Without `as` the module is reachable through its package; at run time it is not to be imported at all.
        self.assertFlags("import hiera_runner.split_tf32\nhiera_runner.split_tf32._tf32x3_product(f, x)\n",
                         "other than through", line=2)
        self.assertClean("import hiera_runner.split_tf32\ny = hiera_runner.split_tf32.linear(x, w)\n")
        self.assertFlags("import importlib\nm = importlib.import_module('hiera_runner.split_tf32')\n", "at run time", line=2)

    def test_the_inlined_split_tf32_of_a_delivered_module_may_switch_tf32(self):
        from hiera_runner import deliver
        block = deliver.delivered_split_tf32()
        source = "import torch\n" + block + "y = 1\n"
        self.assertIn("tf32", " ".join(findings(source)))
        self.assertEqual(findings(source, delivered=True), [])
        # A copy that differs from the module's text, or a switch outside it, is not hiera's: flagged.
        edited = source.replace("return fn(*args)", "return fn(*args) ", 1)
        self.assertIn("tf32", " ".join(findings(edited, delivered=True)))
        after = source + "torch.backends.cuda.matmul.allow_tf32 = True\n"
        self.assertEqual(len(findings(after, delivered=True)), 1)

    def test_downcasts_allowed_by_numerics(self):
        self.assertClean("y = x.half()\n", allow=["fp16"])
        self.assertClean("y = x.half()\n", allow=["float16"])
        self.assertClean("import torch\ny = x.to(dtype=torch.bfloat16)\n", allow=["bf16"])
        self.assertClean("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n", allow=["tf32"])
        self.assertClean("import torch\ntorch.set_float32_matmul_precision('high')\n", allow=["tf32"])
        # Allowing one precision does not allow another.
        self.assertFlags("y = x.bfloat16()\n", "bf16", allow=["fp16"])

    def test_native_precisions_of_the_reference(self):
        self.assertEqual(static_checks.native_precisions(fixtures.REFERENCE), set())
        self.assertEqual(static_checks.native_precisions(
            "import torch\ndef get_inputs():\n    return [torch.rand(4, dtype=torch.float16)]\n"), {"fp16"})
        self.assertEqual(static_checks.native_precisions("y = x.bfloat16()\n"), {"bf16"})

    def test_findings_name_the_line_and_are_sorted(self):
        found = findings('''
            import torch
            import threading
            x = torch.ones(2).half()
        ''')
        self.assertEqual([f.split(":")[0] for f in found], ["line 2", "line 3"])

    def test_syntax_error_is_left_to_the_loader(self):
        self.assertEqual(static_checks.check("def f(:\n"), [])


if __name__ == "__main__":
    unittest.main()
