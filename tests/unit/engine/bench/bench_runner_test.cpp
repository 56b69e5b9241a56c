// The suite runner with stand-ins for the optimizer and the worker: each
// problem optimized once, measured side by side once, its result written as
// it finishes; reused on the next run unless something that shapes it
// changed; problems run concurrently up to the limit; a cancelled run keeps
// what finished and records nothing of what it cut short.
#include "engine/bench/bench_runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <thread>

#include "bench_fixtures.h"
#include "engine/bench/problem_discovery.h"
#include "engine/bench/wall_time.h"
#include "temp_directory.h"

namespace hiera::engine::bench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class FakeServices {
 public:
  BenchServices services() {
    BenchServices s;
    s.optimize = [this](const optimize::OptimizeOptions& options, const optimize::ProgressCallback& progress,
                        const CancellationToken& cancel) {
      const int now = ++in_flight_;
      int seen = max_in_flight_.load();
      while (now > seen && !max_in_flight_.compare_exchange_weak(seen, now)) {}
      {
        std::lock_guard lock(mutex_);
        optimized_.push_back(options.target.file.stem().string());
      }
      optimize::OptimizeProgress p;
      p.phase = "evaluate";
      p.message = "c1: passed";
      progress(p);
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      optimize::OptimizeResult r = testing::optimized(options.target.file.stem() == "relu");
      r.time_breakdown = breakdown;
      if (options.target.file.stem() == cancel_at) {
        cancel.cancel();
        r.outcome = optimize::Outcome::Cancelled;
      }
      --in_flight_;
      return r;
    };
    s.evaluate = [this](json task, eval::EvaluateOptions options) {
      std::lock_guard lock(mutex_);
      tasks_.push_back(task);
      baselines_ = options.baselines;
      eval::Timing t = testing::timing(2.0, task["candidate"]["source"].get<std::string>().find("delivered") != std::string::npos ? 0.5 : 2.0);
      if (!options.baselines.empty()) t.baselines["compile"] = testing::stats(1.0);
      eval::Evaluation e = testing::passed(t);
      e.phases = measure_phases;
      return e;
    };
    s.gpu = [](const CancellationToken&) { return std::string("Fake GPU"); };
    return s;
  }
  std::vector<std::string> optimized() {
    std::lock_guard lock(mutex_);
    auto out = optimized_;
    optimized_.clear();
    return out;
  }
  std::size_t measured() {
    std::lock_guard lock(mutex_);
    return tasks_.size();
  }
  int delay_ms = 0;
  std::string cancel_at;
  optimize::TimeBreakdown breakdown;           // every optimize result's
  std::vector<eval::PhaseTime> measure_phases;  // every side-by-side job's phases_ms
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
  std::vector<std::string> baselines_;

 private:
  std::mutex mutex_;
  std::vector<std::string> optimized_;
  std::vector<json> tasks_;
};

class BenchRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    write(suite_.path() / "top.py", testing::kModelSource);
    write(suite_.path() / "fusion" / "relu.py", testing::kModelSource);
    write(suite_.path() / "fusion" / "scale.py", testing::kModelSource);
    // A Model without get_inputs(): a problem that cannot be loaded.
    write(suite_.path() / "broken" / "no_inputs.py", "import torch\nclass Model(torch.nn.Module):\n    pass\n");
    problems_ = discover_problems(suite_.path());
    settings_.out_dir = out_.path();
    settings_.baselines = {"eager", "compile"};
    settings_.commit = "abc123";
    settings_.options = {{"budget", 4}};
  }
  static void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }
  BenchRun run(FakeServices& fake, const CancellationToken& cancel = {}) {
    BenchRunner runner(fake.services(), knowledge_);
    return runner.run(problems_, settings_, [&](const BenchProgress& p) {
      std::lock_guard lock(progress_mutex_);
      progress_.push_back(p);
    }, cancel);
  }
  static std::vector<std::string> ids(const BenchRun& run) {
    std::vector<std::string> out;
    for (const auto& r : run.results) out.push_back(r.id());
    return out;
  }

  hiera::testing::TempDirectory suite_{"hiera-bench-suite-"};
  hiera::testing::TempDirectory out_{"hiera-bench-out-"};
  knowledge::KnowledgeBase knowledge_;
  std::vector<Problem> problems_;
  BenchSettings settings_;
  std::mutex progress_mutex_;
  std::vector<BenchProgress> progress_;
};

