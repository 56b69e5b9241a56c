"""The delivered form (hiera_runner/deliver.py) on the CPU: the rewrite of a
candidate that uses nvrtc_runtime into a torch-only module, its refusals, the
shim's argument packing against nvrtc_runtime's, the load_inline call it
makes, and the `deliver` job through a real runner process. test_gpu.py
builds and runs delivered kernels on a GPU."""

import ast
import ctypes
import difflib
import hashlib
import inspect
import os
import struct
import textwrap
import types
import unittest
from unittest import mock

import torch

import fixtures
from fixtures import src
from hiera_runner import deliver
from hiera_runner import nvrtc_runtime as rt
from hiera_runner.deliver import DeliverError

SCALE_KERNEL = r'''
extern "C" __global__ void scale(float* out, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i];
}
'''

# One kernel, the form nvrtc_runtime documents.
ONE_KERNEL = src('''
    import torch
    import torch.nn as nn
    from hiera_runner import nvrtc_runtime as rt

    KERNELS = r\'\'\'%s\'\'\'


    class ModelNew(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.lin = nn.Linear(n, n)
            self.k = rt.compile(KERNELS, "scale")

        def forward(self, x):
            y = self.lin(x).contiguous()
            out = torch.empty_like(y)
            self.k((y.numel() + 255) // 256, 256, out, y, 2.0, y.numel())
            return out
''') % SCALE_KERNEL

TWO_KERNELS_SRC = fixtures.RELU2_AND_FILL_KERNELS

# Two kernels of one source (an extern "C" one and a template), a third from
# another source built with options, markers, shared memory, a buffer.
TWO_KERNELS = src('''
    import torch
    import torch.nn as nn
    from hiera_runner import nvrtc_runtime as rt

    KERNELS = r\'\'\'%s\'\'\'
    HEADER = "#define TILE 256\\n"
    REVERSE = HEADER + r\'\'\'
    extern "C" __global__ void reverse_shared(float* p, int n) {
      extern __shared__ float tile[];
      for (int j = threadIdx.x; j < n; j += blockDim.x) tile[j] = p[j];
      __syncthreads();
      for (int j = threadIdx.x; j < n; j += blockDim.x) p[j] = tile[n - 1 - j];
    }
    \'\'\'
    OPTIONS = ["-arch=sm_90", "--use_fast_math", "-DBLOCK=128"]


    class ModelNew(nn.Module):
        def __init__(self, n, scale=2.0):
            super().__init__()
            self.lin = nn.Linear(n, n)
            self.register_buffer("offset", torch.zeros(n))
            self.relu2 = rt.compile(KERNELS, "relu2")
            self.fill = rt.compile(source=KERNELS, name="fill<double>")
            self.reverse = rt.compile(REVERSE, "reverse_shared", OPTIONS)

        def forward(self, x):
            y = (self.lin(x) + self.offset).contiguous()
            out = torch.empty_like(y)
            n = y.numel()
            self.relu2((n + 255) // 256, 256, out, y, n)
            zeros = torch.empty(n, dtype=torch.float64, device=y.device)
            self.fill((n + 127) // 128, (128,), zeros, rt.float64(0.0), rt.int64(n))
            self.reverse(1, 256, out, n, shared_mem=n * 4)
            self.reverse(1, 256, out, n, shared_mem=n * 4)
            return out + zeros.view_as(out).to(out.dtype)
''') % TWO_KERNELS_SRC

# The other import form: the runtime's members, one of them renamed.
MEMBER_IMPORTS = src('''
    import torch
    from hiera_runner.nvrtc_runtime import compile as nvcompile, int64
    SRC = "extern \\"C\\" __global__ void k(long long n) {}"

    class ModelNew(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.k = nvcompile(SRC, "k")

        def forward(self, x):
            self.k(1, 1, int64(x.numel()))
            return x
''')

# 3xTF32 products (the s2_split_tf32_gemm rewrite's import) beside a kernel of the candidate's own.
SPLIT_TF32 = src('''
    import torch
    import torch.nn as nn
    from hiera_runner import nvrtc_runtime as rt
    from hiera_runner import split_tf32 as _split_tf32

    KERNELS = r\'\'\'%s\'\'\'

    class ModelNew(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.fc = nn.Linear(n, 2 * n)
            self.scale = rt.compile(KERNELS, "scale")

        def forward(self, x):
            h = _split_tf32.linear(x, self.fc.weight, self.fc.bias)
            return _split_tf32.matmul(h, h.transpose(-2, -1))
''') % SCALE_KERNEL

# The exact delivered text of these candidates, checked in under golden/ (the
# standalone runtime from deliver's templates, each candidate's extension list,
# the rest of its text unchanged). HIERA_UPDATE_FIXTURES=1 rewrites them from
# the current output instead of comparing, for review in the diff.
GOLDEN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
GOLDEN_CANDIDATES = (("one_kernel", ONE_KERNEL), ("two_kernels", TWO_KERNELS), ("member_imports", MEMBER_IMPORTS),
                     ("split_tf32", SPLIT_TF32))


def golden_path(name):
    return os.path.join(GOLDEN_DIR, "deliver_%s.py.golden" % name)


def golden(name):
    with open(golden_path(name), encoding="utf-8", newline="") as f:
        return f.read()


