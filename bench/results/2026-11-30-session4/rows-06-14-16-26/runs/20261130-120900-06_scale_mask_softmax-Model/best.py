"""softmax(scores * scale + mask) over the keys: the attention-probability chain with an additive bias/mask."""
import torch
import torch.nn as nn

BATCH = 16
HEADS = 16
SEQ = 1024

CPU_SIZES = {"BATCH": 2, "HEADS": 2, "SEQ": 16}


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, scores, mask):
        return torch.softmax(scores * self.scale + mask, dim=-1)


def get_inputs():
    return [torch.randn(BATCH, HEADS, SEQ, SEQ), torch.randn(1, 1, SEQ, SEQ)]


def get_init_inputs():
    return [0.125]


# ---- hiera knowledge proposer: everything below is generated from the captured graph ----
import torch
# --- nvrtc_runtime, standalone ----------------------------------------------------
# This module's CUDA kernels were compiled with NVRTC while it was optimized; here
# each kernel source is built once, on first use: with torch's own NVRTC where the
# installed torch has it (torch.cuda._utils, torch >= 2.8: well under a second), else
# by torch.utils.cpp_extension's load_inline with a generated C++ launcher per kernel
# (nvcc, about a minute cold). The calls are unchanged:
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

    class TorchNvrtcKernel(object):
        # A kernel compiled by torch's NVRTC, launched through the driver torch loaded,
        # each argument in the C type nvrtc_runtime gives it.
        CTYPES = {3: _nvrtc_ctypes.c_int32, 4: _nvrtc_ctypes.c_int64, 5: _nvrtc_ctypes.c_uint32,
                  6: _nvrtc_ctypes.c_uint64, 7: _nvrtc_ctypes.c_float, 8: _nvrtc_ctypes.c_double,
                  9: _nvrtc_ctypes.c_bool, 2: _nvrtc_ctypes.c_void_p}

        def __init__(self, name, function, device_index):
            self.name = name
            self.device_index = device_index
            self._function = function
            self._shared_limit = 48 * 1024

        def __call__(self, grid, block, *args, **kwargs):
            rt = _NvrtcRuntime
            shared_mem = int(kwargs.pop("shared_mem", 0))
            stream = kwargs.pop("stream", None)
            if kwargs:
                raise TypeError("unexpected keyword arguments: %s" % ", ".join(sorted(kwargs)))
            dims = rt.Kernel.dims(grid, "grid") + rt.Kernel.dims(block, "block")
            kinds, tensors, ints, floats = rt.Kernel.pack(args)
            tensors, ints, floats = iter(tensors), iter(ints), iter(floats)
            holders = []
            for kind in kinds:
                if kind == rt.TENSOR:
                    holders.append(_nvrtc_ctypes.c_void_p(next(tensors).data_ptr()))
                elif kind == rt.NULL_POINTER:
                    holders.append(_nvrtc_ctypes.c_void_p(None))
                elif kind in (rt.FLOAT32, rt.FLOAT64):
                    holders.append(self.CTYPES[kind](next(floats)))
                else:
                    value = next(ints)
                    if kind in (rt.UINT32, rt.UINT64, rt.POINTER) and value < 0:
                        value += 1 << 64
                    holders.append(self.CTYPES[kind](value))
            lib = _nvrtc_torch.cuda._utils._get_gpu_runtime_library()
            arity = self.arity(lib)
            if arity is not None and arity != len(args):
                raise RuntimeError("kernel %s takes %d arguments, not %d" % (self.name, arity, len(args)))
            params = (_nvrtc_ctypes.c_void_p * max(1, len(holders)))()
            for i, h in enumerate(holders):
                params[i] = _nvrtc_ctypes.addressof(h)
            if shared_mem > self._shared_limit:  # over 48 KiB of dynamic shared memory is opted into
                self._check(lib.cuFuncSetAttribute(self._function, 8, shared_mem), "cuFuncSetAttribute")
                self._shared_limit = shared_mem
            handle = (_nvrtc_torch.cuda.current_stream(self.device_index).cuda_stream if stream is None else
                      stream if isinstance(stream, int) else stream.cuda_stream)
            self._check(lib.cuLaunchKernel(self._function, dims[0], dims[1], dims[2], dims[3], dims[4], dims[5],
                                           shared_mem, _nvrtc_ctypes.c_void_p(handle), params, None),
                        "cuLaunchKernel(%s, grid=%s, block=%s)" % (self.name, dims[:3], dims[3:]))

        def arity(self, lib):
            # The kernel's parameter count from the driver (cuFuncGetParamInfo, CUDA 12.4+):
            # a wrong count is refused here rather than read as garbage by the kernel.
            if not hasattr(self, "_arity"):
                self._arity = None
                query = getattr(lib, "cuFuncGetParamInfo", None)
                if query is not None:
                    offset, size, count = _nvrtc_ctypes.c_size_t(), _nvrtc_ctypes.c_size_t(), 0
                    while count < 4096 and query(self._function, _nvrtc_ctypes.c_size_t(count),
                                                 _nvrtc_ctypes.byref(offset), _nvrtc_ctypes.byref(size)) == 0:
                        count += 1
                    self._arity = count
            return self._arity

        @staticmethod
        def _check(result, what):
            if result != 0:
                raise RuntimeError("CUDA error %d: %s failed" % (result, what))

        def __repr__(self):
            return "<delivered kernel %s on cuda:%d (torch NVRTC)>" % (self.name, self.device_index)

    @staticmethod
    def torch_nvrtc():
        """True when the installed torch compiles kernels with NVRTC itself."""
        utils = getattr(_nvrtc_torch.cuda, "_utils", None)
        return all(hasattr(utils, f) for f in ("_nvrtc_compile", "_cuda_load_module", "_get_gpu_runtime_library"))

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
            if self.torch_nvrtc():
                from torch.cuda import _utils
                # torch targets this device's architecture itself: an explicit one would clash.
                kept = [o for o in options if not o.startswith(("-arch", "--gpu-architecture"))]
                ptx, mangled = _utils._nvrtc_compile(source, name, None, None, kept or None)
                loaded = _utils._cuda_load_module(ptx, [mangled])[mangled]
                kernel = self.TorchNvrtcKernel(name, loaded.func, device_index)
                kernel._module = loaded  # keeps the module loaded as long as the kernel lives
            else:
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
    ('11fde265baafc33d0b57d7cb88d9ea63209e12bcf4dace24a608046dc3785141',
     ('--fmad=false',), ['--fmad=false'],
     [('fused_softmax_rows', 'launch_fused_softmax_rows')]),
    ('4357b2b83e58291a5bcb8e1b648c6fee9f0cf1f41b735354fdf1a669fbc0bdf3',
     ('--fmad=false',), ['--fmad=false'],
     [('fused_softmax', 'launch_fused_softmax')]),
])
# --- end of nvrtc_runtime, standalone ------------------------------------------------
nvrtc_runtime = _nvrtc_runtime


