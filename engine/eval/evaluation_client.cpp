#include "engine/eval/evaluation_client.h"

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace hiera::engine::eval {

using nlohmann::json;

namespace {

JobRecord record_of(const JobOutcome& outcome) {
  return JobRecord{outcome.worker, outcome.worker_command, outcome.worker_pid, outcome.queued, outcome.ran,
                   outcome.lost_attempts};
}

WorkerFailure malformed(const std::string& method, const MalformedResult& error) {
  WorkerFailure failure;
  failure.kind = WorkerFailureKind::Protocol;
  failure.message = "worker sent a malformed " + method + " result: " + error.what();
  return failure;
}

// The check a failed job counts as, in an Evaluation's failure list.
std::string check_for(const WorkerFailure& failure) {
  switch (failure.kind) {
    case WorkerFailureKind::Timeout: return "timeout";
    case WorkerFailureKind::Cancelled: return "cancelled";
    default: return "runtime";
  }
}

// A job of this method, under the options' timeout and cancellation, on this worker.
template <typename Options>
Job job_of(std::string method, json params, const Options& options, std::optional<std::size_t> worker) {
  Job job;
  job.method = std::move(method);
  job.params = std::move(params);
  job.timeout = options.timeout;
  job.cancel = options.cancel;
  job.worker = worker;
  return job;
}

// evaluate and deliver: the task with its trials and seed.
Job trials_job(std::string method, json task, const EvaluateOptions& options) {
  json params{{"task", std::move(task)},
              {"trials", options.trials},
              {"timing_trials", options.timing_trials},
              {"seed", options.seed}};
  if (!options.baselines.empty()) params["baselines"] = options.baselines;
  if (options.kernelbench) params["kernelbench"] = true;
  return job_of(std::move(method), std::move(params), options, options.worker);
}

Job probe_job(const ProbeOptions& options, std::optional<std::size_t> worker) {
  return job_of("probe", options.refresh ? json{{"refresh", true}} : json::object(), options, worker);
}

// Where a result keeps its job record: its own, or a Delivery its evaluation's.
template <typename Result>
JobRecord& record_in(Result& result) {
  return result.record;
}
JobRecord& record_in(Delivery& delivery) { return delivery.evaluation.record; }

// A result that says only that its job failed.
template <typename Result>
Result failed_job(WorkerFailure failure) {
  Result result;
  result.job_failure = std::move(failure);
  return result;
}

// Every to_*: the job's result as `parse` reads it; or, when the job failed or
// its result is malformed (a Protocol failure naming the method), what `fold`
// makes of the failure. Either way with the job's record.
template <typename Parse, typename Fold>
auto parse_or_fold(const JobOutcome& outcome, const char* method, Parse parse, Fold fold) {
  using Result = decltype(parse(outcome.result));
  std::optional<Result> result;
  std::optional<WorkerFailure> failure = outcome.failure;
  if (!failure) {
    try {
      result = parse(outcome.result);
    } catch (const MalformedResult& error) {
      failure = malformed(method, error);
    }
  }
  if (!result) result = fold(std::move(*failure));
  record_in(*result) = record_of(outcome);
  return std::move(*result);
}

// Runs a job and converts its outcome on the pool thread that finishes it.
template <typename Result>
std::future<Result> submit_converted(WorkerPool& pool, Job job, Result (*convert)(const JobOutcome&)) {
  auto promise = std::make_shared<std::promise<Result>>();
  auto future = promise->get_future();
  pool.submit(std::move(job), [promise, convert](JobOutcome outcome) {
    try {
      promise->set_value(convert(outcome));
    } catch (...) {
      promise->set_exception(std::current_exception());  // the caller's get() sees it, rather than a broken promise
    }
  });
  return future;
}

}  // namespace

Evaluation EvaluationClient::to_evaluation(const JobOutcome& outcome) {
  return parse_or_fold(outcome, "evaluate", parse_evaluation, [](WorkerFailure failure) {
    Evaluation evaluation;
    evaluation.verdict = Verdict::Failed;
    evaluation.failures.push_back(CheckFailure{check_for(failure), failure.message});
    evaluation.job_failure = std::move(failure);
    return evaluation;
  });
}

CompileResult EvaluationClient::to_compile_result(const JobOutcome& outcome) {
  return parse_or_fold(outcome, "compile", parse_compile_result, [](WorkerFailure failure) {
    CompileResult compiled;
    compiled.log = failure.message;
    compiled.job_failure = std::move(failure);
    return compiled;
  });
}

DeviceProbe EvaluationClient::to_probe(const JobOutcome& outcome) {
  return parse_or_fold(outcome, "probe", parse_probe, failed_job<DeviceProbe>);
}

ProfileResult EvaluationClient::to_profile(const JobOutcome& outcome) {
  return parse_or_fold(outcome, "profile", parse_profile, failed_job<ProfileResult>);
}

CaptureResult EvaluationClient::to_capture(const JobOutcome& outcome) {
  return parse_or_fold(outcome, "capture", parse_capture, failed_job<CaptureResult>);
}

Delivery EvaluationClient::to_delivery(const JobOutcome& outcome) {
  return parse_or_fold(outcome, "deliver", parse_delivery, [&outcome](WorkerFailure failure) {
    // The same folding as an evaluate job that failed as a job.
    JobOutcome failed = outcome;
    failed.failure = std::move(failure);
    return Delivery{{}, to_evaluation(failed)};
  });
}

std::future<Evaluation> EvaluationClient::submit_evaluate(json task, EvaluateOptions options) {
  return submit_converted<Evaluation>(pool_, trials_job("evaluate", std::move(task), options),
                                      &EvaluationClient::to_evaluation);
}

Evaluation EvaluationClient::evaluate(json task, EvaluateOptions options) {
  return submit_evaluate(std::move(task), std::move(options)).get();
}

ProfileResult EvaluationClient::profile(json task, const std::string& which, EvaluateOptions options) {
  Job job = job_of("profile", json{{"task", std::move(task)}, {"which", which}}, options, options.worker);
  return submit_converted<ProfileResult>(pool_, std::move(job), &EvaluationClient::to_profile).get();
}

CaptureResult EvaluationClient::capture(json task, EvaluateOptions options) {
  Job job = job_of("capture", json{{"task", std::move(task)}, {"seed", options.seed}}, options, options.worker);
  return submit_converted<CaptureResult>(pool_, std::move(job), &EvaluationClient::to_capture).get();
}

Delivery EvaluationClient::deliver(json task, EvaluateOptions options) {
  return submit_converted<Delivery>(pool_, trials_job("deliver", std::move(task), options), &EvaluationClient::to_delivery)
      .get();
}

std::future<CompileResult> EvaluationClient::submit_compile(std::string source, CompileOptions options) {
  json params{{"source", std::move(source)}, {"options", options.options}, {"line_offset", options.line_offset}};
  if (options.arch) params["arch"] = *options.arch;
  return submit_converted<CompileResult>(pool_, job_of("compile", std::move(params), options, options.worker),
                                         &EvaluationClient::to_compile_result);
}

CompileResult EvaluationClient::compile(std::string source, CompileOptions options) {
  return submit_compile(std::move(source), std::move(options)).get();
}

DeviceProbe EvaluationClient::probe(ProbeOptions options) {
  return submit_converted<DeviceProbe>(pool_, probe_job(options, options.worker), &EvaluationClient::to_probe).get();
}

std::vector<DeviceProbe> EvaluationClient::probe_all(ProbeOptions options) {
  std::vector<std::future<DeviceProbe>> pending;
  for (std::size_t i = 0; i < pool_.size(); ++i) {
    pending.push_back(submit_converted<DeviceProbe>(pool_, probe_job(options, i), &EvaluationClient::to_probe));
  }
  std::vector<DeviceProbe> probes;
  for (auto& future : pending) probes.push_back(future.get());
  return probes;
}

std::vector<std::string> EvaluationClient::torch_versions() const {
  std::vector<std::string> out;
  for (const auto& worker : pool_.status()) {
    if (worker.hello && worker.hello->pytorch && !worker.hello->pytorch->torch.empty()) out.push_back(worker.hello->pytorch->torch);
  }
  return out;
}

}  // namespace hiera::engine::eval