def load(source, name="delivered_under_test"):
    module = types.ModuleType(name)
    exec(compile(source, "<%s>" % name, "exec"), module.__dict__)
    return module


def model_class(source):
    return next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "ModelNew")


class GoldenTest(unittest.TestCase):
    def test_delivered_text_is_the_golden_file_s(self):
        update = bool(os.environ.get("HIERA_UPDATE_FIXTURES"))
        for name, candidate in GOLDEN_CANDIDATES:
            with self.subTest(name):
                actual = deliver.to_delivered(candidate)
                path = golden_path(name)
                if update:
                    os.makedirs(GOLDEN_DIR, exist_ok=True)
                    with open(path, "w", encoding="utf-8", newline="") as f:
                        f.write(actual)
                self.assertTrue(os.path.exists(path), "missing %s (HIERA_UPDATE_FIXTURES=1 writes it)" % path)
                expected = golden(name)
                if actual != expected:
                    diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                                        path, "delivered", n=2))
                    self.fail("the delivered text of %s differs from %s (HIERA_UPDATE_FIXTURES=1 rewrites "
                              "it):\n%s" % (name, path, diff[:6000]))

    def test_golden_files_hold_the_candidates_own_text(self):
        # The golden text is the candidate with its import replaced and the runtime inserted above it.
        text = golden("one_kernel")
        self.assertTrue(text.startswith("import torch\nimport torch.nn as nn\n# --- nvrtc_runtime, standalone"))
        self.assertIn("# --- end of nvrtc_runtime, standalone ---", text)
        self.assertTrue(text.endswith(ONE_KERNEL.split("from hiera_runner import nvrtc_runtime as rt\n", 1)[1]))
        self.assertIn("    ('08f1482c43d8aaefffbfe3a6b42882c913128c8bd616377b63295d370595bf15',\n     (), [],\n"
                      "     [('scale', 'launch_scale')]),\n])\n", text)

    def test_pure_torch_candidate_is_delivered_as_is(self):
        for source in (fixtures.GOOD, fixtures.REFERENCE, "x = 1"):
            self.assertEqual(deliver.to_delivered(source), source)
        analysis = deliver.analyse(fixtures.GOOD)
        self.assertFalse(analysis.needs_gpu)


