#include "engine/bench/comparison.h"

#include <algorithm>
#include <set>

#include "engine/common/sha256.h"
#include "engine/spec/task_spec.h"
#include "engine/spec/worker_task.h"

namespace hiera::engine::bench {

using nlohmann::json;

namespace {

TimeSummary summary_of(const eval::TimingStats& stats) { return {stats.median_ms, stats.p10_ms, stats.p90_ms}; }

std::string first_failure(const eval::Evaluation& e) {
  if (e.job_failure) return e.job_failure->message;
  if (e.failures.empty()) return "no timing";
  return e.failures.front().check + ": " + e.failures.front().message;
}

}  // namespace

json comparison_task(const optimize::Target& target, const optimize::OptimizeResult& result) {
  const spec::TaskSpec spec = spec::TaskSpec::from_json(result.spec);
  spec::CandidateTask candidate;
  candidate.device = result.gpu == "cpu" ? "cpu" : "cuda";
  const bool delivered = result.improved();
  if (delivered) candidate.kernel = result.best->candidate.kernel;
  return spec::to_worker_task(spec, target.reference_source(),
                              delivered ? result.best->delivered_source : target.reference_as_candidate(), candidate);
}

std::optional<eval::Evaluation> delivery_as_comparison(const optimize::OptimizeResult& result,
                                                       const std::vector<std::string>& baselines) {
  if (!result.improved() || !result.best->evaluation.passed() || !result.best->evaluation.timing) return std::nullopt;
  const eval::Timing& t = *result.best->evaluation.timing;
  for (const auto& b : baselines) {
    if (b != "eager" && !t.baselines.count(b) && !t.baseline_errors.count(b)) return std::nullopt;
  }
  return result.best->evaluation;
}

eval::EvaluateOptions comparison_options(const optimize::OptimizeOptions& options, const std::vector<std::string>& baselines,
                                         const CancellationToken& cancel) {
  eval::EvaluateOptions o;
  o.trials = options.trials;
  o.timing_trials = options.timing_trials;
  o.seed = options.seed + 424242;  // inputs neither the search nor the delivery saw
  // torch.compile's first call compiles, and a delivered module builds its kernels with load_inline.
  o.timeout = std::max<std::chrono::milliseconds>(options.evaluate_timeout, std::chrono::minutes(10));
  o.cancel = cancel;
  for (const auto& b : baselines) {
    if (b != "eager") o.baselines.push_back(b);
  }
  // What is handed back, judged by KernelBench's own criterion too (its format: PyTorch modules).
  o.kernelbench = options.target.kind == spec::TargetKind::Pytorch;
  return o;
}

std::optional<double> plan_bound_ms(const json& plan) {
  // The whole module's bound from its op graph (everything fused: inputs,
  // weights and outputs moved once, every flop at peak) where the optimizer had one.
  if (plan.is_object() && plan.contains("module_speed_of_light_ms") && plan["module_speed_of_light_ms"].is_number() &&
      plan["module_speed_of_light_ms"].get<double>() > 0.0) {
    return plan["module_speed_of_light_ms"].get<double>();
  }
  if (!plan.is_object() || !plan.contains("regions") || !plan["regions"].is_array()) return std::nullopt;
  double total = 0.0;
  for (const auto& region : plan["regions"]) {
    if (region.is_object() && region.contains("bound_ms") && region["bound_ms"].is_number()) {
      total += region["bound_ms"].get<double>();
    }
  }
  if (total <= 0.0) return std::nullopt;
  return total;
}

std::vector<std::string> recipe_spaces(const propose::Candidate& candidate, const knowledge::KnowledgeBase& knowledge) {
  std::set<knowledge::Space> spaces;
  for (const auto& id : candidate.recipes) {
    if (const knowledge::Recipe* recipe = knowledge.recipe(id)) spaces.insert(recipe->space);
  }
  if (spaces.empty()) spaces.insert(candidate.space);
  std::vector<std::string> names;
  for (const knowledge::Space s : spaces) names.push_back(knowledge::to_string(s));
  return names;
}

std::vector<CandidateVerdict> candidate_verdicts(const optimize::OptimizeResult& result) {
  std::vector<CandidateVerdict> verdicts;
  for (const auto& record : result.attempts) {
    const propose::Candidate& c = record.attempt.candidate;
    verdicts.push_back({c.id, c.recipes, knowledge::to_string(c.space), sha256_hex(c.source),
                        record.verdict.empty() ? "not_evaluated" : record.verdict});
  }
  return verdicts;
}

ProblemTimeBreakdown problem_time_breakdown(const optimize::OptimizeResult& result,
                                            const std::optional<eval::Evaluation>& comparison,
                                            std::optional<double> measure_s, double total_s) {
  ProblemTimeBreakdown t;
  t.total_s = total_s;
  t.optimize = result.time_breakdown;
  t.measure_s = measure_s;
  if (measure_s && comparison) t.measure_phases = comparison->phases;
  return t;
}

ProblemResult make_problem_result(const Problem& problem, const optimize::OptimizeResult& result,
                                  const std::optional<eval::Evaluation>& comparison, const std::string& comparison_error,
                                  const knowledge::KnowledgeBase& knowledge, bool with_compile) {
  ProblemResult r;
  r.name = problem.name;
  r.group = problem.group;
  r.file = problem.file;
  r.outcome = optimize::to_string(result.outcome);
  r.run_dir = result.run_dir;
  r.gpu = result.gpu;
  r.candidates = {result.figures.proposed, result.figures.correct, result.figures.faster};
  r.candidate_verdicts = candidate_verdicts(result);
  r.sol_ms = plan_bound_ms(result.plan);
  if (result.reference_timing) r.times.eager = summary_of(result.reference_timing->reference);
  if (result.outcome == optimize::Outcome::Error || result.outcome == optimize::Outcome::Cancelled) {
    r.error = result.message;
    return r;
  }

  const bool delivered = result.improved();
  if (delivered) {
    r.recipes = result.best->candidate.recipes;
    r.spaces = recipe_spaces(result.best->candidate, knowledge);
  }
  std::optional<double> delivered_ms;
  if (comparison && comparison->passed() && comparison->timing) {
    const eval::Timing& t = *comparison->timing;
    r.correct = true;
    r.times.eager = summary_of(t.reference);
    r.times.best = summary_of(t.candidate);
    // Nothing faster: the original is handed back, and it is the eager time.
    r.speedup_eager = delivered ? t.speedup : 1.0;
    delivered_ms = delivered ? t.candidate.median_ms : t.reference.median_ms;
    if (with_compile) {
      if (const auto it = t.baselines.find("compile"); it != t.baselines.end()) {
        r.times.compile = summary_of(it->second);
        if (*delivered_ms > 0) r.speedup_compile = it->second.median_ms / *delivered_ms;
      } else {
        const auto why = t.baseline_errors.find("compile");
        r.baseline_errors["compile"] = why != t.baseline_errors.end() ? why->second : "the worker returned no time for it";
      }
    }
  } else if (comparison && !comparison->job_failure) {
    // It ran and a check failed: on these fresh inputs the delivered code is wrong.
    r.error = "the delivered code failed verification side by side with the reference: " + first_failure(*comparison);
  } else {
    // The job itself failed: the optimizer's verification is the evidence left.
    r.error = "the side-by-side measurement did not run (" + (comparison ? first_failure(*comparison) : comparison_error) +
              "): times from the optimizer's own verification";
    if (delivered && result.best->evaluation.timing) {
      const eval::Timing& t = *result.best->evaluation.timing;
      r.correct = true;
      r.times.eager = summary_of(t.reference);
      r.times.best = summary_of(t.candidate);
      r.speedup_eager = result.best->speedup;
      delivered_ms = t.candidate.median_ms;
    } else if (!delivered && result.reference_timing) {
      r.correct = true;
      r.times.best = r.times.eager;
      r.speedup_eager = 1.0;
      delivered_ms = result.reference_timing->reference.median_ms;
    }
    if (with_compile) r.baseline_errors["compile"] = "not measured: the side-by-side job did not run";
  }
  // The side-by-side job judged exactly what is handed back; without it, the delivered form's verification.
  if (comparison && !comparison->job_failure && comparison->kernelbench) {
    r.kernelbench = comparison->kernelbench;
  } else if (delivered && (!comparison || comparison->job_failure)) {
    r.kernelbench = result.best->evaluation.kernelbench;
  }
  if (r.sol_ms && delivered_ms && *delivered_ms > 0) r.sol_fraction = *r.sol_ms / *delivered_ms;
  return r;
}

}  // namespace hiera::engine::bench
