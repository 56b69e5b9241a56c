// The CUDA a generated kernel uses, emulated on the CPU so that the unit tests
// can run generated kernels without a GPU. run_replacements.py compiles each
// kernel's source behind this header (with HIERA_EMULATED_LAUNCHER(name)
// appended) into a shared library; cuda_emulation_runtime.cpp, loaded once,
// runs the grid: each block in turn, its threads as std::threads,
// __syncthreads as a barrier, __shfl_xor_sync and __shfl_sync through a
// per-warp exchange buffer, __shared__ as static storage (one block at a
// time), float4/float2 as plain structs; include/ holds cuda_fp16.h and
// cuda_bf16.h with __half and __nv_bfloat16 and their conversions.
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
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(a) * b) >> 32);
}
inline float __expf(float x) { return expf(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline int min(int a, int b) { return a < b ? a : b; }

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