class ShapeOfTheResultTest(unittest.TestCase):
    """What every delivered text must be: Python, no hiera import, the same ModelNew."""

    def check(self, candidate, same_class=True):
        out = deliver.to_delivered(candidate)
        compile(out, "<delivered>", "exec")
        self.assertEqual(deliver.hiera_imports(out), [])
        for node in ast.walk(ast.parse(out)):
            if isinstance(node, ast.Import):
                self.assertFalse(any(a.name.startswith("hiera") for a in node.names), ast.dump(node))
            elif isinstance(node, ast.ImportFrom):
                self.assertFalse((node.module or "").startswith("hiera"), ast.dump(node))
        self.assertNotIn("hiera", out)  # not even in a comment or a string
        if same_class:  # ModelNew is the candidate's own, node for node (its import was outside it)
            self.assertEqual(ast.dump(model_class(out)), ast.dump(model_class(candidate)))
        return out

    def test_one_and_two_kernels(self):
        self.check(ONE_KERNEL)
        self.check(TWO_KERNELS)

    def test_class_constructor_parameters_and_buffers_are_the_candidate_s(self):
        out = self.check(TWO_KERNELS)
        fake = object()
        with mock.patch.object(rt, "compile", lambda *a, **k: fake):
            original = load(TWO_KERNELS, "original_under_test")
            torch.manual_seed(0)
            a = original.ModelNew(8)
        delivered = load(out)
        with mock.patch.object(delivered._nvrtc_runtime, "compile", lambda *a, **k: fake):
            torch.manual_seed(0)
            b = delivered.ModelNew(8)
        self.assertEqual(inspect.signature(original.ModelNew.__init__), inspect.signature(delivered.ModelNew.__init__))
        self.assertEqual([n for n, _ in a.named_parameters()], [n for n, _ in b.named_parameters()])
        self.assertEqual([n for n, _ in a.named_buffers()], ["offset"])
        self.assertEqual([n for n, _ in a.named_buffers()], [n for n, _ in b.named_buffers()])
        self.assertEqual(list(a.state_dict()), list(b.state_dict()))
        for (_, p), (_, q) in zip(a.state_dict().items(), b.state_dict().items()):
            self.assertTrue(torch.equal(p, q))

    def test_delivered_text_passes_the_static_checks(self):
        from hiera_runner import static_checks
        self.assertEqual(static_checks.check(deliver.to_delivered(TWO_KERNELS)), [])

    def test_split_tf32_is_inlined_and_its_switch_is_exempt_only_there(self):
        from hiera_runner import split_tf32, static_checks
        self.assertEqual(static_checks.check(SPLIT_TF32), [])  # the candidate never switches TF32 itself
        out = self.check(SPLIT_TF32)
        self.assertEqual(out.count(deliver.delivered_split_tf32()), 1)
        self.assertEqual(deliver.delivered_split_tf32(), split_tf32.inlined_source().replace(
            "from hiera_runner import nvrtc_runtime as _tf32x3_rt\n", "_tf32x3_rt = _nvrtc_runtime\n"))
        self.assertIn("\nclass _split_tf32(object):  # split_tf32's products, inlined above\n"
                      "    linear = staticmethod(_tf32x3_linear)\n", out)
        # Both runtimes' kernels go through the delivered shim: the candidate's and the split's.
        self.assertEqual([k.name for k in deliver.analyse(SPLIT_TF32).kernels], ["split_tf32_rows", "scale"])
        self.assertIn("tf32", " ".join(static_checks.check(out)))
        self.assertEqual(static_checks.check(out, delivered=True), [])
        # On the CPU the products are torch's own (the split is for CUDA float32 tensors).
        fake = object()
        delivered = load(out)
        with mock.patch.object(delivered._nvrtc_runtime, "compile", lambda *a, **k: fake):
            torch.manual_seed(0)
            model = delivered.ModelNew(8)
        x = torch.randn(3, 5, 8)
        h = torch.nn.functional.linear(x, model.fc.weight, model.fc.bias)
        self.assertTrue(torch.equal(model(x), h @ h.transpose(-2, -1)))

    def test_split_tf32_imports_it_cannot_deliver(self):
        for body, why in (("from hiera_runner import split_tf32\n", "with `as`"),
                          ("from hiera_runner import split_tf32 as s, nvrtc_runtime as rt\n", "on its own line"),
                          ("import hiera_runner.split_tf32\n", "with `as`"),
                          ("def f():\n    from hiera_runner import split_tf32 as s\n", "only inside the optimizer")):
            with self.subTest(body):
                with self.assertRaises(DeliverError) as caught:
                    deliver.analyse("import torch\n" + body)
                self.assertIn(why, caught.exception.message)

    def test_other_import_forms(self):
        members = MEMBER_IMPORTS
        out = self.check(members)
        self.assertIn("\nnvcompile, int64 = _nvrtc_runtime.compile, _nvrtc_runtime.int64\n", out)
        self.assertEqual([k.name for k in deliver.analyse(members).kernels], ["k"])

        nested = src('''
            import torch

            class ModelNew(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    import hiera_runner.nvrtc_runtime as nv; import math
                    self.k = nv.compile("__global__ void k() {}", "k")

                def forward(self, x):
                    return x
        ''')
        out = self.check(nested, same_class=False)
        self.assertIn("\n        nv = _nvrtc_runtime; import math\n", out)
        # The runtime is defined before the class that imports it.
        self.assertLess(out.index("_nvrtc_runtime = _NvrtcRuntime("), out.index("class ModelNew"))
        self.assertEqual(out.count("class _NvrtcRuntime"), 1)

        # ast's columns are UTF-8 bytes: text before the import on its line stays intact.
        accented = ('import torch\nNOTE = "µ-kernel é"; from hiera_runner import nvrtc_runtime as rt  # ünï\n'
                    'K = rt.compile("__global__ void k() {}", "k")\n')
        out = self.check(accented, same_class=False)
        self.assertIn('\nNOTE = "µ-kernel é"; rt = _nvrtc_runtime  # ünï\nK = rt.compile(', out)
        # Lines as Python counts them: CRLF ends, a form feed (not a line end for Python) in a comment.
        crlf = accented.replace("\n", "\r\n").replace("# ünï", "# ü\x0cnï")
        out = self.check(crlf, same_class=False)
        self.assertTrue(out.startswith("import torch\r\n# --- nvrtc_runtime, standalone"))
        self.assertIn('\nNOTE = "µ-kernel é"; rt = _nvrtc_runtime  # ü\x0cnï\r\nK = rt.compile(', out)


class TablesTest(unittest.TestCase):
    def test_two_kernels_of_one_source_share_a_build(self):
        analysis = deliver.analyse(TWO_KERNELS)
        self.assertTrue(analysis.needs_gpu)
        self.assertEqual([(k.name, k.options) for k in analysis.kernels],
                         [("relu2", ()), ("fill<double>", ()),
                          ("reverse_shared", ("-arch=sm_90", "--use_fast_math", "-DBLOCK=128"))])
        reverse = analysis.kernels[2].source
        self.assertTrue(reverse.startswith("#define TILE 256\n\nextern \"C\""), reverse)  # HEADER + REVERSE resolved
        extensions = load(analysis.source)._nvrtc_runtime._extensions
        sha = lambda s: hashlib.sha256(s.encode()).hexdigest()  # noqa: E731
        self.assertEqual(extensions, [
            (sha(TWO_KERNELS_SRC), (), [], [("relu2", "launch_relu2"), ("fill<double>", "launch_fill_double")]),
            (sha(reverse), ("-arch=sm_90", "--use_fast_math", "-DBLOCK=128"),
             ["-gencode=arch=compute_90,code=sm_90", "--use_fast_math", "-DBLOCK=128"],
             [("reverse_shared", "launch_reverse_shared")]),
        ])

    def test_options_to_nvcc_flags(self):
        self.assertEqual(deliver.cuda_flags(["--gpu-architecture=compute_90", "-I", "/inc", "-lineinfo",
                                             "--fmad=false", "-arch", "sm_90a"]),
                         ["-gencode=arch=compute_90,code=compute_90", "-I", "/inc", "-lineinfo", "--fmad=false",
                          "-gencode=arch=compute_90a,code=sm_90a"])
        for nvrtc_only in ("-default-device", "--device-as-default-execution-space", "-rdc=true", "-dlto"):
            with self.assertRaises(DeliverError) as e:
                deliver.cuda_flags([nvrtc_only])
            self.assertIn(nvrtc_only, str(e.exception))
        with self.assertRaises(DeliverError):
            deliver.cuda_flags(["-arch=gfx90a"])


