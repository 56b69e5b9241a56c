#pragma once
// The refinement loop (ARCHITECTURE.md steps 2-7): task spec, probe and
// baseline of the reference, its profile, the plan, then rounds of proposals
// evaluated in parallel on every worker, the plan escalating as spaces stop
// paying, until the budget, the time limit, cancellation or the speed of
// light; the best verified candidate is delivered and verified again in that
// form. Editor-neutral: the CLI, the LSP server and tests drive it alike.
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/common/cancellation.h"
#include "engine/eval/worker_pool.h"
#include "engine/graph/op_graph.h"
#include "engine/plan/roofline.h"
#include "engine/knowledge/knowledge_base.h"
#include "engine/optimize/optimize_progress.h"
#include "engine/optimize/optimize_result.h"
#include "engine/optimize/target.h"
#include "engine/propose/proposer.h"

namespace hiera::engine::optimize {

struct OptimizeOptions {
  Target target;
  // Settings for the task spec (engine/spec: numerics, budget, spaces, target_speedup, ...).
  nlohmann::json configuration = nlohmann::json::object();
  std::optional<int> budget;            // candidates; overrides the spec's budget
  std::optional<double> time_limit_s;   // wall time; overrides the spec's
  // Candidates asked for per round. Unset: one per worker, which makes the
  // search (not only its speed) depend on the pool's size; fixed, a run makes
  // the same proposals whatever the number of workers.
  std::optional<int> candidates_per_round;
  std::filesystem::path runs_dir = ".hiera/runs";
  std::string target_gpu = "h200";      // knowledge GPU for estimates when no GPU can be probed
  int trials = 5;
  int timing_trials = 50;
  std::int64_t seed = 1234;
  std::chrono::milliseconds evaluate_timeout{std::chrono::minutes(3)};
  // Stop after the reference's baseline, profile and plan (no op graph, no
  // candidates): what an editor's "profile" asks. Ends NoImprovement.
  bool measure_only = false;
  // Baselines timed beside the delivered form ("compile"): the bench's side-by-side
  // measurement is then the delivery's own, not a second job of the same checks.
  std::vector<std::string> delivery_baselines;
};

// Defaults when neither the options nor the spec give them.
inline constexpr int kDefaultBudget = 24;
inline constexpr double kDefaultTimeLimitS = 1800.0;

class Optimizer {
 public:
  // The pool and the knowledge base must outlive the optimizer.
  Optimizer(eval::WorkerPool& pool, const knowledge::KnowledgeBase& knowledge,
            std::vector<std::shared_ptr<propose::Proposer>> proposers);

  // Never throws for a bad target, a broken reference or failing candidates:
  // those end the run with Outcome::Error or are recorded as attempts.
  OptimizeResult run(const OptimizeOptions& options, const ProgressCallback& progress = {},
                     const CancellationToken& cancel = {});

 private:
  eval::WorkerPool& pool_;
  const knowledge::KnowledgeBase& knowledge_;
  std::vector<std::shared_ptr<propose::Proposer>> proposers_;
};

// Faster beyond noise: the candidate's p10-p90 range lies wholly below the
// reference's (MEASURING.md: a difference within the spread is noise).
bool faster_beyond_noise(const eval::Timing& timing);

// The whole module's speed-of-light time on these ceilings: its inputs,
// parameters, buffers and outputs moved once (every op fused) or all its flops
// at the output dtype's peak, whichever takes longer; nullopt without sizes.
std::optional<double> module_speed_of_light_ms(const graph::OpGraph& graph, const GpuCeilings& ceilings);

}  // namespace hiera::engine::optimize
