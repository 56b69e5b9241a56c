#include "engine/propose/recipes/recipe_proposer.h"

#include <algorithm>
#include <set>

#include "engine/graph/normalize.h"
#include "engine/propose/recipes/module_emitter.h"
#include "engine/propose/recipes/replacement_sets.h"
#include "engine/propose/recipes/rewrites/rewrites.h"

namespace hiera::engine::propose::recipes {

namespace {

Candidate make_candidate(const ProposalRequest& request) {
  Candidate c;
  c.proposer = "knowledge";
  c.space = request.space;
  c.region = request.region;
  return c;
}

Candidate rejected(const ProposalRequest& request, std::string reason) {
  Candidate c = make_candidate(request);
  c.rejected = std::move(reason);
  return c;
}

bool space_allows(knowledge::Space step, knowledge::Space rewrite) {
  return static_cast<int>(rewrite) <= static_cast<int>(step);
}

// The identities normalisation removed are part of every candidate: s1_remove_identity_ops applied.
void add_normalization_notes(const graph::Normalized& normalized, Candidate& c) {
  if (normalized.removed.empty()) return;
  constexpr const char* kIdentityRecipe = "s1_remove_identity_ops";
  if (std::find(c.recipes.begin(), c.recipes.end(), kIdentityRecipe) == c.recipes.end()) c.recipes.push_back(kIdentityRecipe);
  std::string removed;
  for (const auto& line : normalized.removed) removed += (removed.empty() ? "" : ", ") + line;
  c.notes += (c.notes.empty() ? "" : "; ") + std::string("removed before matching: ") + removed;
}

}  // namespace

RecipeProposer::RecipeProposer(KernelRewrites kernel_rewrites) : kernel_rewrites_(std::move(kernel_rewrites)) {}

std::vector<Candidate> RecipeProposer::propose(const ProposalRequest& request, const CancellationToken& cancel) {
  throw_if_cancelled(cancel);
  // CUDA-kernel tasks: the rewrites work on a PyTorch module's op graph; a
  // kernel's own source has none yet, so this proposer offers nothing for them.
  if (request.language == Language::Cuda) return {};

  const graph::OpGraph empty;
  // Recipes match the normalised graph (one spelling per computation), and
  // the candidates are written from it: the identities it dropped are gone.
  const graph::Normalized normalized = graph::normalize(request.graph ? *request.graph : empty);
  const graph::OpGraph& graph = normalized.graph;
  rewrites::RewriteOptions options;
  options.allowed_precisions = request.allowed_precisions;

  std::vector<Replacement> pool;
  std::vector<std::string> problems;
  if (!graph.captured()) {
    // Without a graph (none captured, or the capture fell back: the optimizer
    // logged why) only whole-module rewrites apply: the CUDA graph capture of S2.
    if (!space_allows(request.space, knowledge::Space::S2)) return {};
    pool = rewrites::find_cuda_graph(graph, options);
  } else {
    for (const auto& rewrite : rewrites::catalog()) {
      if (!space_allows(request.space, rewrite.space)) continue;
      for (auto& r : rewrite.find(graph, options)) pool.push_back(std::move(r));
    }
    if (request.space == knowledge::Space::S3 && kernel_rewrites_) {
      try {
        for (auto& r : kernel_rewrites_(graph, request)) {
          // Eager PyTorch rounds after every op; a contracted a*b+c (FMA) rounds
          // once, which cancellation (stencils, x - mean) turns into errors
          // beyond the tolerance. Memory-bound kernels lose nothing without it.
          for (auto& k : r.kernels) {
            const bool set = std::any_of(k.options.begin(), k.options.end(),
                                         [](const std::string& o) { return o.rfind("--fmad", 0) == 0 || o.rfind("-fmad", 0) == 0; });
            if (!set) k.options.push_back("--fmad=false");
          }
          pool.push_back(std::move(r));
        }
      } catch (const std::exception& e) {
        problems.push_back(std::string("the kernel rewrites failed: ") + e.what());
      }
    }
  }
  throw_if_cancelled(cancel);
  // Nothing to offer is an empty answer (the optimizer moves on at no cost);
  // a problem is reported once, as a rejected candidate, not on every ask.
  auto once = [&](std::string reason) -> std::vector<Candidate> {
    if (problems.empty()) return {};
    for (const auto& p : problems) reason += "; " + p;
    for (const auto& attempt : request.history) {
      if (attempt.candidate.rejected == reason) return {};
    }
    return {rejected(request, reason)};
  };
  if (pool.empty()) {
    return once("no " + std::string(knowledge::to_string(request.space)) +
                " rewrite of the knowledge base applies to this graph");
  }

  SetPreference preference;
  preference.space = request.space;
  for (const auto* recipe : request.recipes) preference.recipes.insert(recipe->id);

  std::set<std::string> seen;
  for (const auto& attempt : request.history) seen.insert(attempt.candidate.source);
  std::vector<Candidate> out;
  const std::size_t wanted = static_cast<std::size_t>(std::max(1, request.count));
  int repeated = 0;
  for (const auto& set : replacement_sets(pool, preference)) {
    if (out.size() >= wanted) break;
    throw_if_cancelled(cancel);
    std::vector<Replacement> chosen;
    for (const auto i : set) chosen.push_back(pool[i]);
    const EmittedModule module = emit_module(graph, request.reference_source, chosen);
    if (!module.ok()) {
      problems.push_back(module.error);
      continue;
    }
    if (!seen.insert(module.source).second) {
      ++repeated;
      continue;
    }
    Candidate c = make_candidate(request);
    c.source = module.source;
    for (const auto& r : chosen) {
      if (std::find(c.recipes.begin(), c.recipes.end(), r.recipe) == c.recipes.end()) c.recipes.push_back(r.recipe);
      c.notes += (c.notes.empty() ? "" : "; ") + r.description;
    }
    add_normalization_notes(normalized, c);
    out.push_back(std::move(c));
  }
  if (out.empty()) {
    std::string reason = "every combination of the " + std::to_string(pool.size()) + " applicable rewrite(s)";
    reason += repeated ? " was already proposed in this run" : " was refused by the emitter";
    return once(reason);
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes
