#pragma once
// The PyTorch ops analysis recognises, by canonical name, with the category
// their shape and work rules (torch_shape_rules.h) and the hints go by; and
// the spellings that lead to them: torch.X / F.X / x.X() / an operator / an
// nn layer class. In-place forms (relu_, add_) are their op.
#include <optional>
#include <string>
#include <string_view>

namespace hiera::engine::analysis {

enum class OpCategory {
  Unary,       // elementwise on one tensor: relu, exp, dropout, clamp
  Binary,      // elementwise on broadcast operands: add, mul, where, gt
  Reduction,   // sum, mean, amax, var, ... over dims
  Scan,        // cumsum, cumprod: same shape
  Softmax,     // softmax, log_softmax
  Matmul,      // matmul, mm, bmm, addmm, baddbmm, einsum
  Linear,      // linear
  Conv,        // conv1d/2d/3d, conv_transpose*
  Norm,        // batch_norm, layer_norm, group_norm, ...
  Pool,        // max/avg pooling, adaptive pooling
  View,        // view, reshape, permute, transpose, ...: no kernel
  Copy,        // contiguous, clone, cat, stack, dtype casts: a copy kernel
  Creation,    // zeros_like, randn, arange: a fill kernel
  Attention,   // scaled_dot_product_attention
  Other,       // embedding, sequential layers, RNNs, anything without a rule
};

struct OpInfo {
  std::string_view name;
  OpCategory category;
};

// The op called `name` (as torch.name, F.name or tensor.name()); in-place
// names map to theirs. nullopt for names that are not ops (size, dim, item).
std::optional<OpInfo> find_op(std::string_view name);
// The op of a binary operator: "+" -> add, "@" -> matmul, "<" -> lt.
std::optional<OpInfo> operator_op(std::string_view op);
// The op an nn layer class performs: "Conv2d" -> conv2d, "ReLU" -> relu,
// "BatchNorm2d" -> batch_norm, "Sequential" -> sequential (Other).
std::optional<OpInfo> layer_op(std::string_view layer_type);
// Unary or binary: an op a fused elementwise pass can take (the hints' chains, the estimates' fused groups).
bool is_elementwise_op(std::string_view name);

// Methods and functions that make the host wait for the device.
bool is_sync_method(std::string_view name);  // item, cpu, tolist, numpy

// "torch.float16" / "half" / "torch.half" -> "float16"; nullopt when not a dtype name.
std::optional<std::string> dtype_name(std::string_view spelling);

}  // namespace hiera::engine::analysis
