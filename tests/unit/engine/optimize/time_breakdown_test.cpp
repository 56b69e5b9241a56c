// Where a run's time went: the engine's phase clock, the worker's phases
// summed over the jobs, the JSON of result.json and the report's table.
#include "engine/optimize/time_breakdown.h"

#include <gtest/gtest.h>

#include <thread>

#include "engine/optimize/report.h"

namespace hiera::engine::optimize {
namespace {

using nlohmann::json;
using eval::PhaseTime;

eval::Evaluation with_phases(std::vector<PhaseTime> phases) {
  eval::Evaluation e;
  e.verdict = eval::Verdict::Passed;
  e.phases = std::move(phases);
  return e;
}

std::vector<std::string> names(const TimeBreakdown& b) {
  std::vector<std::string> out;
  for (const auto& p : b.engine) out.push_back(p.name);
  return out;
}

// Deterministic: every second and millisecond given, none measured.
TimeBreakdown constructed() {
  TimeBreakdown b;
  b.total_s = 20.0;
  for (auto& p : b.engine) {
    if (p.name == "probe") p.seconds = 1.0;
    if (p.name == "reference_baseline") p.seconds = 2.0;
    if (p.name == "proposing") p.seconds = 3.0;
    if (p.name == "candidates") p.seconds = 10.0;
    if (p.name == "delivery") p.seconds = 3.0;
  }
  b.reference_phases = {{"reference_load", 500.0}, {"timing", 1000.0}};
  b.candidate_phases = {{"reference_load", 1500.0}, {"verification", 4000.0}, {"timing", 3000.0}};
  b.candidate_evaluations = 3;
  b.delivery_phases = {{"verification", 1250.0}, {"kernelbench", 250.0}};
  return b;
}

TEST(OptimizeTimeBreakdown, EveryEnginePhaseInTheRunsOrderAtZeroUntilTimed) {
  const TimeBreakdown b;
  EXPECT_EQ(names(b), (std::vector<std::string>{"probe", "reference_baseline", "reference_profile", "capture", "planning",
                                                "proposing", "candidates", "delivery"}));
  for (const auto& p : b.engine) EXPECT_EQ(p.seconds, 0.0) << p.name;
  EXPECT_EQ(b.seconds("no such phase"), 0.0);
  EXPECT_EQ(b.other_s(), 0.0);
}

TEST(OptimizeTimeBreakdown, TheClockAddsUpEachPhaseAndEndsTheRunningOne) {
  PhaseClock clock;
  clock.enter("proposing");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  clock.enter("candidates");  // ends proposing
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  clock.leave();
  clock.leave();  // nothing running: no effect
  clock.enter("proposing");  // a second round adds to the first
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  clock.enter("delivery");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const TimeBreakdown b = clock.finish(10.0);  // ends delivery, as the optimizer's finish does
  EXPECT_EQ(b.total_s, 10.0);
  EXPECT_GE(b.seconds("proposing"), 0.04);
  EXPECT_GE(b.seconds("candidates"), 0.02);
  EXPECT_GE(b.seconds("delivery"), 0.02);
  EXPECT_EQ(b.seconds("probe"), 0.0);
  EXPECT_EQ(names(b), names(TimeBreakdown{}));
  EXPECT_NEAR(b.other_s(), 10.0 - b.seconds("proposing") - b.seconds("candidates") - b.seconds("delivery"), 1e-9);
}

TEST(OptimizeTimeBreakdown, TheWorkersPhasesAreSummedPerJobKind) {
  PhaseClock clock;
  clock.reference(with_phases({{"reference_load", 100.0}, {"timing", 50.0}}));
  clock.candidate(with_phases({{"verification", 1.5}, {"timing", 2.25}}));
  clock.candidate(with_phases({{"reference_load", 0.5}, {"verification", 1.5}, {"timing", 2.25}}));
  clock.candidate(with_phases({}));  // a job that failed as a job has none, and still counts
  clock.delivery(with_phases({{"verification", 10.0}, {"kernelbench", 5.0}}));
  const TimeBreakdown b = clock.finish(1.0);
  EXPECT_EQ(b.reference_phases, (std::vector<PhaseTime>{{"reference_load", 100.0}, {"timing", 50.0}}));
  // Exact sums, in the runner's order whatever order the names first came in.
  EXPECT_EQ(b.candidate_phases, (std::vector<PhaseTime>{{"reference_load", 0.5}, {"verification", 3.0}, {"timing", 4.5}}));
  EXPECT_EQ(b.candidate_evaluations, 3);
  EXPECT_EQ(b.delivery_phases, (std::vector<PhaseTime>{{"verification", 10.0}, {"kernelbench", 5.0}}));
}

TEST(OptimizeTimeBreakdown, JsonHasThePhasesInOrderAndReadsBackUnchanged) {
  const TimeBreakdown b = constructed();
  const json j = to_json(b);
  EXPECT_EQ(j["total_s"], 20.0);
  EXPECT_EQ(j["other_s"], 1.0);
  ASSERT_EQ(j["phases"].size(), 8u);
  EXPECT_EQ(j["phases"][0], (json{{"phase", "probe"}, {"s", 1.0}}));
  EXPECT_EQ(j["phases"][6], (json{{"phase", "candidates"}, {"s", 10.0}}));
  EXPECT_EQ(j["candidate_evaluations"], 3);
  EXPECT_EQ(j["candidate_phases_ms"], (json{{"reference_load", 1500.0}, {"verification", 4000.0}, {"timing", 3000.0}}));
  EXPECT_EQ(j["delivery_phases_ms"], (json{{"verification", 1250.0}, {"kernelbench", 250.0}}));
  EXPECT_EQ(j["reference_phases_ms"], (json{{"reference_load", 500.0}, {"timing", 1000.0}}));
  EXPECT_EQ(time_breakdown_from_json(json::parse(j.dump())), b);
  EXPECT_THROW(time_breakdown_from_json(json{{"total_s", 1.0}}), json::exception);
}

TEST(OptimizeTimeBreakdown, TheReportTableNamesEveryPhaseWithItsShare) {
  EXPECT_EQ(time_breakdown_markdown(constructed()),
            "## Where the time went\n\n"
            "| phase | seconds | share of the run |\n|---|---|---|\n"
            "| probe of the device | 1.00 | 5.0% |\n"
            "| reference baseline (against itself) | 2.00 | 10.0% |\n"
            "| reference profile | 0.00 | 0.0% |\n"
            "| op graph capture | 0.00 | 0.0% |\n"
            "| spec and plan | 0.00 | 0.0% |\n"
            "| proposing (every proposer call) | 3.00 | 15.0% |\n"
            "| candidate evaluations | 10.00 | 50.0% |\n"
            "| delivery (verified again in its delivered form) | 3.00 | 15.0% |\n"
            "| other (task spec, run log, report) | 1.00 | 5.0% |\n"
            "| **total** | 20.00 | 100.0% |\n"
            "\nInside the jobs, the worker's own phases (phases_ms, in seconds; the candidates' summed over 3 "
            "evaluations):\n\n"
            "| worker phase | reference baseline | candidates | delivery |\n|---|---|---|---|\n"
            "| reference_load | 0.500 | 1.500 | - |\n"
            "| verification | - | 4.000 | 1.250 |\n"
            "| timing | 1.000 | 3.000 | - |\n"
            "| kernelbench | - | - | 0.250 |\n");
}

TEST(OptimizeTimeBreakdown, WithoutWorkerPhasesOnlyTheEngineTable) {
  TimeBreakdown b;
  const std::string md = time_breakdown_markdown(b);
  EXPECT_NE(md.find("| **total** | 0.00 | - |\n"), std::string::npos) << md;
  EXPECT_EQ(md.find("worker phase"), std::string::npos) << md;
}

TEST(OptimizeTimeBreakdown, ResultJsonAndReportCarryIt) {
  OptimizeResult r;
  r.outcome = Outcome::NoImprovement;
  r.target = "m.py::Model";
  r.wall_s = 20.0;
  r.time_breakdown = constructed();
  const json j = to_json(r);
  ASSERT_TRUE(j.contains("time_breakdown"));
  EXPECT_EQ(j["time_breakdown"], to_json(constructed()));
  const std::string md = to_markdown(r);
  const auto table = md.find(time_breakdown_markdown(constructed()));
  ASSERT_NE(table, std::string::npos) << md;
  EXPECT_LT(md.find("## Attempts"), table);
  EXPECT_LT(table, md.find("## Plan"));
}

}  // namespace
}  // namespace hiera::engine::optimize
