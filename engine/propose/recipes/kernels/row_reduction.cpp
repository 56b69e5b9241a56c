#include "engine/propose/recipes/kernels/row_reduction.h"

#include "engine/propose/recipes/kernels/elementwise_groups.h"
#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/node_args.h"
#include "engine/propose/recipes/kernels/row_fusion.h"
#include "engine/propose/recipes/kernels/unsupported.h"

namespace hiera::engine::propose::recipes::kernels {

namespace {

std::string dims_text(const std::vector<std::int64_t>& dims) {
  std::string out = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + (dims.size() == 1 ? ",)" : ")");
}

SegmentedOp describe(const graph::OpGraph& graph, const graph::Node& node, const KernelRewriteOptions& options) {
  SegmentedOp op;
  op.node = &node;
  const graph::Node* values = &node;
  if (node.kind == "max" || node.kind == "min") {
    values = reduction_values(graph, node);
    if (!values) throw Unsupported(node.name + ": " + node.kind + " over a dimension returns values and indices, and the indices are read");
    op.result = values->name;
  }
  const graph::Arg* input_arg = argument(node, 0, "input");
  const graph::Node* input = input_arg ? graph.producer(*input_arg) : nullptr;
  if (!input || !input->meta || !values->meta) throw Unsupported(node.name + ": its input is not a tensor");
  if (!is_float_dtype(input->meta->dtype)) throw Unsupported(node.name + " reduces a " + input->meta->dtype + " tensor");
  if (const auto dtype = argument(node, 3, "dtype"); dtype && dtype->kind != graph::Arg::Kind::None)
    throw Unsupported(node.name + ": a reduction with a dtype argument");
  const std::size_t rank = input->meta->shape.size();
  const auto dims_arg = dims_argument(node, 1, "dim");
  std::vector<std::int64_t> dims;
  if (dims_arg && !dims_arg->empty()) {
    dims = normalized_dims(*dims_arg, rank);
  } else {
    for (std::size_t d = 0; d < rank; ++d) dims.push_back(static_cast<std::int64_t>(d));
  }
  // The reduced dimensions must be adjacent: [first, last]; what follows is the stride between elements.
  const std::size_t first = dims.empty() ? rank : static_cast<std::size_t>(dims.front());
  const std::size_t last = dims.empty() ? rank : static_cast<std::size_t>(dims.back()) + 1;
  if (last - first != dims.size())
    throw Unsupported(node.name + " reduces over dims " + dims_text(dims) + ", which are not adjacent");
  const bool keepdim = bool_argument(node, 2, "keepdim").value_or(false);

  op.input = input->name;
  op.rows = product(input->meta->shape, 0, first);
  op.cols = product(input->meta->shape, first, last);
  op.inner = product(input->meta->shape, last, rank);
  if (op.inner == 1 && op.rows < options.sm_count / 2 && op.rows * op.cols >= (1 << 20))
    throw Unsupported(node.name + ": only " + std::to_string(op.rows) +
                      " rows, one segment each would leave most of the GPU idle");
  if (op.inner > 1 && op.rows * op.inner < 32 * options.sm_count && op.rows * op.cols * op.inner >= (1 << 20))
    throw Unsupported(node.name + ": only " + std::to_string(op.rows * op.inner) +
                      " strided columns, one thread each would leave most of the GPU idle");
  const std::string from = std::to_string(first), to = std::to_string(last);
  op.rows_python = [from](const std::string& shape) { return shape + "[:" + from + "].numel()"; };
  op.cols_python = [from, to](const std::string& shape) { return shape + "[" + from + ":" + to + "].numel()"; };
  op.inner_python = [to](const std::string& shape) { return shape + "[" + to + ":].numel()"; };
  const std::size_t reduced = dims.size();
  const bool trailing = last == rank;
  op.output_shape_python = [from, to, keepdim, reduced, trailing](const std::string& shape) {
    std::string out = shape + "[:" + from + "]";
    if (keepdim) {
      std::string ones = "(";
      for (std::size_t k = 0; k < reduced; ++k) ones += k ? ", 1" : "1";
      out += " + " + ones + (reduced == 1 ? ",)" : ")");
    }
    if (!trailing) out += " + " + shape + "[" + to + ":]";
    return out;
  };
  op.per_element = false;
  const std::string kind = node.kind;
  op.description = kind + " over " +
                   (trailing ? "the last " + (reduced == 1 ? std::string("dimension") : std::to_string(reduced) + " dimensions")
                             : "dims " + dims_text(dims));
  if (kind == "logsumexp") {
    op.recipe = "s3_fused_logsumexp";
    op.template_name = "row_logsumexp.cu";
    op.template_values = {{"per_element", "0"}};
    // torch: a row whose max is infinite gives that max (its maxes are masked to 0 before the log).
    op.value = [](ElementwiseProgram&, const graph::Node&) {
      return std::string("fabsf(row_max) == HIERA_INF ? row_max : row_max + logf(row_sum)");
    };
    return op;
  }
  op.recipe = "s3_warp_shuffle_row_reduction";
  op.template_name = "row_reduce.cu";
  // Only taken when the value's one use spreads it back over its row (fuse_segmented_op).
  op.register_stats = RegisterStats::Reduction;
  const auto formula = reduction_formula(kind, "(float)cols");
  if (!formula) throw Unsupported(node.name + ": no row kernel for " + kind);
  op.template_values = {{"identity", formula->identity}, {"combine", formula->combine}};
  op.value = [value = formula->value](ElementwiseProgram&, const graph::Node&) { return value; };
  return op;
}

}  // namespace

std::optional<ReductionFormula> reduction_formula(std::string_view kind, const std::string& count) {
  // torch's mean multiplies the sum by a float factor 1 / count.
  if (kind == "sum") return ReductionFormula{"0.0f", "a + b", "acc"};
  if (kind == "mean") return ReductionFormula{"0.0f", "a + b", "acc * (1.0f / " + count + ")"};
  if (kind == "amax" || kind == "max") return ReductionFormula{"-HIERA_INF", "(a != a || a > b) ? a : b", "acc"};
  if (kind == "amin" || kind == "min") return ReductionFormula{"HIERA_INF", "(a != a || a < b) ? a : b", "acc"};
  return std::nullopt;
}

const graph::Node* reduction_values(const graph::OpGraph& graph, const graph::Node& node) {
  const graph::Node* values = nullptr;
  for (const auto& name : node.users) {
    const graph::Node* user = graph.find(name);
    const bool takes_values =
        user && user->args.size() == 2 &&
        ((user->kind == "getitem" && user->args[1].is_number() && user->args[1].number == 0.0) ||
         (user->target == "getattr" && user->args[1].kind == graph::Arg::Kind::String && user->args[1].text == "values"));
    if (!takes_values || (values && values != user)) return nullptr;
    values = user;
  }
  return values;
}

std::vector<Replacement> find_row_reductions(const graph::OpGraph& graph, std::set<std::string>& covered,
                                             const KernelRewriteOptions& options, std::vector<SkippedRewrite>& skipped) {
  std::vector<Replacement> out;
  for (const auto& node : graph.nodes) {
    const std::string& k = node.kind;
    if (k != "sum" && k != "mean" && k != "amax" && k != "amin" && k != "logsumexp" && k != "max" && k != "min") continue;
    if ((k == "max" || k == "min") && (!argument(node, 1, "dim") || argument(node, 1, "dim")->is_node() ||
                                       argument(node, 1, "dim")->kind == graph::Arg::Kind::None))
      continue;  // max over everything or against a tensor: not a reduction over a dim
    if (covered.count(node.name)) continue;
    try {
      const SegmentedOp op = describe(graph, node, options);
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
