#pragma once
// A proposed implementation of the optimization target, and what became of it:
// the unit every proposer produces, the evaluator judges and the run log keeps.
#include <optional>
#include <string>
#include <vector>

#include "engine/graph/minimal_work.h"
#include "engine/knowledge/recipe.h"

namespace hiera::engine::propose {

// Token accounting of the request that produced a candidate (zero for offline proposers).
struct TokenUsage {
  long long prompt_tokens = 0;
  long long completion_tokens = 0;
  bool from_cache = false;
};

// One rewrite a knowledge candidate is made of (recipes/verified_parts.h).
struct CandidatePart {
  std::string key;           // part_key: recipe, the node it produces, a digest of what it emits
  std::string recipe;        // "s3_elementwise_fusion"
  knowledge::Space space = knowledge::Space::S1;
  std::string region;        // the graph node whose value it produces ("forward" for whole-forward rewrites)
  std::string description;   // "sigmoid + mul + add fused into one elementwise kernel"
  // The reference's time in the nodes it replaces, a call (the capture's per-node profile); unset where none was timed.
  std::optional<double> before_ms;
  // The least work of the nodes it replaces as one region (its speed of light at the GPU's ceilings); unset without a graph.
  std::optional<graph::RegionWork> least_work;
  // The whole forward in the same profile: before_ms / forward_ms is the region's share of the
  // reference, which a report scales to the reference's timed run (the profiler's clock is not the timer's).
  std::optional<double> forward_ms;

  bool operator==(const CandidatePart&) const = default;
};

struct Candidate {
  std::string id;                    // "c7": unique within a run, in proposal order
  std::string proposer;              // "llm:<endpoint>" or "knowledge"
  knowledge::Space space = knowledge::Space::S1;
  std::string region;                // the plan step's region
  std::vector<std::string> recipes;  // the recipes it applies (ids)
  std::string source;                // the whole candidate: a module defining ModelNew, or a kernel
  std::string kernel;                // CUDA targets: the kernel to launch
  std::string notes;                 // the proposer's one-line description
  // The knowledge proposer's rewrites it is made of: their verdicts let a
  // later proposal stitch the parts that passed into one module, and the
  // report say what each region got.
  std::vector<CandidatePart> parts;
  // Its parts run inside a torch.compile of the rest (the knowledge proposer's
  // compiled composition): its verdict says nothing of each part, so the
  // composition from verified parts takes no evidence from it.
  bool parts_under_compile = false;
  // Set when the proposer could not produce usable code (an empty, truncated or
  // code-less reply): the candidate is logged and counted, never evaluated.
  std::optional<std::string> rejected;
  TokenUsage usage;
};

// What the evaluator said about a candidate, fed back to the next proposals.
struct Attempt {
  Candidate candidate;
  bool compiled = false;
  bool correct = false;
  std::optional<double> speedup;         // over the reference, when verified
  std::vector<std::string> failures;     // "check: message", the evaluator's reasons
  std::string compile_log;               // the first part of a failed compile's log
};

}  // namespace hiera::engine::propose
