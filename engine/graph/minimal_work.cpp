#include "engine/graph/minimal_work.h"

namespace hiera::engine::graph {

namespace {

bool is_product(const Node& node) {
  return (node.kind == "matmul" || node.kind == "bmm" || node.target == "torch.mm" || node.target == "mm") &&
         node.args.size() == 2;
}

// torch.diag(v) of a vector (a square matrix with v on its main diagonal).
bool is_diagonal_matrix(const Node* node) {
  if (!node || !(node->kind == "diag" || node->target == "torch.diag" || node->target == "diag")) return false;
  if (node->args.empty() || node->args.size() > 2 || !node->meta || node->meta->shape.size() != 2) return false;
  if (node->args.size() == 2 && !(node->args[1].kind == Arg::Kind::Number && node->args[1].number == 0.0)) return false;
  const auto offset = node->kwargs.find("diagonal");
  return offset == node->kwargs.end() || (offset->second.kind == Arg::Kind::Number && offset->second.number == 0.0);
}

}  // namespace

NodeWork minimal_work(const OpGraph& graph, const Node& node) {
  NodeWork work{node.flops, {}};
  if (!is_product(node) || !node.meta) return work;
  const Node* a = graph.producer(node.args[0]);
  const Node* b = graph.producer(node.args[1]);
  if (!a || !b || !a->meta || !b->meta) return work;
  const double scale = static_cast<double>(node.meta->elements());  // one multiply per output element
  if (scale >= node.flops) return work;
  if (is_diagonal_matrix(a) || is_diagonal_matrix(b)) {
    return {scale, "a product with torch.diag(v) is one multiply per output element"};
  }
  const auto& sa = a->meta->shape;
  const auto& sb = b->meta->shape;
  if (sa.size() >= 2 && sb.size() >= 2 && sa.back() == 1 && sb[sb.size() - 2] == 1) {
    return {scale, "a product over an inner dimension of 1 is one multiply per output element"};
  }
  return work;
}

}  // namespace hiera::engine::graph
