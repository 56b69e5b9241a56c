// Optimizer::run over a pool of one hiera-fake-worker (a FAKE: it speaks the
// job protocol and answers canned measurements, here with "phases_ms") and a
// scripted proposer: the worker's phases of every candidate evaluation and of
// the delivery land, summed exactly, in the run's time breakdown, in
// result.json, report.md and run.jsonl. Wall seconds vary from run to run:
// only their structure is asserted.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "engine/optimize/optimizer.h"
#include "temp_directory.h"
#include "annotated_kernel.h"
#include "build_paths.h"

namespace hiera::engine::optimize {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using eval::PhaseTime;

const std::string kKernel = hiera::testing::annotated_scale_kernel();

// Every candidate a different (equivalent) kernel, so none is a repeat.
class ScriptedProposer : public propose::Proposer {
 public:
  std::string name() const override { return "scripted"; }
  std::vector<propose::Candidate> propose(const propose::ProposalRequest& request, const CancellationToken&) override {
    std::vector<propose::Candidate> out;
    for (int i = 0; i < request.count; ++i) {
      propose::Candidate c;
      c.proposer = name();
      c.space = request.space;
      c.region = request.region;
      c.kernel = "scale";
      c.source = hiera::testing::scale_kernel_variant(calls_++);
      out.push_back(std::move(c));
    }
    return out;
  }

 private:
  int calls_ = 0;
};

std::string read(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(OptimizerTimeBreakdown, TheWorkersPhasesOfEveryCandidateAndTheDeliveryAreSummedExactly) {
  hiera::testing::TempDirectory dir("hiera-optimizer-time-");
  eval::WorkerPoolOptions pool_options;
  // Every canned evaluation reports these phases; "note" is no number and is left out.
  pool_options.commands.push_back({::hiera::testing::fake_worker_bin(), "--candidate-ms", "0.05", "--phases-ms",
                                   R"({"compile": 1500, "verify": 2250, "time": 500, "note": "n/a"})"});
  pool_options.handshake_timeout = 30s;
  eval::WorkerPool pool(pool_options);
  knowledge::KnowledgeBase knowledge;
  Optimizer optimizer(pool, knowledge, {std::make_shared<ScriptedProposer>()});
  OptimizeOptions options;
  options.target = make_target(dir.path() / "scale.cu", "scale", kKernel);
  options.budget = 3;
  options.candidates_per_round = 3;
  options.runs_dir = dir.path() / "runs";
  const OptimizeResult result = optimizer.run(options);
  ASSERT_EQ(result.outcome, Outcome::Improved) << result.message;
  ASSERT_EQ(result.figures.proposed, 3);

  const TimeBreakdown& t = result.time_breakdown;
  EXPECT_EQ(t.total_s, result.wall_s);
  std::vector<std::string> names;
  for (const auto& p : t.engine) {
    names.push_back(p.name);
    EXPECT_GE(p.seconds, 0.0) << p.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"probe", "reference_baseline", "reference_profile", "capture", "planning",
                                             "proposing", "candidates", "delivery"}));
  EXPECT_GT(t.seconds("candidates"), 0.0);
  EXPECT_GT(t.seconds("delivery"), 0.0);
  EXPECT_EQ(t.seconds("capture"), 0.0);  // a CUDA task has no op graph to capture
  double covered = 0.0;
  for (const auto& p : t.engine) covered += p.seconds;
  EXPECT_LE(covered, t.total_s + 1e-9);  // the phases never overlap
  // The fake's phases, three candidate evaluations summed; the reference and the delivery once each.
  EXPECT_EQ(t.candidate_evaluations, 3);
  EXPECT_EQ(t.candidate_phases, (std::vector<PhaseTime>{{"compile", 4500.0}, {"verify", 6750.0}, {"time", 1500.0}}));
  EXPECT_EQ(t.delivery_phases, (std::vector<PhaseTime>{{"compile", 1500.0}, {"verify", 2250.0}, {"time", 500.0}}));
  EXPECT_EQ(t.reference_phases, (std::vector<PhaseTime>{{"compile", 1500.0}, {"verify", 2250.0}, {"time", 500.0}}));
  ASSERT_TRUE(result.best);
  EXPECT_EQ(result.best->evaluation.phases, t.delivery_phases);

