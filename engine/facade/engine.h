#pragma once
// The engine facade: what the CLI (`hiera optimize`, `hiera bench`) and the
// LSP server's jobs call, in editor-neutral types, instead of each building
// its own setup, worker pool and optimizer (rust-analyzer's `ide` crate,
// clangd's ClangdServer). One Engine owns, for its whole life:
// - the setup (knowledge base, proposers, optimizer options), built from an
//   EngineConfig when it is first given and again only when it changes;
// - one worker pool, started lazily by the first run that needs a worker and
//   kept for the runs after it (concurrent runs share it); restarted only when
//   a new configuration gives other worker commands. A configuration whose
//   workers run inside an allocation (a Slurm job) is the exception: its pool
//   and allocation go when the last run on them ends, and the next run
//   submits a new one (an allocation is not held while the front end idles);
// - one channel for worker allocations' news (notices()), for its whole life,
//   so a front end subscribes once, before the first run.
// The ordering rules the front ends used to repeat are kept here: the
// allocation watch (AllocationProgress) before the pool starts, the run's
// progress stopped before the pool may be shut down, the pool shut down
// before the setup (and its allocations) goes.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <atomic>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/bench/bench_runner.h"
#include "engine/common/cancellation.h"
#include "engine/eval/allocation_notices.h"
#include "engine/facade/no_gpu.h"
#include "engine/knowledge/knowledge_base.h"
#include "engine/optimize/optimize_progress.h"
#include "engine/optimize/optimize_result.h"
#include "engine/optimize/optimizer.h"
#include "engine/optimize/optimizer_setup.h"
#include "engine/optimize/target.h"

namespace hiera::engine::facade {

// Fixed for an engine's life.
struct EngineOptions {
  std::filesystem::path exe;                       // the default worker is `<exe> worker`; knowledge found beside it
  std::string name = "hiera";                      // prefixes the knowledge base's problems ("hiera optimize")
  std::filesystem::path default_runs_dir = ".hiera/runs";  // when neither the args nor the configuration say
};

// What a front end maps its flags or settings onto.
struct EngineConfig {
  optimize::OptimizerSetupArgs args;  // allocation_notices is ignored: the engine's own channel is used
  nlohmann::json configuration = nlohmann::json::object();  // the configuration file (load_configuration)
};

// The task spec of a target as the optimizer builds it before probing (no worker).
struct SpecPage {
  std::string markdown;               // "# Task spec: <target>" ... with a "## Problems" section when any
  std::vector<std::string> problems;  // empty: the spec is complete
  bool ok() const { return problems.empty(); }
};

// One run of the configured optimizer.
struct RunRequest {
  optimize::Target target;
  // Replaces the setup's spec configuration (OptimizeOptions::configuration) when set.
  std::optional<nlohmann::json> spec_configuration;
  // The reference only: baseline, profile and plan, no candidates (an editor's "profile").
  bool measure_only = false;
};

class Engine {
 public:
  explicit Engine(EngineOptions options);
  ~Engine();  // shutdown()
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Worker allocations' news (a Slurm job submitted, pending, running,
  // cancelled) of every configuration this engine is given.
  const eval::AllocationNotices& notices() const { return notices_; }

  // Takes effect for the runs started after it. Rebuilds the setup only when
  // `config` differs from the current one; the pool restarts (lazily) only
  // when the worker commands or allocations differ. Throws what
  // make_optimizer_setup throws (the current setup is then kept).
  void configure(const EngineConfig& config);
  bool configured() const;

  // The current setup's optimizer options (every field but the target), its
  // proposers' names, its knowledge base and how many workers its pool has
  // (started or not). Throw std::logic_error before configure().
  optimize::OptimizeOptions default_options() const;
  std::vector<std::string> proposer_names() const;
  std::shared_ptr<const knowledge::KnowledgeBase> knowledge() const;
  std::size_t worker_count() const;

  // Runs the optimizer on the engine's pool (started here when it is not).
  // `progress` has the allocations' waits folded in (OptimizeProgress::waiting,
  // allocation_progress.h) and is not called after this returns. Never throws
  // for a bad target or failing candidates (Outcome::Error).
  optimize::OptimizeResult optimize(const optimize::OptimizeOptions& options, const optimize::ProgressCallback& progress = {},
                                    const CancellationToken& cancel = {});
  // configure(config), then optimize() with the setup's options and the
  // request's target, spec configuration and measure_only, atomically: a
  // concurrent configure() does not change what this run uses. Throws what
  // configure() throws, and NoGpu (no_gpu.h) before the run when every worker
  // that answered its handshake has no GPU and no CPU run was asked for.
  optimize::OptimizeResult run(const EngineConfig& config, const RunRequest& request,
                               const optimize::ProgressCallback& progress = {}, const CancellationToken& cancel = {});

  // The task spec `target` gets under `configuration` (the spec settings), as
  // the optimizer builds it before probing. Needs neither setup nor worker.
  static SpecPage show_spec(const optimize::Target& target, const nlohmann::json& configuration);

  // What engine/bench's runner needs, bound to this engine's current setup and
  // pool (started here); valid while the engine lives.
  bench::BenchServices bench_services();

  // Queued and running jobs end cancelled; the next run starts a new pool (a
  // setup with allocations is dropped too: configure again). Blocks.
  void shutdown();

  // How many worker pools this engine has started (tests: runs reuse one).
  int pools_started() const;

 private:
  struct State;
  std::shared_ptr<State> configured_state(const EngineConfig& config);
  std::shared_ptr<State> current() const;
  std::shared_ptr<eval::WorkerPool> pool_of(State& state);
  optimize::OptimizeResult run_on(const std::shared_ptr<State>& state, const optimize::OptimizeOptions& options,
                                  const optimize::ProgressCallback& progress, const CancellationToken& cancel);

  EngineOptions options_;
  eval::AllocationNotices notices_;
  mutable std::mutex mutex_;
  std::shared_ptr<State> state_;
  std::atomic<int> pools_started_{0};
};

}  // namespace hiera::engine::facade
