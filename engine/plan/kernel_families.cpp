// Kernel name families (kernel_families.h).
#include "engine/plan/kernel_families.h"

#include <cctype>
#include <initializer_list>

namespace hiera::engine::plan {
namespace {

bool contains_any(const std::string& name, std::initializer_list<const char*> needles) {
  for (const char* needle : needles) {
    if (name.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> kernel_family(std::string_view kernel_name) {
  std::string name;
  name.reserve(kernel_name.size());
  for (const char c : kernel_name) name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));

  const bool gemm_name = contains_any(name, {"gemm", "gemv", "cutlass", "cublas", "nvjet", "matmul"});
  if (contains_any(name, {"flash", "fmha", "attention"})) return "attention";
  if (contains_any(name, {"layer_norm", "layernorm", "rms_norm", "rmsnorm", "batch_norm", "batchnorm", "group_norm",
                          "groupnorm", "instance_norm", "welford", "bn_fw", "bn_bw"})) {
    return "norm";
  }
  if (contains_any(name, {"softmax"})) return "softmax";
  // Not a bare "conv": it would take Triton's "fused_convert_element_type" kernels.
  if (contains_any(name, {"convolution", "convolve", "conv1d", "conv2d", "conv3d", "conv_depthwise", "cudnn",
                          "fprop", "dgrad", "wgrad", "winograd", "implicit_gemm"})) return "conv";
  if (contains_any(name, {"bmm"}) || (gemm_name && contains_any(name, {"batched"}))) return "batched_gemm";
  if (gemm_name) return "gemm";
  if (contains_any(name, {"reduce", "triton_red", "triton_per", "argmax", "argmin"})) return "reduction";
  if (contains_any(name, {"copy", "transpose", "permute", "memcpy", "memset", "catarray", "cat_"})) {
    return "copy_transpose";
  }
  if (contains_any(name, {"elementwise", "vectorized", "unrolled", "triton_poi", "pointwise"})) {
    return "elementwise_chain";
  }
  return std::nullopt;
}

}  // namespace hiera::engine::plan
