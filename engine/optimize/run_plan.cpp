#include "engine/optimize/run_plan.h"

#include "engine/graph/minimal_work.h"
#include "engine/plan/plan_report.h"
#include "engine/spec/spec_builder.h"

namespace hiera::engine::optimize {

plan::PlanContext plan_context(const spec::TaskSpec& spec, int budget) {
  plan::PlanContext context;
  context.allowed_spaces.clear();
  for (const auto& s : spec.spaces()) context.allowed_spaces.push_back(knowledge::parse_space(s).value_or(knowledge::Space::S1));
  if (context.allowed_spaces.empty()) context.allowed_spaces = {knowledge::Space::S1, knowledge::Space::S2, knowledge::Space::S3};
  context.allowed_precision = spec.allowed_precisions();
  context.target_speedup = spec.target_speedup().value_or(1.0);
  context.candidate_budget = budget;
  const auto dtypes = spec.output_dtypes();
  context.dtype = dtypes.empty() ? "float32" : dtypes.front();
  return context;
}

PhaseResult<RunPlan> make_run_plan(RunContext& run, const ReferenceFacts& facts, const knowledge::KnowledgeBase& knowledge,
                                   bool graph_proposer) {
  OptimizeResult& result = run.result;
  const OptimizeOptions& options = run.options;
  // The spec again, with what the probe and the reference run established.
  run.clock.enter("planning");
  spec::SpecInputs inputs = facts.spec_inputs;
  inputs.probe = nlohmann::json{{"reference_ms", facts.reference_ms}, {"device", result.gpu}};
  spec::SpecBuildResult built = spec::build_spec(inputs);
  if (auto ending = spec_errors(built)) return *ending;
  RunPlan out;
  out.spec = std::move(built.spec);
  const spec::TaskSpec& spec = out.spec;
  result.spec = spec.to_json();
  result.spec_markdown = spec.to_markdown();
  run.log->write("spec", result.spec);

  run.budget = options.budget.value_or(static_cast<int>(spec.candidate_budget().value_or(kDefaultBudget)));
  run.time_limit_s = options.time_limit_s.value_or(spec.time_budget_s().value_or(kDefaultTimeLimitS));
  out.context = plan_context(spec, run.budget);
  out.context.cuda = facts.device == "cuda";  // a CPU run plans no CUDA-only space
  plan::Plan& plan = out.plan;
  plan = plan::make_plan(facts.regions, facts.ceilings, out.context, knowledge.recipes);
  out.context = plan.context;
  for (const auto& d : plan.decisions) run.decide(d);
  if (plan.steps.empty() && !plan.at_speed_of_light && !out.context.allowed_spaces.empty()) {
    // No recipe fits any region: the proposers still get the whole module in the cheapest allowed space.
    plan::PlanStep step;
    step.region = facts.regions.front().name;
    step.space = out.context.allowed_spaces.front();
    step.budget = run.budget;
    step.reason = "no recipe applies to any region: the whole module in " + std::string(knowledge::to_string(step.space));
    plan.steps.push_back(step);
    run.decide(step.reason);
  }
  const std::optional<graph::OpGraph>& op_graph = facts.op_graph;
  if (op_graph && op_graph->captured() && graph_proposer) {
    for (const auto& step : plan::lead_with_graph_steps(plan, op_graph->nodes.size())) run.decide(step.reason);
  }
  result.plan = plan::to_json(plan);
  if (op_graph && op_graph->captured()) {
    if (const auto bound = module_speed_of_light_ms(*op_graph, facts.ceilings)) {
      result.plan["module_speed_of_light_ms"] = *bound;
      run.decide("the module's speed of light (every op fused, inputs, weights and outputs moved once, every flop "
                 "at peak): " + fixed(*bound, 4) + " ms");
      // Where the computation needs less arithmetic than its spelling, the bound says so: a rewrite that
      // takes the shorter way is measured against that work, never above 100% of it.
      for (const auto& node : op_graph->nodes) {
        const graph::NodeWork work = graph::minimal_work(*op_graph, node);
        if (!work.reason.empty()) run.decide("the speed of light counts '" + node.name + "' as its least work: " + work.reason);
      }
    }
  }
  result.plan_markdown = plan::to_markdown(plan);
  run.log->write("plan", result.plan);
  run.clock.leave();
  return out;
}

std::optional<Ending> stop_before_rounds(RunContext& run, const ReferenceFacts& facts, const RunPlan& plan,
                                         bool has_proposers) {
  OptimizeResult& result = run.result;
  if (run.options.measure_only) {
    result.stop_reason = StopReason::MeasureOnly;
    result.stop_detail = "measure only: no candidates";
    return Ending{Outcome::NoImprovement, "the reference measured: " + fixed(facts.reference_ms, 4) + " ms per call on " +
                                              result.gpu + " (measure only: no candidates)"};
  }
  if (plan.plan.at_speed_of_light) {
    result.stop_reason = StopReason::NearSpeedOfLight;
    result.stop_detail = "the reference already runs near its speed of light";
    return Ending{Outcome::NoImprovement, result.stop_detail};
  }
  if (!has_proposers) {
    run.decide("no proposer configured (no LLM endpoint, and the built-in proposer is not enabled)");
    result.stop_reason = StopReason::NoProposer;
    result.stop_detail = result.decisions.back();
  }
  return std::nullopt;
}

}  // namespace hiera::engine::optimize
