// The evidence comment: its exact lines, and no comment without evidence.
#include "engine/facade/evidence_comment.h"

#include <gtest/gtest.h>

namespace hiera::engine::facade {
namespace {

engine::optimize::OptimizeResult improved_result() {
  engine::optimize::OptimizeResult r;
  r.outcome = engine::optimize::Outcome::Improved;
  r.gpu = "NVIDIA H200";
  r.run_dir = "/runs/model-Model-1";
  engine::optimize::BestResult best;
  best.speedup = 1.8461;
  best.candidate.space = engine::knowledge::Space::S3;
  best.evaluation.verdict = engine::eval::Verdict::Passed;
  best.evaluation.trials.resize(5);
  best.evaluation.timing = engine::eval::Timing{{0.12, 0.11, 0.115, 0.13, 50}, {0.065, 0.06, 0.062, 0.07, 50}, 1.8461, {}, {}};
  r.best = best;
  for (auto space : {engine::knowledge::Space::S1, engine::knowledge::Space::S3, engine::knowledge::Space::S1}) {
    engine::optimize::AttemptRecord a;
    a.attempt.candidate.space = space;
    r.attempts.push_back(a);
  }
  return r;
}

TEST(AnnotationComment, StatesGpuSpeedupTimingsTrialsSpacesAndTheReport) {
  Evidence e = evidence_of(improved_result());
  e.dtype = "float32";
  e.atol = 1e-5;
  e.rtol = 1e-5;
  EXPECT_EQ(annotation_comment(e, "# "),
            "# Optimized by hiera on NVIDIA H200: 1.85x faster than the original, verified.\n"
            "# Median 0.1200 ms -> 0.0650 ms (p10-p90 0.1150-0.1300 ms -> 0.0620-0.0700 ms, 50 timed runs each).\n"
            "# Verified on 5 trials within atol 1e-05, rtol 1e-05 (float32); spaces tried: S1, S3; delivered from S3.\n"
            "# Full report: /runs/model-Model-1/report.md\n");
}

TEST(AnnotationComment, NoEvidenceNoComment) {
  auto r = improved_result();
  r.outcome = engine::optimize::Outcome::NoImprovement;
  EXPECT_THROW(evidence_of(r), std::invalid_argument);
  r = improved_result();
  r.best->evaluation.failures.push_back({"values", "mismatch"});
  EXPECT_THROW(evidence_of(r), std::invalid_argument);
}

}  // namespace
}  // namespace hiera::engine::facade
