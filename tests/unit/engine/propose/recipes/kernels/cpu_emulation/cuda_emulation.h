// The CUDA a generated kernel uses, emulated on the CPU so that the unit tests
// can run generated kernels without a GPU. run_replacements.py compiles each
// kernel's source behind this header (with HIERA_EMULATED_LAUNCHER(name)
// appended) into a shared library; cuda_emulation_runtime.cpp, loaded once,
// runs the grid: each block in turn, its threads as std::threads,
// __syncthreads as a barrier, __shfl_xor_sync and __shfl_sync through a
// per-warp exchange buffer, __shared__ as static storage (one block at a
// time), float4/float2 as plain structs; include/ holds cuda_fp16.h and
// cuda_bf16.h with __half and __nv_bfloat16 and their conversions. The
// tensor-core kernels' PTX helpers (HIERA_EMULATED_TENSOR_CORES): cp.async
// as a plain copy, cvt.rna.tf32 as its rounding, mma.sync m16n8k8 through a
// per-warp exchange of the fragments (in the runtime).
// Light on purpose: every kernel compiles it.
#include <math.h>

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};
extern thread_local uint3 threadIdx, blockIdx;
extern thread_local dim3 blockDim, gridDim;

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

extern "C" void __syncthreads();
extern "C" float __shfl_xor_sync(unsigned mask, float value, int offset);
extern "C" float __shfl_sync(unsigned mask, float value, int source_lane);

struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(8) float2 {
  float x, y;
};
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline float2 make_float2(float x, float y) { return {x, y}; }
template <typename T>
inline T __ldg(const T* p) {
  return *p;
}
// Runs body(context) as every thread of every block of the grid.
extern "C" void hiera_emulate_grid(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                   void (*body)(void*), void* context);

inline float __int_as_float(unsigned bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
inline unsigned __float_as_uint(float f) {
  unsigned bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}
inline float __uint_as_float(unsigned bits) { return __int_as_float(bits); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(a) * b) >> 32);
}
inline float __expf(float x) { return expf(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline int min(int a, int b) { return a < b ? a : b; }

#define HIERA_EMULATED_TENSOR_CORES
#define HIERA_DYNAMIC_SHARED(type, name) static type name[1 << 16]
// cvt.rna.tf32.f32: to 10 mantissa bits, ties away from zero (a carry into the exponent included).
inline unsigned hiera_tf32(float x) {
  unsigned bits = __float_as_uint(x);
  if ((bits & 0x7f800000u) != 0x7f800000u) bits += 0x1000u;
  return bits & 0xffffe000u;
}
// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 for the calling warp (every lane calls it).
extern "C" void hiera_mma_tf32(float* c, const unsigned* a, unsigned b0, unsigned b1);
inline void hiera_cp_async16(float* dst, const float* src, bool valid) {
  if (valid) std::memcpy(dst, src, 16);
  else std::memset(dst, 0, 16);
}
inline void hiera_cp_async_commit() {}
inline void hiera_cp_async_wait_one() {}

template <typename... Params>
constexpr std::size_t hiera_arity(void (*)(Params...)) {
  return sizeof...(Params);
}

// Calls `kernel` with its arguments read from `args` (a pointer to each, as cuLaunchKernel takes them).
template <typename... Params, std::size_t... I>
void hiera_call(void (*kernel)(Params...), void** args, std::index_sequence<I...>) {
  kernel(*static_cast<std::remove_cv_t<std::remove_reference_t<Params>>*>(args[I])...);
}

#define HIERA_EMULATED_LAUNCHER(name)                                                                     \
  static void hiera_body_##name(void* args) {                                                            \
    hiera_call(&name, static_cast<void**>(args), std::make_index_sequence<hiera_arity(&name)>());       \
  }                                                                                                      \
  extern "C" void hiera_launch_##name(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,     \
                                      unsigned bz, void** args) {                                       \
    hiera_emulate_grid(gx, gy, gz, bx, by, bz, &hiera_body_##name, args);                               \
  }
