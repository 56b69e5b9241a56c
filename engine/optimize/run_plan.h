#pragma once
// The second phase: the task spec again, now with the probe's and the
// baseline's facts, the run's budget and time limit, and the plan
// (plan::make_plan over the reference's regions; whole-graph steps first when
// a proposer rewrites the captured op graph), then whether the run goes on to
// rounds at all (measure only, already near the speed of light, no proposer).
#include <optional>

#include "engine/knowledge/knowledge_base.h"
#include "engine/optimize/reference_facts.h"
#include "engine/optimize/run_context.h"
#include "engine/plan/planner.h"
#include "engine/spec/task_spec.h"

namespace hiera::engine::optimize {

struct RunPlan {
  spec::TaskSpec spec;  // with the probe's facts: the candidates' tasks are built on it
  plan::PlanContext context;
  plan::Plan plan;
};

// Records result.spec, result.plan (with module_speed_of_light_ms when the
// graph gives one) and their markdown, the run log's spec and plan events and
// every planner decision, inside the engine phase "planning"; sets run.budget
// and run.time_limit_s. `graph_proposer`: some proposer proposes_for_graph().
// Ends the run (Outcome::Error) when the spec has errors.
PhaseResult<RunPlan> make_run_plan(RunContext& run, const ReferenceFacts& facts, const knowledge::KnowledgeBase& knowledge,
                                   bool graph_proposer);

// The plan's context from the spec: allowed spaces (all three when it names
// none), precisions, target speedup, dtype, the run's budget.
plan::PlanContext plan_context(const spec::TaskSpec& spec, int budget);

// The ending before any round: measure only, or the reference already near
// its speed of light (both NoImprovement). Without proposers the run goes on
// to an empty delivery, with StopReason::NoProposer set here.
std::optional<Ending> stop_before_rounds(RunContext& run, const ReferenceFacts& facts, const RunPlan& plan,
                                         bool has_proposers);

}  // namespace hiera::engine::optimize
