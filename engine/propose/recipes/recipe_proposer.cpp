#include "engine/propose/recipes/recipe_proposer.h"

#include <algorithm>
#include <set>

#include "engine/graph/normalize.h"
#include "engine/propose/compile_proposer.h"
#include "engine/propose/recipes/module_emitter.h"
#include "engine/propose/recipes/replacement_sets.h"
#include "engine/propose/recipes/rewrites/rewrites.h"
#include "engine/propose/recipes/verified_parts.h"

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

// The rewrites that apply to the graph in the request's space (S3 kernels through `kernel_rewrites`).
std::vector<Replacement> applicable_rewrites(const graph::OpGraph& graph, const ProposalRequest& request,
                                             const RecipeProposer::KernelRewrites& kernel_rewrites,
                                             std::vector<std::string>& problems) {
  rewrites::RewriteOptions options;
  options.allowed_precisions = request.allowed_precisions;
  if (!graph.captured()) {
    // Without a graph (none captured, or the capture fell back: the optimizer
    // logged why) only whole-module rewrites apply: the CUDA graph capture of S2.
    if (!space_allows(request.space, knowledge::Space::S2)) return {};
    return rewrites::find_cuda_graph(graph, options);
  }
  std::vector<Replacement> pool;
  for (const auto& rewrite : rewrites::catalog()) {
    if (!space_allows(request.space, rewrite.space)) continue;
    for (auto& r : rewrite.find(graph, options)) pool.push_back(std::move(r));
  }
  if (request.space != knowledge::Space::S3 || !kernel_rewrites) return pool;
  try {
    for (auto& r : kernel_rewrites(graph, request)) {
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
  return pool;
}

// The reference's measured time in the nodes named in `only` (every node when null), or nullopt where the
// capture timed none of them.
std::optional<double> time_of_nodes(const graph::OpGraph& graph, const std::set<std::string>* only) {
  std::optional<double> sum;
  for (const auto& node : graph.nodes) {
    if (!node.time_ms || (only && !only->count(node.name))) continue;
    sum = sum.value_or(0.0) + *node.time_ms;
  }
  return sum;
}

// The time of the nodes `r` replaces (every node for a whole-forward rewrite).
std::optional<double> time_replaced(const graph::OpGraph& graph, const Replacement& r) {
  return time_of_nodes(graph, r.whole_forward() ? nullptr : &r.covered);
}

// The sets of pool indices to offer, in order: the parts verified in this run
// stitched together (when there are two or more), the bisection of the latest
// failure that is left to explain, then replacement_sets over the rewrites the
// run's verdicts have not blamed.
struct CandidateSets {
  std::vector<std::vector<std::size_t>> sets;
  std::vector<std::string> headings;  // per set: what the note starts with ("" for the plain sets)

  void add(std::vector<std::size_t> set, std::string heading = {}) {
    sets.push_back(std::move(set));
    headings.push_back(std::move(heading));
  }
};

CandidateSets candidate_sets(const std::vector<Replacement>& pool, const std::vector<std::string>& keys,
                             const std::vector<std::string>& shapes, const std::vector<PartEvidence>& evidence,
                             const ProposalRequest& request) {
  CandidateSets out;
  if (auto stitched = compose_verified(pool, evidence); !stitched.empty()) {
    out.add(std::move(stitched), "stitched from the parts verified in this run: ");
  }
  if (auto bisection = bisect_failure(pool, keys, evidence, request.history)) {
    out.add(std::move(bisection->set), "bisecting " + bisection->failed + "'s failure (" + std::to_string(bisection->tried) +
                                           " of its " + std::to_string(bisection->unjudged) +
                                           " rewrites not yet judged, with those verified faster): ");
  }
  std::vector<std::size_t> live;
  std::vector<Replacement> live_pool;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    if (evidence[i].blamed) continue;
    live.push_back(i);
    live_pool.push_back(pool[i]);
  }
  SetPreference preference;
  preference.space = request.space;
  for (const auto* recipe : request.recipes) preference.recipes.insert(recipe->id);
  // A rewrite of a repeated block is tried alone once: the singles of its
  // twins (same part_shape) come last, and not at all once one instance has a verdict.
  std::vector<std::vector<std::size_t>> twins;
  for (const auto& set : replacement_sets(live_pool, preference)) {
    std::vector<std::size_t> in_pool;
    for (const auto i : set) in_pool.push_back(live[i]);
    if (in_pool.size() == 1) {
      const std::size_t i = in_pool.front();
      if (evidence[i].twin) continue;
      const bool has_earlier_twin =
          std::any_of(live.begin(), live.end(), [&](std::size_t j) { return j < i && shapes[j] == shapes[i]; });
      if (has_earlier_twin) {
        twins.push_back(std::move(in_pool));
        continue;
      }
    }
    out.add(std::move(in_pool));
  }
  for (auto& set : twins) out.add(std::move(set));
  return out;
}

// The parts of a compiled composition: the rewrites marked library_gap (kernels for what torch.compile also hands
// to the library, a depthwise conv to cuDNN) that this run has not blamed, non-overlapping, in pool order.
std::vector<std::size_t> library_gap_parts(const std::vector<Replacement>& pool, const std::vector<PartEvidence>& evidence) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    if (!pool[i].library_gap || evidence[i].blamed) continue;
    if (std::none_of(out.begin(), out.end(), [&](std::size_t j) { return conflict(pool[i], pool[j]); })) out.push_back(i);
  }
  return out;
}

