#pragma once
// The built-in, offline proposer: rewrites of the reference's captured op
// graph (S1 PyTorch operators, S2 CUDA libraries through torch, S3 generated
// CUDA kernels from engine/propose/recipes/kernels), combined into
// non-overlapping sets and emitted as ModelNew modules. Deterministic: the
// same request gives the same candidates, and a source already in the run's
// history is never proposed again.
#include <functional>
#include <string>
#include <vector>

#include "engine/knowledge/knowledge_base.h"
#include "engine/propose/recipes/replacement.h"
#include "engine/propose/proposer.h"

namespace hiera::engine::propose::recipes {

class RecipeProposer final : public Proposer {
 public:
  // Where S3 replacements come from; may throw (the proposer reports it).
  using KernelRewrites = std::function<std::vector<Replacement>(const graph::OpGraph&, const ProposalRequest&)>;

  // S3 from find_kernel_rewrites (kernels/kernel_rewrites.h) with `knowledge`'s
  // templates; `knowledge` must outlive the proposer.
  explicit RecipeProposer(const knowledge::KnowledgeBase& knowledge);
  // S3 from `kernel_rewrites` instead (tests; or none at all when it is empty).
  explicit RecipeProposer(KernelRewrites kernel_rewrites);

  std::string name() const override { return "knowledge"; }
  bool proposes_for_graph() const override { return true; }
  std::vector<Candidate> propose(const ProposalRequest& request, const CancellationToken& cancel) override;

 private:
  KernelRewrites kernel_rewrites_;
};

}  // namespace hiera::engine::propose::recipes
