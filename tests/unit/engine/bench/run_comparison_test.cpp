// Two bench outputs compared: read from their problems/ folders (no
// summary.json needed), matched by group/name, each side's wall time and
// workers, and exactly which verdicts differ.
#include "engine/bench/run_comparison.h"

#include <gtest/gtest.h>

#include <fstream>

#include "engine/bench/output_file.h"
#include "temp_directory.h"

namespace hiera::engine::bench {
namespace {

namespace fs = std::filesystem;

const std::string kHashA(64, 'a');
const std::string kHashB(64, 'b');
const std::string kHashC(64, 'c');

ProblemResult record(const std::string& group, const std::string& name, const std::string& start, const std::string& end,
                     int workers) {
  ProblemResult r;
  r.name = name;
  r.group = group;
  r.file = "/suite/" + group + "/" + name + ".py";
  r.correct = true;
  r.speedup_eager = 1.5;
  r.outcome = "improved";
  r.started_at = start;
  r.finished_at = end;
  r.workers = workers;
  r.candidate_verdicts = std::vector<CandidateVerdict>{{"c1", {}, "S1", kHashA, "failed"}, {"c2", {"s3_x"}, "S3", kHashB, "passed"}};
  return r;
}

void write(const fs::path& dir, const ProblemResult& r) {
  write_file_atomically(dir / result_path(Problem{r.name, r.group, r.file}), to_json(r).dump(1));
}

// The same three problems, run one at a time (A: 60 s in all) and two at a time (B: 32 s).
class RunComparisonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    write(a(), record("fusion", "2_relu", "2026-11-30T05:00:00.000Z", "2026-11-30T05:00:20.000Z", 1));
    write(a(), record("fusion", "10_gelu", "2026-11-30T05:00:20.000Z", "2026-11-30T05:00:40.000Z", 1));
    write(a(), record(".", "top", "2026-11-30T05:00:40.000Z", "2026-11-30T05:01:00.000Z", 1));
    write(b(), record("fusion", "2_relu", "2026-11-30T06:00:00.000Z", "2026-11-30T06:00:16.000Z", 2));
    write(b(), record("fusion", "10_gelu", "2026-11-30T06:00:00.000Z", "2026-11-30T06:00:15.000Z", 2));
    write(b(), record(".", "top", "2026-11-30T06:00:16.000Z", "2026-11-30T06:00:32.000Z", 2));
  }
  fs::path a() const { return dir_.path() / "a"; }
  fs::path b() const { return dir_.path() / "b"; }
  ProblemResult stored(const fs::path& dir, const std::string& relative) const {
    std::ifstream in(dir / "problems" / relative);
    return problem_result_from_json(nlohmann::json::parse(in));
  }
  hiera::testing::TempDirectory dir_{"hiera-bench-compare-"};
};

TEST_F(RunComparisonTest, ReadsTheRecordsInSuiteOrderWithWallTimeAndWorkers) {
  const BenchOutput out = load_bench_output(a());
  EXPECT_EQ(out.dir, a());
  ASSERT_EQ(out.results.size(), 3u);
  EXPECT_EQ(out.results[0].id(), "top");  // the top group "." first, then natural order: 2 before 10
  EXPECT_EQ(out.results[1].id(), "fusion/2_relu");
  EXPECT_EQ(out.results[2].id(), "fusion/10_gelu");
  EXPECT_DOUBLE_EQ(*out.wall_s, 60.0);
  EXPECT_EQ(out.workers, std::vector<int>{1});
  EXPECT_FALSE(fs::exists(a() / "summary.json"));
}

TEST_F(RunComparisonTest, IdenticalVerdictsAndTheWallTimeRatio) {
  const RunComparison c = compare_runs(load_bench_output(a()), load_bench_output(b()));
  EXPECT_DOUBLE_EQ(*c.b.wall_s, 32.0);
  EXPECT_EQ(c.b.workers, std::vector<int>{2});
  EXPECT_DOUBLE_EQ(*c.wall_ratio, 60.0 / 32.0);
  ASSERT_EQ(c.problems.size(), 3u);
  for (const auto& p : c.problems) {
    EXPECT_TRUE(p.identical) << p.id;
    EXPECT_TRUE(p.differences.empty()) << p.id;
    EXPECT_TRUE(p.a && p.b) << p.id;
  }
  EXPECT_TRUE(c.identical());
}

TEST_F(RunComparisonTest, TimingsAndOutcomeAreNotVerdicts) {
  ProblemResult slower = stored(b(), "fusion/2_relu.json");
  slower.speedup_eager = 1.0;
  slower.outcome = "no_improvement";
  slower.times.best = TimeSummary{9.0, 8.0, 10.0};
  write(b(), slower);
  const RunComparison c = compare_runs(load_bench_output(a()), load_bench_output(b()));
  EXPECT_TRUE(c.identical());
}

TEST_F(RunComparisonTest, ADifferingVerdictIsNamedWithWhatEachSideSaid) {
  ProblemResult changed = stored(b(), "fusion/10_gelu.json");
  changed.candidate_verdicts->at(1).verdict = "failed";
  changed.correct = false;
  write(b(), changed);
  const RunComparison c = compare_runs(load_bench_output(a()), load_bench_output(b()));
  EXPECT_FALSE(c.identical());
  EXPECT_TRUE(c.problems[0].identical);
  EXPECT_TRUE(c.problems[1].identical);
  const ProblemComparison& gelu = c.problems[2];
  EXPECT_EQ(gelu.id, "fusion/10_gelu");
  EXPECT_FALSE(gelu.identical);
  EXPECT_EQ(gelu.differences, (std::vector<VerdictDifference>{{"c2", "passed, code bbbbbbbbbbbb", "failed, code bbbbbbbbbbbb"},
                                                            {"delivered result", "correct", "not correct"}}));
}

TEST_F(RunComparisonTest, ADifferingCodeHashIsADifferenceEvenWithTheSameVerdict) {
  ProblemResult changed = stored(b(), "top.json");
  changed.candidate_verdicts->at(0).source_sha256 = kHashC;
  write(b(), changed);
  const RunComparison c = compare_runs(load_bench_output(a()), load_bench_output(b()));
  EXPECT_FALSE(c.identical());
  EXPECT_EQ(c.problems[0].differences,
            (std::vector<VerdictDifference>{{"c1", "failed, code aaaaaaaaaaaa", "failed, code cccccccccccc"}}));
}

TEST_F(RunComparisonTest, CandidatesOnOneSideOnlyAreDifferences) {
  ProblemResult more = stored(b(), "top.json");
  more.candidate_verdicts->erase(more.candidate_verdicts->begin());
  more.candidate_verdicts->push_back({"c3", {}, "S2", kHashC, "rejected"});
  write(b(), more);
  const RunComparison c = compare_runs(load_bench_output(a()), load_bench_output(b()));
  EXPECT_EQ(c.problems[0].differences, (std::vector<VerdictDifference>{{"c1", "failed, code aaaaaaaaaaaa", "absent"},
                                                                     {"c3", "absent", "rejected, code cccccccccccc"}}));
}

TEST_F(RunComparisonTest, AProblemOnOneSideOnlyIsListedAndNotIdentical) {
  fs::remove(b() / "problems" / "fusion" / "2_relu.json");
  write(b(), record("norm", "layer", "2026-11-30T06:00:32.000Z", "2026-11-30T06:00:40.000Z", 2));
  const RunComparison c = compare_runs(load_bench_output(a()), load_bench_output(b()));
  ASSERT_EQ(c.problems.size(), 4u);
  EXPECT_EQ(c.problems[1].id, "fusion/2_relu");
  EXPECT_TRUE(c.problems[1].a && !c.problems[1].b);
  EXPECT_FALSE(c.problems[1].identical);
  EXPECT_EQ(c.problems[3].id, "norm/layer");  // B's extra, after A's
  EXPECT_TRUE(!c.problems[3].a && c.problems[3].b);
  EXPECT_FALSE(c.problems[3].identical);
  EXPECT_TRUE(c.problems[0].identical);
  EXPECT_TRUE(c.problems[2].identical);
  EXPECT_FALSE(c.identical());
}

TEST_F(RunComparisonTest, AnOlderRecordWithoutVerdictsCannotBeCalledIdentical) {
  ProblemResult old = stored(a(), "top.json");
  old.candidate_verdicts.reset();
  old.started_at.reset();
  old.finished_at.reset();
  old.workers.reset();
  write(a(), old);
  const RunComparison c = compare_runs(load_bench_output(a()), load_bench_output(b()));
  EXPECT_EQ(c.problems[0].differences,
            (std::vector<VerdictDifference>{{"candidate verdicts", "not recorded", "2 candidate(s)"}}));
  EXPECT_DOUBLE_EQ(*c.a.wall_s, 40.0);  // the other two
  EXPECT_FALSE(c.identical());
  // Neither side with times: no ratio.
  for (const char* name : {"fusion/2_relu.json", "fusion/10_gelu.json"}) {
    ProblemResult r = stored(a(), name);
    r.started_at.reset();
    write(a(), r);
  }
  EXPECT_EQ(compare_runs(load_bench_output(a()), load_bench_output(b())).wall_ratio, std::nullopt);
}

TEST_F(RunComparisonTest, UnreadableOutputsSayWhichFileAndWhy) {
  const auto message = [](const fs::path& dir) {
    try {
      load_bench_output(dir);
    } catch (const BenchOutputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(dir_.path() / "missing"), (dir_.path() / "missing").string() + ": not a hiera bench output (no problems/ folder in it)");
  fs::create_directories(dir_.path() / "empty" / "problems");
  EXPECT_EQ(message(dir_.path() / "empty"), (dir_.path() / "empty" / "problems").string() + ": no problem records in it");
  std::ofstream(a() / "problems" / "fusion" / "broken.json") << "{\"name\": ";
  EXPECT_EQ(message(a()).rfind((a() / "problems" / "fusion" / "broken.json").string() + ": not a problem record: ", 0), 0u)
      << message(a());
  fs::remove(a() / "problems" / "fusion" / "broken.json");
  // Two files claiming one problem (a copy left beside it).
  fs::copy_file(a() / "problems" / "top.json", a() / "problems" / "fusion" / "copy.json");
  EXPECT_NE(message(a()).find(": the same problem (top) as "), std::string::npos) << message(a());
}

}  // namespace
}  // namespace hiera::engine::bench
