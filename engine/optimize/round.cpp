#include "engine/optimize/round.h"

#include <algorithm>

#include "engine/plan/plan_report.h"
#include "engine/propose/prompt_builder.h"

namespace hiera::engine::optimize {

using nlohmann::json;

namespace {

// The time limit, reached: the stop reason with what was tried.
bool stop_for_time(RunContext& run) {
  if (!run.out_of_time()) return false;
  OptimizeResult& result = run.result;
  run.decide("time limit reached (" + fixed(run.time_limit_s, 0) + " s)");
  result.stop_reason = StopReason::TimeLimit;
  result.stop_detail = "time limit reached after " + fixed(seconds_since(run.start), 0) + " s (limit " +
                       fixed(run.time_limit_s, 0) + " s), " + std::to_string(result.figures.proposed) + " of " +
                       std::to_string(run.budget) + " candidates tried";
  return true;
}

// next_action's Stop: the stop reason and its detail.
void stop_for_plan(RunContext& run, const plan::Decision& decision) {
  OptimizeResult& result = run.result;
  run.decide(decision.reason);
  result.stop_reason = decision.stop == plan::StopCause::BudgetSpent        ? StopReason::BudgetSpent
                       : decision.stop == plan::StopCause::NearSpeedOfLight ? StopReason::NearSpeedOfLight
                                                                            : StopReason::PlanExhausted;
  result.stop_detail = decision.reason;
  if (decision.stop != plan::StopCause::BudgetSpent) {
    result.stop_detail += " (" + std::to_string(result.figures.proposed) + " of a budget of " + std::to_string(run.budget) +
                          " candidates tried)";
  }
}

propose::ProposalRequest proposal_request(const RunContext& run, const knowledge::KnowledgeBase& knowledge,
                                          const RoundInputs& inputs, const RoundState& state, const plan::PlanStep& step,
                                          const plan::Decision& decision) {
  const OptimizeResult& result = run.result;
  propose::ProposalRequest request;
  request.task_name = result.target;
  request.spec = result.spec_markdown;
  request.language =
      run.options.target.kind == spec::TargetKind::Pytorch ? propose::Language::Python : propose::Language::Cuda;
  request.gpu = result.gpu;
  request.space = step.space;
  request.region = step.region;
  for (const auto& id : step.recipes) {
    if (const auto* recipe = knowledge.recipe(id)) request.recipes.push_back(recipe);
  }
  request.reference_source = inputs.facts.reference_source;
  request.current_best_source = state.best_source;
  request.profile = inputs.profile_text;
  request.history = state.history;
  request.count = std::max(1, std::min({inputs.parallel, decision.candidates, run.budget - result.figures.proposed}));
  request.graph = inputs.facts.op_graph ? &*inputs.facts.op_graph : nullptr;
  request.allowed_precisions = inputs.plan.context.allowed_precision;
  request.torch_version = inputs.facts.torch_version;
  request.budget = run.budget;
  return request;
}

// The same code again (an LLM repeating itself, a cached reply) would only be measured again.
std::optional<std::string> repeat_of(const std::vector<propose::Attempt>& history, const propose::Candidate& candidate) {
  const auto same = std::find_if(history.begin(), history.end(), [&](const propose::Attempt& earlier) {
    return !earlier.candidate.rejected && earlier.candidate.source == candidate.source &&
           earlier.candidate.kernel == candidate.kernel;
  });
  if (same == history.end()) return std::nullopt;
  return "the same code as " + same->candidate.id + ", already evaluated";
}

}  // namespace

int candidates_per_round(const OptimizeOptions& options, std::size_t workers) {
  return std::max<int>(1, options.candidates_per_round ? *options.candidates_per_round : static_cast<int>(workers));
}

std::string round_profile_text(const ReferenceFacts& facts, const plan::Plan& plan, const std::string& gpu) {
  propose::ReferenceProfile profile = facts.profile;
  profile.reference_ms = facts.reference_ms;
  profile.gpu = gpu;
  for (const auto& a : plan.regions) profile.regions.push_back({a.region.name, a.point.reason});
  return propose::profile_text(profile);
}

plan::StepOutcome step_snapshot(const std::vector<plan::StepOutcome>& outcomes, const plan::PlanStep& step) {
  plan::StepOutcome snapshot;
  snapshot.region = step.region;
  snapshot.space = step.space;
  for (const auto& o : outcomes) {
    if (o.region == step.region && o.space == step.space) snapshot = o;  // the latest for this step
  }
  return snapshot;
}

std::shared_ptr<propose::Proposer> next_proposer(const std::vector<std::shared_ptr<propose::Proposer>>& proposers,
                                                 std::size_t turn, const std::set<std::string>& exhausted) {
  for (std::size_t k = 0; k < proposers.size(); ++k) {
    const auto& proposer = proposers[(turn + k) % proposers.size()];
    if (!exhausted.count(proposer->name())) return proposer;
  }
  return nullptr;
}

double fraction_of_sol(const plan::Plan& plan, const std::string& region, double reference_ms, double speedup) {
  for (const auto& a : plan.regions) {
    if (a.region.name != region || a.point.bound_ms <= 0) continue;
    const double saved = reference_ms - reference_ms / speedup;
    const double in_region = std::max(a.region.measured_ms - saved, a.point.bound_ms * 1e-3);
    return a.point.bound_ms / in_region;
  }
  return 0.0;
}

std::vector<PendingEvaluation> submit_candidates(RunContext& run, eval::EvaluationClient& client, const RoundInputs& inputs,
                                                 RoundState& state, std::vector<propose::Candidate>& candidates,
                                                 plan::StepOutcome& snapshot) {
  OptimizeResult& result = run.result;
  std::vector<PendingEvaluation> pending;
  for (auto& candidate : candidates) {
    candidate.id = "c" + std::to_string(state.next_id++);
    ++result.figures.proposed;
    ++snapshot.tried;
    result.figures.prompt_tokens += candidate.usage.prompt_tokens;
    result.figures.completion_tokens += candidate.usage.completion_tokens;
    AttemptRecord record;
    record.attempt.candidate = candidate;
    record.step = run.step_label;
    run.log->write("candidate", {{"id", candidate.id}, {"proposer", candidate.proposer},
                                 {"space", knowledge::to_string(candidate.space)}, {"source", candidate.source},
                                 {"rejected", candidate.rejected ? json(*candidate.rejected) : json(nullptr)}});
    if (!candidate.rejected) {
      candidate.rejected = repeat_of(state.history, candidate);
      record.attempt.candidate.rejected = candidate.rejected;
    }
    if (candidate.rejected) {
      ++result.figures.rejected;
      record.verdict = "rejected";
      record.attempt.failures.push_back("proposer: " + *candidate.rejected);
      result.attempts.push_back(record);
      state.history.push_back(record.attempt);
      continue;
    }
    eval::EvaluateOptions o = inputs.facts.evaluate_options;
    o.seed = run.options.seed + 1000 * state.next_id;  // fresh inputs for every candidate
    json task = candidate_task(inputs.plan.spec, inputs.facts.reference_source, candidate.source, candidate.kernel,
                               inputs.facts.device);
    result.attempts.push_back(record);
    pending.push_back({result.attempts.size() - 1, client.submit_evaluate(std::move(task), o)});
  }
  return pending;
}

void book_evaluation(RunContext& run, const RoundInputs& inputs, RoundState& state, const plan::PlanStep& step,
                     plan::StepOutcome& snapshot, std::size_t record_index, const eval::Evaluation& e) {
  OptimizeResult& result = run.result;
  AttemptRecord& record = result.attempts[record_index];
  propose::Attempt& attempt = record.attempt;
  record.worker = e.record.worker;
  record.worker_command = e.record.worker_command;
  record.lost = e.record.lost;
  record.trials = e.trials;
  record.timing = e.timing;
  record.speed_of_light_ms = e.speed_of_light_ms;
  if (result.candidate_isolation.empty() && !e.sandbox.empty()) {
    result.candidate_isolation = e.sandbox;
    result.candidate_isolation_of = attempt.candidate.id;
  }
  const bool compile_failed = std::any_of(e.failures.begin(), e.failures.end(),
                                          [](const auto& f) { return f.check == "compile" || f.check == "static"; });
  attempt.compiled = !compile_failed && !e.job_failure;
  attempt.correct = e.passed();
  for (const auto& f : e.failures) attempt.failures.push_back(failure_text(f));
  if (e.timing) attempt.speedup = e.timing->speedup;
  result.figures.compiled += attempt.compiled ? 1 : 0;
  result.figures.correct += attempt.correct ? 1 : 0;
  snapshot.compiled += attempt.compiled ? 1 : 0;
  snapshot.correct += attempt.correct ? 1 : 0;
  const bool is_faster = attempt.correct && e.timing && faster_beyond_noise(*e.timing) &&
                         e.timing->speedup >= inputs.plan.context.target_speedup;
  record.verdict = attempt.correct ? "passed" : "failed";
  if (attempt.correct && e.timing && (!snapshot.best_speedup || e.timing->speedup > *snapshot.best_speedup)) {
    snapshot.best_speedup = e.timing->speedup;
    snapshot.best_fraction_of_sol = fraction_of_sol(inputs.plan.plan, step.region, inputs.facts.reference_ms, e.timing->speedup);
  }
  if (is_faster) {
    ++result.figures.faster;
    state.faster.push_back(record_index);
    if (!run.best_speedup || e.timing->speedup > *run.best_speedup) {
      run.best_speedup = e.timing->speedup;
      state.best_source = attempt.candidate.source;
    }
  }
  run.log->write("evaluation", {{"id", attempt.candidate.id}, {"evaluation", evaluation_json(e)}, {"faster", is_faster}});
  state.history.push_back(attempt);
  run.report("evaluate", attempt.candidate.id + ": " + record.verdict +
                             (attempt.speedup ? " (" + fixed(*attempt.speedup, 2) + "x)" : std::string()));
}

RoundOutcome run_round(RunContext& run, eval::EvaluationClient& client, const knowledge::KnowledgeBase& knowledge,
                       const RoundInputs& inputs, RoundState& state) {
  throw_if_cancelled(run.cancel);
  if (stop_for_time(run)) return RoundOutcome::Stop;
  const plan::Plan& plan = inputs.plan.plan;
  const plan::Decision decision = plan::next_action(plan, state.outcomes);
  run.log->write("next_action", plan::to_json(decision));
  if (decision.action == plan::Action::Stop || !decision.step) {
    stop_for_plan(run, decision);
    return RoundOutcome::Stop;
  }
  const std::size_t s = *decision.step;
  const plan::PlanStep& step = plan.steps[s];
  if (state.current_step != s) {
    state.current_step = s;
    run.step_label = std::string(knowledge::to_string(step.space)) + " / " + step.region;
    run.decide("step " + std::to_string(s + 1) + " (" + run.step_label + "): " + decision.reason);
  }
  plan::StepOutcome snapshot = step_snapshot(state.outcomes, step);
  const propose::ProposalRequest request = proposal_request(run, knowledge, inputs, state, step, decision);
  // Proposers take turns; one that had nothing new for this step is not asked again there.
  std::set<std::string>& done = state.exhausted[s];
  const std::shared_ptr<propose::Proposer> proposer = next_proposer(inputs.proposers, state.rounds, done);
  ++state.rounds;
  if (!proposer) {
    snapshot.exhausted = true;  // the step is finished; its budget carries on
    state.outcomes.push_back(snapshot);
    return RoundOutcome::Continue;
  }
  run.report("propose", run.step_label + ": asking " + proposer->name() + " for " + std::to_string(request.count));
  run.clock.enter("proposing");
  std::vector<propose::Candidate> candidates = proposer->propose(request, run.cancel);
  run.clock.leave();
  if (candidates.empty()) {
    run.decide(proposer->name() + " has nothing new for " + run.step_label);
    done.insert(proposer->name());
    state.outcomes.push_back(snapshot);
    return RoundOutcome::Continue;
  }
  // Evaluate every usable candidate at once: the pool spreads them over its workers.
  run.clock.enter("candidates");
  std::vector<PendingEvaluation> pending = submit_candidates(run, client, inputs, state, candidates, snapshot);
  run.report("evaluate", run.step_label + ": verifying " + std::to_string(pending.size()) + " candidate(s)");
  for (auto& p : pending) {
    const eval::Evaluation e = p.evaluation.get();
    run.clock.candidate(e);
    book_evaluation(run, inputs, state, step, snapshot, p.record, e);
  }
  run.clock.leave();
  state.outcomes.push_back(snapshot);
  return RoundOutcome::Continue;
}

RoundState run_rounds(RunContext& run, eval::EvaluationClient& client, const knowledge::KnowledgeBase& knowledge,
                      const RoundInputs& inputs) {
  RoundState state;
  while (!inputs.proposers.empty() && run_round(run, client, knowledge, inputs, state) == RoundOutcome::Continue) {
  }
  return state;
}

}  // namespace hiera::engine::optimize
