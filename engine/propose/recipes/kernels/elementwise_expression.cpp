#include "engine/propose/recipes/kernels/elementwise_expression.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/node_args.h"
#include "engine/propose/recipes/kernels/unsupported.h"

namespace hiera::engine::propose::recipes::kernels {

namespace {

using Kind = graph::Arg::Kind;

// Device helpers (device_helpers.inc), in dependency order.
struct Helper {
  const char* name;
  const char* code;
};

const std::vector<Helper>& helper_table() {
#define HIERA_DEVICE_HELPER(name, ...) {#name, "__device__ __forceinline__ " #__VA_ARGS__},
  static const std::vector<Helper> table = {
#include "engine/propose/recipes/kernels/device_helpers.inc"
  };
#undef HIERA_DEVICE_HELPER
  return table;
}

// Helpers a helper calls.
std::vector<std::string> helper_dependencies(const std::string& name) {
  if (name == "hiera_hardswish" || name == "hiera_hardsigmoid") return {"hiera_std_max", "hiera_std_min"};
  return {};
}

FormulaOperand operand_of(const graph::Node& node, const graph::Arg* arg, const char* what) {
  if (!arg) throw Unsupported(node.name + ": missing argument " + what);
  FormulaOperand operand;
  switch (arg->kind) {
    case Kind::Node:
      operand.kind = FormulaOperand::Kind::Node;
      operand.node = arg->node;
      return operand;
    case Kind::Number:
      operand.number = arg->number;
      return operand;
    case Kind::Bool:
      operand.number = arg->flag ? 1.0 : 0.0;
      return operand;
    default:
      throw Unsupported(node.name + ": argument " + what + " is neither a tensor nor a number");
  }
}

FormulaOperand number_operand(double value) {
  FormulaOperand operand;
  operand.number = value;
  return operand;
}

ElementwiseFormula unary(const graph::Node& node, std::string pattern, std::vector<std::string> helpers = {}) {
  ElementwiseFormula formula;
  formula.operands.push_back(operand_of(node, argument(node, 0, "input"), "input"));
  formula.pattern = std::move(pattern);
  formula.helpers = std::move(helpers);
  return formula;
}

// A module activation's parameter: recorded in the capture's attrs, or the op has none to lose.
double module_number(const graph::OpGraph& graph, const graph::Node& node, const char* key) {
  const auto value = module_attr(graph, node, key);
  if (!value || !value->is_number())
    throw Unsupported(node.name + ": the capture did not record the module's " + std::string(key));
  return value->get<double>();
}

// A parameter of an activation: a module attribute or a functional argument.
double activation_number(const graph::OpGraph& graph, const graph::Node& node, std::size_t position,
                         const char* name, double default_value) {
  if (node.op == "call_module") return module_number(graph, node, name);
  return number_argument(node, position, name).value_or(default_value);
}

float to_float(double value) { return static_cast<float>(value); }

bool flag_in_place(const graph::OpGraph& graph, const graph::Node& node) {
  const std::string base = target_base(node);
  if (node.op == "call_method" && base.size() > 1 && base.back() == '_' && base.substr(base.size() - 2) != "__") return true;
  if (node.op == "call_function" && (base == "iadd" || base == "isub" || base == "imul" || base == "itruediv" ||
                                     base == "ipow"))
    return true;
  if (node.op == "call_module") {
    const auto attr = module_attr(graph, node, "inplace");
    return attr && attr->is_boolean() && attr->get<bool>();
  }
  const auto it = node.kwargs.find("inplace");
  return it != node.kwargs.end() && it->second.kind == Kind::Bool && it->second.flag;
}

std::optional<ElementwiseFormula> binary_arithmetic(const graph::Node& node) {
  const std::string base = target_base(node);
  FormulaOperand a = operand_of(node, argument(node, 0, "input"), "input");
  FormulaOperand b = operand_of(node, argument(node, 1, "other"), "other");
  if (base == "rsub" || base == "__rsub__" || base == "__rtruediv__") std::swap(a, b);
  ElementwiseFormula formula;
  if (node.kind == "add" || node.kind == "sub") {
    const double alpha = number_argument(node, 2, "alpha").value_or(1.0);
    const char* op = node.kind == "add" ? " + " : " - ";
    formula.operands = {a, b};
    if (alpha == 1.0) {
      formula.pattern = std::string("$0") + op + "$1";
    } else {
      formula.operands.push_back(number_operand(alpha));
      formula.pattern = std::string("$0") + op + "$2 * $1";
    }
    return formula;
  }
  if (node.kind == "mul") {
    formula.operands = {a, b};
    formula.pattern = "$0 * $1";
    return formula;
  }
  // div
  if (const auto mode = argument(node, 2, "rounding_mode"); mode && mode->kind != Kind::None)
    throw Unsupported(node.name + ": division with a rounding mode");
  if (b.kind == FormulaOperand::Kind::Number && a.kind != FormulaOperand::Kind::Number) {
    // torch multiplies by the reciprocal of a CPU scalar divisor, computed in float.
    formula.operands = {a, number_operand(static_cast<double>(1.0f / to_float(b.number)))};
    formula.pattern = "$0 * $1";
    return formula;
  }
  formula.operands = {a, b};
  formula.pattern = "$0 / $1";
  return formula;
}

ElementwiseFormula power(const graph::Node& node) {
  ElementwiseFormula formula;
  formula.operands.push_back(operand_of(node, argument(node, 0, "input"), "input"));
  if (target_base(node) == "square") {
    formula.pattern = "$0 * $0";
    return formula;
  }
  if (formula.operands[0].kind != FormulaOperand::Kind::Node)
    throw Unsupported(node.name + ": pow with a scalar base");
  const graph::Arg* exponent = argument(node, 1, "exponent");
  if (exponent && exponent->is_node()) {
    formula.operands.push_back(operand_of(node, exponent, "exponent"));
    formula.pattern = "powf($0, $1)";
    return formula;
  }
  const auto e = number_argument(node, 1, "exponent");
  if (!e) throw Unsupported(node.name + ": pow without an exponent");
  // The special cases of torch's pow_tensor_scalar_kernel.
  if (*e == 0.5) {
    formula.pattern = "sqrtf($0)";
  } else if (*e == 2.0) {
    formula.pattern = "$0 * $0";
  } else if (*e == 3.0) {
    formula.pattern = "$0 * $0 * $0";
  } else if (*e == -0.5) {
    formula.pattern = "1.0f / sqrtf($0)";
  } else if (*e == -1.0) {
    formula.pattern = "1.0f / $0";
  } else if (*e == -2.0) {
    formula.pattern = "1.0f / ($0 * $0)";
  } else {
    formula.operands.push_back(number_operand(*e));
    formula.pattern = "powf($0, $1)";
  }
  return formula;
}

ElementwiseFormula clamp(const graph::Node& node) {
  const std::string base = target_base(node);
  std::optional<double> lo, hi;
  if (base == "clamp_min" || base == "clamp_min_") {
    lo = number_argument(node, 1, "min");
  } else if (base == "clamp_max" || base == "clamp_max_") {
    hi = number_argument(node, 1, "max");
  } else {
    lo = number_argument(node, 1, "min");
    hi = number_argument(node, 2, "max");
  }
  ElementwiseFormula formula;
  formula.operands.push_back(operand_of(node, argument(node, 0, "input"), "input"));
  if (lo && hi) {
    formula.operands.push_back(number_operand(*lo));
    formula.operands.push_back(number_operand(*hi));
    formula.pattern = "hiera_clamp($0, $1, $2)";
    formula.helpers = {"hiera_clamp"};
  } else if (lo) {
    formula.operands.push_back(number_operand(*lo));
    formula.pattern = "hiera_clamp_min($0, $1)";
    formula.helpers = {"hiera_clamp_min"};
  } else if (hi) {
    formula.operands.push_back(number_operand(*hi));
    formula.pattern = "hiera_clamp_max($0, $1)";
    formula.helpers = {"hiera_clamp_max"};
  } else {
    throw Unsupported(node.name + ": clamp without bounds");
  }
  return formula;
}

ElementwiseFormula hardtanh(const graph::OpGraph& graph, const graph::Node& node) {
  double lo = -1.0, hi = 1.0;
  if (target_base(node) == "relu6" || target_base(node) == "relu6_") {
    lo = 0.0;
    hi = 6.0;
  } else if (node.op == "call_module") {
    lo = module_number(graph, node, "min_val");
    hi = module_number(graph, node, "max_val");
  } else {
    lo = number_argument(node, 1, "min_val").value_or(-1.0);
    hi = number_argument(node, 2, "max_val").value_or(1.0);
  }
  ElementwiseFormula formula = unary(node, "hiera_clamp($0, $1, $2)", {"hiera_clamp"});
  formula.operands.push_back(number_operand(lo));
  formula.operands.push_back(number_operand(hi));
  return formula;
}

ElementwiseFormula gelu(const graph::OpGraph& graph, const graph::Node& node) {
  std::string approximate = "none";
  if (node.op == "call_module") {
    const auto attr = module_attr(graph, node, "approximate");
    if (attr) {
      if (!attr->is_string()) throw Unsupported(node.name + ": GELU's approximate is not a string");
      approximate = attr->get<std::string>();
    }
  } else {
    approximate = string_argument(node, 1, "approximate").value_or("none");
  }
  if (approximate == "none") return unary(node, "hiera_gelu_erf($0)", {"hiera_gelu_erf"});
  if (approximate == "tanh") return unary(node, "hiera_gelu_tanh($0)", {"hiera_gelu_tanh"});
  throw Unsupported(node.name + ": gelu approximate='" + approximate + "'");
}

ElementwiseFormula elu(const graph::OpGraph& graph, const graph::Node& node, bool selu) {
  // torch: negcoef = alpha * scale, poscoef = scale, negiptcoef = input_scale, each converted to float first.
  const float alpha = selu ? to_float(1.6732632423543772848170429916717)
                           : to_float(activation_number(graph, node, 1, "alpha", 1.0));
  const float scale = selu ? to_float(1.0507009873554804934193349852946) : 1.0f;
  ElementwiseFormula formula = unary(node, "hiera_elu($0, $1, $2, $3)", {"hiera_elu"});
  formula.operands.push_back(number_operand(static_cast<double>(alpha * scale)));
  formula.operands.push_back(number_operand(scale));
  formula.operands.push_back(number_operand(1.0));
  return formula;
}

ElementwiseFormula softplus(const graph::OpGraph& graph, const graph::Node& node) {
  const double beta = activation_number(graph, node, 1, "beta", 1.0);
  const double threshold = activation_number(graph, node, 2, "threshold", 20.0);
  ElementwiseFormula formula = unary(node, "hiera_softplus($0, $1, $2)", {"hiera_softplus"});
  formula.operands.push_back(number_operand(beta));
  formula.operands.push_back(number_operand(threshold));
  return formula;
}

ElementwiseFormula dropout(const graph::OpGraph& graph, const graph::Node& node) {
  bool active;
  if (node.op == "call_module") {
    const double p = module_number(graph, node, "p");
    active = graph.training && p != 0.0;
  } else {
    // F.dropout defaults to training=True whatever the module's mode.
    const double p = number_argument(node, 1, "p").value_or(0.5);
    const bool training = bool_argument(node, 2, "training").value_or(true);
    active = training && p != 0.0;
  }
  if (active) throw Unsupported(node.name + ": dropout is active (training with p > 0), a random op");
  return unary(node, "$0");
}

ElementwiseFormula cast(const graph::OpGraph& graph, const graph::Node& node) {
  if (!node.meta) throw Unsupported(node.name + ": a cast without a tensor result");
  const std::string& to = node.meta->dtype;
  const graph::Arg* input = argument(node, 0, "input");
  const graph::Node* source = input ? graph.producer(*input) : nullptr;
  const std::string from = source && source->meta ? source->meta->dtype : "";
  if (!is_float_dtype(to)) throw Unsupported(node.name + ": a cast to " + to);
  if (to == from || to == "float32") return unary(node, "$0");
  ElementwiseFormula formula =
      unary(node, to == "float16" ? "hiera_round_half($0)" : "hiera_round_bfloat16($0)",
            {to == "float16" ? "hiera_round_half" : "hiera_round_bfloat16"});
  formula.dtypes = {to};
  return formula;
}

std::vector<std::int64_t> per_channel_shape(const graph::Node& node, std::int64_t channels) {
  if (!node.meta || node.meta->shape.size() < 2) throw Unsupported(node.name + ": batch norm of a tensor without channels");
  std::vector<std::int64_t> shape(node.meta->shape.size() - 1, 1);
  shape[0] = channels;
  return shape;
}

// Batch norm with running statistics (inference): (x - mean) * invstd * weight + bias as torch's
// batch_norm_transform_input computes it, invstd = 1 / sqrt(var + eps).
ElementwiseFormula batch_norm_inference(const graph::OpGraph& graph, const graph::Node& node) {
  if (!node.meta || node.meta->shape.size() < 2) throw Unsupported(node.name + ": batch norm of a tensor without channels");
  const std::int64_t channels = node.meta->shape[1];
  ElementwiseFormula formula;
  formula.operands.push_back(operand_of(node, argument(node, 0, "input"), "input"));
  double eps = 1e-5;
  std::vector<std::optional<FormulaOperand>> stats(4);  // mean, var, weight, bias
  if (node.op == "call_module") {
    const auto track = module_attr(graph, node, "track_running_stats");
    if (graph.training || (track && track->is_boolean() && !track->get<bool>()))
      throw Unsupported(node.name + ": batch norm uses batch statistics here (training mode or no running stats)");
    eps = module_number(graph, node, "eps");
    const std::string module = module_python(node.target);
    const char* names[] = {"running_mean", "running_var", "weight", "bias"};
    for (int k = 0; k < 4; ++k) {
      const std::string key = node.target + "." + names[k];
      const auto* info = k < 2 ? (graph.buffers.count(key) ? &graph.buffers.at(key) : nullptr)
                               : (graph.parameters.count(key) ? &graph.parameters.at(key) : nullptr);
      if (!info) {
        if (k < 2) throw Unsupported(node.name + ": batch norm without " + key);
        continue;  // affine=False
      }
      FormulaOperand operand;
      operand.kind = FormulaOperand::Kind::ModuleTensor;
      operand.python = module + "." + names[k];
      operand.dtype = info->dtype;
      operand.broadcast_shape = per_channel_shape(node, channels);
      stats[k] = operand;
    }
  } else {
    // F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if (bool_argument(node, 5, "training").value_or(false))
      throw Unsupported(node.name + ": batch norm uses batch statistics here (training=True)");
    eps = number_argument(node, 7, "eps").value_or(1e-5);
    const char* names[] = {"running_mean", "running_var", "weight", "bias"};
    for (int k = 0; k < 4; ++k) {
      const graph::Arg* arg = argument(node, 1 + k, names[k]);
      if (!arg || arg->kind == Kind::None) {
        if (k < 2) throw Unsupported(node.name + ": batch norm without running statistics");
        continue;
      }
      if (!arg->is_node()) throw Unsupported(node.name + ": batch norm's " + names[k] + " is not a tensor");
      FormulaOperand operand = operand_of(node, arg, names[k]);
      operand.broadcast_shape = per_channel_shape(node, channels);
      stats[k] = operand;
    }
  }
  formula.operands.push_back(*stats[0]);
  formula.operands.push_back(*stats[1]);
  formula.operands.push_back(number_operand(eps));
  std::string pattern = "($0 - $1) * (1.0f / sqrtf($2 + $3))";
  if (stats[2]) {
    formula.operands.push_back(*stats[2]);
    pattern = "$4 * " + pattern;
  }
  if (stats[3]) {
    formula.operands.push_back(*stats[3]);
    pattern += " + $" + std::to_string(formula.operands.size() - 1);
  }
  formula.pattern = pattern;
  return formula;
}

std::optional<ElementwiseFormula> comparison(const graph::Node& node) {
  static const std::vector<std::pair<std::string, std::string>> ops = {
      {"gt", ">"}, {"lt", "<"}, {"ge", ">="}, {"le", "<="}, {"eq", "=="}, {"ne", "!="},
      {"greater", ">"}, {"less", "<"}, {"greater_equal", ">="}, {"less_equal", "<="}, {"not_equal", "!="}};
  const std::string base = target_base(node);
  for (const auto& [name, op] : ops) {
    if (base != name && base != "__" + name + "__") continue;
    ElementwiseFormula formula;
    formula.operands = {operand_of(node, argument(node, 0, "input"), "input"),
                        operand_of(node, argument(node, 1, "other"), "other")};
    formula.pattern = "($0 " + op + " $1)";
    formula.boolean = true;
    return formula;
  }
  return std::nullopt;
}

// The node's value is stored in bfloat16 or half: its formula may trade float ulps for speed.
bool reduced_precision(const graph::Node& node) {
  return node.meta && (node.meta->dtype == "bfloat16" || node.meta->dtype == "float16");
}

ElementwiseFormula where(const graph::Node& node) {
  // torch.where(condition, input, other); the method x.where(condition, other) has x first.
  const bool method = node.op == "call_method";
  ElementwiseFormula formula;
  const graph::Arg* condition = argument(node, method ? 1 : 0, "condition");
  const graph::Arg* input = argument(node, method ? 0 : 1, "input");
  const graph::Arg* other = argument(node, 2, "other");
  formula.operands = {operand_of(node, condition, "condition"), operand_of(node, input, "input"),
                      operand_of(node, other, "other")};
  if (formula.operands[0].kind != FormulaOperand::Kind::Node) throw Unsupported(node.name + ": where with a constant condition");
  formula.pattern = "($0 ? $1 : $2)";
  return formula;
}

// x.masked_fill(mask, value) / torch.masked_fill(x, mask, value): a where with the mask first.
ElementwiseFormula masked_fill(const graph::Node& node) {
  ElementwiseFormula formula;
  formula.operands = {operand_of(node, argument(node, 1, "mask"), "mask"), operand_of(node, argument(node, 0, "input"), "input"),
                      operand_of(node, argument(node, 2, "value"), "value")};
  if (formula.operands[0].kind != FormulaOperand::Kind::Node) throw Unsupported(node.name + ": masked_fill with a constant mask");
  if (formula.operands[2].kind != FormulaOperand::Kind::Number) throw Unsupported(node.name + ": masked_fill with a tensor value");
  formula.pattern = "($0 ? $2 : $1)";
  return formula;
}

}  // namespace

std::string module_python(const std::string& target) {
  bool attribute_chain = !target.empty();
  bool segment_start = true;
  for (char c : target) {
    if (c == '.') {
      attribute_chain = attribute_chain && !segment_start;
      segment_start = true;
      continue;
    }
    if (segment_start && std::isdigit(static_cast<unsigned char>(c))) attribute_chain = false;
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') attribute_chain = false;
    segment_start = false;
  }
  if (attribute_chain && !segment_start) return "self." + target;
  return "self.get_submodule('" + target + "')";  // single quotes: it may sit inside a message string
}

std::optional<ElementwiseFormula> elementwise_formula(const graph::Node& node, const graph::OpGraph& graph) {
  if (node.op != "call_function" && node.op != "call_method" && node.op != "call_module") return std::nullopt;
  const std::string& k = node.kind;
  std::optional<ElementwiseFormula> formula;
  if (k == "add" || k == "sub" || k == "mul" || k == "div") {
    formula = binary_arithmetic(node);
  } else if (k == "relu") {
    formula = unary(node, "hiera_clamp_min($0, 0.0f)", {"hiera_clamp_min"});
  } else if (k == "leaky_relu") {
    formula = unary(node, "hiera_leaky_relu($0, $1)", {"hiera_leaky_relu"});
    formula->operands.push_back(number_operand(activation_number(graph, node, 1, "negative_slope", 0.01)));
  } else if (k == "gelu") {
    formula = gelu(graph, node);
  } else if (k == "sigmoid") {
    formula = reduced_precision(node) ? unary(node, "hiera_sigmoid_fast($0)", {"hiera_sigmoid_fast"})
                                      : unary(node, "hiera_sigmoid($0)", {"hiera_sigmoid"});
  } else if (k == "tanh") {
    formula = unary(node, "tanhf($0)");
  } else if (k == "silu") {
    formula = reduced_precision(node) ? unary(node, "hiera_silu_fast($0)", {"hiera_silu_fast"})
                                      : unary(node, "hiera_silu($0)", {"hiera_silu"});
  } else if (k == "mish") {
    formula = unary(node, "hiera_mish($0)", {"hiera_mish"});
  } else if (k == "hardswish") {
    formula = unary(node, "hiera_hardswish($0)", {"hiera_hardswish"});
  } else if (k == "hardsigmoid") {
    formula = unary(node, "hiera_hardsigmoid($0)", {"hiera_hardsigmoid"});
  } else if (k == "hardtanh") {
    formula = hardtanh(graph, node);
  } else if (k == "elu" || k == "selu") {
    formula = elu(graph, node, k == "selu");
  } else if (k == "softplus") {
    formula = softplus(graph, node);
  } else if (k == "clamp") {
    formula = clamp(node);
  } else if (k == "neg") {
    formula = unary(node, "-$0");
  } else if (k == "exp") {
    formula = unary(node, "expf($0)");
  } else if (k == "log") {
    formula = unary(node, "logf($0)");
  } else if (k == "sqrt") {
    formula = unary(node, "sqrtf($0)");
  } else if (k == "rsqrt") {
    formula = unary(node, "rsqrtf($0)");
  } else if (k == "abs") {
    formula = unary(node, "fabsf($0)");
  } else if (k == "pow") {
    formula = power(node);
  } else if (k == "minimum" || k == "maximum" || k == "min" || k == "max") {
    // torch.max(x, other) with a tensor `other` is maximum; with a dim it is a reduction.
    const graph::Arg* other = argument(node, 1, "other");
    if ((k == "min" || k == "max") && !(other && other->is_node())) return std::nullopt;
    ElementwiseFormula f;
    f.operands = {operand_of(node, argument(node, 0, "input"), "input"), operand_of(node, other, "other")};
    const bool is_max = k == "maximum" || k == "max";
    f.pattern = is_max ? "hiera_maximum($0, $1)" : "hiera_minimum($0, $1)";
    f.helpers = {is_max ? "hiera_maximum" : "hiera_minimum"};
    formula = f;
  } else if (k == "where") {
    formula = where(node);
  } else if (k == "dropout") {
    formula = dropout(graph, node);
  } else if (k == "identity" || k == "contiguous") {
    formula = unary(node, "$0");
  } else if (k == "to") {
    formula = cast(graph, node);
  } else if (k == "batch_norm") {
    formula = batch_norm_inference(graph, node);
  } else if (k == "unknown" && is_call(node, "masked_fill", "torch.masked_fill")) {
    formula = masked_fill(node);
  } else if (k == "unknown") {
    formula = comparison(node);
  }
  if (formula) formula->in_place = flag_in_place(graph, node);
  return formula;
}

std::string expand_formula(const ElementwiseFormula& formula, const std::vector<std::string>& values) {
  std::string out;
  for (std::size_t i = 0; i < formula.pattern.size(); ++i) {
    const char c = formula.pattern[i];
    if (c == '$' && i + 1 < formula.pattern.size() && std::isdigit(static_cast<unsigned char>(formula.pattern[i + 1]))) {
      const std::size_t k = static_cast<std::size_t>(formula.pattern[++i] - '0');
      if (k >= values.size()) throw std::invalid_argument("formula " + formula.pattern + " needs operand $" + std::to_string(k));
      out += values[k];
    } else {
      out += c;
    }
  }
  return out;
}

std::string device_helpers(const std::vector<std::string>& names) {
  std::vector<std::string> wanted;
  std::vector<std::string> pending(names.begin(), names.end());
  while (!pending.empty()) {
    const std::string name = pending.back();
    pending.pop_back();
    if (std::find(wanted.begin(), wanted.end(), name) != wanted.end()) continue;
    wanted.push_back(name);
    for (auto& dependency : helper_dependencies(name)) pending.push_back(dependency);
  }
  std::string out;
  for (const auto& name : wanted) {
    const auto& table = helper_table();
    if (std::none_of(table.begin(), table.end(), [&](const Helper& h) { return name == h.name; }))
      throw std::invalid_argument("unknown device helper " + name);
  }
  for (const auto& helper : helper_table()) {
    if (std::find(wanted.begin(), wanted.end(), helper.name) == wanted.end()) continue;
    out += helper.code;
    out += "\n";
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::kernels
