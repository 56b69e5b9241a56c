#include "engine/analysis/torch_ops.h"

#include <algorithm>
#include <array>

namespace hiera::engine::analysis {

namespace {

using C = OpCategory;

// Sorted by name for binary search.
constexpr std::array<OpInfo, 141> kOps = {{
    {"abs", C::Unary}, {"adaptive_avg_pool1d", C::Pool}, {"adaptive_avg_pool2d", C::Pool},
    {"adaptive_avg_pool3d", C::Pool}, {"adaptive_max_pool2d", C::Pool}, {"add", C::Binary}, {"addmm", C::Matmul},
    {"all", C::Reduction}, {"alpha_dropout", C::Unary}, {"amax", C::Reduction}, {"amin", C::Reduction},
    {"any", C::Reduction}, {"argmax", C::Reduction}, {"argmin", C::Reduction}, {"avg_pool1d", C::Pool},
    {"avg_pool2d", C::Pool}, {"avg_pool3d", C::Pool}, {"baddbmm", C::Matmul}, {"batch_norm", C::Norm},
    {"bfloat16", C::Copy}, {"bmm", C::Matmul}, {"cat", C::Copy}, {"ceil", C::Unary}, {"celu", C::Unary},
    {"clamp", C::Unary}, {"clamp_max", C::Unary}, {"clamp_min", C::Unary}, {"clip", C::Unary}, {"clone", C::Copy},
    {"concat", C::Copy}, {"contiguous", C::Copy}, {"conv1d", C::Conv}, {"conv2d", C::Conv}, {"conv3d", C::Conv},
    {"conv_transpose1d", C::Conv}, {"conv_transpose2d", C::Conv}, {"conv_transpose3d", C::Conv}, {"cos", C::Unary},
    {"cumprod", C::Scan}, {"cumsum", C::Scan}, {"diag", C::Copy}, {"div", C::Binary}, {"divide", C::Binary}, {"double", C::Copy},
    {"dropout", C::Unary}, {"dropout2d", C::Unary}, {"dropout3d", C::Unary}, {"einsum", C::Matmul}, {"elu", C::Unary},
    {"embedding", C::Other}, {"eq", C::Binary}, {"erf", C::Unary}, {"exp", C::Unary}, {"expand", C::View},
    {"expand_as", C::View}, {"expm1", C::Unary}, {"flatten", C::View}, {"float", C::Copy}, {"floor", C::Unary},
    {"floor_divide", C::Binary}, {"fmod", C::Binary}, {"ge", C::Binary}, {"gelu", C::Unary}, {"group_norm", C::Norm},
    {"gt", C::Binary}, {"half", C::Copy}, {"hardsigmoid", C::Unary}, {"hardswish", C::Unary}, {"hardtanh", C::Unary},
    {"identity", C::View}, {"instance_norm", C::Norm}, {"layer_norm", C::Norm}, {"le", C::Binary},
    {"leaky_relu", C::Unary}, {"linear", C::Linear}, {"log", C::Unary}, {"log1p", C::Unary},
    {"log_softmax", C::Softmax}, {"logsigmoid", C::Unary}, {"logsumexp", C::Reduction}, {"lt", C::Binary},
    {"masked_fill", C::Unary}, {"matmul", C::Matmul}, {"max", C::Reduction}, {"max_pool1d", C::Pool},
    {"max_pool2d", C::Pool}, {"max_pool3d", C::Pool}, {"maximum", C::Binary}, {"mean", C::Reduction},
    {"min", C::Reduction}, {"minimum", C::Binary}, {"mish", C::Unary}, {"mm", C::Matmul}, {"module_list", C::Other},
    {"mul", C::Binary}, {"multiply", C::Binary}, {"ne", C::Binary}, {"neg", C::Unary}, {"norm", C::Reduction},
    {"normalize", C::Norm}, {"pad", C::Copy}, {"permute", C::View}, {"pow", C::Binary}, {"prod", C::Reduction},
    {"reciprocal", C::Unary}, {"relu", C::Unary}, {"relu6", C::Unary}, {"remainder", C::Binary}, {"repeat", C::Copy},
    {"reshape", C::View}, {"rms_norm", C::Norm}, {"round", C::Unary}, {"rsqrt", C::Unary}, {"scaled_dot_product_attention", C::Attention}, {"selu", C::Unary},
    {"sequential", C::Other}, {"sigmoid", C::Unary}, {"sign", C::Unary}, {"silu", C::Unary}, {"sin", C::Unary},
    {"softmax", C::Softmax}, {"softplus", C::Unary}, {"sqrt", C::Unary}, {"square", C::Unary}, {"squeeze", C::View},
    {"stack", C::Copy}, {"std", C::Reduction}, {"sub", C::Binary}, {"subtract", C::Binary}, {"sum", C::Reduction},
    {"t", C::View}, {"tanh", C::Unary}, {"transpose", C::View}, {"tril", C::Unary}, {"triu", C::Unary},
    {"true_divide", C::Binary}, {"unsqueeze", C::View},
    {"upsample", C::Other}, {"var", C::Reduction}, {"view", C::View}, {"where", C::Binary},
}};

struct LayerEntry {
  std::string_view type;
  std::string_view op;
};

constexpr std::array<LayerEntry, 52> kLayers = {{
    {"AdaptiveAvgPool1d", "adaptive_avg_pool1d"}, {"AdaptiveAvgPool2d", "adaptive_avg_pool2d"},
    {"AdaptiveAvgPool3d", "adaptive_avg_pool3d"}, {"AdaptiveMaxPool2d", "adaptive_max_pool2d"},
    {"AvgPool1d", "avg_pool1d"}, {"AvgPool2d", "avg_pool2d"}, {"AvgPool3d", "avg_pool3d"},
    {"BatchNorm1d", "batch_norm"}, {"BatchNorm2d", "batch_norm"}, {"BatchNorm3d", "batch_norm"}, {"CELU", "celu"},
    {"Conv1d", "conv1d"}, {"Conv2d", "conv2d"}, {"Conv3d", "conv3d"}, {"ConvTranspose1d", "conv_transpose1d"},
    {"ConvTranspose2d", "conv_transpose2d"}, {"ConvTranspose3d", "conv_transpose3d"}, {"Dropout", "dropout"},
    {"Dropout2d", "dropout2d"}, {"Dropout3d", "dropout3d"}, {"ELU", "elu"}, {"Embedding", "embedding"},
    {"Flatten", "flatten"}, {"GELU", "gelu"}, {"GroupNorm", "group_norm"}, {"Hardsigmoid", "hardsigmoid"},
    {"Hardswish", "hardswish"}, {"Hardtanh", "hardtanh"}, {"Identity", "identity"},
    {"InstanceNorm1d", "instance_norm"}, {"InstanceNorm2d", "instance_norm"}, {"InstanceNorm3d", "instance_norm"},
    {"LayerNorm", "layer_norm"}, {"LeakyReLU", "leaky_relu"}, {"Linear", "linear"}, {"LogSoftmax", "log_softmax"},
    {"MaxPool1d", "max_pool1d"}, {"MaxPool2d", "max_pool2d"}, {"MaxPool3d", "max_pool3d"}, {"Mish", "mish"},
    {"ModuleList", "module_list"}, {"ReLU", "relu"}, {"ReLU6", "relu6"}, {"RMSNorm", "rms_norm"}, {"SELU", "selu"},
    {"Sequential", "sequential"}, {"SiLU", "silu"}, {"Sigmoid", "sigmoid"}, {"Softmax", "softmax"},
    {"Softplus", "softplus"}, {"Tanh", "tanh"}, {"Upsample", "upsample"},
}};


}  // namespace

std::optional<OpInfo> find_op(std::string_view name) {
  if (name.size() > 1 && name.back() == '_' && name[name.size() - 2] != '_') name.remove_suffix(1);  // relu_ -> relu
  const auto it = std::lower_bound(kOps.begin(), kOps.end(), name, [](const OpInfo& op, std::string_view n) { return op.name < n; });
  if (it != kOps.end() && it->name == name) return *it;
  return std::nullopt;
}

std::optional<OpInfo> operator_op(std::string_view op) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 15> kOperators = {{
      {"+", "add"}, {"-", "sub"}, {"*", "mul"}, {"/", "div"}, {"//", "floor_divide"}, {"%", "remainder"}, {"**", "pow"},
      {"@", "matmul"}, {"<", "lt"}, {"<=", "le"}, {">", "gt"}, {">=", "ge"}, {"==", "eq"}, {"!=", "ne"}, {"neg", "neg"},
  }};
  for (const auto& [symbol, name] : kOperators) {
    if (symbol == op) return find_op(name);
  }
  return std::nullopt;
}

