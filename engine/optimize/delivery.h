#pragma once
// The last phase: the three fastest verified candidates at most, in order of
// speedup, each on a fresh seed in its delivered form (a PyTorch module
// through the worker's `deliver`, standalone and verified again; a CUDA kernel
// as its source, evaluated again); the first that holds up is the best.
#include <cstddef>
#include <optional>
#include <vector>

#include "engine/eval/evaluation_client.h"
#include "engine/optimize/optimize_result.h"
#include "engine/optimize/reference_facts.h"
#include "engine/optimize/run_context.h"
#include "engine/spec/task_spec.h"

namespace hiera::engine::optimize {

// How many of the fastest candidates are tried in their delivered form.
inline constexpr std::size_t kDeliveryTries = 3;

// `faster`: indexes into run.result.attempts (verified faster, any order).
// Records each try (the run log's delivery event, a decision for one that
// fails; the engine phase "delivery") and writes best.py / best.cu in the run
// directory for the one delivered. Leaves run.result.best to the caller.
// Throws Cancelled.
std::optional<BestResult> deliver(RunContext& run, eval::EvaluationClient& client, const ReferenceFacts& facts,
                                  const spec::TaskSpec& spec, std::vector<std::size_t> faster);

// The outcome of a run that got to its delivery: Improved with `best`, else NoImprovement.
Ending delivered_ending(const OptimizeResult& result);

}  // namespace hiera::engine::optimize
