// The report and the result JSON of a run: what the terminal and the editor
// show, from a result built here.
#include <gtest/gtest.h>

#include "engine/optimize/optimizer.h"
#include "engine/optimize/report.h"

namespace {

using namespace hiera::engine;

eval::Timing timing(double reference, double candidate, double spread) {
  eval::Timing t;
  t.reference = {reference, reference - spread, reference - spread / 2, reference + spread / 2, 50};
  t.candidate = {candidate, candidate - spread, candidate - spread / 2, candidate + spread / 2, 50};
  t.speedup = reference / candidate;
  return t;
}

TEST(OptimizeReport, FasterMeansBeyondTheTimingSpread) {
  EXPECT_TRUE(optimize::faster_beyond_noise(timing(2.0, 1.0, 0.1)));
  EXPECT_FALSE(optimize::faster_beyond_noise(timing(1.05, 1.0, 0.1)));  // 0.05 ms apart, spread 0.1 ms
  EXPECT_FALSE(optimize::faster_beyond_noise(timing(1.0, 2.0, 0.1)));
}

TEST(OptimizeReport, ListsOutcomeEvidenceAttemptsAndFigures) {
  optimize::OptimizeResult r;
  r.outcome = optimize::Outcome::Improved;
  r.message = "c2 is 2.00x faster";
  r.target = "m.py::Model";
  r.gpu = "NVIDIA H200";
  r.wall_s = 12.34;
  optimize::AttemptRecord wrong;
  wrong.attempt.candidate.id = "c1";
  wrong.attempt.candidate.proposer = "llm:local";
  wrong.attempt.failures = {"values: 3 of 10 | differ"};
  wrong.verdict = "failed";
  wrong.step = "S1 / module";
  r.attempts.push_back(wrong);
  optimize::AttemptRecord good;
  good.attempt.candidate.id = "c2";
  good.attempt.candidate.proposer = "llm:local";
  good.attempt.correct = good.attempt.compiled = true;
  good.attempt.speedup = 2.0;
  good.verdict = "passed";
  good.step = "S1 / module";
  r.attempts.push_back(good);
  optimize::BestResult best;
  best.candidate = good.attempt.candidate;
  best.speedup = 2.0;
  best.evaluation.verdict = eval::Verdict::Passed;
  best.evaluation.timing = timing(2.0, 1.0, 0.02);
  best.evaluation.trials.push_back({7, "normal", {}, 1e-6, 2e-6, 0, 0, std::nullopt, std::nullopt});
  r.best = best;
  r.figures = {2, 0, 2, 1, 1, 2000, 300};
  EXPECT_TRUE(r.improved());

  const std::string md = optimize::to_markdown(r);
  EXPECT_EQ(md.rfind("# hiera optimize: m.py::Model\n\n- Outcome: **improved**: c2 is 2.00x faster\n- GPU: NVIDIA H200\n"
                     "- Wall time: 12.3 s\n",
                     0),
            0u)
      << md;
  EXPECT_NE(md.find("| reference | 2.0000 ms (p10 1.9900, p90 2.0100, 50 trials) |\n"
                    "| candidate | 1.0000 ms (p10 0.9900, p90 1.0100, 50 trials) |\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 7 | normal | 1e-06 | 2e-06 | 0 |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| 2 | 0 | 2 | 1 | 1 | 2000 | 300 |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| c1 | llm:local | S1 / module | failed | - | values: 3 of 10 / differ |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| c2 | llm:local | S1 / module | passed | 2.00x | verified |\n"), std::string::npos) << md;

  const auto j = optimize::to_json(r);
  EXPECT_EQ(j["outcome"], "improved");
  EXPECT_EQ(j["best"]["id"], "c2");
  EXPECT_EQ(j["best"]["timing"]["speedup"], 2.0);
  EXPECT_EQ(j["attempts"][0]["failures"][0], "values: 3 of 10 | differ");
  EXPECT_EQ(j["figures"]["faster"], 1);
}

TEST(OptimizeReport, SaysWhichWorkerEvaluatedWhichCandidateAndWhatWasLost) {
  optimize::OptimizeResult r;
  r.outcome = optimize::Outcome::NoImprovement;
  optimize::AttemptRecord a;
  a.attempt.candidate.id = "c1";
  a.verdict = "passed";
  a.worker = 1;
  a.worker_command = {"ssh", "-p", "2222", "gpu-b", "hiera worker --device 0"};
  eval::LostAttempt lost;
  lost.worker = 0;
  lost.worker_command = {"hiera", "worker", "--device", "0"};
  lost.failure.message = "worker died (signal 9 SIGKILL) during evaluate";
  lost.ran = std::chrono::milliseconds(1500);
  a.lost = {lost};
  r.attempts.push_back(a);
  optimize::AttemptRecord b;
  b.attempt.candidate.id = "c2";
  b.verdict = "failed";
  b.worker = 1;
  b.worker_command = a.worker_command;
  r.attempts.push_back(b);

  const std::string md = optimize::to_markdown(r);
  EXPECT_NE(md.find("## Workers\n\n| worker | command | evaluated |\n|---|---|---|\n"
                    "| 0 | `hiera worker --device 0` | - |\n"
                    "| 1 | `ssh -p 2222 gpu-b hiera worker --device 0` | c1, c2 |\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("absolute times are compared only between runs on the same GPU model."), std::string::npos) << md;
  EXPECT_NE(md.find("\nLost with their worker and run again (on another worker, or on the same one once restarted):\n\n"
                    "- c1 on worker 0: worker died (signal 9 SIGKILL) during evaluate\n"),
            std::string::npos)
      << md;

  const auto j = optimize::to_json(r);
  EXPECT_EQ(j["attempts"][0]["worker"], 1);
  EXPECT_EQ(j["attempts"][0]["worker_command"][3], "gpu-b");
  EXPECT_EQ(j["attempts"][0]["lost"][0]["worker"], 0);
  EXPECT_EQ(j["attempts"][0]["lost"][0]["ran_ms"], 1500);
  EXPECT_EQ(j["attempts"][1]["lost"], nlohmann::json::array());
  // No attempt reached a worker: no workers section.
  EXPECT_EQ(optimize::to_markdown(optimize::OptimizeResult{}).find("## Workers"), std::string::npos);
}

TEST(OptimizeReport, SaysWhichProtectionsIsolatedTheCandidates) {
  optimize::OptimizeResult r;
  r.outcome = optimize::Outcome::NoImprovement;
  r.target = "m.py::Model";
  optimize::AttemptRecord a;
  a.attempt.candidate.id = "c1";
  a.verdict = "failed";
  r.attempts.push_back(a);
  EXPECT_EQ(optimize::to_markdown(r).find("## Candidate isolation"), std::string::npos);  // none reported
  EXPECT_TRUE(optimize::to_json(r)["candidate_isolation"].is_null());
  r.candidate_isolation = {{"dies_with_parent", "in force"}, {"network", "not in force: unshare(CLONE_NEWNET): EPERM"}};
  r.candidate_isolation_of = "c1";
  const std::string md = optimize::to_markdown(r);
  EXPECT_NE(md.find("## Candidate isolation\n\nEach candidate ran in a process of its own; what was in force for the "
                    "first (c1): 1 of 2 protections not in force.\n\n| protection | state |\n|---|---|\n"
                    "| dies_with_parent | in force |\n| network | not in force: unshare(CLONE_NEWNET): EPERM |\n\n"),
            std::string::npos)
      << md;
  const auto j = optimize::to_json(r)["candidate_isolation"];
  EXPECT_EQ(j["candidate"], "c1");
  EXPECT_EQ(j["protections"]["network"], "not in force: unshare(CLONE_NEWNET): EPERM");
  r.candidate_isolation.pop_back();
  EXPECT_NE(optimize::to_markdown(r).find("for the first (c1): every protection.\n"), std::string::npos);
  // States that give the protection's detail are in force too (the H100 report of 2026-12-07 said "6 of 7
  // not in force" of seven in force).
  r.candidate_isolation.push_back({"hidden_secret_places", "/root/.cache/hiera"});
  EXPECT_NE(optimize::to_markdown(r).find("for the first (c1): every protection.\n"), std::string::npos);
}

TEST(OptimizeReport, ANoImprovementRunSaysTheSourceIsUnchanged) {
  optimize::OptimizeResult r;
  r.outcome = optimize::Outcome::NoImprovement;
  EXPECT_FALSE(r.improved());
  EXPECT_NE(optimize::to_markdown(r).find("No candidate was verified faster than the reference; the source is unchanged."),
            std::string::npos);
  EXPECT_TRUE(optimize::to_json(r)["best"].is_null());
}

}  // namespace

namespace {

using namespace hiera::engine;

TEST(OptimizeReport, SaysWhyTheRunStopped) {
  optimize::OptimizeResult r;
  r.outcome = optimize::Outcome::NoImprovement;
  r.message = "4 candidates tried, 2 correct, none verified faster";
  r.stop_reason = optimize::StopReason::PlanExhausted;
  r.stop_detail = "op graph: S3 stopped paying: best 0.98x after 3 candidates; no step left (4 of a budget of 12 "
                  "candidates tried)";
  const std::string md = optimize::to_markdown(r);
  EXPECT_NE(md.find("- Outcome: **no_improvement**: 4 candidates tried, 2 correct, none verified faster\n"
                    "- Stopped because the plan was exhausted: op graph: S3 stopped paying: best 0.98x after 3 "
                    "candidates; no step left (4 of a budget of 12 candidates tried)\n"),
            std::string::npos)
      << md;
  const auto j = optimize::to_json(r);
  EXPECT_EQ(j["stopped"], (nlohmann::json{{"reason", "plan_exhausted"}, {"detail", r.stop_detail}}));

  // A detail that only repeats the message is not said twice.
  r.outcome = optimize::Outcome::Cancelled;
  r.message = "cancelled after 3 candidates";
  r.stop_reason = optimize::StopReason::Cancelled;
  r.stop_detail = r.message;
  EXPECT_NE(optimize::to_markdown(r).find("**cancelled**: cancelled after 3 candidates\n- Stopped because it was "
                                          "cancelled\n"),
            std::string::npos);
  EXPECT_EQ(optimize::to_json(r)["stopped"]["reason"], "cancelled");

  const std::vector<std::pair<optimize::StopReason, std::string>> reasons = {
      {optimize::StopReason::BudgetSpent, "budget_spent: the candidate budget was spent"},
      {optimize::StopReason::TimeLimit, "time_limit: the time limit was reached"},
      {optimize::StopReason::NearSpeedOfLight, "near_speed_of_light: the result is near the speed of light"},
      {optimize::StopReason::MeasureOnly, "measure_only: only the reference was to be measured"},
      {optimize::StopReason::NoProposer, "no_proposer: there is no proposer"},
      {optimize::StopReason::Error, "error: of an error"}};
  for (const auto& [reason, text] : reasons) {
    EXPECT_EQ(std::string(optimize::to_string(reason)) + ": " + optimize::describe(reason), text);
  }
  // A result nobody ended (built by hand) says nothing about it.
  EXPECT_EQ(optimize::to_markdown(optimize::OptimizeResult{}).find("Stopped because"), std::string::npos);
  EXPECT_TRUE(optimize::to_json(optimize::OptimizeResult{})["stopped"].is_null());
}

TEST(OptimizeReport, StatesTheKernelBenchCriterionOfTheDeliveredForm) {
  optimize::OptimizeResult r;
  r.outcome = optimize::Outcome::Improved;
  optimize::BestResult best;
  best.candidate.id = "c1";
  best.speedup = 1.5;
  best.evaluation.verdict = eval::Verdict::Passed;
  best.evaluation.kernelbench = eval::KernelBenchVerdict{false, 5, 1e-4, 1e-4, 2.5e-4, "output 0 differs"};
  r.best = best;
  const std::string md = optimize::to_markdown(r);
  EXPECT_NE(md.find("\nKernelBench criterion (5 trials, allclose atol=rtol=1e-4): failed, max abs error 2.5e-4 "
                    "(output 0 differs).\n"),
            std::string::npos)
      << md;
  const auto j = optimize::to_json(r);
  EXPECT_EQ(j["best"]["kernelbench"], (nlohmann::json{{"passed", false}, {"trials", 5}, {"atol", 1e-4}, {"rtol", 1e-4},
                                                      {"max_abs_error", 2.5e-4}, {"message", "output 0 differs"}}));

  EXPECT_EQ(optimize::kernelbench_text({true, 5, 1e-2, 1e-2, 1.7e-3, ""}),
            "KernelBench criterion (5 trials, allclose atol=rtol=1e-2): passed, max abs error 1.7e-3");
  EXPECT_EQ(optimize::kernelbench_text({true, 5, 1e-4, 1e-5, 0.0, ""}),
            "KernelBench criterion (5 trials, allclose atol=1e-4, rtol=1e-5): passed, max abs error 0");
  EXPECT_EQ(optimize::kernelbench_text({false, 5, 1e-4, 1e-4, std::nullopt, "the candidate raised"}),
            "KernelBench criterion (5 trials, allclose atol=rtol=1e-4): failed (the candidate raised)");
  // Without the criterion (a CUDA kernel, an older runner): no line, null in JSON.
  r.best->evaluation.kernelbench.reset();
  EXPECT_EQ(optimize::to_markdown(r).find("KernelBench criterion"), std::string::npos);
  EXPECT_TRUE(optimize::to_json(r)["best"]["kernelbench"].is_null());
}

TEST(OptimizeReport, SaysWhenTheDeliveredModuleReliesOnTorchCompileAndWhatItsFirstCallCost) {
  optimize::OptimizeResult r;
  r.outcome = optimize::Outcome::Improved;
  optimize::BestResult best;
  best.candidate.id = "c3";
  best.candidate.proposer = "torch.compile";
  best.speedup = 1.4;
  best.delivered_source = "import torch\n\nclass ModelNew(Model):\n    def forward(self, x):\n"
                          "        return torch.compile(super().forward, mode=\"max-autotune-no-cudagraphs\")(x)\n";
  best.evaluation.verdict = eval::Verdict::Passed;
  best.evaluation.timing = timing(1.4, 1.0, 0.01);
  best.evaluation.phases = {{"verification", 25000.0}, {"first_call", 23456.0}};
  r.best = best;
  const std::string line =
      "The delivered module calls torch.compile (mode max-autotune-no-cudagraphs); its first call took 23.5 s "
      "(compilation), later calls are timed.";
  const std::string md = optimize::to_markdown(r);
  EXPECT_NE(md.find("verified again in its delivered form.\n\n" + line + "\n\n| | time |"), std::string::npos) << md;
  const auto j = optimize::to_json(r);
  EXPECT_EQ(j["best"]["torch_compile"], (nlohmann::json{{"mode", "max-autotune-no-cudagraphs"}, {"first_call_s", 23.456},
                                                        {"note", line}}));

  // A sub-second first call (a warm cache) keeps two decimals; without the phase the line says it was not measured.
  EXPECT_EQ(optimize::compile_use_text({"default", 0.25}),
            "The delivered module calls torch.compile (mode default); its first call took 0.25 s (compilation), "
            "later calls are timed.");
  r.best->evaluation.phases.clear();
  EXPECT_EQ(optimize::compile_use(*r.best), (optimize::CompileUse{"max-autotune-no-cudagraphs", std::nullopt}));
  EXPECT_NE(optimize::to_markdown(r).find("The delivered module calls torch.compile (mode max-autotune-no-cudagraphs); "
                                          "its first call compiles (its time was not measured), later calls are timed.\n"),
            std::string::npos);
  EXPECT_TRUE(optimize::to_json(r)["best"]["torch_compile"]["first_call_s"].is_null());

  // A module that does not call torch.compile (a comment naming it does not count): no line, null in JSON.
  r.best->delivered_source = "import torch\n# unlike torch.compile(model)\nclass ModelNew(torch.nn.Module):\n    pass\n";
  EXPECT_EQ(optimize::to_markdown(r).find("calls torch.compile"), std::string::npos);
  EXPECT_TRUE(optimize::to_json(r)["best"]["torch_compile"].is_null());
}

TEST(OptimizeReport, StatesBothErrorsWhenHierasVerdictAndKernelBenchsDisagree) {
  optimize::OptimizeResult r;
  r.outcome = optimize::Outcome::Improved;
  optimize::BestResult best;
  best.candidate.id = "c1";
  best.speedup = 1.5;
  best.evaluation.verdict = eval::Verdict::Passed;
  best.evaluation.trials.push_back({1234, "uniform", {}, 8e-5, 1e-4, 0, 0, std::nullopt, std::nullopt});
  best.evaluation.trials.push_back({1236, "large", {}, 2.5e-4, 3e-4, 0, 12, 3e-5, 2e-4});
  best.evaluation.kernelbench = eval::KernelBenchVerdict{false, 5, 1e-4, 1e-4, 2.5e-4, "output 0 differs"};
  r.best = best;
  const std::string md = optimize::to_markdown(r);
  EXPECT_NE(md.find("\n12 element(s) beyond the tolerance against the reference's own output (max abs error 2.5e-4) were "
                    "accepted against a float64 run of the reference: max abs error 3e-5 against float64, where the "
                    "reference itself is off by up to 2e-4.\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("\n**hiera's verdict and KernelBench's disagree**: hiera passed it; KernelBench's criterion failed with "
                    "a max abs error of 2.5e-4 against the reference's output. In hiera's trials: 2.5e-4 against the "
                    "reference's output, 3e-5 against a float64 run of the reference.\n"),
            std::string::npos)
      << md;
  const auto j = optimize::to_json(r);
  EXPECT_EQ(j["best"]["trials"][1]["float64_arbitrated"], 12);
  EXPECT_EQ(j["best"]["trials"][1]["max_abs_error_float64"], 3e-5);
  EXPECT_FALSE(j["best"]["trials"][0].contains("float64_arbitrated"));
  // Agreeing verdicts: no disagreement line.
  r.best->evaluation.kernelbench->passed = true;
  EXPECT_EQ(optimize::to_markdown(r).find("disagree"), std::string::npos);
}

}  // namespace

namespace {

TEST(OptimizeReport, SaysWhatEachRegionOfAStitchedModuleGot) {
  using propose::CandidatePart;
  // The norm's nodes took 0.6 ms of a profiled forward of 2.4 ms: a quarter of the timed reference's 2.0 ms.
  const CandidatePart norm{"s3_row_in_registers:blocks_0_norm:1", "s3_row_in_registers", knowledge::Space::S3,
                           "blocks_0_norm", "layer norm in registers", 0.6,
                           graph::RegionWork{0.0, 2e8, "float32"}, 2.4};
  const CandidatePart attention{"s1_sdpa:out:2", "s1_sdpa", knowledge::Space::S1, "out", "attention | as SDPA", std::nullopt, std::nullopt, std::nullopt};
  optimize::OptimizeResult r;
  r.outcome = optimize::Outcome::Improved;
  const auto attempt = [&](std::string id, std::vector<CandidatePart> parts, bool correct, std::optional<double> speedup) {
    optimize::AttemptRecord a;
    a.attempt.candidate.id = std::move(id);
    a.attempt.candidate.proposer = "knowledge";
    a.attempt.candidate.parts = std::move(parts);
    a.attempt.correct = a.attempt.compiled = correct;
    a.attempt.speedup = speedup;
    a.verdict = correct ? "passed" : "failed";
    return a;
  };
  r.attempts = {attempt("c1", {norm}, true, 1.25), attempt("c2", {norm}, true, 1.10), attempt("c3", {attention}, false, {}),
                attempt("c4", {norm, attention}, true, 1.6)};
  optimize::BestResult best;
  best.candidate = r.attempts.back().attempt.candidate;
  best.speedup = 1.6;
  best.evaluation.timing = timing(2.0, 1.25, 0.01);
  r.best = best;
  r.plan = {{"ceilings", {{"bandwidth_gbs", 4000.0}, {"tflops", {{"float32", 60.0}}}}}};

  const std::string md = optimize::to_markdown(r);
  // The norm's best alone (1.25x of c1 and c2) saves 2.0 ms x (1 - 1/1.25) of the 0.5 ms its nodes took (a
  // quarter of the reference), and its 200 MB at 4000 GB/s (0.05 ms) are half of the 0.1 ms left; the attention
  // never passed alone (c3 failed), so no other candidate verified it, and its nodes were not timed.
  EXPECT_NE(md.find("| region | space | recipe | change | before | alone | time saved alone | after alone | of speed of light "
                    "| also verified in |\n|---|---|---|---|---|---|---|---|---|---|\n"
                    "| blocks_0_norm | S3 | s3_row_in_registers | layer norm in registers | 0.5000 ms | 1.25x | 0.4000 ms | "
                    "0.1000 ms | 50.0% | c1, c2 |\n"
                    "| out | S1 | s1_sdpa | attention / as SDPA | - | - | - | - | - | - |\n"),
            std::string::npos)
      << md;
  const auto j = optimize::to_json(r);
  EXPECT_EQ(j["best"]["parts"][0]["region"], "blocks_0_norm");
  EXPECT_EQ(j["best"]["parts"][1]["space"], "S1");
  EXPECT_EQ(j["best"]["parts"][0]["before_ms"], 0.6);
  EXPECT_EQ(j["best"]["parts"][0]["forward_ms"], 2.4);
  EXPECT_TRUE(j["best"]["parts"][1]["before_ms"].is_null());
  EXPECT_EQ(j["best"]["parts"][0]["least_work"]["bytes"], 2e8);
  EXPECT_TRUE(j["best"]["parts"][1]["least_work"].is_null());
  EXPECT_EQ(j["attempts"][2]["parts"][0]["key"], "s1_sdpa:out:2");

  // Least work of 800 MB (0.2 ms) against the 0.1 ms left: beyond 100%, the two measurements' error, left out.
  r.best->candidate.parts[0].least_work->bytes = 8e8;
  EXPECT_NE(optimize::to_markdown(r).find("| 0.5000 ms | 1.25x | 0.4000 ms | 0.1000 ms | - | c1, c2 |\n"), std::string::npos);

  // A candidate of another proposer has no parts: no table.
  r.best->candidate.parts.clear();
  EXPECT_EQ(optimize::to_markdown(r).find("| region | space |"), std::string::npos);
}

}  // namespace
