#pragma once
// Which pattern (knowledge::pattern_vocabulary()) a profiled kernel belongs
// to, read from its name: PyTorch, cuBLAS, CUTLASS, cuDNN and Triton name
// their kernels after what they do ("cutlass...gemm", "vectorized_elementwise_kernel",
// "cunn_SoftMaxForward", "triton_red_..."). A PyTorch module's kernel list is
// grouped into regions by these families; a user's own kernel has no family.
#include <optional>
#include <string>
#include <string_view>

namespace hiera::engine::plan {

// The family of a kernel name, or nullopt for a name no rule knows. Rules are
// tried in order, on the lower-cased name, so a more specific family wins:
// attention ("flash", "fmha", "attention"), norm ("layer_norm", "rms_norm",
// "batch_norm", "group_norm", "welford", cuDNN's "bn_fw"/"bn_bw", ...),
// softmax, conv ("convolution", "conv2d", ..., "cudnn", "fprop",
// "dgrad", "wgrad", "winograd", "implicit_gemm"; not a bare "conv", which "convert" has),
// batched_gemm ("bmm", or "batched" with a GEMM name), gemm ("gemm", "gemv",
// "cutlass", "cublas", "nvjet", "matmul"), reduction ("reduce", "triton_red", "triton_per", "argmax", "argmin"),
// copy_transpose ("copy", "transpose", "permute", "memcpy", "memset", "cat"),
// elementwise_chain ("elementwise", "vectorized", "unrolled", "triton_poi", "pointwise").
std::optional<std::string> kernel_family(std::string_view kernel_name);

}  // namespace hiera::engine::plan
