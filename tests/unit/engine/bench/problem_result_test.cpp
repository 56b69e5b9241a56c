// The per-problem JSON: every field written, read back unchanged, and where it lives.
#include "engine/bench/problem_result.h"

#include <gtest/gtest.h>

namespace hiera::engine::bench {
namespace {

using nlohmann::json;

ProblemResult full_result() {
  ProblemResult r;
  r.name = "19_ReLU";
  r.group = "fusion";
  r.file = "/suite/fusion/19_ReLU.py";
  r.correct = true;
  r.kernelbench = eval::KernelBenchVerdict{false, 5, 1e-4, 1e-4, 2.5e-4, "output 0: not allclose"};
  r.speedup_eager = 1.5;
  r.speedup_compile = 0.75;
  r.times.eager = TimeSummary{3.0, 2.9, 3.2};
  r.times.compile = TimeSummary{1.5, 1.4, 1.6};
  r.times.best = TimeSummary{2.0, 1.9, 2.1};
  r.sol_ms = 0.5;
  r.sol_fraction = 0.25;
  r.spaces = {"S1", "S3"};
  r.recipes = {"s3_elementwise_fusion"};
  r.candidates = {6, 4, 2};
  r.outcome = "improved";
  r.run_dir = "/out/runs/x";
  r.started_at = "2026-11-30T05:28:10.123Z";
  r.finished_at = "2026-11-30T05:29:00.004Z";
  r.workers = 2;
  r.candidate_verdicts = std::vector<CandidateVerdict>{{"c1", {}, "S3", std::string(64, 'a'), "rejected"},
                                                       {"c2", {"s1_fused_op", "s3_x"}, "S1", std::string(64, 'b'), "passed"}};
  r.baseline_errors = {{"compile", "inductor failed"}};
  r.gpu = "NVIDIA H200";
  r.commit = "abc";
  r.source_sha256 = "00ff";
  r.options = {{"budget", 8}};
  return r;
}

TEST(ProblemResultJson, WritesEveryFieldAndReadsItBackUnchanged) {
  const ProblemResult r = full_result();
  const json j = to_json(r);
  EXPECT_EQ(j["name"], "19_ReLU");
  EXPECT_EQ(j["group"], "fusion");
  EXPECT_EQ(j["file"], "/suite/fusion/19_ReLU.py");
  EXPECT_EQ(j["correct"], true);
  EXPECT_EQ(j["kernelbench"], (json{{"passed", false}, {"trials", 5}, {"atol", 1e-4}, {"rtol", 1e-4},
                                    {"max_abs_error", 2.5e-4}, {"message", "output 0: not allclose"}}));
  EXPECT_EQ(j["speedup_eager"], 1.5);
  EXPECT_EQ(j["speedup_compile"], 0.75);
  EXPECT_EQ(j["times"]["eager"], (json{{"median_ms", 3.0}, {"p10_ms", 2.9}, {"p90_ms", 3.2}}));
  EXPECT_EQ(j["times"]["best"]["median_ms"], 2.0);
  EXPECT_EQ(j["sol_fraction"], 0.25);
  EXPECT_EQ(j["spaces"], (json{"S1", "S3"}));
  EXPECT_EQ(j["recipes"], (json{"s3_elementwise_fusion"}));
  EXPECT_EQ(j["candidates"], (json{{"tried", 6}, {"correct", 4}, {"faster", 2}}));
  EXPECT_EQ(j["outcome"], "improved");
  EXPECT_EQ(j["run_dir"], "/out/runs/x");
  EXPECT_TRUE(j["error"].is_null());
  EXPECT_EQ(j["started_at"], "2026-11-30T05:28:10.123Z");
  EXPECT_EQ(j["finished_at"], "2026-11-30T05:29:00.004Z");
  EXPECT_EQ(j["workers"], 2);
  EXPECT_EQ(j["candidate_verdicts"],
            (json{{{"id", "c1"}, {"recipes", json::array()}, {"space", "S3"}, {"source_sha256", std::string(64, 'a')}, {"verdict", "rejected"}},
                  {{"id", "c2"}, {"recipes", {"s1_fused_op", "s3_x"}}, {"space", "S1"}, {"source_sha256", std::string(64, 'b')},
                   {"verdict", "passed"}}}));
  EXPECT_EQ(problem_result_from_json(j), r);
  EXPECT_EQ(problem_result_from_json(json::parse(j.dump())), r);  // through text, as on disk
}

TEST(ProblemResultJson, AnErrorResultKeepsItsNullsAndItsError) {
  ProblemResult r;
  r.name = "broken";
  r.group = ".";
  r.outcome = "error";
  r.error = "the reference does not run under the verification harness: runtime: boom";
  const json j = to_json(r);
  EXPECT_TRUE(j["speedup_eager"].is_null());
  EXPECT_TRUE(j["speedup_compile"].is_null());
  EXPECT_TRUE(j["times"]["eager"].is_null());
  EXPECT_TRUE(j["sol_fraction"].is_null());
  EXPECT_EQ(j["spaces"], json::array());
  EXPECT_EQ(j["error"].get<std::string>(), *r.error);
  EXPECT_EQ(problem_result_from_json(j), r);
}

// A record from before the run times and verdicts were kept: they read as empty.
TEST(ProblemResultJson, AnOlderRecordWithoutTimesWorkersOrVerdictsStillReads) {
  json j = to_json(full_result());
  for (const char* key : {"started_at", "finished_at", "workers", "candidate_verdicts", "kernelbench"}) j.erase(key);
  ProblemResult expected = full_result();
  expected.kernelbench.reset();
  expected.started_at.reset();
  expected.finished_at.reset();
  expected.workers.reset();
  expected.candidate_verdicts.reset();
  EXPECT_EQ(problem_result_from_json(j), expected);
  // Written back, they are null; read again, still empty.
  const json written = to_json(expected);
  EXPECT_TRUE(written["started_at"].is_null());
  EXPECT_TRUE(written["workers"].is_null());
  EXPECT_TRUE(written["candidate_verdicts"].is_null());
  EXPECT_TRUE(written["kernelbench"].is_null());
  EXPECT_EQ(problem_result_from_json(written), expected);
  // An empty list is not the same as none recorded: no candidate was proposed.
  expected.candidate_verdicts = std::vector<CandidateVerdict>{};
  EXPECT_EQ(to_json(expected)["candidate_verdicts"], json::array());
  EXPECT_EQ(problem_result_from_json(to_json(expected)), expected);
}

TEST(ProblemResultJson, RejectsMistypedNewFields) {
  for (const auto& [key, value] : std::vector<std::pair<std::string, json>>{
           {"started_at", 12},
           {"workers", "two"},
           {"candidate_verdicts", "c1"},
           {"candidate_verdicts", json::array({{{"id", "c1"}}})},
           {"kernelbench", json{{"passed", "yes"}}},
           {"kernelbench", json{{"passed", true}}}}) {
    json j = to_json(full_result());
    j[key] = value;
    EXPECT_THROW(problem_result_from_json(j), json::exception) << key << " = " << value;
  }
}

ProblemTimeBreakdown time_breakdown() {
  ProblemTimeBreakdown t;
  t.total_s = 122.0;
  t.optimize.total_s = 100.0;
  for (auto& p : t.optimize.engine) {
    if (p.name == "candidates") p.seconds = 70.0;
    if (p.name == "delivery") p.seconds = 20.0;
  }
  t.optimize.candidate_evaluations = 4;
  t.optimize.candidate_phases = {{"reference_load", 4000.0}, {"verification", 30000.0}, {"timing", 20000.0}};
  t.optimize.delivery_phases = {{"verification", 9000.0}, {"kernelbench", 1500.0}};
  t.measure_s = 21.5;
  t.measure_phases = {{"reference_load", 1000.0}, {"baselines", 15000.0}, {"timing", 4000.0}};
  return t;
}

TEST(ProblemResultJson, TheTimeBreakdownIsWrittenAndReadBackUnchanged) {
  ProblemResult r = full_result();
  r.time_breakdown = time_breakdown();
  const json j = to_json(r);
  const json& t = j["time_breakdown"];
  EXPECT_EQ(t["total_s"], 122.0);
  EXPECT_EQ(t["optimize"], optimize::to_json(time_breakdown().optimize));
  EXPECT_EQ(t["optimize"]["candidate_phases_ms"]["verification"], 30000.0);
  EXPECT_EQ(t["measure"], (json{{"s", 21.5}, {"phases_ms", {{"reference_load", 1000.0}, {"baselines", 15000.0}, {"timing", 4000.0}}}}));
  EXPECT_EQ(problem_result_from_json(json::parse(j.dump())), r);
  // No side-by-side job: measure is null, and reads back as none.
  r.time_breakdown->measure_s.reset();
  r.time_breakdown->measure_phases.clear();
  EXPECT_TRUE(to_json(r)["time_breakdown"]["measure"].is_null());
  EXPECT_EQ(problem_result_from_json(json::parse(to_json(r).dump())), r);
}

TEST(ProblemResultJson, ARecordWithoutATimeBreakdownReadsAsNone) {
  EXPECT_TRUE(to_json(full_result())["time_breakdown"].is_null());
  json j = to_json(full_result());
  j.erase("time_breakdown");
  EXPECT_EQ(problem_result_from_json(j), full_result());
  for (const json& bad : {json("fast"), json{{"total_s", "x"}}, json{{"total_s", 1.0}}}) {
    j["time_breakdown"] = bad;
    EXPECT_THROW(problem_result_from_json(j), json::exception) << bad;
  }
}

TEST(ProblemResultJson, RejectsAFileWithAFieldMissingOrMistyped) {
  json j = to_json(full_result());
  j.erase("candidates");
  EXPECT_THROW(problem_result_from_json(j), json::exception);
  j = to_json(full_result());
  j["correct"] = "yes";
  EXPECT_THROW(problem_result_from_json(j), json::exception);
  EXPECT_THROW(problem_result_from_json(json::array()), json::exception);
}

TEST(ProblemResultJson, LivesUnderProblemsByGroup) {
  EXPECT_EQ(result_path(Problem{"19_ReLU", "fusion", "x.py"}), std::filesystem::path("problems/fusion/19_ReLU.json"));
  EXPECT_EQ(result_path(Problem{"top", ".", "top.py"}), std::filesystem::path("problems/top.json"));
  EXPECT_EQ(result_path(Problem{"n", "a/b", "n.py"}), std::filesystem::path("problems/a/b/n.json"));
}

}  // namespace
}  // namespace hiera::engine::bench
