"""The delivered form (hiera_runner/deliver.py) on the CPU: the rewrite of a
candidate that uses nvrtc_runtime into a torch-only module, its refusals, the
shim's argument packing against nvrtc_runtime's, the load_inline call it
makes, and the `deliver` job through a real runner process. test_gpu.py
builds and runs delivered kernels on a GPU."""

import ast
import ctypes
import hashlib
import inspect
import struct
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

# The exact delivered text of ONE_KERNEL: the import replaced by the standalone
# runtime, everything else unchanged. A change to the generated code shows here.
GOLDEN_ONE_KERNEL = r"""import torch
import torch.nn as nn
# --- nvrtc_runtime, standalone ----------------------------------------------------
# This module's CUDA kernels were compiled with NVRTC while it was optimized; here
# each kernel source is built once, on first use, by torch.utils.cpp_extension's
# load_inline, with a generated C++ launcher per kernel. The calls are unchanged:
# k = rt.compile(source, name, options); k(grid, block, *args, shared_mem=0, stream=None)
# launches on torch's current CUDA stream; a tensor passes its data pointer, an int an
# int32, a float a float32, and rt.int64(v), rt.float64(v), ... the C type they name.
import ctypes as _nvrtc_ctypes
import hashlib as _nvrtc_hashlib

import torch as _nvrtc_torch


class _NvrtcRuntime(object):
    TENSOR, NULL_POINTER, POINTER, INT32, INT64, UINT32, UINT64, FLOAT32, FLOAT64, BOOL = range(10)
    # nvcc defines these for torch extensions, NVRTC does not: fp16/bf16 kernels compile as they did.
    NVCC_FLAGS = ("-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
                  "-U__CUDA_NO_HALF2_OPERATORS__", "-U__CUDA_NO_BFLOAT16_CONVERSIONS__")
    LAUNCHER = ("int64_t %s(int64_t device, std::vector<int64_t> dims, int64_t shared_mem, int64_t stream, "
                "std::vector<int64_t> kinds, std::vector<at::Tensor> tensors, std::vector<int64_t> ints, "
                "std::vector<double> floats)")
    LAUNCH = (" {\n  return nvrtc_launch::launch(&%s, \"%s\", device, dims, shared_mem, stream, kinds, tensors, ints, "
              "floats);\n}\n")
    PRELUDE = r'''#include <cstring>
#include <utility>
#include <vector>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

namespace nvrtc_launch {
// A kernel argument as nvrtc_runtime passes it: its C value at the start of an
// 8-byte slot, the rest zero; the kernel's parameter is read from those bytes.
union Slot { uint64_t u64; int64_t i64; uint32_t u32; int32_t i32; double f64; float f32; bool b; void* p; };
enum Kind : int64_t { TENSOR, NULL_POINTER, POINTER, INT32, INT64, UINT32, UINT64, FLOAT32, FLOAT64, BOOL };

template <typename T>
T read(const Slot& slot) {
  static_assert(sizeof(T) <= sizeof(Slot), "a kernel parameter over 8 bytes cannot be passed from Python");
  T value;
  std::memcpy(&value, &slot, sizeof(T));
  return value;
}

template <typename... P, size_t... I>
void launch_slots(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared_mem, cudaStream_t stream,
                  const Slot* slots, std::index_sequence<I...>) {
  (void)slots;
  kernel<<<grid, block, shared_mem, stream>>>(read<P>(slots[I])...);
}

// Packs the arguments, then launches on torch's current stream of the device
// (or the stream given), the kernel's parameter types deduced from its address.
template <typename... P>
int64_t launch(void (*kernel)(P...), const char* name, int64_t device, const std::vector<int64_t>& dims,
            int64_t shared_mem, int64_t stream, const std::vector<int64_t>& kinds,
            const std::vector<at::Tensor>& tensors, const std::vector<int64_t>& ints,
            const std::vector<double>& floats) {
  // A wrong count is answered, not thrown: the shim raises it in Python.
  if (kinds.size() != sizeof...(P)) return static_cast<int64_t>(sizeof...(P));
  TORCH_CHECK(dims.size() == 6, "grid and block need 3 dimensions each");
  std::vector<Slot> slots(kinds.size() + 1);
  std::memset(slots.data(), 0, slots.size() * sizeof(Slot));
  size_t t = 0, i = 0, f = 0;
  for (size_t k = 0; k < kinds.size(); ++k) {
    Slot& s = slots[k];
    switch (kinds[k]) {
      case TENSOR: {
        const at::Tensor& x = tensors.at(t++);
        TORCH_CHECK(x.is_cuda(), "argument ", k, " of ", name, " is a tensor on ", x.device(),
                    "; kernels take CUDA tensors");
        s.p = x.data_ptr();
        break;
      }
      case NULL_POINTER: s.p = nullptr; break;
      case POINTER: case UINT64: s.u64 = static_cast<uint64_t>(ints.at(i++)); break;
      case INT32: s.i32 = static_cast<int32_t>(ints.at(i++)); break;
      case INT64: s.i64 = ints.at(i++); break;
      case UINT32: s.u32 = static_cast<uint32_t>(ints.at(i++)); break;
      case FLOAT32: s.f32 = static_cast<float>(floats.at(f++)); break;
      case FLOAT64: s.f64 = floats.at(f++); break;
      case BOOL: s.b = ints.at(i++) != 0; break;
      default: TORCH_CHECK(false, "argument ", k, " of ", name, " has an unknown kind ", kinds[k]);
    }
  }
  const auto index = static_cast<c10::DeviceIndex>(device);
  const c10::cuda::CUDAGuard guard(index);
  const cudaStream_t launch_stream = stream == -1 ? at::cuda::getCurrentCUDAStream(index).stream()
                                                  : reinterpret_cast<cudaStream_t>(static_cast<intptr_t>(stream));
  if (shared_mem > 48 * 1024) {
    // Over 48 KiB of dynamic shared memory must be opted into per function.
    C10_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_mem)));
  }
  launch_slots(kernel, dim3(dims[0], dims[1], dims[2]), dim3(dims[3], dims[4], dims[5]),
               static_cast<size_t>(shared_mem), launch_stream, slots.data(), std::index_sequence_for<P...>{});
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return -1;
}
}  // namespace nvrtc_launch
#line 1 "kernel.cu"'''

    class _Scalar(object):
        kind = lo = hi = None

        def __init__(self, value):
            if self.lo is not None and not (self.lo <= int(value) <= self.hi):
                raise OverflowError("%d does not fit in %s" % (value, type(self).__name__))
            self.value = value

        def __repr__(self):
            return "%s(%r)" % (type(self).__name__, self.value)

    class int32(_Scalar):
        kind, lo, hi = 3, -(1 << 31), (1 << 31) - 1

    class int64(_Scalar):
        kind, lo, hi = 4, -(1 << 63), (1 << 63) - 1

    class uint32(_Scalar):
        kind, lo, hi = 5, 0, (1 << 32) - 1

    class uint64(_Scalar):
        kind, lo, hi = 6, 0, (1 << 64) - 1

    class float32(_Scalar):
        kind = 7

    class float64(_Scalar):
        kind = 8

    class pointer(_Scalar):
        kind = 2

    class Kernel(object):
        def __init__(self, name, launch, device_index):
            self.name = name
            self.device_index = device_index
            self._launch = launch

        def __call__(self, grid, block, *args, **kwargs):
            shared_mem = int(kwargs.pop("shared_mem", 0))
            stream = kwargs.pop("stream", None)
            if kwargs:
                raise TypeError("unexpected keyword arguments: %s" % ", ".join(sorted(kwargs)))
            dims = self.dims(grid, "grid") + self.dims(block, "block")
            kinds, tensors, ints, floats = self.pack(args)
            handle = -1 if stream is None else stream if isinstance(stream, int) else stream.cuda_stream
            arity = self._launch(self.device_index, dims, shared_mem, handle, kinds, tensors, ints, floats)
            if arity >= 0:
                raise RuntimeError("kernel %s takes %d arguments, not %d" % (self.name, arity, len(args)))

        def __repr__(self):
            return "<delivered kernel %s on cuda:%d>" % (self.name, self.device_index)

        @staticmethod
        def dims(value, what):
            if isinstance(value, int):
                value = (value,)
            value = tuple(int(v) for v in value)
            if not 1 <= len(value) <= 3 or any(v < 1 for v in value):
                raise ValueError("%s must be a positive int or a tuple of 1 to 3 positive ints, not %r"
                                 % (what, value))
            return list(value + (1,) * (3 - len(value)))

        @staticmethod
        def pack(args):
            # As nvrtc_runtime passes them: a kind per argument, the values by type.
            rt = _NvrtcRuntime
            kinds, tensors, ints, floats = [], [], [], []
            for index, arg in enumerate(args):
                if isinstance(arg, rt._Scalar):
                    kind, value = arg.kind, arg.value
                    if kind == rt.POINTER and value is None:
                        value = 0
                elif isinstance(arg, _nvrtc_ctypes._SimpleCData):
                    raw = bytes(arg)
                    if len(raw) > 8:
                        raise TypeError("argument %d: a %s is over 8 bytes" % (index, type(arg).__name__))
                    kind, value = rt.UINT64, int.from_bytes(raw.ljust(8, b"\0"), "little")
                elif arg is None:
                    kinds.append(rt.NULL_POINTER)
                    continue
                elif isinstance(arg, bool):
                    kind, value = rt.BOOL, int(arg)
                elif isinstance(arg, int):
                    if not (-(1 << 31) <= arg < (1 << 31)):
                        raise OverflowError("argument %d: %d does not fit in int32 (plain ints are passed as "
                                            "int32); wrap it: rt.int64(v)" % (index, arg))
                    kind, value = rt.INT32, arg
                elif isinstance(arg, float):
                    kind, value = rt.FLOAT32, arg
                elif isinstance(arg, _nvrtc_torch.Tensor):
                    if not arg.is_cuda:
                        raise TypeError("argument %d is a tensor on %s; kernels take CUDA tensors (move it with "
                                        ".cuda())" % (index, arg.device))
                    kinds.append(rt.TENSOR)
                    tensors.append(arg)
                    continue
                else:
                    iface = getattr(arg, "__cuda_array_interface__", None)
                    if not (isinstance(iface, dict) and "data" in iface):
                        raise TypeError("argument %d: cannot pass a %s to a kernel (tensors, int, float, bool, None, "
                                        "or rt.int64/float64/... wrappers)" % (index, type(arg).__name__))
                    kind, value = rt.POINTER, iface["data"][0]
                kinds.append(kind)
                if kind in (rt.FLOAT32, rt.FLOAT64):
                    floats.append(float(value))
                else:
                    value = int(value)
                    ints.append(value - (1 << 64) if value >= (1 << 63) else value)
            return kinds, tensors, ints, floats

    def __init__(self, extensions):
        # One load_inline build per kernel source and options:
        # (sha256 of the source, options, their nvcc flags, [(kernel name, launcher)]).
        self._extensions = extensions
        self._index = {(sha, name, tuple(options)): (i, launcher)
                       for i, (sha, options, _, kernels) in enumerate(extensions) for name, launcher in kernels}
        self._modules = {}
        self._ready = {}

    def compile(self, source, name, options=()):
        key = (_nvrtc_hashlib.sha256(source.encode()).hexdigest(), name, tuple(options))
        entry = self._index.get(key)
        if entry is None:
            raise RuntimeError("kernel %r (options %r, source sha256 %s) is not one this module was delivered "
                               "with: %s" % (name, tuple(options), key[0], sorted(k[1] for k in self._index)))
        if not _nvrtc_torch.cuda.is_available():
            raise RuntimeError("compiling kernel %r needs a CUDA device, and torch sees none" % name)
        device_index = _nvrtc_torch.cuda.current_device()
        kernel = self._ready.get((key, device_index))
        if kernel is None:
            module = self._build(entry[0], source)
            kernel = self.Kernel(name, getattr(module, entry[1]), device_index)
            self._ready[(key, device_index)] = kernel
        return kernel

    def _build(self, index, source):
        if index not in self._modules:
            from torch.utils.cpp_extension import load_inline
            _, _, flags, kernels = self._extensions[index]
            flags = list(self.NVCC_FLAGS) + list(flags)
            if not any("arch" in f for f in flags):  # this GPU's architecture, as NVRTC compiled for
                major, minor = _nvrtc_torch.cuda.get_device_capability()
                flags.append("-gencode=arch=compute_%d%d,code=sm_%d%d" % (major, minor, major, minor))
            cpp = "".join(self.LAUNCHER % launcher + ";\n" for _, launcher in kernels)
            cuda = "#line 1 \"launchers.cu\"\n" + "".join(self.LAUNCHER % launcher + self.LAUNCH % (name, name)
                                                          for name, launcher in kernels)
            digest = _nvrtc_hashlib.sha256("\0".join([self.PRELUDE, source, cpp, cuda] + flags).encode())
            self._modules[index] = load_inline(
                name="nvrtc_kernels_" + digest.hexdigest()[:16], cpp_sources=[cpp],
                cuda_sources=[self.PRELUDE, source, cuda], functions=[launcher for _, launcher in kernels],
                extra_cuda_cflags=flags, verbose=False)
        return self._modules[index]


_nvrtc_runtime = _NvrtcRuntime([
    ('08f1482c43d8aaefffbfe3a6b42882c913128c8bd616377b63295d370595bf15',
     (), [],
     [('scale', 'launch_scale')]),
])
# --- end of nvrtc_runtime, standalone ------------------------------------------------
rt = _nvrtc_runtime

KERNELS = r'''
extern "C" __global__ void scale(float* out, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i];
}
'''


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
"""


