"""nvrtc_runtime without a GPU: argument packing, library search errors, and
real NVRTC compilation to PTX and cubin (NVRTC needs no GPU)."""

import ctypes
import os
import tempfile
import unittest
from unittest import mock

import torch

import fixtures  # noqa: F401
from hiera_runner import nvrtc_runtime as rt

SAXPY = r'''
extern "C" __global__ void saxpy(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
template <typename T>
__global__ void fill(T* p, T v, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}
'''


def nvrtc_available():
    try:
        rt.find_nvrtc()
        return True
    except rt.LibraryNotFound:
        return False


class PackingTest(unittest.TestCase):
    def test_python_scalars(self):
        self.assertIsInstance(rt.pack_arg(7), ctypes.c_int32)
        self.assertIsInstance(rt.pack_arg(-(1 << 31)), ctypes.c_int32)
        self.assertIsInstance(rt.pack_arg(2.5), ctypes.c_float)
        self.assertIsInstance(rt.pack_arg(True), ctypes.c_bool)
        self.assertIsInstance(rt.pack_arg(None), ctypes.c_void_p)
        self.assertIsNone(rt.pack_arg(None).value)

    def test_explicit_types(self):
        self.assertIsInstance(rt.pack_arg(rt.int64(1 << 40)), ctypes.c_int64)
        self.assertEqual(rt.pack_arg(rt.int64(1 << 40)).value, 1 << 40)
        self.assertIsInstance(rt.pack_arg(rt.float64(0.1)), ctypes.c_double)
        self.assertEqual(rt.pack_arg(rt.float64(0.1)).value, 0.1)
        self.assertIsInstance(rt.pack_arg(rt.uint32(5)), ctypes.c_uint32)
        self.assertEqual(rt.pack_arg(rt.pointer(0x1000)).value, 0x1000)
        self.assertIsInstance(rt.pack_arg(ctypes.c_short(3)), ctypes.c_short)

    def test_errors_say_what_to_do(self):
        with self.assertRaises(OverflowError) as e:
            rt.pack_arg(1 << 31, 2)
        self.assertIn("argument 2", str(e.exception))
        self.assertIn("int64", str(e.exception))
        with self.assertRaises(OverflowError):
            rt.int32(1 << 40)
        with self.assertRaises(TypeError) as e:
            rt.pack_arg(torch.zeros(3), 0)
        self.assertIn("CUDA tensors", str(e.exception))
        with self.assertRaises(TypeError) as e:
            rt.pack_arg("text", 1)
        self.assertIn("str", str(e.exception))

    def test_param_array_points_at_the_values(self):
        holders, params = rt.pack_args([3, 1.5, rt.int64(9)])
        self.assertEqual(len(holders), 3)
        self.assertEqual(ctypes.c_int32.from_address(params[0]).value, 3)
        self.assertEqual(ctypes.c_float.from_address(params[1]).value, 1.5)
        self.assertEqual(ctypes.c_int64.from_address(params[2]).value, 9)

    def test_cuda_array_interface(self):
        class Fake(object):
            __cuda_array_interface__ = {"data": (0xABC0, False), "shape": (4,), "typestr": "<f4", "version": 3}
        self.assertEqual(rt.pack_arg(Fake()).value, 0xABC0)

    def test_dims(self):
        self.assertEqual(rt._dims(4, "grid"), (4, 1, 1))
        self.assertEqual(rt._dims((2, 3), "grid"), (2, 3, 1))
        with self.assertRaises(ValueError):
            rt._dims((0, 1), "block")
        with self.assertRaises(ValueError):
            rt._dims((1, 1, 1, 1), "block")


