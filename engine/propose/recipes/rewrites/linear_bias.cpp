// s1_addmm_linear_bias: a matrix product followed by a broadcast bias add
// becomes one F.linear / torch.addmm, which hands the bias to the GEMM.
#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/python_text.h"
#include "engine/propose/recipes/rewrites/rewrites.h"

namespace hiera::engine::propose::recipes::rewrites {

namespace {

constexpr const char* kRecipe = "s1_addmm_linear_bias";

bool is_matmul(const graph::Node& node) {
  return (is_kind(node, "matmul") || is_call(node, "mm", "torch.mm")) && node.args.size() == 2 && node.kwargs.empty();
}

// W when `node` is W's transpose for a 2D W (W.t(), W.T, W.transpose(0, 1), W.permute(1, 0)), else null.
const graph::Node* transposed_matrix(const graph::OpGraph& graph, const graph::Node& node) {
  const graph::Node* w = argument_node(graph, node, 0, "input");
  if (!w || rank(*w) != 2u) return nullptr;
  if (is_call(node, "t", "torch.t") && node.args.size() == 1) return w;
  if (node.op == "call_function" && (node.target == "builtins.getattr" || node.target == "getattr") &&
      node.args.size() == 2 && node.args[1].kind == graph::Arg::Kind::String &&
      (node.args[1].text == "T" || node.args[1].text == "mT")) {
    return w;
  }
  if (is_kind(node, "transpose")) {
    const auto d0 = int_list(argument(node, 1, "dim0")), d1 = int_list(argument(node, 2, "dim1"));
    if (!d0 || !d1 || d0->size() != 1 || d1->size() != 1) return nullptr;
    const auto a = normalize_dim((*d0)[0], 2), b = normalize_dim((*d1)[0], 2);
    return a && b && *a != *b ? w : nullptr;
  }
  if (is_kind(node, "permute")) {
    std::vector<std::int64_t> dims;
    if (node.args.size() == 2) {
      const auto list = int_list(&node.args[1]);
      if (list) dims = *list;
    } else {
      for (std::size_t i = 1; i < node.args.size(); ++i) {
        if (const auto c = int_list(&node.args[i]); c && c->size() == 1) dims.push_back((*c)[0]);
      }
    }
    if (dims.size() == 2 && normalize_dim(dims[0], 2) == 1 && normalize_dim(dims[1], 2) == 0) return w;
  }
  return nullptr;
}

}  // namespace

std::vector<Replacement> find_linear_bias(const graph::OpGraph& graph, const RewriteOptions&) {
  std::vector<Replacement> out;
  for (const auto& add : graph.nodes) {
    if (!is_kind(add, "add") || add.args.size() != 2 || !passes_only(add, 2, {}) || !add.meta) continue;
    for (int side = 0; side < 2; ++side) {
      const graph::Node* mm = graph.producer(add.args[side]);
      const graph::Node* bias = graph.producer(add.args[1 - side]);
      if (!mm || !bias || !bias->meta || !mm->meta || !only_user(*mm, add) || mutates(graph, *mm)) continue;
      // The bias only broadcasts into the product: the sum has the product's shape and dtype.
      if (!same_shape(*mm, add) || dtype(*bias) != dtype(*mm) || dtype(add) != dtype(*mm)) continue;
      const std::size_t bias_rank = bias->meta->shape.size();
      const std::size_t n = mm->meta->shape.empty() ? 0 : static_cast<std::size_t>(mm->meta->shape.back());
      const bool vector_bias = bias_rank == 1 && static_cast<std::size_t>(bias->meta->shape[0]) == n;
      std::string statement, what;
      if (is_kind(*mm, "linear")) {
        // F.linear(x, W) or an nn.Linear without bias, then + b.
        const graph::Node* x = argument_node(graph, *mm, 0, "input");
        std::string weight;
        if (const auto* sub = submodule(graph, *mm)) {
          const auto has_bias = sub->attrs.find("bias");
          if (has_bias == sub->attrs.end() || !has_bias->is_boolean() || has_bias->get<bool>()) continue;
          weight = python_attribute_path(mm->target + ".weight");
        } else {
          const graph::Node* w = argument_node(graph, *mm, 1, "weight");
          const graph::Arg* b = argument(*mm, 2, "bias");
          if (!w || (b && b->kind != graph::Arg::Kind::None) || !passes_only(*mm, 3, {"bias"})) continue;
          weight = w->name;
        }
        if (!x || !vector_bias) continue;
        statement = "torch.nn.functional.linear(" + x->name + ", " + weight + ", " + bias->name + ")";
        what = "linear without bias + '" + bias->name + "' as one F.linear";
      } else if (is_matmul(*mm)) {
        const graph::Node* x = graph.producer(mm->args[0]);
        const graph::Node* w2 = graph.producer(mm->args[1]);
        if (!x || !w2 || !x->meta || rank(*w2) != 2u || x->meta->shape.size() < 2) continue;
        const graph::Node* w = transposed_matrix(graph, *w2);
        if (vector_bias) {
          const std::string weight = w ? w->name : w2->name + ".t()";
          statement = "torch.nn.functional.linear(" + x->name + ", " + weight + ", " + bias->name + ")";
          what = "'" + x->name + "' @ '" + w2->name + "' + '" + bias->name + "' as one F.linear";
        } else if (x->meta->shape.size() == 2 && bias_rank <= 2) {
          statement = "torch.addmm(" + bias->name + ", " + x->name + ", " + w2->name + ")";
          what = "'" + x->name + "' @ '" + w2->name + "' + '" + bias->name + "' as one torch.addmm";
        } else {
          continue;
        }
      } else {
        continue;
      }
      out.push_back(make_replacement(kRecipe, knowledge::Space::S1, what, {mm->name, add.name}, add.name,
                                     {add.name + " = " + statement}));
      break;
    }
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::rewrites