  // result.json and report.md, as written in the run directory.
  const json written = json::parse(read(result.run_dir / "result.json"));
  ASSERT_TRUE(written.contains("time_breakdown")) << written.dump(1);
  EXPECT_EQ(written["time_breakdown"]["candidate_phases_ms"], (json{{"compile", 4500.0}, {"verify", 6750.0}, {"time", 1500.0}}));
  EXPECT_EQ(written["time_breakdown"]["candidate_evaluations"], 3);
  EXPECT_EQ(written["time_breakdown"]["phases"].size(), 8u);
  const std::string report = read(result.run_dir / "report.md");
  EXPECT_NE(report.find("## Where the time went\n\n| phase | seconds | share of the run |\n"), std::string::npos) << report;
  for (const char* row : {"| probe of the device | ", "| reference baseline (against itself) | ", "| candidate evaluations | ",
                          "| delivery (verified again in its delivered form) | ", "| **total** | ",
                          "| compile | 1.500 | 4.500 | 1.500 |\n", "| verify | 2.250 | 6.750 | 2.250 |\n",
                          "| time | 0.500 | 1.500 | 0.500 |\n"}) {
    EXPECT_NE(report.find(row), std::string::npos) << row << "\n" << report;
  }

  // run.jsonl: every evaluation with its phases_ms, and a "time" event just before "done".
  std::vector<json> events;
  std::istringstream lines(read(result.run_dir / "run.jsonl"));
  for (std::string line; std::getline(lines, line);) events.push_back(json::parse(line));
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.back()["event"], "done");
  const json& time = events[events.size() - 2];
  EXPECT_EQ(time["event"], "time");
  EXPECT_EQ(time["candidate_phases_ms"], written["time_breakdown"]["candidate_phases_ms"]);
  int evaluations = 0;
  for (const auto& e : events) {
    if (e["event"] == "evaluation" || e["event"] == "delivery" || e["event"] == "baseline") {
      const json& evaluation = e["event"] == "baseline" ? e : e["evaluation"];
      EXPECT_EQ(evaluation["phases_ms"], (json{{"compile", 1500.0}, {"verify", 2250.0}, {"time", 500.0}})) << e.dump();
      ++evaluations;
    }
  }
  EXPECT_EQ(evaluations, 5);  // the baseline, three candidates, the delivery
}

TEST(OptimizerTimeBreakdown, AWorkerWithoutPhasesLeavesTheSumsEmpty) {
  hiera::testing::TempDirectory dir("hiera-optimizer-time-");
  eval::WorkerPoolOptions pool_options;
  pool_options.commands.push_back({::hiera::testing::fake_worker_bin()});
  pool_options.handshake_timeout = 30s;
  eval::WorkerPool pool(pool_options);
  knowledge::KnowledgeBase knowledge;
  Optimizer optimizer(pool, knowledge, {std::make_shared<ScriptedProposer>()});
  OptimizeOptions options;
  options.target = make_target(dir.path() / "scale.cu", "scale", kKernel);
  options.budget = 1;
  options.runs_dir = dir.path() / "runs";
  const OptimizeResult result = optimizer.run(options);
  ASSERT_NE(result.outcome, Outcome::Error) << result.message;
  EXPECT_EQ(result.time_breakdown.candidate_evaluations, 1);
  EXPECT_TRUE(result.time_breakdown.candidate_phases.empty());
  EXPECT_TRUE(result.time_breakdown.delivery_phases.empty());
  EXPECT_EQ(result.time_breakdown.engine.size(), 8u);
  const std::string report = read(result.run_dir / "report.md");
  EXPECT_NE(report.find("## Where the time went"), std::string::npos);
  EXPECT_EQ(report.find("| worker phase |"), std::string::npos);
}

}  // namespace
}  // namespace hiera::engine::optimize
