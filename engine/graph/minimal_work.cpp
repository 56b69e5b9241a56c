#include "engine/graph/minimal_work.h"

namespace hiera::engine::graph {

namespace {

bool is_product(const Node& node) {
  return (node.kind == "matmul" || node.kind == "bmm" || node.target == "torch.mm" || node.target == "mm") &&
         node.args.size() == 2;
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
  if (diagonal_matrix_vector(graph, *a) || diagonal_matrix_vector(graph, *b)) {
    return {scale, "a product with torch.diag(v) is one multiply per output element"};
  }
  const auto& sa = a->meta->shape;
  const auto& sb = b->meta->shape;
  if (sa.size() >= 2 && sb.size() >= 2 && sa.back() == 1 && sb[sb.size() - 2] == 1) {
    return {scale, "a product over an inner dimension of 1 is one multiply per output element"};
  }
  return work;
}

const Node* diagonal_matrix_vector(const OpGraph& graph, const Node& node) {
  if (!(node.kind == "diag" || node.target == "torch.diag" || node.target == "diag")) return nullptr;
  if (node.args.empty() || node.args.size() > 2) return nullptr;
  const auto zero = [](const Arg& a) { return a.kind == Arg::Kind::Number && a.number == 0.0; };
  if (node.args.size() == 2 && !zero(node.args[1])) return nullptr;
  for (const auto& [name, arg] : node.kwargs) {
    if (name != "diagonal" || !zero(arg)) return nullptr;
  }
  if (node.normalized) {
    if (const auto offset = node.normalized->find("diagonal"); offset != node.normalized->end() && !zero(offset->second)) {
      return nullptr;
    }
  }
  const Node* v = graph.producer(node.args[0]);
  return v && v->meta && v->meta->shape.size() == 1 ? v : nullptr;
}

}  // namespace hiera::engine::graph