bool is_elementwise_op(std::string_view name) {
  const auto info = find_op(name);
  return info && (info->category == OpCategory::Unary || info->category == OpCategory::Binary);
}

std::optional<OpInfo> layer_op(std::string_view layer_type) {
  for (const auto& entry : kLayers) {
    if (entry.type == layer_type) return find_op(entry.op);
  }
  return std::nullopt;
}

bool is_sync_method(std::string_view name) { return name == "item" || name == "cpu" || name == "tolist" || name == "numpy"; }

std::optional<std::string> dtype_name(std::string_view spelling) {
  if (spelling.rfind("torch.", 0) == 0) spelling.remove_prefix(6);
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 20> kNames = {{
      {"float32", "float32"}, {"float", "float32"}, {"float16", "float16"}, {"half", "float16"}, {"bfloat16", "bfloat16"},
      {"float64", "float64"}, {"double", "float64"}, {"int64", "int64"}, {"long", "int64"}, {"int32", "int32"},
      {"int", "int32"}, {"int16", "int16"}, {"short", "int16"}, {"int8", "int8"}, {"uint8", "uint8"}, {"bool", "bool"},
      {"float8_e4m3fn", "float8_e4m3fn"}, {"float8_e5m2", "float8_e5m2"}, {"complex64", "complex64"}, {"cfloat", "complex64"},
  }};
  for (const auto& [name, canonical] : kNames) {
    if (name == spelling) return std::string(canonical);
  }
  return std::nullopt;
}

}  // namespace hiera::engine::analysis
