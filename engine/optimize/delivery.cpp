#include "engine/optimize/delivery.h"

#include <algorithm>

namespace hiera::engine::optimize {

using nlohmann::json;

namespace {

// One candidate in its delivered form, evaluated (verified again) on a fresh seed.
BestResult delivered_form(RunContext& run, eval::EvaluationClient& client, const ReferenceFacts& facts,
                          const spec::TaskSpec& spec, const propose::Candidate& candidate) {
  const Target& target = run.options.target;
  eval::EvaluateOptions o = facts.evaluate_options;
  o.seed = run.options.seed + 7777;
  // A delivered module builds its kernels with load_inline: about a minute cold per source.
  o.timeout = std::max<std::chrono::milliseconds>(o.timeout, std::chrono::minutes(10));
  // KernelBench's own criterion beside hiera's verdict, for the report (PyTorch modules: its format).
  o.kernelbench = target.kind == spec::TargetKind::Pytorch;
  o.baselines = run.options.delivery_baselines;
  BestResult best;
  best.candidate = candidate;
  const json task = candidate_task(spec, facts.reference_source, candidate.source, candidate.kernel, facts.device);
  if (target.kind == spec::TargetKind::Pytorch) {
    eval::Delivery delivery = client.deliver(task, o);
    best.delivered_source = delivery.source;
    best.evaluation = std::move(delivery.evaluation);
  } else {
    best.delivered_source = candidate.source;  // a kernel is delivered as its source
    best.evaluation = client.evaluate(task, o);
  }
  return best;
}

}  // namespace

std::optional<BestResult> deliver(RunContext& run, eval::EvaluationClient& client, const ReferenceFacts& facts,
                                  const spec::TaskSpec& spec, std::vector<std::size_t> faster) {
  const OptimizeResult& result = run.result;
  std::sort(faster.begin(), faster.end(), [&](std::size_t a, std::size_t b) {
    return *result.attempts[a].attempt.speedup > *result.attempts[b].attempt.speedup;
  });
  std::optional<BestResult> delivered;
  run.clock.enter("delivery");
  for (std::size_t rank = 0; rank < faster.size() && rank < kDeliveryTries; ++rank) {
    throw_if_cancelled(run.cancel);
    const propose::Candidate& candidate = result.attempts[faster[rank]].attempt.candidate;
    run.report("deliver", "verifying " + candidate.id + " in its delivered form");
    BestResult best = delivered_form(run, client, facts, spec, candidate);
    run.clock.delivery(best.evaluation);
    run.log->write("delivery", {{"id", candidate.id}, {"evaluation", evaluation_json(best.evaluation)}});
    if (!best.evaluation.passed() || !best.evaluation.timing) {
      run.decide(candidate.id + " failed verification in its delivered form: " +
                 (best.evaluation.failures.empty() ? std::string("no timing") : failure_text(best.evaluation.failures.front())));
      continue;
    }
    best.speedup = best.evaluation.timing->speedup;
    const std::string extension = run.options.target.kind == spec::TargetKind::Pytorch ? ".py" : ".cu";
    best.file = run.log->write_file("best" + extension, best.delivered_source);
    delivered = std::move(best);
    break;
  }
  run.clock.leave();
  return delivered;
}

Ending delivered_ending(const OptimizeResult& result) {
  if (result.best) {
    return {Outcome::Improved, result.best->candidate.id + " is " + fixed(result.best->speedup, 2) +
                                   "x faster than the reference, verified in its delivered form"};
  }
  return {Outcome::NoImprovement, std::to_string(result.figures.proposed) + " candidates tried, " +
                                      std::to_string(result.figures.correct) + " correct, none verified faster"};
}

}  // namespace hiera::engine::optimize