class ParameterBlockTest(unittest.TestCase):
    """The buffer a launch hands the driver: the void*[] and, after it, each argument's C value at the start of
    its 8-byte slot, read back through the void*[] as cuLaunchKernel reads it."""

    def params(self, buffer, n):
        return [ctypes.c_void_p.from_address(ctypes.addressof(buffer) + 8 * i).value for i in range(n)]

    def test_every_kind_lands_in_its_slot(self):
        class Fake(object):
            __cuda_array_interface__ = {"data": (0xABC0, False), "shape": (4,), "typestr": "<f4", "version": 3}
        args = [3, -2.5, True, None, rt.int64(-(1 << 40)), rt.uint64((1 << 64) - 1), rt.float64(0.1),
                rt.uint32(7), rt.pointer(None), ctypes.c_short(-3), Fake()]
        buffer = rt._block_for({}, args).fill(args)
        params = self.params(buffer, len(args))
        self.assertEqual(params[0], ctypes.addressof(buffer) + 8 * len(args))  # the slots follow the pointers
        self.assertEqual(ctypes.c_int32.from_address(params[0]).value, 3)
        self.assertEqual(ctypes.c_float.from_address(params[1]).value, -2.5)
        self.assertTrue(ctypes.c_bool.from_address(params[2]).value)
        self.assertIsNone(ctypes.c_void_p.from_address(params[3]).value)
        self.assertEqual(ctypes.c_int64.from_address(params[4]).value, -(1 << 40))
        self.assertEqual(ctypes.c_uint64.from_address(params[5]).value, (1 << 64) - 1)
        self.assertEqual(ctypes.c_double.from_address(params[6]).value, 0.1)
        self.assertEqual(ctypes.c_uint32.from_address(params[7]).value, 7)
        self.assertIsNone(ctypes.c_void_p.from_address(params[8]).value)
        self.assertEqual(ctypes.c_short.from_address(params[9]).value, -3)
        self.assertEqual(ctypes.c_void_p.from_address(params[10]).value, 0xABC0)

    def test_same_bytes_as_pack_args(self):
        args = [11, 0.75, rt.int64(1 << 35), rt.uint32(9)]
        holders, expected = rt.pack_args(args)
        buffer = rt._block_for({}, args).fill(args)
        params = self.params(buffer, len(args))
        for i, h in enumerate(holders):
            size = ctypes.sizeof(h)
            self.assertEqual(ctypes.string_at(params[i], size), ctypes.string_at(expected[i], size), i)

    def test_one_layout_per_argument_types_and_a_buffer_per_launch(self):
        blocks = {}
        first = rt._block_for(blocks, [1, 2.0])
        self.assertIs(rt._block_for(blocks, [5, 6.0]), first)
        a, b = first.fill([1, 2.0]), first.fill([5, 6.0])
        self.assertNotEqual(ctypes.addressof(a), ctypes.addressof(b))  # a launch in flight keeps its own
        self.assertEqual(ctypes.c_int32.from_address(self.params(a, 2)[0]).value, 1)
        self.assertEqual(ctypes.c_float.from_address(self.params(b, 2)[1]).value, 6.0)
        self.assertIsNot(rt._block_for(blocks, [rt.int64(1), 2.0]), first)
        self.assertEqual(len(blocks), 2)

    def test_refusals_match_pack_arg(self):
        with self.assertRaises(OverflowError) as e:
            rt._block_for({}, [1]).fill([1 << 31])
        self.assertIn("argument 0", str(e.exception))
        with self.assertRaises(TypeError) as e:
            rt._block_for({}, [1, torch.zeros(3)])
        self.assertIn("CUDA tensors", str(e.exception))
        self.assertIn("argument 1", str(e.exception))
        with self.assertRaises(TypeError) as e:
            rt._block_for({}, ["text"])
        self.assertIn("str", str(e.exception))
        with self.assertRaises(TypeError) as e:
            rt._block_for({}, [ctypes.c_longdouble(1.0)])
        self.assertIn("over 8 bytes", str(e.exception))

    def test_a_cpu_tensor_of_a_known_layout_is_still_refused(self):
        # The layout of tensor arguments exists (as after a launch with CUDA tensors); a CPU one is refused.
        block = rt._Block([torch.zeros(2)])
        self.assertEqual(block.readers, (rt._TENSOR,))
        with self.assertRaises(TypeError) as e:
            block.fill([torch.zeros(2)])
        self.assertIn("CUDA tensors", str(e.exception))

    def test_fast_dims(self):
        self.assertEqual(rt._fast_dims(4, "grid"), (4, 1, 1))
        self.assertEqual(rt._fast_dims((2, 3), "grid"), (2, 3, 1))
        with self.assertRaises(ValueError):
            rt._fast_dims(0, "grid")


class LibrarySearchTest(unittest.TestCase):
    def setUp(self):
        self.saved = (rt._nvrtc, rt._nvrtc_path)
        rt._nvrtc, rt._nvrtc_path = None, None

    def tearDown(self):
        rt._nvrtc, rt._nvrtc_path = self.saved

    def test_explicit_path_that_does_not_load(self):
        with mock.patch.dict(os.environ, {"HIERA_NVRTC": "/nonexistent/libnvrtc.so.99"}):
            with self.assertRaises(rt.LibraryNotFound) as e:
                rt.find_nvrtc()
        self.assertIn("HIERA_NVRTC=/nonexistent/libnvrtc.so.99", str(e.exception))

    def test_nothing_found_lists_the_places_and_the_fixes(self):
        with tempfile.TemporaryDirectory() as empty:
            with mock.patch.object(rt, "_nvrtc_dirs", return_value=[empty]), \
                    mock.patch.object(rt.ctypes, "CDLL", side_effect=OSError("cannot open shared object file")), \
                    mock.patch.dict(os.environ, {}, clear=False):
                os.environ.pop("HIERA_NVRTC", None)
                with self.assertRaises(rt.LibraryNotFound) as e:
                    rt.find_nvrtc()
        msg = str(e.exception)
        self.assertIn(empty, msg)
        self.assertIn("CUDA_HOME", msg)
        self.assertIn("nvidia-cuda-nvrtc", msg)

    def test_versioned_names_are_ranked(self):
        with tempfile.TemporaryDirectory() as d:
            for name in ("libnvrtc.so.12", "libnvrtc.so.13", "libnvrtc-builtins.so.13", "libnvrtc.alt.so.13"):
                open(os.path.join(d, name), "w").close()
            self.assertEqual([os.path.basename(p) for p in rt._nvrtc_files(d)], ["libnvrtc.so.13", "libnvrtc.so.12"])

    def test_compile_without_a_gpu_says_so(self):
        if torch.cuda.is_available():
            self.skipTest("a GPU is present")
        with self.assertRaises(RuntimeError) as e:
            rt.compile(SAXPY, "saxpy")
        self.assertIn("CUDA device", str(e.exception))


