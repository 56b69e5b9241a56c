// s1_reassociate_matmul_chain (structured matrices): a product with a
// diagonal matrix built by torch.diag is a broadcast multiply (O(n^2) instead
// of O(n^3)); a product over an inner dimension of size 1 is an outer
// product, a broadcast multiply too (checked at run time: the size may vary);
// and an operand expanded over the batch (w.expand(B, K, N)) is left to
// matmul's own broadcasting, which folds the batch into one large GEMM.
#include <algorithm>

#include "engine/graph/minimal_work.h"
#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/rewrites/rewrites.h"

namespace hiera::engine::propose::recipes::rewrites {

namespace {

constexpr const char* kRecipe = "s1_reassociate_matmul_chain";
// The report's line: the speed of light counts these products at this work too (graph/minimal_work.h).
constexpr const char* kLessWork = " (an algebraic rewrite: one multiply per output element instead of a matrix product)";

bool is_matmul(const graph::Node& node) {
  return (is_kind(node, "matmul") || is_kind(node, "bmm") || is_call(node, "mm", "torch.mm")) &&
         node.args.size() == 2 && node.kwargs.empty();
}

// w when `node` is w expanded over leading (batch) dims only, its matrix dims kept; else null.
const graph::Node* batch_expanded(const graph::OpGraph& graph, const graph::Node& node) {
  if (!is_kind(node, "expand") || node.op != "call_method" || node.target != "expand" || !node.meta) return nullptr;
  const graph::Node* w = argument_node(graph, node, 0, "input");
  if (!w || !w->meta || w->meta->shape.size() < 2) return nullptr;
  const auto& in = w->meta->shape;
  const auto& out = node.meta->shape;
  if (out.size() < in.size() || in[in.size() - 1] != out[out.size() - 1] || in[in.size() - 2] != out[out.size() - 2]) {
    return nullptr;
  }
  return w;
}

// torch.diag(d) of a vector d (main diagonal): the vector, else null.
const graph::Node* diagonal_of(const graph::OpGraph& graph, const graph::Node* node) {
  return node ? graph::diagonal_matrix_vector(graph, *node) : nullptr;
}

}  // namespace

std::vector<Replacement> find_structured_matmuls(const graph::OpGraph& graph, const RewriteOptions&) {
  std::vector<Replacement> out;
  for (const auto& node : graph.nodes) {
    if (!is_matmul(node) || !node.meta) continue;
    const graph::Node* a = graph.producer(node.args[0]);
    const graph::Node* b = graph.producer(node.args[1]);
    if (!a || !b || !a->meta || !b->meta || dtype(*a) != dtype(*b)) continue;
    if (const graph::Node* d = diagonal_of(graph, b); d && dtype(*d) == dtype(*a)) {
      // (..., n) @ diag(d): column j scaled by d[j].
      out.push_back(make_replacement(kRecipe, knowledge::Space::S1,
                                     "'" + a->name + "' @ torch.diag('" + d->name + "') as a broadcast multiply" + kLessWork,
                                     {node.name}, node.name, {node.name + " = " + a->name + " * " + d->name}));
      continue;
    }
    if (const graph::Node* d = diagonal_of(graph, a); d && dtype(*d) == dtype(*b)) {
      // diag(d) @ (..., n, m): row i scaled by d[i]; a vector operand is scaled elementwise.
      const std::string scale = rank(*b) == 1u ? d->name : d->name + ".unsqueeze(-1)";
      out.push_back(make_replacement(kRecipe, knowledge::Space::S1,
                                     "torch.diag('" + d->name + "') @ '" + b->name + "' as a broadcast multiply" + kLessWork,
                                     {node.name}, node.name, {node.name + " = " + scale + " * " + b->name}));
      continue;
    }
    // a @ w.expand(batch..., K, N) where a already has that batch: matmul broadcasts w itself.
    for (int side = 0; side < 2; ++side) {
      const graph::Node* other = side == 0 ? b : a;
      const graph::Node* expanded = side == 0 ? a : b;
      const graph::Node* w = batch_expanded(graph, *expanded);
      const auto& o = other->meta->shape;
      const auto& e = expanded->meta->shape;
      if (!w || o.size() != e.size() || !std::equal(o.begin(), o.end() - 2, e.begin())) continue;
      const std::string operands = side == 0 ? w->name + ", " + b->name : a->name + ", " + w->name;
      out.push_back(make_replacement(kRecipe, knowledge::Space::S1,
                                     "'" + w->name + "' broadcast by torch.matmul instead of expanded over the batch",
                                     {node.name}, node.name, {node.name + " = torch.matmul(" + operands + ")"}));
      break;
    }
    if (!out.empty() && out.back().produces == node.name) continue;
    const std::size_t ra = a->meta->shape.size(), rb = b->meta->shape.size();
    if (ra >= 2 && rb >= 2 && a->meta->shape[ra - 1] == 1 && b->meta->shape[rb - 2] == 1) {
      // (..., m, 1) @ (..., 1, n): each output element is one product, exactly a * b broadcast.
      out.push_back(make_replacement(
          kRecipe, knowledge::Space::S1,
          "'" + a->name + "' @ '" + b->name + "' over an inner dimension of size 1 as a broadcast multiply" + kLessWork,
          {node.name}, node.name,
          {node.name + " = " + a->name + " * " + b->name + " if " + a->name + ".shape[-1] == 1 else " + node.code}));
    }
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::rewrites