// Whether torch.compile passed verification in this run: it works for this module on the worker's torch.
bool compile_passed(const ProposalRequest& request) {
  if (!has_torch_compile(request.torch_version)) return false;
  return std::any_of(request.history.begin(), request.history.end(), [](const Attempt& a) {
    return a.correct && torch_compile_mode(a.candidate.source).has_value();
  });
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
  std::vector<std::string> problems;
  const std::vector<Replacement> pool = applicable_rewrites(graph, request, kernel_rewrites_, problems);
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

  // The run's verdicts so far: rewrites that failed are offered no more (nor
  // their twins in identical regions); those that passed faster are stitched
  // into one module, offered first and verified as a whole like any candidate.
  std::vector<std::string> keys;
  for (const auto& r : pool) keys.push_back(part_key(r));
  const std::vector<std::string> shapes = part_shapes(pool, graph);
  const std::vector<PartEvidence> evidence = part_evidence(keys, shapes, request.history);
  const CandidateSets sets = candidate_sets(pool, keys, shapes, evidence, request);
  // No set at all: every rewrite was blamed (replacement_sets offers at least the full set of the others).
  if (sets.sets.empty()) return once("every applicable rewrite failed verification in this run");

  std::set<std::string> seen;
  for (const auto& attempt : request.history) seen.insert(attempt.candidate.source);
  std::vector<Candidate> out;
  const std::size_t wanted = static_cast<std::size_t>(std::max(1, request.count));
  int repeated = 0;
  const std::optional<double> forward_ms = time_of_nodes(graph, nullptr);  // each part's share is of this
  auto add_parts = [&](Candidate& c, const std::vector<std::size_t>& set, bool informed) {
    std::string descriptions;
    for (const auto i : set) {
      const Replacement& r = pool[i];
      if (std::find(c.recipes.begin(), c.recipes.end(), r.recipe) == c.recipes.end()) c.recipes.push_back(r.recipe);
      descriptions += (descriptions.empty() ? "" : "; ") + r.description + (informed ? " " + evidence_text(evidence[i]) : "");
      c.parts.push_back({keys[i], r.recipe, r.space, r.whole_forward() ? "forward" : r.produces, r.description,
                         time_replaced(graph, r), graph::region_work(graph, r.covered, r.produces), forward_ms});
    }
    return descriptions;
  };
  // First, once torch.compile has passed in this run: the model compiled by torch.compile with the kernels that do
  // what torch.compile leaves to a library poorly (a graph break each), inductor fusing everything else.
  if (const auto gap = library_gap_parts(pool, evidence); !gap.empty() && compile_passed(request)) {
    std::vector<Replacement> chosen;
    for (const auto i : gap) chosen.push_back(pool[i]);
    EmitOptions emit_options;
    emit_options.opaque_kernel_regions = true;
    const EmittedModule module = emit_module(graph, request.reference_source, chosen, emit_options);
    if (!module.ok()) {
      problems.push_back(module.error);
    } else if (const std::string source = compiled_module(module.source, "ModelNew", kCompileModeDefault);
               seen.insert(source).second) {
      Candidate c = make_candidate(request);
      c.source = source;
      c.parts_under_compile = true;
      c.notes = "torch.compile (mode default) of the model with hiera's kernels where torch.compile calls a library "
                "that is poor at the op, each run as it is: " + add_parts(c, gap, false);
      add_normalization_notes(normalized, c);
      out.push_back(std::move(c));
    }
  }
  for (std::size_t s = 0; s < sets.sets.size() && out.size() < wanted; ++s) {
    throw_if_cancelled(cancel);
    std::vector<Replacement> chosen;
    for (const auto i : sets.sets[s]) chosen.push_back(pool[i]);
    const EmittedModule module = emit_module(graph, request.reference_source, chosen);
    if (!module.ok()) {
      problems.push_back(module.error);
      continue;
    }
    if (!seen.insert(module.source).second) {
      ++repeated;
      continue;
    }
    // The stitched and bisecting sets say what each part's evidence is.
    const bool informed = !sets.headings[s].empty();
    Candidate c = make_candidate(request);
    c.source = module.source;
    c.notes = sets.headings[s] + add_parts(c, sets.sets[s], informed);
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
