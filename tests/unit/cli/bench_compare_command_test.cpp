// `hiera bench-compare A B` as a process: its exit codes (0 identical,
// 3 differing, 1 unreadable input, 2 bad usage), its Markdown and --json
// output on stdout, and its reasons on stderr.
#include "cli/bench_compare_command.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/bench/output_file.h"
#include "engine/bench/problem_result.h"
#include "subprocess.h"
#include "temp_directory.h"
#include "build_paths.h"

namespace hiera::cli {
namespace {

namespace fs = std::filesystem;
using engine::bench::CandidateVerdict;
using engine::bench::ProblemResult;
using hiera::testing::run_process;
using nlohmann::json;

ProblemResult record(const std::string& verdict, const std::string& start, const std::string& end, int workers) {
  ProblemResult r;
  r.name = "relu";
  r.group = "fusion";
  r.correct = true;
  r.speedup_eager = 2.0;
  r.outcome = "improved";
  r.started_at = start;
  r.finished_at = end;
  r.workers = workers;
  r.candidate_verdicts = std::vector<CandidateVerdict>{{"c1", {}, "S1", std::string(64, 'f'), verdict}};
  return r;
}

void write(const fs::path& dir, const ProblemResult& r) {
  engine::bench::write_file_atomically(dir / "problems" / r.group / (r.name + ".json"), engine::bench::to_json(r).dump(1));
}

class BenchCompareCli : public ::testing::Test {
 protected:
  void SetUp() override {
    write(a(), record("passed", "2026-11-30T05:00:00.000Z", "2026-11-30T05:00:30.000Z", 1));
    write(b(), record("passed", "2026-11-30T06:00:00.000Z", "2026-11-30T06:00:15.000Z", 2));
  }
  fs::path a() const { return dir_.path() / "a"; }
  fs::path b() const { return dir_.path() / "b"; }
  hiera::testing::TempDirectory dir_{"hiera-bench-compare-cli-"};
};

TEST_F(BenchCompareCli, IdenticalVerdictsExitZeroWithTheMarkdown) {
  const auto r = run_process({::hiera::testing::hiera_bin(), "bench-compare", a().string(), b().string()}, "");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("| wall time | 30.0 s | 15.0 s |\n| workers | 1 | 2 |\n\nWall-time ratio A/B: **2.00x**"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("| fusion/relu | yes/yes | improved/improved | yes | 2.00x/2.00x |\n"), std::string::npos) << r.out;
}

TEST_F(BenchCompareCli, JsonOnRequest) {
  const auto r =
      run_process({::hiera::testing::hiera_bin(), "bench-compare", a().string(), b().string(), "--json"}, "");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["identical"], true);
  EXPECT_EQ(j["wall_ratio"], 2.0);
  EXPECT_EQ(j["a"]["dir"], a().string());
  EXPECT_EQ(j["problems"][0]["name"], "fusion/relu");
}

TEST_F(BenchCompareCli, ADifferingVerdictExitsThreeAndSaysWhich) {
  write(b(), record("failed", "2026-11-30T06:00:00.000Z", "2026-11-30T06:00:15.000Z", 2));
  const auto r = run_process({::hiera::testing::hiera_bin(), "bench-compare", a().string(), b().string()}, "");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("- fusion/relu: c1: A passed, code ffffffffffff; B failed, code ffffffffffff\n"), std::string::npos) << r.out;
}

TEST_F(BenchCompareCli, AProblemOnOneSideOnlyExitsThree) {
  ProblemResult extra = record("passed", "2026-11-30T06:00:15.000Z", "2026-11-30T06:00:20.000Z", 2);
  extra.name = "gelu";
  write(b(), extra);
  const auto r = run_process({::hiera::testing::hiera_bin(), "bench-compare", a().string(), b().string()}, "");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("| fusion/gelu | -/yes | -/improved | only in B | -/2.00x |\n"), std::string::npos) << r.out;
}

TEST_F(BenchCompareCli, AnUnreadableOutputExitsOneWithItsReasonAndPrintsNothing) {
  const fs::path missing = dir_.path() / "missing";
  auto r = run_process({::hiera::testing::hiera_bin(), "bench-compare", a().string(), missing.string()}, "");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "hiera bench-compare: " + missing.string() + ": not a hiera bench output (no problems/ folder in it)\n");
  EXPECT_EQ(r.out, "");
  engine::bench::write_file_atomically(b() / "problems" / "fusion" / "relu.json", "{\"name\": \"relu\"}");
  r = run_process({::hiera::testing::hiera_bin(), "bench-compare", a().string(), b().string()}, "");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find((b() / "problems" / "fusion" / "relu.json").string() + ": not a problem record: "), std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(BenchCompareCli, BadUsageExitsTwo) {
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {::hiera::testing::hiera_bin(), "bench-compare"},
           {::hiera::testing::hiera_bin(), "bench-compare", a().string()},
           {::hiera::testing::hiera_bin(), "bench-compare", a().string(), b().string(), b().string()},
           {::hiera::testing::hiera_bin(), "bench-compare", a().string(), b().string(), "--markdown"}}) {
    const auto r = run_process(argv, "");
    EXPECT_EQ(r.exit_code, 2) << argv.size() << "\n" << r.err;
    EXPECT_NE(r.err, "");
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(BenchCompareCli, HelpDefinesVerdictsAndTheExitCodes) {
  const auto r = run_process({::hiera::testing::hiera_bin(), "bench-compare", "--help"}, "");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("A verdict is a statement of correctness"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Exit codes: 0 every problem is on both sides with identical verdicts, 3 some verdict differs"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace hiera::cli