@unittest.skipUnless(nvrtc_available(), "libnvrtc is not loadable here (no CUDA toolkit)")
class NvrtcCompileTest(unittest.TestCase):
    def test_version_and_archs(self):
        major, minor = rt.nvrtc_version()
        self.assertGreaterEqual(major, 11)
        archs = rt.supported_archs()
        if archs:
            self.assertIn(90, archs)

    def test_compile_to_ptx(self):
        ptx, lowered = rt.compile_to_ptx(SAXPY, "saxpy", ["--use_fast_math"])
        self.assertEqual(lowered, "saxpy")
        self.assertIn(".entry saxpy", ptx)
        self.assertIn(".target sm_90", ptx)

    def test_compile_template_to_cubin(self):
        cubin, lowered = rt.compile_to_cubin(SAXPY, "fill<float>", arch="sm_90")
        self.assertTrue(cubin.startswith(b"\x7fELF"))
        self.assertNotEqual(lowered, "fill<float>")
        self.assertIn("fill", lowered)  # the mangled name, e.g. _Z4fillIfEvPT_S0_x

    def test_cubin_needs_a_real_arch(self):
        with self.assertRaises(rt.NvrtcError) as e:
            rt.compile_to_cubin(SAXPY, "saxpy", arch="compute_90")
        self.assertIn("real architecture", str(e.exception))

    def test_syntax_error_gives_the_log_and_the_line(self):
        src = 'extern "C" __global__ void k(float* p) {\n  p[0] = 1.0f\n}\n'
        with self.assertRaises(rt.CompileError) as e:
            rt.compile_to_ptx(src, "k")
        err = e.exception
        self.assertIn("error", err.log)
        # The missing ';' after line 2 is reported at the '}' on line 3.
        self.assertEqual(err.diagnostics[0], {"line": 3, "severity": "error", "message": 'expected a ";"'})
        self.assertIn('line 3: expected a ";"', str(err))

    def test_unknown_kernel_name(self):
        with self.assertRaises(rt.CompileError):
            rt.compile_to_ptx(SAXPY, "no_such_kernel")

    def test_cuda_headers_are_found(self):
        src = '#include <cuda_fp16.h>\nextern "C" __global__ void h(__half* p) { p[0] = __float2half(1.0f); }\n'
        ptx, _ = rt.compile_to_ptx(src, "h")
        self.assertIn(".entry h", ptx)

    def test_disk_cache_of_cubins(self):
        with tempfile.TemporaryDirectory() as d, mock.patch.dict(os.environ, {"HIERA_CACHE_DIR": d}):
            rt.clear_cache()
            key, (image, lowered, kind) = rt._compile_image(SAXPY, "saxpy", (), "sm_90", "cubin")
            self.assertTrue(os.path.isfile(os.path.join(d, "cubin", key + ".cubin")))
            rt.clear_cache()
            with mock.patch.object(rt, "_nvrtc_compile", side_effect=AssertionError("not from the cache")):
                key2, (image2, lowered2, _) = rt._compile_image(SAXPY, "saxpy", (), "sm_90", "cubin")
            self.assertEqual((key2, image2, lowered2), (key, image, lowered))
            rt.clear_cache()

    def test_cache_key(self):
        opts = ["--use_fast_math"]
        k = rt.cache_key(SAXPY, "saxpy", opts, "sm_90")
        self.assertEqual(len(k), 64)
        self.assertEqual(k, rt.cache_key(SAXPY, "saxpy", opts, "sm_90"))
        self.assertNotEqual(k, rt.cache_key(SAXPY, "saxpy", [], "sm_90"))
        self.assertNotEqual(k, rt.cache_key(SAXPY, "saxpy", opts, "sm_80"))
        self.assertNotEqual(k, rt.cache_key(SAXPY + " ", "saxpy", opts, "sm_90"))


if __name__ == "__main__":
    unittest.main()