class RefusedTest(unittest.TestCase):
    def assertRefused(self, candidate, *words):
        with self.assertRaises(DeliverError) as e:
            deliver.to_delivered(candidate)
        for w in words:
            self.assertIn(w, str(e.exception))
        return str(e.exception)

    def with_init(self, init_line, top=""):
        return ("import torch\nfrom hiera_runner import nvrtc_runtime as rt\nimport textwrap\n%s\n"
                "SRC = 'extern \"C\" __global__ void k(float* p) {}'\n\n"
                "class ModelNew(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        %s\n\n    def forward(self, x):\n        return x\n" % (top, init_line))

    def test_source_not_resolvable_before_the_module_runs(self):
        self.assertRefused(self.with_init("self.k = rt.compile(f'{SRC}', 'k')"), "line 10", "f-string",
                           "cannot be delivered")
        self.assertRefused(self.with_init("self.k = rt.compile(textwrap.dedent(SRC), 'k')"), "line 10", "a call")
        self.assertRefused(self.with_init("src = SRC\n        self.k = rt.compile(src, 'k')"),
                           "line 11", "`src`, which is not a module-level name")
        self.assertRefused(self.with_init("self.k = rt.compile(SRC, 'k')", top="SRC = 'other'"),
                           "binds more than once")
        self.assertRefused(self.with_init("self.k = rt.compile(SRC + str(1), 'k')"), "a call")

    def test_kernel_name_or_options_not_resolvable(self):
        self.assertRefused(self.with_init("self.ks = [rt.compile(SRC, n) for n in ('k',)]"), "kernel name", "`n`")
        self.assertRefused(self.with_init("self.k = rt.compile(SRC, 'k', options=self.opts)"), "options")
        self.assertRefused(self.with_init("self.k = rt.compile(*(SRC, 'k'))"), "*args")
        self.assertRefused(self.with_init("self.k = rt.compile(SRC, 'nope')"), "'nope' is not defined")
        self.assertRefused(self.with_init("self.k = rt.compile(SRC, 'k(1)')"), "is not a C++ name")
        self.assertRefused(self.with_init("self.k = rt.compile(SRC, 'k', ['-default-device'])"), "-default-device")

    def test_runtime_used_other_than_by_compile_calls_and_argument_types(self):
        self.assertRefused(self.with_init("self.rt = rt"), "as a value")
        self.assertRefused(self.with_init("c = rt.compile\n        self.k = c(SRC, 'k')"), "directly")
        self.assertRefused(self.with_init("rt.compile_to_ptx(SRC, 'k')"), "rt.compile_to_ptx", "no delivered form")
        self.assertRefused(self.with_init("rt.clear_cache()"), "rt.clear_cache")

    def test_other_hiera_imports(self):
        self.assertRefused("import hiera_runner.evaluate as ev\n", "hiera_runner.evaluate")
        self.assertRefused("from hiera_runner import evaluate\n", "hiera_runner.evaluate")
        self.assertRefused("import hiera_runner.nvrtc_runtime\n", "without `as`")
        self.assertRefused("from hiera_runner.nvrtc_runtime import Kernel\n", "Kernel")
        self.assertRefused("import importlib\nrt = importlib.import_module('hiera_runner.nvrtc_runtime')\n",
                           "at run time")
        self.assertRefused("import os, hiera_runner.nvrtc_runtime as rt\n", "on its own")

    def test_syntax_error(self):
        self.assertRefused("def f(:\n", "does not parse", "line 1")


def slot_bytes(kind, ints, floats):
    """What the C++ launcher writes into an argument's 8-byte slot."""
    R = deliver_kinds()
    if kind == R.NULL_POINTER:
        return b"\0" * 8
    if kind in (R.FLOAT32, R.FLOAT64):
        return struct.pack("<f" if kind == R.FLOAT32 else "<d", floats.pop(0)).ljust(8, b"\0")
    value = ints.pop(0)
    fmt = {R.INT32: "<i", R.INT64: "<q", R.UINT32: "<I", R.BOOL: "<?"}.get(kind)
    if fmt is None:  # POINTER, UINT64: the int64's bits
        return struct.pack("<q", value)
    if kind == R.UINT32:
        value &= 0xFFFFFFFF
    elif kind == R.INT32:
        value = (value + (1 << 31)) % (1 << 32) - (1 << 31)
    return struct.pack(fmt, value).ljust(8, b"\0")


_delivered_two = None


def delivered_two():
    global _delivered_two
    if _delivered_two is None:
        _delivered_two = load(deliver.to_delivered(TWO_KERNELS))
    return _delivered_two


def deliver_kinds():
    return delivered_two()._NvrtcRuntime


