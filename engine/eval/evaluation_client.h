#pragma once
// Typed calls over a WorkerPool: probe, compile, evaluate, profile, capture
// and deliver, with their parameters built and their results parsed
// (job_results.h), so engine code neither builds nor reads JSON. A job that
// fails as a job (a timeout, a crashed worker, an error reply, a
// cancellation, a malformed result) is folded into the result: an Evaluation
// with verdict Failed and one failure ("timeout", "runtime" or "cancelled"),
// a CompileResult that is not ok, a DeviceProbe, ProfileResult or
// CaptureResult that is not ok; job_failure keeps the details.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/common/cancellation.h"
#include "engine/eval/job_results.h"
#include "engine/eval/worker_pool.h"

namespace hiera::engine::eval {

struct EvaluateOptions {
  int trials = 5;
  int timing_trials = 50;
  std::int64_t seed = 1234;
  // Timed beside the reference and the candidate (PyTorch tasks): "compile" is
  // torch.compile of the reference. Its compilation is not timed but counts
  // toward the timeout (tens of seconds on a GPU): allow for it.
  std::vector<std::string> baselines;
  // Verification, timing and (for PyTorch tasks) the runner's first `import torch`.
  std::chrono::milliseconds timeout{std::chrono::minutes(2)};
  CancellationToken cancel;
  std::optional<std::size_t> worker;  // any worker when empty
  // Also apply KernelBench's correctness criterion (params "kernelbench":
  // true; Evaluation::kernelbench): the final verification of what is handed back.
  bool kernelbench = false;
};

struct CompileOptions {
  std::vector<std::string> options;  // NVRTC options, e.g. {"-O3"}
  std::optional<std::string> arch;   // "sm_90"; default: the worker device's
  int line_offset = 0;               // lines of prelude before the candidate's own first line
  std::chrono::milliseconds timeout{std::chrono::minutes(1)};
  CancellationToken cancel;
  std::optional<std::size_t> worker;
};

struct ProbeOptions {
  bool refresh = false;  // measure again instead of reading the worker's cache
  // A first probe measures copy bandwidth and GEMM throughput.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  CancellationToken cancel;
  std::optional<std::size_t> worker;
};

class EvaluationClient {
 public:
  // The pool must outlive the client and every future it returned.
  explicit EvaluationClient(WorkerPool& pool) : pool_(pool) {}

  // task: a Task object of JOB_PROTOCOL.md ("kind": "cuda" or "pytorch"), as engine/spec builds it.
  std::future<Evaluation> submit_evaluate(nlohmann::json task, EvaluateOptions options = {});
  Evaluation evaluate(nlohmann::json task, EvaluateOptions options = {});

  std::future<CompileResult> submit_compile(std::string source, CompileOptions options = {});
  CompileResult compile(std::string source, CompileOptions options = {});

  DeviceProbe probe(ProbeOptions options = {});
  // A per-kernel breakdown of one side ("reference" or "candidate") of a task.
  ProfileResult profile(nlohmann::json task, const std::string& which, EvaluateOptions options = {});
  // The reference forward of a task as an op graph (options.seed for its
  // construction and example inputs; trials, timing_trials and baselines unused).
  CaptureResult capture(nlohmann::json task, EvaluateOptions options = {});
  // A candidate in its standalone, delivered form, verified again in that form.
  Delivery deliver(nlohmann::json task, EvaluateOptions options = {});
  // One probe per worker (each GPU), run concurrently; options.worker is ignored.
  std::vector<DeviceProbe> probe_all(ProbeOptions options = {});
  // The torch version of each started worker whose handshake named one
  // (hello.pytorch.torch), in worker order; empty while none has.
  std::vector<std::string> torch_versions() const;

  // The conversions used above, public for callers that submit jobs themselves.
  static Evaluation to_evaluation(const JobOutcome& outcome);
  static CompileResult to_compile_result(const JobOutcome& outcome);
  static DeviceProbe to_probe(const JobOutcome& outcome);
  static ProfileResult to_profile(const JobOutcome& outcome);
  static CaptureResult to_capture(const JobOutcome& outcome);
  static Delivery to_delivery(const JobOutcome& outcome);

 private:
  WorkerPool& pool_;
};

}  // namespace hiera::engine::eval
