#include "engine/eval/evaluation_client.h"

#include <exception>
#include <memory>
#include <utility>

namespace hiera::engine::eval {

using nlohmann::json;

namespace {

JobRecord record_of(const JobOutcome& outcome) {
  return JobRecord{outcome.worker, outcome.worker_command, outcome.worker_pid, outcome.queued, outcome.ran};
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

Job probe_job(const ProbeOptions& options, std::optional<std::size_t> worker) {
  Job job;
  job.method = "probe";
  job.params = options.refresh ? json{{"refresh", true}} : json::object();
  job.timeout = options.timeout;
  job.cancel = options.cancel;
  job.worker = worker;
  return job;
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
  Evaluation evaluation;
  std::optional<WorkerFailure> failure = outcome.failure;
  if (!failure) {
    try {
      evaluation = parse_evaluation(outcome.result);
    } catch (const MalformedResult& error) {
      failure = malformed("evaluate", error);
    }
  }
  if (failure) {
    evaluation = Evaluation{};
    evaluation.verdict = Verdict::Failed;
    evaluation.failures.push_back(CheckFailure{check_for(*failure), failure->message});
    evaluation.job_failure = std::move(failure);
  }
  evaluation.record = record_of(outcome);
  return evaluation;
}

CompileResult EvaluationClient::to_compile_result(const JobOutcome& outcome) {
  CompileResult compiled;
  std::optional<WorkerFailure> failure = outcome.failure;
  if (!failure) {
    try {
      compiled = parse_compile_result(outcome.result);
    } catch (const MalformedResult& error) {
      failure = malformed("compile", error);
    }
  }
  if (failure) {
    compiled = CompileResult{};
    compiled.log = failure->message;
    compiled.job_failure = std::move(failure);
  }
  compiled.record = record_of(outcome);
  return compiled;
}

DeviceProbe EvaluationClient::to_probe(const JobOutcome& outcome) {
  DeviceProbe probe;
  std::optional<WorkerFailure> failure = outcome.failure;
  if (!failure) {
    try {
      probe = parse_probe(outcome.result);
    } catch (const MalformedResult& error) {
      failure = malformed("probe", error);
    }
  }
  if (failure) {
    probe = DeviceProbe{};
    probe.job_failure = std::move(failure);
  }
  probe.record = record_of(outcome);
  return probe;
}

ProfileResult EvaluationClient::to_profile(const JobOutcome& outcome) {
  ProfileResult profile;
  std::optional<WorkerFailure> failure = outcome.failure;
  if (!failure) {
    try {
      profile = parse_profile(outcome.result);
    } catch (const MalformedResult& error) {
      failure = malformed("profile", error);
    }
  }
  if (failure) {
    profile = ProfileResult{};
    profile.job_failure = std::move(failure);
  }
  profile.record = record_of(outcome);
  return profile;
}

Delivery EvaluationClient::to_delivery(const JobOutcome& outcome) {
  Delivery delivery;
  std::optional<WorkerFailure> failure = outcome.failure;
  if (!failure) {
    try {
      delivery = parse_delivery(outcome.result);
    } catch (const MalformedResult& error) {
      failure = malformed("deliver", error);
    }
  }
  if (failure) {
    // The same folding as an evaluate job that failed as a job.
    JobOutcome failed = outcome;
    failed.failure = std::move(failure);
    delivery = Delivery{{}, to_evaluation(failed)};
  }
  delivery.evaluation.record = record_of(outcome);
  return delivery;
}

std::future<Evaluation> EvaluationClient::submit_evaluate(json task, EvaluateOptions options) {
  Job job;
  job.method = "evaluate";
  job.params = json{{"task", std::move(task)},
                    {"trials", options.trials},
                    {"timing_trials", options.timing_trials},
                    {"seed", options.seed}};
  job.timeout = options.timeout;
  job.cancel = options.cancel;
  job.worker = options.worker;
  return submit_converted<Evaluation>(pool_, std::move(job), &EvaluationClient::to_evaluation);
}

Evaluation EvaluationClient::evaluate(json task, EvaluateOptions options) {
  return submit_evaluate(std::move(task), std::move(options)).get();
}

ProfileResult EvaluationClient::profile(json task, const std::string& which, EvaluateOptions options) {
  Job job;
  job.method = "profile";
  job.params = json{{"task", std::move(task)}, {"which", which}};
  job.timeout = options.timeout;
  job.cancel = options.cancel;
  job.worker = options.worker;
  return submit_converted<ProfileResult>(pool_, std::move(job), &EvaluationClient::to_profile).get();
}

Delivery EvaluationClient::deliver(json task, EvaluateOptions options) {
  Job job;
  job.method = "deliver";
  job.params = json{{"task", std::move(task)},
                    {"trials", options.trials},
                    {"timing_trials", options.timing_trials},
                    {"seed", options.seed}};
  job.timeout = options.timeout;
  job.cancel = options.cancel;
  job.worker = options.worker;
  return submit_converted<Delivery>(pool_, std::move(job), &EvaluationClient::to_delivery).get();
}

std::future<CompileResult> EvaluationClient::submit_compile(std::string source, CompileOptions options) {
  Job job;
  job.method = "compile";
  job.params = json{{"source", std::move(source)}, {"options", options.options}, {"line_offset", options.line_offset}};
  if (options.arch) job.params["arch"] = *options.arch;
  job.timeout = options.timeout;
  job.cancel = options.cancel;
  job.worker = options.worker;
  return submit_converted<CompileResult>(pool_, std::move(job), &EvaluationClient::to_compile_result);
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

}  // namespace hiera::engine::eval
