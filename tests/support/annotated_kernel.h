// A small CUDA kernel with the `hiera:` annotations its task spec needs: the
// target that optimizer, facade and server tests hand the fake worker.
#pragma once

#include <string>

namespace hiera::testing {

inline std::string annotated_scale_kernel() {
  return "// hiera: size N=1024\n"
         "// hiera: arg x input float32[N]\n"
         "// hiera: arg y output float32[N]\n"
         "// hiera: arg n scalar int32 = N\n"
         "// hiera: launch grid=N/256 block=256\n"
         "__global__ void scale(const float* x, float* y, int n) {\n"
         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) y[i] = 2.0f * x[i];\n"
         "}\n";
}

// A correct candidate for annotated_scale_kernel(), its text made distinct by `variant`
// (so a run does not take it for a repeat).
inline std::string scale_kernel_variant(int variant) {
  return "__global__ void scale(const float* __restrict__ x, float* __restrict__ y, int n) {\n"
         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) y[i] = x[i] + x[i];  // variant " +
         std::to_string(variant) + "\n}\n";
}

}  // namespace hiera::testing
