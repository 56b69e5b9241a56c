#include "engine/propose/recipes/kernels/row_softmax.h"

#include "engine/propose/recipes/kernels/elementwise_groups.h"
#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/node_args.h"
#include "engine/propose/recipes/kernels/row_fusion.h"
#include "engine/propose/recipes/kernels/unsupported.h"

namespace hiera::engine::propose::recipes::kernels {

namespace {

SegmentedOp describe(const graph::OpGraph& graph, const graph::Node& node) {
  const graph::Arg* input_arg = argument(node, 0, "input");
  const graph::Node* input = input_arg ? graph.producer(*input_arg) : nullptr;
  if (!input || !input->meta || !node.meta) throw Unsupported(node.name + ": its input is not a tensor");
  if (!is_float_dtype(input->meta->dtype)) throw Unsupported(node.name + " of a " + input->meta->dtype + " tensor");
  std::optional<double> dim;
  if (node.op == "call_module") {
    const auto attr = module_attr(graph, node, "dim");
    if (!attr || !attr->is_number_integer()) throw Unsupported(node.name + ": the capture did not record the module's dim");
    dim = attr->get<double>();
  } else {
    dim = number_argument(node, 1, "dim");
    // torch.softmax(x, dim, dtype), F.softmax(x, dim, _stacklevel, dtype): a dtype anywhere changes the result's type.
    bool dtype = node.kwargs.count("dtype") && node.kwargs.at("dtype").kind != graph::Arg::Kind::None;
    for (std::size_t k = 2; k < node.args.size(); ++k) dtype = dtype || node.args[k].kind == graph::Arg::Kind::Dtype;
    if (dtype) throw Unsupported(node.name + ": " + node.kind + " with a dtype argument");
  }
  const std::size_t rank = input->meta->shape.size();
  if (!dim || rank == 0) throw Unsupported(node.name + ": " + node.kind + " without a dim");
  const auto d = static_cast<std::size_t>(normalized_dims({static_cast<std::int64_t>(*dim)}, rank).front());

  // Over the last dimension: rows; over another: strided columns (one thread each).
  SegmentedOp op;
  op.node = &node;
  op.input = input->name;
  op.rows = product(input->meta->shape, 0, d);
  op.cols = input->meta->shape[d];
  op.inner = product(input->meta->shape, d + 1, rank);
  const std::string from = std::to_string(d), to = std::to_string(d + 1);
  op.rows_python = [from](const std::string& shape) { return shape + "[:" + from + "].numel()"; };
  op.cols_python = [from](const std::string& shape) { return shape + "[" + from + "]"; };
  op.inner_python = [to](const std::string& shape) { return shape + "[" + to + ":].numel()"; };
  op.per_element = true;
  op.recipe = "s3_fused_row_softmax";
  op.template_name = "row_logsumexp.cu";
  op.template_values = {{"per_element", "1"}};
  op.register_stats = RegisterStats::Softmax;
  op.description = node.kind + (d + 1 == rank ? " over the last dimension" : " over dim " + from);
  const bool log = node.kind == "log_softmax";
  op.value = [log](ElementwiseProgram&, const graph::Node&) {
    // The reciprocal is the same for the whole row: one division a row, not one an element.
    return std::string(log ? "x - row_max - logf(row_sum)" : "expf(x - row_max) * (1.0f / row_sum)");
  };
  return op;
}

}  // namespace

std::vector<Replacement> find_row_softmax(const graph::OpGraph& graph, std::set<std::string>& covered,
                                          const KernelRewriteOptions& options, std::vector<SkippedRewrite>& skipped) {
  std::vector<Replacement> out;
  for (const auto& node : graph.nodes) {
    if ((node.kind != "softmax" && node.kind != "log_softmax") || covered.count(node.name)) continue;
    try {
      const SegmentedOp op = describe(graph, node);
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
