#include "engine/propose/recipes/rewrites/rewrites.h"

namespace hiera::engine::propose::recipes::rewrites {

const std::vector<Rewrite>& catalog() {
  using knowledge::Space;
  // Larger fusions first: where two rewrites want the same nodes, the one that
  // removes more work wins (attention before its softmax, epilogues before linear+bias).
  static const std::vector<Rewrite> rewrites = {
      {"attention", Space::S1, find_attention},
      // Ahead of the epilogue and bias rewrites: the product's tensor cores save more than a fused epilogue.
      {"split_tf32", Space::S2, find_split_tf32},
      {"cublaslt_epilogues", Space::S2, find_cublaslt_epilogues},
      {"strided_batched_gemms", Space::S2, find_strided_batched_gemms},
      {"linear_bias", Space::S1, find_linear_bias},
      {"fused_activations", Space::S1, find_fused_activations},
      {"fused_softmax_logsumexp", Space::S1, find_fused_softmax_logsumexp},
      {"structured_matmuls", Space::S1, find_structured_matmuls},
      {"reduction_chains", Space::S1, find_reduction_chains},
      {"singleton_reductions", Space::S1, find_singleton_reductions},
      {"identity_ops", Space::S1, find_identity_ops},
      {"redundant_casts", Space::S1, find_redundant_casts},
      {"channels_last", Space::S1, find_channels_last},
      {"cudnn_benchmark", Space::S2, find_cudnn_benchmark},
      {"tf32", Space::S2, find_tf32},
      {"cuda_graph", Space::S2, find_cuda_graph},
  };
  return rewrites;
}

Replacement make_replacement(std::string recipe, knowledge::Space space, std::string description,
                             std::set<std::string> covered, std::string produces, std::vector<std::string> statements) {
  Replacement r;
  r.recipe = std::move(recipe);
  r.space = space;
  r.description = std::move(description);
  r.covered = std::move(covered);
  r.produces = std::move(produces);
  r.statements = std::move(statements);
  return r;
}

}  // namespace hiera::engine::propose::recipes::rewrites
