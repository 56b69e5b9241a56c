// s2_tf32_matmul: float32 matrix products and convolutions on TF32 tensor
// cores, only when the contract's numerics allow tf32; the flags are set for
// the call and restored in a finally block.
#include <algorithm>

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/rewrites/rewrites.h"

namespace hiera::engine::propose::recipes::rewrites {

std::vector<Replacement> find_tf32(const graph::OpGraph& graph, const RewriteOptions& options) {
  const auto& allow = options.allowed_precisions;
  if (std::find(allow.begin(), allow.end(), "tf32") == allow.end()) return {};
  static const std::set<std::string> kGemms = {
      "linear", "matmul", "bmm", "addmm", "baddbmm", "multi_head_attention", "scaled_dot_product_attention"};
  int gemms = 0, convolutions = 0;
  for (const auto& node : graph.nodes) {
    if (dtype(node) != "float32") continue;
    gemms += kGemms.count(node.kind) ? 1 : 0;
    convolutions += node.kind.rfind("conv", 0) == 0 ? 1 : 0;
  }
  if (gemms + convolutions == 0) return {};
  Replacement r;
  r.recipe = "s2_tf32_matmul";
  r.space = knowledge::Space::S2;
  r.description = "TF32 tensor cores for " + std::to_string(gemms) + " float32 GEMM(s) and " +
                  std::to_string(convolutions) + " convolution(s) (numerics allow tf32)";
  if (gemms) r.settings.emplace_back("torch.backends.cuda.matmul.allow_tf32", "True");
  if (convolutions) r.settings.emplace_back("torch.backends.cudnn.allow_tf32", "True");
  return {r};
}

}  // namespace hiera::engine::propose::recipes::rewrites
