#include "engine/propose/recipes/kernels/norm_fusion.h"

#include <optional>

#include "engine/propose/recipes/kernels/elementwise_expression.h"
#include "engine/propose/recipes/kernels/elementwise_groups.h"
#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/node_args.h"
#include "engine/propose/recipes/kernels/row_fusion.h"
#include "engine/propose/recipes/kernels/unsupported.h"

namespace hiera::engine::propose::recipes::kernels {

namespace {

// An affine weight or bias: a module parameter or a node (functional form).
struct AffineTensor {
  std::string python;
  std::string dtype;
};

std::optional<AffineTensor> module_tensor(const graph::OpGraph& graph, const graph::Node& node, const char* name) {
  const auto it = graph.parameters.find(node.target + "." + name);
  if (it == graph.parameters.end()) return std::nullopt;
  return AffineTensor{module_python(node.target) + "." + name, it->second.dtype};
}

std::optional<AffineTensor> node_tensor(const graph::OpGraph& graph, const graph::Node& node, std::size_t position,
                                        const char* name) {
  const graph::Arg* arg = argument(node, position, name);
  if (!arg || arg->kind == graph::Arg::Kind::None) return std::nullopt;
  const graph::Node* producer = graph.producer(*arg);
  if (!producer || !producer->meta) throw Unsupported(node.name + ": " + name + " is not a tensor");
  return AffineTensor{producer->name, producer->meta->dtype};
}

double module_number(const graph::OpGraph& graph, const graph::Node& node, const char* key) {
  const auto value = module_attr(graph, node, key);
  if (!value || !value->is_number()) throw Unsupported(node.name + ": the capture did not record the module's " + std::string(key));
  return value->get<double>();
}

// (x - mean) * rstd * weight + bias, the affine operands lined up as `shape`.
ElementwiseProgram::Custom normalized_value(std::optional<AffineTensor> weight, std::optional<AffineTensor> bias,
                                            std::vector<std::int64_t> shape) {
  return [=](ElementwiseProgram& program, const graph::Node&) {
    std::string value = "(x - mean) * rstd";
    if (weight) value += " * " + program.load(weight->python, weight->dtype, shape, false);
    if (bias) value += " + " + program.load(bias->python, bias->dtype, shape, false);
    return value;
  };
}

const graph::Node& input_of(const graph::OpGraph& graph, const graph::Node& node) {
  const graph::Arg* arg = argument(node, 0, "input");
  const graph::Node* input = arg ? graph.producer(*arg) : nullptr;
  if (!input || !input->meta || !node.meta) throw Unsupported(node.name + ": its input is not a tensor");
  if (!is_float_dtype(input->meta->dtype)) throw Unsupported(node.name + " of a " + input->meta->dtype + " tensor");
  return *input;
}

std::vector<std::int64_t> per_channel(std::int64_t channels, std::size_t rank) {
  std::vector<std::int64_t> shape(rank - 1, 1);
  shape[0] = channels;
  return shape;
}

SegmentedOp layer_norm(const graph::OpGraph& graph, const graph::Node& node) {
  const graph::Node& input = input_of(graph, node);
  std::vector<std::int64_t> normalized;
  double eps = 1e-5;
  std::optional<AffineTensor> weight, bias;
  if (node.op == "call_module") {
    const auto shape = module_attr(graph, node, "normalized_shape");
    if (!shape) throw Unsupported(node.name + ": the capture did not record the module's normalized_shape");
    if (shape->is_number_integer()) {
      normalized = {shape->get<std::int64_t>()};
    } else if (shape->is_array()) {
      for (const auto& d : *shape) normalized.push_back(d.get<std::int64_t>());
    }
    eps = module_number(graph, node, "eps");
    weight = module_tensor(graph, node, "weight");
    bias = module_tensor(graph, node, "bias");
  } else {
    normalized = dims_argument(node, 1, "normalized_shape").value_or(std::vector<std::int64_t>{});
    weight = node_tensor(graph, node, 2, "weight");
    bias = node_tensor(graph, node, 3, "bias");
    eps = number_argument(node, 4, "eps").value_or(1e-5);
  }
  const auto& shape = input.meta->shape;
  const std::size_t k = normalized.size();
  if (k == 0 || k > shape.size() || !std::equal(normalized.begin(), normalized.end(), shape.end() - static_cast<long>(k)))
    throw Unsupported(node.name + ": normalized_shape does not match the input's trailing dimensions");
  SegmentedOp op;
  op.node = &node;
  op.input = input.name;
  op.rows = product(shape, 0, shape.size() - k);
  op.cols = product(shape, shape.size() - k, shape.size());
  const std::string split = std::to_string(shape.size() - k);
  op.rows_python = [split](const std::string& s) { return s + "[:" + split + "].numel()"; };
  op.cols_python = [split](const std::string& s) { return s + "[" + split + ":].numel()"; };
  op.recipe = "s3_welford_layer_norm";
  op.description = "layer norm over the last " + (k == 1 ? std::string("dimension") : std::to_string(k) + " dimensions");
  op.value = normalized_value(weight, bias, normalized);
  op.template_values = {{"eps", float_literal(eps)}};
  return op;
}

SegmentedOp group_norm(const graph::OpGraph& graph, const graph::Node& node) {
  const graph::Node& input = input_of(graph, node);
  const auto& shape = input.meta->shape;
  if (shape.size() < 2) throw Unsupported(node.name + ": group norm of a tensor without channels");
  std::int64_t groups = 0;
  double eps = 1e-5;
  std::optional<AffineTensor> weight, bias;
  if (node.op == "call_module") {
    groups = static_cast<std::int64_t>(module_number(graph, node, "num_groups"));
    eps = module_number(graph, node, "eps");
    weight = module_tensor(graph, node, "weight");
    bias = module_tensor(graph, node, "bias");
  } else {
    groups = static_cast<std::int64_t>(number_argument(node, 1, "num_groups").value_or(0));
    weight = node_tensor(graph, node, 2, "weight");
    bias = node_tensor(graph, node, 3, "bias");
    eps = number_argument(node, 4, "eps").value_or(1e-5);
  }
  const std::int64_t channels = shape[1];
  if (groups <= 0 || channels % groups != 0) throw Unsupported(node.name + ": " + std::to_string(channels) +
                                                               " channels in " + std::to_string(groups) + " groups");
  SegmentedOp op;
  op.node = &node;
  op.input = input.name;
  op.rows = shape[0] * groups;
  op.cols = product(shape, 1, shape.size()) / groups;
  const std::string g = std::to_string(groups);
  // A module's group count is read at run time (a constructor argument: the
  // module may be built with another); a functional call's is in its source.
  std::string groups_python = g;
  if (const auto open = node.code.find('('); node.op == "call_module" && node.code.rfind("self.", 0) == 0 &&
                                              open != std::string::npos)
    groups_python = node.code.substr(0, open) + ".num_groups";
  op.rows_python = [groups_python](const std::string& s) { return s + "[0] * " + groups_python; };
  op.cols_python = [groups_python](const std::string& s) { return s + "[1:].numel() // " + groups_python; };
  op.recipe = "s3_welford_group_norm";
  op.description = "group norm (" + g + " groups)";
  op.per_group_python = [groups_python](const std::string& s) { return s + "[1] // " + groups_python; };
  op.value = normalized_value(weight, bias, per_channel(channels, shape.size()));
  op.template_values = {{"eps", float_literal(eps)}};
  return op;
}

SegmentedOp instance_norm(const graph::OpGraph& graph, const graph::Node& node) {
  const graph::Node& input = input_of(graph, node);
  const auto& shape = input.meta->shape;
  if (shape.size() < 3) throw Unsupported(node.name + ": instance norm of a tensor without spatial dimensions");
  double eps = 1e-5;
  std::optional<AffineTensor> weight, bias;
  if (node.op == "call_module") {
    const auto track = module_attr(graph, node, "track_running_stats");
    if (track && track->is_boolean() && track->get<bool>() && !graph.training)
      throw Unsupported(node.name + ": instance norm with running statistics in eval mode");
    eps = module_number(graph, node, "eps");
    weight = module_tensor(graph, node, "weight");
    bias = module_tensor(graph, node, "bias");
  } else {
    if (!bool_argument(node, 5, "use_input_stats").value_or(true))
      throw Unsupported(node.name + ": instance norm with running statistics");
    weight = node_tensor(graph, node, 3, "weight");
    bias = node_tensor(graph, node, 4, "bias");
    eps = number_argument(node, 7, "eps").value_or(1e-5);
  }
  SegmentedOp op;
  op.node = &node;
  op.input = input.name;
  op.rows = shape[0] * shape[1];
  op.cols = product(shape, 2, shape.size());
  op.rows_python = [](const std::string& s) { return s + "[:2].numel()"; };
  op.cols_python = [](const std::string& s) { return s + "[2:].numel()"; };
  op.recipe = "s3_welford_group_norm";
  op.description = "instance norm";
  op.per_group_python = [](const std::string&) { return std::string("1"); };
  op.value = normalized_value(weight, bias, per_channel(shape[1], shape.size()));
  op.template_values = {{"eps", float_literal(eps)}};
  return op;
}

}  // namespace

std::vector<Replacement> find_norm_fusions(const graph::OpGraph& graph, std::set<std::string>& covered,
                                           const KernelRewriteOptions& options, std::vector<SkippedRewrite>& skipped) {
  std::vector<Replacement> out;
  for (const auto& node : graph.nodes) {
    const std::string& k = node.kind;
    if ((k != "layer_norm" && k != "group_norm" && k != "instance_norm") || covered.count(node.name)) continue;
    if (node.op != "call_module" && node.op != "call_function" && node.op != "call_method") continue;
    try {
      SegmentedOp op = k == "layer_norm" ? layer_norm(graph, node)
                       : k == "group_norm" ? group_norm(graph, node)
                                           : instance_norm(graph, node);
      op.per_element = true;
      op.template_name = "welford_layernorm.cu";
      op.register_stats = RegisterStats::Norm;
      for (auto& replacement : fuse_segmented_op(graph, elementwise_groups(graph, covered), covered, op, options)) {
        covered.insert(replacement.covered.begin(), replacement.covered.end());
        out.push_back(std::move(replacement));
      }
    } catch (const Unsupported& e) {
      skipped.push_back({node.name, e.what()});
    }
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::kernels
