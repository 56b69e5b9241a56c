#pragma once
// The planner (ARCHITECTURE.md, step 3): regions of the reference, placed on
// the roofline, become an ordered plan over implementation spaces (S1
// PyTorch operators, S2 CUDA libraries, S3 custom kernels). Budget goes where
// headroom x likelihood is largest; each region starts in the cheapest space
// that can remove its headroom and escalates S1 -> S2 -> S3 when a space stops
// paying (escalation.h); regions already near their speed of light are left
// alone. Every decision is recorded with its reason, for the report.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/knowledge/recipe.h"
#include "engine/plan/roofline.h"

namespace hiera::engine::plan {

// What the task spec's contract and configuration allow the plan.
struct PlanContext {
  std::vector<knowledge::Space> allowed_spaces{knowledge::Space::S1, knowledge::Space::S2, knowledge::Space::S3};
  std::vector<std::string> allowed_precision;  // numerics.allow: "tf32", "bf16", "fp16" (aliases folded)
  double target_speedup = 1.0;                 // the contract's; the plan says when it is out of reach
  int candidate_budget = 24;                   // candidates over the whole plan
  double near_sol = 0.85;                      // a region at this fraction of its speed of light is done
  std::string dtype;                           // the task's, for regions that name none
  int stall_window = 4;                        // a space stops paying when its last N candidates...
  double min_gain = 0.02;                      // ...improved the best by less than this (or none was correct)
  double min_headroom_share = 0.02;            // regions whose headroom is a smaller share of the module are skipped
  bool cuda = true;                            // false: a CPU run, S1 only (device_spaces.h)
};

struct RegionAnalysis {
  Region region;
  RooflinePoint point;
  bool planned = false;
  double expected_speedup = 1.0;  // midpoint of the best planned recipe's expected range
  double likelihood = 0.0;        // share of the headroom that speedup would remove, at most 1
  double priority_ms = 0.0;       // headroom x likelihood
};

struct PlanStep {
  std::string region;
  knowledge::Space space = knowledge::Space::S1;
  std::vector<std::string> recipes;  // ids, best first
  int budget = 0;                    // candidates
  std::string reason;
};

struct Plan {
  GpuCeilings ceilings;
  PlanContext context;
  std::vector<RegionAnalysis> regions;  // planned ones by priority, then the skipped ones
  std::vector<PlanStep> steps;          // in order: a region's spaces cheapest first, regions by priority
  std::vector<std::string> decisions;   // every decision with its reason, skips included
  bool at_speed_of_light = false;       // every region is at near_sol or better: nothing to do
  // Per allowed space, what its best recipes would save over the regions the planner did not skip:
  // sum of measured_ms x (1 - 1 / midpoint of the region's best recipe in that space). Budget cuts aside.
  std::vector<std::pair<knowledge::Space, double>> expected_saving_ms;
};

// Orders the regions by headroom x likelihood (likelihood: the share of the
// headroom the best planned recipe's expected speedup would remove), skips
// those at near_sol, measured faster than light, with too little headroom or
// with no applicable recipe, and lays out one step per (region, space) from
// the region's starting space on: the cheapest allowed space whose recipes
// promise (expected_speedup_high) the speedup that reaches near_sol, or the
// cheapest with a recipe when none does. A CPU run (context.cuda false)
// plans S1 only; plan.context holds the spaces it planned from. Each step gets 2 candidates and the
// rest of the budget by its region's headroom; when the budget cannot give 2
// to each, the last steps are dropped. Throws std::invalid_argument when a
// region's measured time is not positive.
Plan make_plan(const std::vector<Region>& regions, const GpuCeilings& ceilings, const PlanContext& context,
               const std::vector<knowledge::Recipe>& recipes);

// For a proposer that rewrites the whole captured op graph (of `graph_nodes`
// nodes) and so fuses across the profile's kernel regions: one "op graph" step
// per allowed space (plan.context's), 3 candidates each, put before every
// other step. S1 leads (torch.compile of the reference, the yardstick that
// S3's compiled composition builds on, is an S1 candidate); the other spaces
// follow by plan.expected_saving_ms, largest first (ties cheapest first), so a
// small budget reaches the space the regions' recipes promise most. Returns those steps; their reasons are the caller's
// to record (plan.decisions is left as make_plan wrote it).
std::vector<PlanStep> lead_with_graph_steps(Plan& plan, std::size_t graph_nodes);

}  // namespace hiera::engine::plan
