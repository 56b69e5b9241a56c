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

}  // namespace hiera::testing