class ShimTest(unittest.TestCase):
    """The rt-compatible object in the delivered module, without a GPU: its
    launcher gets what nvrtc_runtime would have passed, byte for byte."""

    def setUp(self):
        self.module = delivered_two()
        self.shim = self.module._nvrtc_runtime
        self.calls = []
        self.built = []

        calls = self.calls

        class FakeExtension(object):
            def __getattr__(self, name):
                return lambda *args: calls.append((name,) + args) or -1  # -1: launched

        def fake_load_inline(**kwargs):
            self.built.append(kwargs)
            return FakeExtension()

        self.patches = [mock.patch.object(torch.cuda, "is_available", lambda: True),
                        mock.patch.object(torch.cuda, "current_device", lambda: 0),
                        mock.patch.object(torch.cuda, "get_device_capability", lambda *a: (9, 0)),
                        mock.patch("torch.utils.cpp_extension.load_inline", fake_load_inline),
                        # The load_inline path, whatever the installed torch (TorchNvrtcShimTest: the other).
                        mock.patch.object(self.module._NvrtcRuntime, "torch_nvrtc", staticmethod(lambda: False))]
        for p in self.patches:
            p.start()
        self.shim._modules.clear()
        self.shim._ready.clear()

    def tearDown(self):
        for p in reversed(self.patches):
            p.stop()
        self.shim._modules.clear()
        self.shim._ready.clear()

    def test_compile_builds_each_source_once_with_load_inline(self):
        K = self.module.KERNELS
        relu2 = self.shim.compile(K, "relu2")
        self.assertIs(self.shim.compile(K, "relu2"), relu2)
        self.shim.compile(K, "fill<double>")
        self.assertEqual(len(self.built), 1)  # one build for both kernels of the source
        build = self.built[0]
        self.assertEqual(build["cuda_sources"][0], deliver.CUDA_PRELUDE)
        self.assertEqual(build["cuda_sources"][1], K)
        self.assertEqual(build["functions"], ["launch_relu2", "launch_fill_double"])
        self.assertEqual(build["extra_cuda_cflags"],
                         ["-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
                          "-U__CUDA_NO_HALF2_OPERATORS__", "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
                          "-gencode=arch=compute_90,code=sm_90"])
        self.assertRegex(build["name"], r"^nvrtc_kernels_[0-9a-f]{16}$")
        signature = ("(int64_t device, std::vector<int64_t> dims, int64_t shared_mem, int64_t stream, "
                     "std::vector<int64_t> kinds, std::vector<at::Tensor> tensors, std::vector<int64_t> ints, "
                     "std::vector<double> floats)")
        self.assertEqual(build["cpp_sources"], ["int64_t launch_relu2%s;\nint64_t launch_fill_double%s;\n"
                                                % (signature, signature)])
        args = "device, dims, shared_mem, stream, kinds, tensors, ints, floats"
        self.assertEqual(build["cuda_sources"][2],
                         '#line 1 "launchers.cu"\n'
                         'int64_t launch_relu2%s {\n  return nvrtc_launch::launch(&relu2, "relu2", %s);\n}\n'
                         'int64_t launch_fill_double%s {\n  return nvrtc_launch::launch(&fill<double>, "fill<double>", %s);\n}\n'
                         % (signature, args, signature, args))
        # The helper launches with <<<>>> on torch's current stream, checks the launch, opts into large shared memory.
        for needle in ("kernel<<<grid, block, shared_mem, stream>>>", "at::cuda::getCurrentCUDAStream(index)",
                       "C10_CUDA_KERNEL_LAUNCH_CHECK();", "cudaFuncAttributeMaxDynamicSharedMemorySize",
                       "if (shared_mem > 48 * 1024)", '#line 1 "kernel.cu"'):
            self.assertIn(needle, deliver.CUDA_PRELUDE)
        self.assertTrue(deliver.CUDA_PRELUDE.endswith('\n#line 1 "kernel.cu"'))

        # The other source, with its options' flags (an explicit architecture: no GPU default added).
        self.shim.compile(self.module.REVERSE, "reverse_shared", self.module.OPTIONS)
        self.assertEqual(self.built[1]["extra_cuda_cflags"][4:],
                         ["-gencode=arch=compute_90,code=sm_90", "--use_fast_math", "-DBLOCK=128"])

    def test_unknown_kernels_and_no_gpu(self):
        with self.assertRaises(RuntimeError) as e:
            self.shim.compile(self.module.KERNELS, "fill<float>")
        self.assertIn("not one this module was delivered with", str(e.exception))
        with self.assertRaises(RuntimeError):
            self.shim.compile(self.module.KERNELS + " ", "relu2")  # a changed source is not the delivered one
        with mock.patch.object(torch.cuda, "is_available", lambda: False):
            with self.assertRaises(RuntimeError) as e:
                self.shim.compile(self.module.KERNELS, "relu2")
            self.assertIn("needs a CUDA device", str(e.exception))

    def test_int64_float64_markers_and_shared_mem(self):
        k = self.shim.compile(self.module.KERNELS, "fill<double>")
        R = self.shim
        k((40,), 128, None, R.float64(0.1), R.int64(1 << 40), shared_mem=4096)
        self.assertEqual(self.calls, [("launch_fill_double", 0, [40, 1, 1, 128, 1, 1], 4096, -1,
                                       [R.NULL_POINTER, R.FLOAT64, R.INT64], [], [1 << 40], [0.1])])
        k((2, 3), (32, 4, 2), 7, 2.5, stream=1234)
        self.assertEqual(self.calls[1], ("launch_fill_double", 0, [2, 3, 1, 32, 4, 2], 0, 1234,
                                         [R.INT32, R.FLOAT32], [], [7], [2.5]))

    def test_arguments_match_nvrtc_runtime_byte_for_byte(self):
        R = self.shim
        pairs = [  # (delivered argument, the same for nvrtc_runtime)
            (7, 7), (-(1 << 31), -(1 << 31)), (2.5, 2.5), (0.1, 0.1), (True, True), (False, False),
            (None, None),
            (R.int32(-5), rt.int32(-5)), (R.int64(-(1 << 40)), rt.int64(-(1 << 40))),
            (R.uint32((1 << 32) - 1), rt.uint32((1 << 32) - 1)), (R.uint64((1 << 64) - 1), rt.uint64((1 << 64) - 1)),
            (R.float32(1e-3), rt.float32(1e-3)), (R.float64(1e-3), rt.float64(1e-3)),
            (R.pointer(0x7F0000001000), rt.pointer(0x7F0000001000)),
            (ctypes.c_short(-3), ctypes.c_short(-3)), (ctypes.c_uint8(200), ctypes.c_uint8(200)),
        ]
        kinds, tensors, ints, floats = R.Kernel.pack([a for a, _ in pairs])
        self.assertEqual(tensors, [])
        for kind, (_, theirs) in zip(kinds, pairs):
            ours = slot_bytes(kind, ints, floats)
            held = rt.pack_arg(theirs)
            self.assertEqual(ours[:ctypes.sizeof(held)], bytes(held), (kind, theirs))
            self.assertEqual(ours[ctypes.sizeof(held):], b"\0" * (8 - ctypes.sizeof(held)))
        self.assertEqual((ints, floats), ([], []))

    def test_argument_errors_read_as_nvrtc_runtime_s(self):
        R = self.shim
        for bad, error, words in ((1 << 31, OverflowError, ("argument 0", "int64")),
                                  (torch.zeros(3), TypeError, ("CUDA tensors",)),
                                  ("text", TypeError, ("str",))):
            with self.assertRaises(error) as e:
                R.Kernel.pack([bad])
            for w in words:
                self.assertIn(w, str(e.exception))
            with self.assertRaises(error):
                rt.pack_arg(bad)
        with self.assertRaises(OverflowError):
            R.int32(1 << 40)
        k = R.compile(self.module.KERNELS, "relu2")
        with self.assertRaises(ValueError):
            k(0, 32)
        with self.assertRaises(TypeError):
            k(1, 32, bogus=1)


