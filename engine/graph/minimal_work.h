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
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"

namespace hiera::engine::graph {

struct NodeWork {
  double flops = 0.0;   // the least flops for the node's value
  std::string reason;   // why it is less than node.flops ("a product with torch.diag(d): one multiply per element"); empty when not
};

NodeWork minimal_work(const OpGraph& graph, const Node& node);

// Bytes of a tensor of that shape and dtype (engine::dtype_bytes an element).
double tensor_bytes(const std::vector<std::int64_t>& shape, const std::string& dtype);

// The least work of nodes computed as one fused region: each node's least flops, and the bytes of the tensors
// that enter it (inputs, the parameters and buffers of the modules it calls) and of the values read outside it,
// each once. `peak` is the dtype whose peak bounds its flops: the value's, or tf32 for a float32 convolution
// (cuDNN's default).
struct RegionWork {
  double flops = 0.0;
  double bytes = 0.0;
  std::string peak = "float32";

  bool operator==(const RegionWork&) const = default;
};

// `covered`: node names; empty means every call of the forward (a whole-forward rewrite). `produces`: the node
// whose value the region hands on (its dtype is the region's).
RegionWork region_work(const OpGraph& graph, const std::set<std::string>& covered, const std::string& produces);

// v when `node` is torch.diag(v) of a vector v (its main diagonal: no offset,
// no other argument), else null. The structured-matmul rewrite matches the
// same products (engine/propose/recipes/rewrites/structured_matmuls.cpp).
const Node* diagonal_matrix_vector(const OpGraph& graph, const Node& node);

}  // namespace hiera::engine::graph
