// s2_cudnn_benchmark_algorithm: let cuDNN time its algorithms for the actual
// convolution shapes; the flag is process-wide, so the emitter sets it for
// the call and restores it in a finally block.
#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/rewrites/rewrites.h"

namespace hiera::engine::propose::recipes::rewrites {

namespace {

bool is_convolution(const graph::Node& node) {
  return node.kind.rfind("conv", 0) == 0;  // conv1d/2d/3d, conv_transpose1d/2d/3d
}

}  // namespace

std::vector<Replacement> find_cudnn_benchmark(const graph::OpGraph& graph, const RewriteOptions&) {
  int convolutions = 0;
  for (const auto& node : graph.nodes) convolutions += is_convolution(node) ? 1 : 0;
  if (convolutions == 0) return {};
  Replacement r;
  r.recipe = "s2_cudnn_benchmark_algorithm";
  r.space = knowledge::Space::S2;
  r.description = "cuDNN benchmarks its algorithms for the " + std::to_string(convolutions) + " convolution(s)";
  r.settings = {{"torch.backends.cudnn.benchmark", "True"}};
  return {r};
}

}  // namespace hiera::engine::propose::recipes::rewrites
