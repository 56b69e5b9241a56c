#pragma once
// Runs the problems of a suite: each through the optimizer, then the final
// side-by-side comparison (comparison.h), each result written to
// OUT/problems/ the moment it is known. Problems run concurrently, up to
// `concurrency` at once (one per worker: each run's jobs share the pool). A
// problem with a reusable stored result (result_store.h) is not run again
// unless `force`. Cancelling stops new problems and ends the running ones;
// what finished stays on disk, what was cut short is not recorded.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/bench/bench_progress.h"
#include "engine/bench/problem.h"
#include "engine/bench/problem_result.h"
#include "engine/common/cancellation.h"
#include "engine/eval/evaluation_client.h"
#include "engine/eval/job_results.h"
#include "engine/knowledge/knowledge_base.h"
#include "engine/optimize/optimizer.h"

namespace hiera::engine::bench {

struct BenchSettings {
  std::filesystem::path out_dir;
  std::vector<std::string> baselines{"eager"};  // "compile" adds torch.compile(reference)
  bool force = false;
  int concurrency = 1;  // the pool size: problems at once, and the `workers` each result records
  std::string commit = "unknown";
  nlohmann::json options = nlohmann::json::object();  // the fingerprint a reused result must share
  optimize::OptimizeOptions optimize;                 // every field but the target
  bool with_compile() const;
};

// What the runner needs from the outside world, so tests can stand in for it.
struct BenchServices {
  std::function<optimize::OptimizeResult(const optimize::OptimizeOptions&, const optimize::ProgressCallback&,
                                         const CancellationToken&)>
      optimize;
  std::function<eval::Evaluation(nlohmann::json task, eval::EvaluateOptions options)> evaluate;
  std::function<std::string(const CancellationToken&)> gpu;  // the device the workers measure on, or "cpu"
};

struct BenchRun {
  std::string gpu;
  std::vector<ProblemResult> results;  // the finished problems, in suite order
  int reused = 0;
  int ran = 0;
  bool cancelled = false;              // some problems did not finish
  std::vector<std::string> errors;     // results that could not be written
};

class BenchRunner {
 public:
  // The knowledge base must outlive the runner.
  BenchRunner(BenchServices services, const knowledge::KnowledgeBase& knowledge);

  BenchRun run(const std::vector<Problem>& problems, const BenchSettings& settings, const BenchProgressCallback& progress = {},
               const CancellationToken& cancel = {});

 private:
  BenchServices services_;
  const knowledge::KnowledgeBase& knowledge_;
};

}  // namespace hiera::engine::bench