TEST_F(BenchRunnerTest, RunsEachProblemOnceMeasuresItSideBySideAndWritesItsResult) {
  FakeServices fake;
  const BenchRun first = run(fake);
  EXPECT_EQ(first.gpu, "Fake GPU");
  EXPECT_EQ(ids(first), (std::vector<std::string>{"top", "broken/no_inputs", "fusion/relu", "fusion/scale"}));
  EXPECT_EQ(first.ran, 4);
  EXPECT_EQ(first.reused, 0);
  EXPECT_FALSE(first.cancelled);
  EXPECT_TRUE(first.errors.empty());
  EXPECT_EQ(fake.optimized(), (std::vector<std::string>{"top", "relu", "scale"}));  // the broken one never loads
  EXPECT_EQ(fake.measured(), 3u);
  EXPECT_EQ(fake.baselines_, (std::vector<std::string>{"compile"}));

  const ProblemResult& broken = first.results[1];
  EXPECT_FALSE(broken.correct);
  EXPECT_EQ(broken.outcome, "error");
  EXPECT_NE(broken.error->find("no get_inputs() function"), std::string::npos) << *broken.error;
  const ProblemResult& relu = first.results[2];
  EXPECT_TRUE(relu.correct);
  EXPECT_DOUBLE_EQ(*relu.speedup_eager, 4.0);
  EXPECT_DOUBLE_EQ(*relu.speedup_compile, 2.0);
  EXPECT_EQ(first.results[3].speedup_eager, 1.0);  // scale: nothing faster

  // Each on disk, with the provenance that decides reuse.
  const json stored = json::parse(std::ifstream(out_.path() / "problems" / "fusion" / "relu.json"));
  EXPECT_EQ(problem_result_from_json(stored), relu);
  EXPECT_EQ(stored["gpu"], "Fake GPU");
  EXPECT_EQ(stored["commit"], "abc123");
  EXPECT_EQ(stored["options"], (json{{"budget", 4}}));
  EXPECT_EQ(stored["source_sha256"].get<std::string>().size(), 64u);
  // When it ran, with how many workers, and what each candidate was found to be.
  ASSERT_TRUE(relu.started_at && relu.finished_at);
  const auto started = parse_iso8601_utc(*relu.started_at);
  const auto finished = parse_iso8601_utc(*relu.finished_at);
  ASSERT_TRUE(started && finished) << *relu.started_at << " " << *relu.finished_at;
  EXPECT_LE(*started, *finished);
  EXPECT_EQ(iso8601_utc_ms(*started), *relu.started_at);  // milliseconds, UTC
  EXPECT_EQ(relu.workers, 1);
  ASSERT_TRUE(relu.candidate_verdicts);
  EXPECT_EQ(relu.candidate_verdicts->size(), 3u);
  EXPECT_EQ(stored["workers"], 1);
  EXPECT_EQ(stored["candidate_verdicts"][1]["verdict"], "passed");
  EXPECT_TRUE(broken.started_at && broken.finished_at);  // a problem that did not load ran too, briefly
  EXPECT_EQ(broken.candidate_verdicts, std::vector<CandidateVerdict>{});  // recorded: none was proposed
  EXPECT_TRUE(fs::exists(out_.path() / "problems" / "top.json"));
  EXPECT_TRUE(fs::exists(out_.path() / "problems" / "broken" / "no_inputs.json"));

  ASSERT_FALSE(progress_.empty());
  EXPECT_EQ(progress_.back().finished, 4);
  EXPECT_EQ(progress_.back().total, 4);
  EXPECT_EQ(progress_.back().correct, 3);
  EXPECT_EQ(progress_.back().running, 0);
  EXPECT_EQ(progress_.back().step.phase, "done");
  EXPECT_EQ(progress_.front().step.phase, "probe");  // the suite's first word, before any problem
  EXPECT_EQ(progress_.front().problem, "");
}

TEST_F(BenchRunnerTest, EachRecordSaysWhereItsTimeWent) {
  FakeServices fake;
  fake.delay_ms = 30;
  fake.breakdown.total_s = 12.5;
  fake.breakdown.candidate_evaluations = 2;
  fake.breakdown.candidate_phases = {{"verification", 3000.0}, {"timing", 1500.0}};
  fake.breakdown.delivery_phases = {{"verification", 750.0}, {"kernelbench", 250.0}};
  fake.measure_phases = {{"reference_load", 100.0}, {"baselines", 2500.0}, {"timing", 400.0}};
  const BenchRun first = run(fake);
  ASSERT_EQ(first.results.size(), 4u);
  const ProblemResult& relu = first.results[2];
  ASSERT_TRUE(relu.time_breakdown);
  const ProblemTimeBreakdown& t = *relu.time_breakdown;
  EXPECT_EQ(t.optimize, fake.breakdown);  // the optimizer's, as it was returned
  ASSERT_TRUE(t.measure_s);
  EXPECT_GE(*t.measure_s, 0.0);
  EXPECT_EQ(t.measure_phases, fake.measure_phases);
  EXPECT_GE(t.total_s, 0.03);  // the optimizer's run (here a 30 ms stand-in) and the measurement
  EXPECT_GE(t.total_s, *t.measure_s);
  // On disk, with the runner's phases exactly as the jobs reported them.
  const json stored = json::parse(std::ifstream(out_.path() / "problems" / "fusion" / "relu.json"));
  EXPECT_EQ(stored["time_breakdown"]["optimize"]["candidate_phases_ms"], (json{{"verification", 3000.0}, {"timing", 1500.0}}));
  EXPECT_EQ(stored["time_breakdown"]["optimize"]["delivery_phases_ms"], (json{{"verification", 750.0}, {"kernelbench", 250.0}}));
  EXPECT_EQ(stored["time_breakdown"]["measure"]["phases_ms"],
            (json{{"reference_load", 100.0}, {"baselines", 2500.0}, {"timing", 400.0}}));
  EXPECT_EQ(problem_result_from_json(stored), relu);
  // A problem that never reached the optimizer has none.
  EXPECT_FALSE(first.results[1].time_breakdown);
  EXPECT_TRUE(stored.contains("time_breakdown"));
  EXPECT_TRUE(json::parse(std::ifstream(out_.path() / "problems" / "broken" / "no_inputs.json"))["time_breakdown"].is_null());
}

