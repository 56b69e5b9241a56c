#pragma once
// The least arithmetic a node's value needs, where the capture's count (the
// op as written) is more than that: a product with a diagonal matrix built by
// torch.diag is one multiply per output element, as is a product over an
// inner dimension of size 1 (an outer product); attention scores that a causal
// mask meets (masked_fill, torch.where or an additive mask the capture knew to
// be causal), the product of their probabilities with the values, and
// scaled_dot_product_attention with is_causal need only the (S + 1) / 2S on and
// below the diagonal. The module's speed-of-light bound counts this, so an
// algebraic rewrite or a causal kernel cannot beat its own bound.
#include <string>

#include "engine/graph/op_graph.h"

namespace hiera::engine::graph {

struct NodeWork {
  double flops = 0.0;   // the least flops for the node's value
  std::string reason;   // why it is less than node.flops ("a product with torch.diag(d): one multiply per element"); empty when not
};

NodeWork minimal_work(const OpGraph& graph, const Node& node);

// v when `node` is torch.diag(v) of a vector v (its main diagonal: no offset,
// no other argument), else null. The structured-matmul rewrite matches the
// same products (engine/propose/recipes/rewrites/structured_matmuls.cpp).
const Node* diagonal_matrix_vector(const OpGraph& graph, const Node& node);

}  // namespace hiera::engine::graph
