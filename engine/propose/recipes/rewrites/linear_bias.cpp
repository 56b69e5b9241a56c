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
