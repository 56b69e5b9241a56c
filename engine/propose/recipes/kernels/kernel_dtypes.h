#pragma once
// Tensor dtypes as the generated kernels see them: the CUDA element type and
// the header it needs. Kernels compute in float and convert once at the store.
#include <string>
#include <string_view>
#include <vector>

namespace hiera::engine::propose::recipes::kernels {

struct KernelDtype {
  std::string dtype;       // the graph's spelling: "float32"
  std::string cuda_type;   // "float", "__half", "__nv_bfloat16", "bool"
  std::string torch_name;  // "torch.float32"
  int bytes = 4;
  std::string header;      // "<cuda_fp16.h>", or empty
};

// float32, float16, bfloat16 and bool; null for anything else (float64 would
// be computed in float, a precision loss; integers are not kernel values here).
const KernelDtype* kernel_dtype(std::string_view dtype);
bool is_float_dtype(std::string_view dtype);  // float32, float16, bfloat16

// The #include lines the given dtypes need, one per line, each once, in a fixed order.
std::string includes_for(const std::vector<std::string>& dtypes);

// A float literal that NVRTC parses to exactly static_cast<float>(value):
// "2.0f", "0.0441500023f", "-1e+20f"; infinities and NaN as __int_as_float bit patterns.
std::string float_literal(double value);

}  // namespace hiera::engine::propose::recipes::kernels
