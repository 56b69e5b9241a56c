// s2_cuda_graph_capture: a launch-bound forward (several kernels on small
// tensors) captured once in a CUDA graph and replayed. Also the one rewrite
// left when the capture fell back and there is no graph to rewrite: it wraps
// the reference's own forward. Always `risky`: capture fails on host syncs.
#include <algorithm>

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/rewrites/rewrites.h"

namespace hiera::engine::propose::recipes::rewrites {

namespace {

// The recipe's shape.max_elements: above it the copies in and out cost more than the launches saved.
constexpr std::int64_t kMaxElements = 16777216;

// Ops that launch no kernel: views, metadata, Python-level glue.
bool launches_nothing(const graph::Node& node) {
  static const std::set<std::string> kFree = {"input",   "output",  "attr",      "getitem",   "view",
                                              "reshape", "permute", "transpose", "unsqueeze", "squeeze",
                                              "expand",  "flatten", "identity",  "dropout"};
  return kFree.count(node.kind) > 0 || !node.meta;
}

// Reads a value back to the host (or shapes data-dependently): capture would fail.
bool syncs_with_host(const graph::Node& node) {
  static const std::set<std::string> kSync = {
      "item",          "tolist",       "cpu",       "numpy",         "nonzero",
      "__bool__",      "__int__",      "__float__", "torch.nonzero", "torch.masked_select",
      "masked_select", "torch.unique", "unique"};
  return kSync.count(node.target) > 0;
}

}  // namespace

std::vector<Replacement> find_cuda_graph(const graph::OpGraph& graph, const RewriteOptions&) {
  Replacement r;
  r.recipe = "s2_cuda_graph_capture";
  r.space = knowledge::Space::S2;
  r.cuda_graph = true;
  r.risky = true;
  if (!graph.captured()) {
    r.description =
        "the whole forward captured in a CUDA graph and replayed (no op graph: the reference's own forward)";
    return {r};
  }
  int kernels = 0;
  for (const auto& node : graph.nodes) {
    if (syncs_with_host(node)) return {};
    // Random ops would replay the same random numbers; training-mode batch norm would update its
    // running statistics once more per warm-up call.
    if ((is_kind(node, "dropout") || is_kind(node, "batch_norm")) && graph.training) return {};
    if (node.meta && node.meta->elements() > kMaxElements) return {};
    kernels += launches_nothing(node) ? 0 : 1;
  }
  if (kernels < 2) return {};
  r.description =
      "the forward's " + std::to_string(kernels) + " kernel launches captured in one CUDA graph and replayed";
  return {r};
}

}  // namespace hiera::engine::propose::recipes::rewrites