def load(source, name="delivered_under_test"):
    module = types.ModuleType(name)
    exec(compile(source, "<%s>" % name, "exec"), module.__dict__)
    return module


def model_class(source):
    return next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "ModelNew")


class GoldenTest(unittest.TestCase):
    def test_one_kernel_exact_text(self):
        self.maxDiff = None
        self.assertEqual(deliver.to_delivered(ONE_KERNEL), GOLDEN_ONE_KERNEL)

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

    def test_other_import_forms(self):
        members = src('''
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
                        mock.patch("torch.utils.cpp_extension.load_inline", fake_load_inline)]
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
        self.assertEqual(len(evaluation["trials"]), 5)
        self.assertEqual(evaluation["timing"]["candidate"]["trials"], 3)

    def test_delivered_form_is_verified_like_evaluate(self):
        wrong = fixtures.candidate("return torch.relu(self.lin(x)) * 3.0")
        result = self.call(2, fixtures.params(wrong))
        self.assertEqual(result["delivered_source"], wrong)
        self.assertEqual(result["evaluation"]["verdict"], "failed")
        self.assertIn("values", [f["check"] for f in result["evaluation"]["failures"]])

    def test_cuda_kernel_candidate_on_the_cpu_needs_a_gpu(self):
        result = self.call(3, fixtures.params(ONE_KERNEL))
        self.assertEqual(result["delivered_source"], GOLDEN_ONE_KERNEL)
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