_KERNEL_SOURCE_fused_softmax_rows = r"""
// hiera: generated from knowledge/templates/row_registers.cu

typedef int index_t;
typedef float out_t;
#define HIERA_INF __int_as_float(0x7f800000)  // NVRTC has no math.h INFINITY
#define COLS 1024
#define SEGMENT_THREADS 32
#define ROWS_PER_BLOCK 4
#define VPT ((COLS + SEGMENT_THREADS - 1) / SEGMENT_THREADS)
#define STATS 1
// Element k of this thread is column threadIdx.x + k * SEGMENT_THREADS: consecutive lanes, consecutive addresses.
#define IN_ROW(k) (COLS % SEGMENT_THREADS == 0 || (int)threadIdx.x + (k) * SEGMENT_THREADS < COLS)

__device__ __forceinline__ float fused_softmax_rows_input(const index_t i, const float* __restrict__ a0, const float* __restrict__ a1, const int a1_size0) {
  const float a0_v = static_cast<float>(a0[i]);
  const float t0 = a0_v * 0.125f;
  const float a1_v = static_cast<float>(a1[(i % a1_size0)]);
  const float t1 = t0 + a1_v;
  return t1;
}

#if STATS == 1
#define OUTPUT_STATS const float row_max, const float row_sum, const long long cols
#define STATS_ARGS row_max, row_sum, (long long)COLS
#elif STATS == 2
#define OUTPUT_STATS const float mean, const float rstd
#define STATS_ARGS mean, rstd
#else
#define OUTPUT_STATS const float acc, const long long cols
#define STATS_ARGS acc, (long long)COLS
#endif

__device__ __forceinline__ float fused_softmax_rows_output(const index_t i, const float x, OUTPUT_STATS) {
  const float t0 = expf(x - row_max) / row_sum;
  return t0;
}

__device__ __forceinline__ float fused_softmax_rows_combine(const float a, const float b) {
#if STATS == 1
  return fmaxf(a, b);
#elif STATS == 2
  return a + b;
#else
  return 0.0f;
#endif
}

// The row's combine of every thread's v: shuffles within each warp, then every
// warp merges the per-warp partials itself (no second broadcast).
__device__ __forceinline__ float fused_softmax_rows_row_reduce(float v, const float identity) {
  for (int offset = 16; offset > 0; offset /= 2) v = fused_softmax_rows_combine(v, __shfl_xor_sync(0xffffffffu, v, offset));
#if SEGMENT_THREADS > 32
  __shared__ float partial[SEGMENT_THREADS / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = lane < SEGMENT_THREADS / 32 ? partial[lane] : identity;
  for (int offset = 16; offset > 0; offset /= 2) v = fused_softmax_rows_combine(v, __shfl_xor_sync(0xffffffffu, v, offset));
  __syncthreads();  // partial is written again by the next reduction
#endif
  return v;
}

__device__ __forceinline__ float fused_softmax_rows_row_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
#if SEGMENT_THREADS > 32
  __shared__ float partial_sum[SEGMENT_THREADS / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial_sum[warp] = v;
  __syncthreads();
  v = lane < SEGMENT_THREADS / 32 ? partial_sum[lane] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  __syncthreads();
#endif
  return v;
}

extern "C" __global__ void __launch_bounds__(SEGMENT_THREADS * ROWS_PER_BLOCK)
fused_softmax_rows(const float* __restrict__ a0, const float* __restrict__ a1, int a1_size0, out_t* __restrict__ out, long long rows) {
  const long long row = (long long)blockIdx.x * ROWS_PER_BLOCK + threadIdx.y;
  // Only a warp per row can leave early: a block per row has rows_per_block 1 and exactly `rows` blocks.
  if (row >= rows) return;
  const index_t start = static_cast<index_t>(row * COLS);
  float v[VPT];
#pragma unroll
  for (int k = 0; k < VPT; ++k)
    if (IN_ROW(k)) v[k] = fused_softmax_rows_input(start + (index_t)threadIdx.x + k * SEGMENT_THREADS, a0, a1, a1_size0);
#if STATS == 1
  float m = -HIERA_INF;
#pragma unroll
  for (int k = 0; k < VPT; ++k)
    if (IN_ROW(k)) m = fmaxf(m, v[k]);
  const float row_max = fused_softmax_rows_row_reduce(m, -HIERA_INF);
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < VPT; ++k)
    if (IN_ROW(k)) s += expf(v[k] - row_max);
  const float row_sum = fused_softmax_rows_row_sum(s);
#elif STATS == 2
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < VPT; ++k)
    if (IN_ROW(k)) s += v[k];
  const float mean = fused_softmax_rows_row_sum(s) * (1.0f / (float)COLS);
  float d = 0.0f;
#pragma unroll
  for (int k = 0; k < VPT; ++k)
    if (IN_ROW(k)) d += (v[k] - mean) * (v[k] - mean);
  const float rstd = rsqrtf(fused_softmax_rows_row_sum(d) * (1.0f / (float)COLS) + 0.0f);
#else
  float a = 0.0f;
#pragma unroll
  for (int k = 0; k < VPT; ++k)
    if (IN_ROW(k)) a = fused_softmax_rows_combine(a, v[k]);
  const float acc = fused_softmax_rows_row_reduce(a, 0.0f);
#endif
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    if (!IN_ROW(k)) continue;
    const index_t i = start + (index_t)threadIdx.x + k * SEGMENT_THREADS;
    out[i] = static_cast<out_t>(fused_softmax_rows_output(i, v[k], STATS_ARGS));
  }
}

#if STATS == 3
// Rows of another length than COLS: two sweeps, the second re-reading the row (from L1/L2).
extern "C" __global__ void __launch_bounds__(SEGMENT_THREADS * ROWS_PER_BLOCK)
fused_softmax_rows_any_length(const float* __restrict__ a0, const float* __restrict__ a1, int a1_size0, out_t* __restrict__ out, long long rows, long long cols) {
  const long long row = (long long)blockIdx.x * ROWS_PER_BLOCK + threadIdx.y;
  if (row >= rows) return;
  const long long start = row * cols;
  float a = 0.0f;
  for (long long c = threadIdx.x; c < cols; c += SEGMENT_THREADS)
    a = fused_softmax_rows_combine(a, fused_softmax_rows_input(static_cast<index_t>(start + c), a0, a1, a1_size0));
  const float acc = fused_softmax_rows_row_reduce(a, 0.0f);
  for (long long c = threadIdx.x; c < cols; c += SEGMENT_THREADS) {
    const index_t i = static_cast<index_t>(start + c);
    out[i] = static_cast<out_t>(fused_softmax_rows_output(i, fused_softmax_rows_input(i, a0, a1, a1_size0), acc, cols));
  }
}
#endif
"""
_KERNEL_SOURCE_fused_softmax = r"""
// hiera: generated from knowledge/templates/row_logsumexp.cu

typedef int index_t;
typedef float out_t;
#define HIERA_INF __int_as_float(0x7f800000)  // NVRTC has no math.h INFINITY
#define SEGMENT_THREADS 32
#define ROWS_PER_BLOCK 8
#define PER_ELEMENT 1

__device__ __forceinline__ float fused_softmax_input(const index_t i, const float* __restrict__ a0, const float* __restrict__ a1, const int a1_size0) {
  const float a0_v = static_cast<float>(a0[i]);
  const float t0 = a0_v * 0.125f;
  const float a1_v = static_cast<float>(a1[(i % a1_size0)]);
  const float t1 = t0 + a1_v;
  return t1;
}

__device__ __forceinline__ float fused_softmax_output(const index_t i, const float x, const float row_max,
                                                        const float row_sum, const long long cols) {
  const float t0 = expf(x - row_max) / row_sum;
  return t0;
}

struct MaxSum {
  float max, sum;  // sum of exp(x - max)
};

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
  if (a.max == -HIERA_INF) return b;
  if (b.max == -HIERA_INF) return a;
  const float m = fmaxf(a.max, b.max);
  return {m, a.sum * expf(a.max - m) + b.sum * expf(b.max - m)};
}

// Every thread's partial merged: shuffles within each warp, then one shared slot per warp.
__device__ __forceinline__ MaxSum reduce(MaxSum v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = merge(v, {__shfl_xor_sync(0xffffffffu, v.max, offset), __shfl_xor_sync(0xffffffffu, v.sum, offset)});
#if SEGMENT_THREADS > 32
  __shared__ MaxSum partial[SEGMENT_THREADS / 32];
  __shared__ MaxSum total;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < SEGMENT_THREADS / 32 ? partial[lane] : MaxSum{-HIERA_INF, 0.0f};
    for (int offset = 16; offset > 0; offset /= 2)
      v = merge(v, {__shfl_xor_sync(0xffffffffu, v.max, offset), __shfl_xor_sync(0xffffffffu, v.sum, offset)});
    if (lane == 0) total = v;
  }
  __syncthreads();
  v = total;
#endif
  return v;
}

extern "C" __global__ void __launch_bounds__(SEGMENT_THREADS * ROWS_PER_BLOCK)
fused_softmax(const float* __restrict__ a0, const float* __restrict__ a1, int a1_size0, out_t* __restrict__ out, long long rows, long long cols) {
  for (long long row = (long long)blockIdx.x * ROWS_PER_BLOCK + threadIdx.y; row < rows;
       row += (long long)gridDim.x * ROWS_PER_BLOCK) {
    const long long start = row * cols;
    MaxSum acc = {-HIERA_INF, 0.0f};
    for (long long c = threadIdx.x; c < cols; c += SEGMENT_THREADS)
      acc = merge(acc, MaxSum{ fused_softmax_input(static_cast<index_t>(start + c), a0, a1, a1_size0), 1.0f });
    acc = reduce(acc);
#if PER_ELEMENT
    // The second sweep re-reads the row: it was just loaded, so it comes from L1/L2.
    for (long long c = threadIdx.x; c < cols; c += SEGMENT_THREADS) {
      const index_t i = static_cast<index_t>(start + c);
      const float x = fused_softmax_input(i, a0, a1, a1_size0);
      out[i] = static_cast<out_t>(fused_softmax_output(i, x, acc.max, acc.sum, cols));
    }
#else
    if (threadIdx.x == 0)
      out[row] = static_cast<out_t>(fused_softmax_output(static_cast<index_t>(row), 0.0f, acc.max, acc.sum, cols));
#endif
  }
}

extern "C" __global__ void __launch_bounds__(256)
fused_softmax_strided(const float* __restrict__ a0, const float* __restrict__ a1, int a1_size0, out_t* __restrict__ out, long long outer, long long reduced, long long inner) {
  const long long n = outer * inner;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride) {
    const long long o = k / inner, j = k - o * inner;
    MaxSum acc = {-HIERA_INF, 0.0f};
    for (long long r = 0; r < reduced; ++r)
      acc = merge(acc, MaxSum{ fused_softmax_input(static_cast<index_t>((o * reduced + r) * inner + j), a0, a1, a1_size0), 1.0f });
#if PER_ELEMENT
    for (long long r = 0; r < reduced; ++r) {
      const index_t i = static_cast<index_t>((o * reduced + r) * inner + j);
      const float x = fused_softmax_input(i, a0, a1, a1_size0);
      out[i] = static_cast<out_t>(fused_softmax_output(i, x, acc.max, acc.sum, reduced));
    }
#else
    out[k] = static_cast<out_t>(fused_softmax_output(static_cast<index_t>(k), 0.0f, acc.max, acc.sum, reduced));
#endif
  }
}
"""
_KERNEL_COMPILERS = {
    "fused_softmax_rows": lambda: nvrtc_runtime.compile(_KERNEL_SOURCE_fused_softmax_rows, "fused_softmax_rows", options=["--fmad=false"]),
    "fused_softmax": lambda: nvrtc_runtime.compile(_KERNEL_SOURCE_fused_softmax, "fused_softmax", options=["--fmad=false"]),
}
_KERNELS = {}
_SM_COUNT = {}


