#pragma once
// The captured graph in one spelling per computation, before any pattern is
// matched: what the knowledge proposer's recipes and kernels see. Ops that
// return their input's value (eval-mode and p=0 dropout, nn.Identity) are
// gone, their users read the input; einsums that are batched matrix products
// are torch.matmul (with the transpose they imply); the values the capture knew (the node's
// `facts`: buffers, constants, masks built from sizes) stay on the nodes.
// The result is still a graph the emitter can write out as Python: every
// node's `code` names the nodes its arguments name.
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"

namespace hiera::engine::graph {

struct Normalized {
  OpGraph graph;
  std::vector<std::string> removed;    // "dropout (dropout in eval mode)": one line per node removed
  std::vector<std::string> rewritten;  // "einsum (einsum as torch.matmul)": one line per node respelled
};

Normalized normalize(const OpGraph& graph);

// `code` with every read of the name `from` (an identifier outside string
// literals, not an attribute after '.', not a keyword argument's name) as `to`.
std::string rename_in_code(const std::string& code, const std::string& from, const std::string& to);

}  // namespace hiera::engine::graph