TEST_F(BenchRunnerTest, ASecondRunReusesWhatMatchesAndRunsWhatChanged) {
  FakeServices fake;
  const BenchRun first = run(fake);
  fake.optimized();

  const BenchRun again = run(fake);
  EXPECT_EQ(again.reused, 4);
  EXPECT_EQ(again.ran, 0);
  EXPECT_TRUE(fake.optimized().empty());
  EXPECT_EQ(again.results, first.results);
  EXPECT_EQ(progress_.back().reused, 4);
  EXPECT_EQ(progress_.back().step.phase, "reused");

  // An edited problem runs again; the others stand.
  write(suite_.path() / "fusion" / "scale.py", std::string(testing::kModelSource) + "# edited\n");
  const BenchRun edited = run(fake);
  EXPECT_EQ(edited.ran, 1);
  EXPECT_EQ(fake.optimized(), (std::vector<std::string>{"scale"}));

  // Other options, another commit, or --force: everything runs again.
  settings_.options = {{"budget", 8}};
  EXPECT_EQ(run(fake).ran, 4);
  settings_.commit = "def456";
  EXPECT_EQ(run(fake).ran, 4);
  settings_.force = true;
  EXPECT_EQ(run(fake).ran, 4);
}

TEST_F(BenchRunnerTest, ProblemsRunConcurrentlyUpToTheLimit) {
  FakeServices fake;
  fake.delay_ms = 150;
  settings_.concurrency = 2;
  const BenchRun both = run(fake);
  EXPECT_EQ(both.ran, 4);
  EXPECT_EQ(fake.max_in_flight_.load(), 2);
  EXPECT_EQ(ids(both), (std::vector<std::string>{"top", "broken/no_inputs", "fusion/relu", "fusion/scale"}));  // suite order kept
  for (const auto& r : both.results) EXPECT_EQ(r.workers, 2) << r.id();

  FakeServices one_at_a_time;
  one_at_a_time.delay_ms = 20;
  settings_.concurrency = 1;
  settings_.force = true;
  run(one_at_a_time);
  EXPECT_EQ(one_at_a_time.max_in_flight_.load(), 1);
}

TEST_F(BenchRunnerTest, ACancelledRunKeepsWhatFinishedAndRecordsNothingItCutShort) {
  FakeServices fake;
  fake.cancel_at = "relu";
  CancellationToken cancel;
  const BenchRun cut = run(fake, cancel);
  EXPECT_TRUE(cut.cancelled);
  EXPECT_EQ(ids(cut), (std::vector<std::string>{"top", "broken/no_inputs"}));
  EXPECT_EQ(fake.optimized(), (std::vector<std::string>{"top", "relu"}));  // scale never started
  EXPECT_FALSE(fs::exists(out_.path() / "problems" / "fusion" / "relu.json"));
  EXPECT_FALSE(fs::exists(out_.path() / "problems" / "fusion" / "scale.json"));
  EXPECT_EQ(fake.measured(), 1u);  // relu was not measured

  // Running again resumes: the finished two are reused, the rest run.
  FakeServices resume;
  const BenchRun resumed = run(resume);
  EXPECT_FALSE(resumed.cancelled);
  EXPECT_EQ(resumed.reused, 2);
  EXPECT_EQ(resumed.ran, 2);
  EXPECT_EQ(resume.optimized(), (std::vector<std::string>{"relu", "scale"}));
}

TEST_F(BenchRunnerTest, AResultThatCannotBeWrittenIsReportedAndTheSuiteGoesOn) {
  FakeServices fake;
  // A file where the group folder should be: fusion's results cannot be written.
  fs::create_directories(out_.path() / "problems");
  std::ofstream(out_.path() / "problems" / "fusion") << "in the way\n";
  const BenchRun r = run(fake);
  EXPECT_EQ(r.ran, 4);
  EXPECT_EQ(r.results.size(), 4u);
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_NE(r.errors[0].find("cannot create " + (out_.path() / "problems" / "fusion").string()), std::string::npos) << r.errors[0];
}

}  // namespace
}  // namespace hiera::engine::bench
