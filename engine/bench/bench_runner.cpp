#include "engine/bench/bench_runner.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "engine/bench/comparison.h"
#include "engine/bench/result_store.h"
#include "engine/bench/wall_time.h"
#include "engine/common/sha256.h"

namespace hiera::engine::bench {

namespace {

std::optional<std::string> read_source(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The counts every progress update carries, shared by the problem threads.
class Tally {
 public:
  Tally(int total, const BenchProgressCallback& callback) : callback_(callback) { state_.total = total; }
  void started() { change([](BenchProgress& s) { ++s.running; }); }
  void step(const std::string& problem, const optimize::OptimizeProgress& step) {
    change([](BenchProgress&) {}, problem, step);
  }
  void finished(const std::string& problem, const ProblemResult& result, bool reused, bool was_running) {
    optimize::OptimizeProgress step;
    step.phase = reused ? "reused" : "done";
    step.message = result.outcome + (result.speedup_eager ? ", " + format_speedup(*result.speedup_eager) : std::string());
    change([&](BenchProgress& s) {
      ++s.finished;
      s.reused += reused ? 1 : 0;
      s.correct += result.correct ? 1 : 0;
      s.running -= was_running ? 1 : 0;
    }, problem, step);
  }
  void stopped() { change([](BenchProgress& s) { --s.running; }); }

 private:
  static std::string format_speedup(double speedup) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2fx", speedup);
    return text;
  }
  template <typename Update>
  void change(Update update, const std::string& problem = {}, const optimize::OptimizeProgress& step = {}) {
    std::lock_guard lock(mutex_);
    update(state_);
    if (!callback_ || step.phase.empty()) return;  // a count changed with nothing to say
    BenchProgress p = state_;
    p.problem = problem;
    p.step = step;
    callback_(p);
  }
  const BenchProgressCallback& callback_;
  std::mutex mutex_;
  BenchProgress state_;
};

}  // namespace

bool BenchSettings::with_compile() const {
  return std::find(baselines.begin(), baselines.end(), "compile") != baselines.end();
}

BenchRunner::BenchRunner(BenchServices services, const knowledge::KnowledgeBase& knowledge)
    : services_(std::move(services)), knowledge_(knowledge) {}

BenchRun BenchRunner::run(const std::vector<Problem>& problems, const BenchSettings& settings,
                          const BenchProgressCallback& progress, const CancellationToken& cancel) {
  BenchRun run;
  Tally tally(static_cast<int>(problems.size()), progress);
  optimize::OptimizeProgress probing;
  probing.phase = "probe";
  probing.message = "starting the workers and probing their device";
  tally.step({}, probing);
  run.gpu = services_.gpu ? services_.gpu(cancel) : "cpu";
  const ResultStore store(settings.out_dir);
  std::vector<std::optional<ProblemResult>> results(problems.size());
  std::atomic<std::size_t> next{0};
  std::mutex mutex;  // run.reused, run.ran, run.errors

  auto record = [&](ProblemResult& result, const Provenance& provenance) {
    result.gpu = provenance.gpu;
    result.commit = provenance.commit;
    result.source_sha256 = provenance.source_sha256;
    result.options = provenance.options;
    try {
      store.save(result);
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex);
      run.errors.push_back(e.what());
    }
  };

  auto work = [&] {
    for (std::size_t i = next++; i < problems.size() && !cancel.cancelled(); i = next++) {
      const Problem& problem = problems[i];
      const std::optional<std::string> source = read_source(problem.file);
      Provenance provenance{run.gpu, settings.commit, source ? sha256_hex(*source) : std::string(), settings.options};
      if (!settings.force && source) {
        StoredResult stored = store.load(problem, provenance);
        if (stored.reusable) {
          tally.finished(problem.id(), *stored.reusable, true, false);
          std::lock_guard lock(mutex);
          ++run.reused;
          results[i] = std::move(stored.reusable);
          continue;
        }
      }
      tally.started();
      ProblemResult result;
      const std::string started_at = iso8601_utc_ms(std::chrono::system_clock::now());
      const auto problem_start = std::chrono::steady_clock::now();
      const auto seconds_since = [](std::chrono::steady_clock::time_point start) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      };
      try {
        optimize::OptimizeOptions options = settings.optimize;
        options.target = optimize::load_target(problem.file.string());
        for (const auto& b : settings.baselines) {
          if (b != "eager") options.delivery_baselines.push_back(b);
        }
        const optimize::OptimizeResult optimized = services_.optimize(
            options, [&](const optimize::OptimizeProgress& p) { tally.step(problem.id(), p); }, cancel);
        if (optimized.outcome == optimize::Outcome::Cancelled || cancel.cancelled()) {
          tally.stopped();
          continue;  // cut short: not a result, the next run does it again
        }
        std::optional<eval::Evaluation> comparison;
        std::optional<double> measure_s;
        std::string comparison_error;
        comparison = delivery_as_comparison(optimized, settings.baselines);
        if (!comparison && optimized.outcome != optimize::Outcome::Error) {
          optimize::OptimizeProgress measuring;
          measuring.phase = "measure";
          measuring.message = "timing the delivered code side by side";
          tally.step(problem.id(), measuring);
          const auto measure_start = std::chrono::steady_clock::now();
          try {
            comparison = services_.evaluate(comparison_task(options.target, optimized),
                                            comparison_options(options, settings.baselines, cancel));
            measure_s = seconds_since(measure_start);
          } catch (const std::exception& e) {
            comparison_error = e.what();
          }
          if (cancel.cancelled()) {
            tally.stopped();
            continue;
          }
        }
        result = make_problem_result(problem, optimized, comparison, comparison_error, knowledge_, settings.with_compile());
        result.time_breakdown = problem_time_breakdown(optimized, comparison, measure_s, seconds_since(problem_start));
      } catch (const std::exception& e) {
        // The target did not load (or the optimizer threw): nothing was measured.
        result = ProblemResult{};
        result.name = problem.name;
        result.group = problem.group;
        result.file = problem.file;
        result.outcome = optimize::to_string(optimize::Outcome::Error);
        result.error = e.what();
        result.candidate_verdicts = std::vector<CandidateVerdict>{};  // recorded: none was proposed
      }
      result.started_at = started_at;
      result.finished_at = iso8601_utc_ms(std::chrono::system_clock::now());
      result.workers = settings.concurrency;
      record(result, provenance);
      tally.finished(problem.id(), result, false, true);
      std::lock_guard lock(mutex);
      ++run.ran;
      results[i] = std::move(result);
    }
  };

  const std::size_t threads = std::clamp<std::size_t>(static_cast<std::size_t>(std::max(settings.concurrency, 1)), 1,
                                                      std::max<std::size_t>(problems.size(), 1));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();

  for (auto& r : results) {
    if (r) run.results.push_back(std::move(*r));
    else run.cancelled = true;
  }
  return run;
}

}  // namespace hiera::engine::bench