class ScalarTypesTest(unittest.TestCase):
    """nvrtc_runtime's argument types and the delivered module's are one
    definition (templates/scalars.py.tmpl): the same classes, ranges and bytes."""

    SAMPLES = {
        "int32": (-(1 << 31), -5, 0, 7, (1 << 31) - 1),
        "int64": (-(1 << 63), -(1 << 40), 0, 3, (1 << 63) - 1),
        "uint32": (0, 1, 0x89ABCDEF, (1 << 32) - 1),
        "uint64": (0, 1, 1 << 63, (1 << 64) - 1),
        "float32": (0.0, -2.5, 1e-3, 0.1, 3.4e38, float("inf")),
        "float64": (0.0, 0.1, -1e300, 5e-324, float("-inf")),
        "pointer": (0, 0x7F0000001000, (1 << 64) - 1, None),
    }

    def setUp(self):
        self.R = delivered_two()._NvrtcRuntime

    def test_the_same_names(self):
        self.assertEqual(deliver.SCALAR_TYPES, rt.SCALAR_TYPES)
        self.assertEqual(set(self.SAMPLES), set(rt.SCALAR_TYPES))
        delivered = [n for n, v in vars(self.R).items()
                     if isinstance(v, type) and issubclass(v, self.R._Scalar) and v is not self.R._Scalar]
        self.assertEqual(delivered, list(rt.SCALAR_TYPES))
        for name in rt.SCALAR_TYPES:
            self.assertIn(name, rt.__all__)
            self.assertTrue(issubclass(getattr(rt, name), rt._Scalar))
            self.assertEqual(getattr(rt, name).__module__, "hiera_runner.nvrtc_runtime")

    def test_the_same_definition(self):
        def own(cls):
            skip = ("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__")
            return {k: v for k, v in vars(cls).items() if k not in skip}

        def same(a, b):
            if isinstance(a, types.FunctionType):
                return isinstance(b, types.FunctionType) and (a.__code__.co_code, a.__code__.co_consts) == \
                    (b.__code__.co_code, b.__code__.co_consts)
            return a == b

        for name in ("_Scalar",) + rt.SCALAR_TYPES:
            ours, theirs = own(getattr(self.R, name)), own(getattr(rt, name))
            for attribute, value in ours.items():  # nvrtc_runtime adds ctype, slot, to_ctype
                self.assertIn(attribute, theirs, name)
                self.assertTrue(same(value, theirs[attribute]), (name, attribute))
            self.assertEqual(getattr(self.R, name).kind, getattr(rt, name).kind)

    def test_the_same_bytes_on_sample_values(self):
        R = self.R
        for name, values in self.SAMPLES.items():
            for value in values:
                with self.subTest(type=name, value=value):
                    ours, theirs = getattr(R, name)(value), getattr(rt, name)(value)
                    self.assertEqual(repr(ours), repr(theirs))
                    # The load_inline launcher's slot (from the packed kinds and values).
                    kinds, tensors, ints, floats = R.Kernel.pack([ours])
                    launcher = slot_bytes(kinds[0], ints, floats)
                    # nvrtc_runtime's ctypes object, padded to the 8-byte slot.
                    held = bytes(rt.pack_arg(theirs)).ljust(8, b"\0")
                    # nvrtc_runtime's parameter block, and the delivered torch NVRTC path's.
                    raw = 0 if value is None else value
                    block = struct.pack("<" + theirs.slot, raw)
                    torch_nvrtc = struct.pack("<" + R.TorchNvrtcKernel.SLOTS[ours.kind], raw)
                    self.assertEqual(len(launcher), 8)
                    self.assertEqual(launcher, held)
                    self.assertEqual(block, held)
                    self.assertEqual(torch_nvrtc, held)

    def test_the_same_ranges(self):
        for name in rt.SCALAR_TYPES:
            lo, hi = getattr(rt, name).lo, getattr(rt, name).hi
            self.assertEqual((lo, hi), (getattr(self.R, name).lo, getattr(self.R, name).hi))
            if lo is None:
                continue
            for bad in (lo - 1, hi + 1):
                with self.assertRaises(OverflowError) as ours:
                    getattr(self.R, name)(bad)
                with self.assertRaises(OverflowError) as theirs:
                    getattr(rt, name)(bad)
                self.assertEqual(str(ours.exception), str(theirs.exception))

    def test_the_delivered_text_holds_the_template(self):
        from hiera_runner import templates
        out = deliver.to_delivered(ONE_KERNEL)
        self.assertIn(textwrap.indent(templates.text("scalars.py.tmpl"), "    "), out)
        self.assertNotIn("##", out)  # the templates' notes stay in the templates
        self.assertNotIn("${", out)