def _kernel(name):
    """The kernel `name`, compiled with NVRTC on first use on each device and cached."""
    key = (name, torch.cuda.current_device())
    if key not in _KERNELS:
        _KERNELS[key] = _KERNEL_COMPILERS[name]()
    return _KERNELS[key]


def _grid(n, block, blocks_per_sm=4):
    """Blocks for a grid-stride kernel over n items: enough to fill every SM
    blocks_per_sm times, never more than the items need."""
    device = torch.cuda.current_device()
    if device not in _SM_COUNT:
        _SM_COUNT[device] = torch.cuda.get_device_properties(device).multi_processor_count
    return max(1, min((n + block - 1) // block, _SM_COUNT[device] * blocks_per_sm))


class ModelNew(Model):
    def forward(self, scores, mask):
        _softmax_in_shape = torch.broadcast_shapes(scores.shape, mask.shape)
        assert scores.dtype == torch.float32 and mask.dtype == torch.float32, "kernel fused_softmax expects float32 scores, float32 mask"
        _softmax_rows = _softmax_in_shape[:3].numel()
        _softmax_cols = _softmax_in_shape[3]
        softmax = torch.empty(_softmax_in_shape, dtype=scores.dtype, device=scores.device)
        assert _softmax_in_shape.numel() < 2**31, "kernel fused_softmax indexes with 32 bits"
        _kernel("fused_softmax_rows")((_softmax_rows + 4 - 1) // 4, (32, 4), scores.contiguous(), mask.contiguous(), _softmax_in_shape[2:4].numel(), softmax, nvrtc_runtime.int64(_softmax_rows)) if _softmax_cols == 1024 else _kernel("fused_softmax")(_grid(_softmax_rows, 8), (32, 8), scores.contiguous(), mask.contiguous(), _softmax_in_shape[2:4].numel(), softmax, nvrtc_runtime.int64(_softmax_rows), nvrtc_runtime.int64(_softmax_cols))
        return softmax
