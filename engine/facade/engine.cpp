#include "engine/facade/engine.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <utility>

#include "engine/eval/evaluation_client.h"
#include "engine/eval/worker_pool.h"
#include "engine/optimize/allocation_progress.h"
#include "engine/spec/kernel_annotation_lines.h"
#include "engine/spec/spec_builder.h"

namespace hiera::engine::facade {

using nlohmann::json;

namespace {

template <typename T>
json optional_json(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

// Everything make_optimizer_setup reads, as one comparable text.
std::string config_key(const EngineConfig& config) {
  const auto& a = config.args;
  json key = {{"budget", optional_json(a.budget)},
              {"time_limit_s", optional_json(a.time_limit_s)},
              {"candidates_per_round", optional_json(a.candidates_per_round)},
              {"llm", a.llm},
              {"no_knowledge", a.no_knowledge},
              {"workers", a.workers},
              {"worker_argv", a.worker_argv},
              {"worker_count", optional_json(a.worker_count)},
              {"runs_dir", a.runs_dir},
              {"knowledge_dir", a.knowledge_dir},
              {"target_gpu", a.target_gpu},
              {"device", a.device},
              {"configuration", config.configuration}};
  if (a.endpoint) {
    const auto& e = *a.endpoint;
    key["endpoint"] = {{"name", e.name},
                       {"provider", std::string(propose::llm::to_string(e.provider))},
                       {"base_url", e.base_url},
                       {"model", e.model},
                       {"api_key_env", e.api_key_env},
                       {"timeout_ms", e.timeout.count()},
                       {"max_retries", e.max_retries},
                       {"max_concurrent", e.max_concurrent},
                       {"max_tokens", e.max_tokens},
                       {"temperature", e.temperature},
                       {"cache_dir", e.cache_dir ? json(e.cache_dir->string()) : json(nullptr)},
                       {"max_backoff_ms", e.max_backoff.count()},
                       {"max_reply_bytes", e.max_reply_bytes}};
  }
  return key.dump();
}

bool has_allocations(const eval::WorkerPoolOptions& pool) {
  for (const auto& a : pool.allocations) {
    if (a) return true;
  }
  return false;
}

// NoGpu when the workers, their handshakes in, have no GPU among them. A
// worker still starting after two minutes (or cancelled) leaves it to the
// run's probe, as does an allocation (its workers start when it runs).
void require_gpu(eval::WorkerPool& pool, const eval::WorkerPoolOptions& options, const CancellationToken& cancel) {
  if (has_allocations(options)) return;
  std::vector<eval::WorkerStatus> workers;
  for (int slice = 0; slice < 480 && !cancel.cancelled(); ++slice) {
    workers = pool.wait_started(std::chrono::milliseconds(250));
    if (std::none_of(workers.begin(), workers.end(), [](const auto& w) { return w.state == eval::WorkerState::Starting; })) break;
  }
  std::string answered;
  for (const auto& w : workers) {
    if (w.state == eval::WorkerState::Starting) return;
    if (!w.hello) continue;
    if (w.hello->device) return;
    answered += (answered.empty() ? "" : ", ") + eval::describe_command(w.command);
  }
  if (!answered.empty()) throw NoGpu("no GPU: no worker has one (" + answered + " answered without a CUDA device)");
}

// Whether a pool started for `before` serves `after` unchanged.
bool same_workers(const eval::WorkerPoolOptions& before, const eval::WorkerPoolOptions& after) {
  return before.commands == after.commands && before.secrets.names() == after.secrets.names() && !has_allocations(before) &&
         !has_allocations(after);
}

}  // namespace

// One configuration's setup and the pool serving it. Runs hold it (shared),
// so a configure() meanwhile leaves their knowledge, proposers and pool alone.
struct Engine::State {
  std::string key;
  optimize::OptimizerSetup setup;
  std::mutex pool_mutex;
  // Lazily started; destroyed before the setup (its allocations are released after the pool).
  std::shared_ptr<eval::WorkerPool> pool;
  std::shared_ptr<eval::EvaluationClient> client;
  ~State() {
    client.reset();
    pool.reset();  // the last holder of a pool shuts it down (WorkerPool's destructor)
  }
};

Engine::Engine(EngineOptions options) : options_(std::move(options)) {}

Engine::~Engine() {
  shutdown();
  std::shared_ptr<State> last;
  {
    std::lock_guard lock(mutex_);
    last = std::move(state_);
  }
}

void Engine::configure(const EngineConfig& config) { configured_state(config); }

bool Engine::configured() const { return current() != nullptr; }

std::shared_ptr<Engine::State> Engine::current() const {
  std::lock_guard lock(mutex_);
  return state_;
}

std::shared_ptr<Engine::State> Engine::configured_state(const EngineConfig& config) {
  const std::string key = config_key(config);
  std::shared_ptr<State> replaced;  // released outside the lock: its pool may shut down (blocks)
  std::lock_guard lock(mutex_);
  if (state_ && state_->key == key) return state_;
  optimize::OptimizerSetupArgs args = config.args;
  args.allocation_notices = notices_;  // the engine's one channel, subscribed to before this
  auto next = std::make_shared<State>();
  next->key = key;
  next->setup = optimize::make_optimizer_setup(args, config.configuration, options_.exe, options_.name, options_.default_runs_dir);
  if (state_) {
    std::lock_guard pool_lock(state_->pool_mutex);
    if (state_->pool && same_workers(state_->setup.pool, next->setup.pool)) {
      next->pool = state_->pool;  // the same workers: keep them running
      next->client = state_->client;
    }
  }
  replaced = std::exchange(state_, next);
  return next;
}

std::shared_ptr<eval::WorkerPool> Engine::pool_of(State& state) {
  std::lock_guard lock(state.pool_mutex);
  if (!state.pool) {
    state.pool = std::make_shared<eval::WorkerPool>(state.setup.pool);
    state.client = std::make_shared<eval::EvaluationClient>(*state.pool);
    ++pools_started_;
  }
  return state.pool;
}

namespace {
std::logic_error not_configured() { return std::logic_error("hiera engine: not configured"); }
}  // namespace

optimize::OptimizeOptions Engine::default_options() const {
  const auto state = current();
  if (!state) throw not_configured();
  return state->setup.options;
}

std::vector<std::string> Engine::proposer_names() const {
  const auto state = current();
  if (!state) throw not_configured();
  std::vector<std::string> names;
  for (const auto& p : state->setup.proposers) names.push_back(p->name());
  return names;
}

std::shared_ptr<const knowledge::KnowledgeBase> Engine::knowledge() const {
  const auto state = current();
  if (!state) throw not_configured();
  return state->setup.knowledge;
}

std::size_t Engine::worker_count() const {
  const auto state = current();
  if (!state) throw not_configured();
  return state->setup.pool.commands.size();
}

optimize::OptimizeResult Engine::run_on(const std::shared_ptr<State>& state, const optimize::OptimizeOptions& options,
                                        const optimize::ProgressCallback& progress, const CancellationToken& cancel) {
  // The allocation watch before the pool: its workers start waiting for their allocation at once.
  optimize::AllocationProgress shown(notices_, [&progress](const optimize::OptimizeProgress& p) {
    if (progress) progress(p);
  });
  const auto pool = pool_of(*state);
  optimize::Optimizer optimizer(*pool, *state->setup.knowledge, state->setup.proposers);
  auto result = optimizer.run(options, shown.callback(), cancel);
  shown.stop();  // nothing shown once the run is over
  if (has_allocations(state->setup.pool)) {
    // Not kept: the allocation is released when the last run on it ends
    // (its State goes), not held while the front end idles.
    std::lock_guard lock(mutex_);
    if (state_ == state) state_.reset();
  }
  return result;
}

optimize::OptimizeResult Engine::optimize(const optimize::OptimizeOptions& options, const optimize::ProgressCallback& progress,
                                          const CancellationToken& cancel) {
  const auto state = current();
  if (!state) throw not_configured();
  return run_on(state, options, progress, cancel);
}

optimize::OptimizeResult Engine::run(const EngineConfig& config, const RunRequest& request,
                                     const optimize::ProgressCallback& progress, const CancellationToken& cancel) {
  const auto state = configured_state(config);
  optimize::OptimizeOptions options = state->setup.options;
  options.target = request.target;
  if (request.spec_configuration) options.configuration = *request.spec_configuration;
  options.measure_only = request.measure_only;
  if (!state->setup.cpu_run) require_gpu(*pool_of(*state), state->setup.pool, cancel);
  return run_on(state, options, progress, cancel);
}

SpecPage Engine::show_spec(const optimize::Target& target, const json& configuration) {
  spec::SpecInputs inputs;  // as the optimizer builds it before probing
  inputs.target = target.name();
  inputs.kind = target.kind;
  inputs.source = target.source;
  if (target.kind == spec::TargetKind::Cuda) {
    const spec::LineRange lines = spec::target_annotation_lines(target.source, target.symbol);
    inputs.first_line = lines.first;
    inputs.last_line = lines.last;
  }
  inputs.configuration = configuration.is_object() ? configuration : json::object();
  const auto built = spec::build_spec(inputs);
  SpecPage page;
  page.markdown = "# Task spec: " + target.name() + "\n\n" + built.spec.to_markdown();
  if (!built.ok()) {
    page.markdown += "\n## Problems\n\n";
    for (const auto& p : built.problems) {
      page.markdown += "- " + p.to_string() + "\n";
      page.problems.push_back(p.to_string());
    }
  }
  return page;
}

bench::BenchServices Engine::bench_services() {
  const auto state = current();
  if (!state) throw not_configured();
  const auto pool = pool_of(*state);
  std::shared_ptr<eval::EvaluationClient> client;
  {
    std::lock_guard lock(state->pool_mutex);
    client = state->client;
  }
  bench::BenchServices services;
  services.optimize = [state, pool](const optimize::OptimizeOptions& options, const optimize::ProgressCallback& progress,
                                    const CancellationToken& cancel) {
    optimize::Optimizer optimizer(*pool, *state->setup.knowledge, state->setup.proposers);
    return optimizer.run(options, progress, cancel);
  };
  services.evaluate = [client](json task, eval::EvaluateOptions options) {
    return client->evaluate(std::move(task), std::move(options));
  };
  services.gpu = [client](const CancellationToken& cancel) {
    eval::ProbeOptions options;
    options.cancel = cancel;
    const eval::DeviceProbe probe = client->probe(options);
    return probe.ok() ? probe.name : std::string("cpu");
  };
  return services;
}

void Engine::shutdown() {
  std::shared_ptr<eval::WorkerPool> pool;
  std::shared_ptr<State> dropped;  // a setup with allocations: they go with it, after the pool
  if (const auto state = current()) {
    if (has_allocations(state->setup.pool)) {
      std::lock_guard lock(mutex_);
      if (state_ == state) dropped = std::move(state_);
    }
    std::lock_guard lock(state->pool_mutex);
    pool = std::move(state->pool);
    state->client.reset();
  }
  if (pool) pool->shutdown();  // runs still holding it see their jobs cancelled
}

int Engine::pools_started() const { return pools_started_.load(); }

}  // namespace hiera::engine::facade