class TorchNvrtcShimTest(unittest.TestCase):
    """The shim where torch compiles with NVRTC itself (torch >= 2.8), without a
    GPU: torch.cuda._utils and the driver are replaced by recorders (the real
    ones need a GPU; test_gpu.py runs them). Kernels are compiled with the
    options they were optimized with, launched on torch's current stream, and
    their arguments are nvrtc_runtime's bytes."""

    def setUp(self):
        self.module = delivered_two()
        self.shim = self.module._nvrtc_runtime
        self.compiled, self.launches = [], []
        compiled, launches = self.compiled, self.launches

        class Loaded(object):
            def __init__(self, name):
                self.func = ctypes.c_void_p(0xF00D)
                self.name = name

        class Driver(object):
            def cuLaunchKernel(self, func, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
                # params: the address of the void*[], one pointer per argument (7 here).
                slots = [ctypes.string_at(ctypes.c_void_p.from_address(params + 8 * i).value, 8) for i in range(7)]
                launches.append((func.value, (gx, gy, gz, bx, by, bz), shared, stream, slots))
                return 0

            def cuFuncGetParamInfo(self, func, index, offset, size):
                return 0 if index.value < 7 else 1  # every test kernel here takes 7 arguments

            def cuFuncSetAttribute(self, func, attribute, value):
                launches.append(("attribute", attribute, value))
                return 0

        utils = types.SimpleNamespace(
            _nvrtc_compile=lambda source, name, cc, includes, options: compiled.append(
                (source, name, cc, includes, options)) or (b"ptx", name),
            _cuda_load_module=lambda ptx, names: {n: Loaded(n) for n in names},
            _get_gpu_runtime_library=lambda: Driver())
        stream = types.SimpleNamespace(cuda_stream=4321)
        self.patches = [mock.patch.object(torch.cuda, "is_available", lambda: True),
                        mock.patch.object(torch.cuda, "current_device", lambda: 0),
                        mock.patch.object(torch.cuda, "current_stream", lambda *a: stream),
                        mock.patch.object(torch._C, "_cuda_getCurrentRawStream", lambda *a: stream.cuda_stream,
                                          create=True),
                        mock.patch.object(torch.cuda, "_utils", utils, create=True)]
        for p in self.patches:
            p.start()
        self.shim._ready.clear()

    def tearDown(self):
        for p in reversed(self.patches):
            p.stop()
        self.shim._ready.clear()

    def test_compiles_once_with_the_kernel_s_own_options(self):
        self.assertTrue(self.shim.torch_nvrtc())
        k = self.shim.compile(self.module.KERNELS, "relu2")
        self.assertIs(self.shim.compile(self.module.KERNELS, "relu2"), k)
        self.shim.compile(self.module.REVERSE, "reverse_shared", self.module.OPTIONS)
        # torch picks the arch; its extension flags turn the half and bfloat16 conversions off, the -U's back on.
        undefine = ["-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__", "-U__CUDA_NO_HALF2_OPERATORS__",
                    "-U__CUDA_NO_BFLOAT16_CONVERSIONS__"]
        self.assertEqual(self.compiled, [(self.module.KERNELS, "relu2", None, None, undefine),
                                         (self.module.REVERSE, "reverse_shared", None, None,
                                          undefine + ["--use_fast_math", "-DBLOCK=128"])])

    def test_launch_on_the_current_stream_with_nvrtc_runtime_s_bytes(self):
        k = self.shim.compile(self.module.KERNELS, "fill<double>")
        R = self.shim
        args = [None, R.float64(0.1), R.int64(1 << 40), 7, 2.5, R.uint64((1 << 64) - 1), True]
        theirs = [None, rt.float64(0.1), rt.int64(1 << 40), 7, 2.5, rt.uint64((1 << 64) - 1), True]
        k((40,), 128, *args, shared_mem=4096)
        func, dims, shared, stream, slots = self.launches[0]
        self.assertEqual((func, dims, shared, stream), (0xF00D, (40, 1, 1, 128, 1, 1), 4096, 4321))
        for slot, arg in zip(slots, theirs):
            held = rt.pack_arg(arg)
            self.assertEqual(slot[:ctypes.sizeof(held)], bytes(held), arg)
        with self.assertRaises(RuntimeError) as e:
            k(1, 32, 3)
        self.assertIn("takes 7 arguments, not 1", str(e.exception))
        k(1, 32, *args, shared_mem=64 * 1024, stream=99)
        self.assertEqual(self.launches[1], ("attribute", 8, 64 * 1024))  # opted into > 48 KiB
        self.assertEqual(self.launches[2][3], 99)

    def test_a_failed_launch_raises(self):
        k = self.shim.compile(self.module.KERNELS, "relu2")
        with mock.patch.object(torch.cuda._utils, "_get_gpu_runtime_library",
                               lambda: types.SimpleNamespace(cuLaunchKernel=lambda *a: 700)):
            with self.assertRaises(RuntimeError) as e:
                k(1, 32, 5)  # a driver without cuFuncGetParamInfo: no count check, the launch fails
        self.assertIn("CUDA error 700", str(e.exception))


class DeliverJobTest(unittest.TestCase):
    """The `deliver` method through `python3 -m hiera_runner`."""

    @classmethod
    def setUpClass(cls):
        from test_runner_process import Runner
        cls.runner = Runner()

    @classmethod
    def tearDownClass(cls):
        cls.runner.close()

    def call(self, rid, params):
        reply = self.runner.call(rid, "deliver", params)
        self.assertEqual(reply["id"], rid)
        self.assertNotIn("error", reply, reply)
        return reply["result"]

    def test_pure_torch_candidate_is_delivered_and_verified_on_the_cpu(self):
        result = self.call(1, fixtures.params(fixtures.GOOD, timing_trials=3))
        self.assertEqual(set(result), {"delivered_source", "evaluation"})
        self.assertEqual(result["delivered_source"], fixtures.GOOD)
        evaluation = result["evaluation"]
        self.assertEqual(evaluation["verdict"], "passed", evaluation)
        self.assertEqual(len(evaluation["trials"]), 6)  # five and the second shape
        self.assertEqual(evaluation["timing"]["candidate"]["trials"], 3)

    def test_delivered_form_is_verified_like_evaluate(self):
        wrong = fixtures.candidate("return torch.relu(self.lin(x)) * 3.0")
        result = self.call(2, fixtures.params(wrong))
        self.assertEqual(result["delivered_source"], wrong)
        self.assertEqual(result["evaluation"]["verdict"], "failed")
        self.assertIn("values", [f["check"] for f in result["evaluation"]["failures"]])

    def test_cuda_kernel_candidate_on_the_cpu_needs_a_gpu(self):
        result = self.call(3, fixtures.params(ONE_KERNEL))
        self.assertEqual(result["delivered_source"], golden("one_kernel"))
        evaluation = result["evaluation"]
        self.assertEqual(evaluation["verdict"], "failed")
        self.assertEqual(len(evaluation["failures"]), 1)
        failure = evaluation["failures"][0]
        self.assertEqual(failure["check"], "deliver")
        self.assertIn("needs a GPU", failure["message"])
        self.assertIn("scale", failure["message"])
        self.assertNotIn("timing", evaluation)

    def test_conversion_failure_is_a_failed_evaluation(self):
        bad = ONE_KERNEL.replace('rt.compile(KERNELS, "scale")', 'rt.compile(KERNELS.strip(), "scale")')
        result = self.call(4, fixtures.params(bad))
        self.assertIsNone(result["delivered_source"])
        failures = result["evaluation"]["failures"]
        self.assertEqual([f["check"] for f in failures], ["deliver"])
        self.assertIn("cannot be delivered", failures[0]["message"])
        self.assertIn("line 17", failures[0]["message"])
        self.assertEqual(result["evaluation"]["verdict"], "failed")

    def test_bad_params_are_errors(self):
        reply = self.runner.call(5, "deliver", {"task": {"kind": "pytorch", "reference": {"source": "x"}},
                                                "trials": "many"})
        self.assertEqual(reply["error"]["code"], -32602)
        reply = self.runner.call(6, "deliver", {"task": {"kind": "pytorch", "reference": {"source": "x"}}})
        self.assertEqual(reply["error"]["code"], -32602)
        self.assertIn("candidate", reply["error"]["message"])


if __name__ == "__main__":
    unittest.main()
