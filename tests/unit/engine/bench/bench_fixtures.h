#pragma once
// Constructed optimizer results and evaluations for the bench tests: a real
// PyTorch task spec (spec::build_spec), a plan with region bounds, and the
// side-by-side timing a worker would send.
#include <string>

#include "engine/eval/job_results.h"
#include "engine/optimize/optimize_result.h"
#include "engine/optimize/target.h"
#include "engine/spec/spec_builder.h"

namespace hiera::engine::bench::testing {

inline const char* kModelSource =
    "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n\n"
    "def get_inputs():\n    return [torch.randn(8, 8)]\n\ndef get_init_inputs():\n    return []\n";

inline optimize::Target target(const std::string& file = "/suite/fusion/relu.py") {
  return optimize::make_target(file, "Model", kModelSource);
}

inline eval::TimingStats stats(double median) { return {median, median * 0.9, median * 0.95, median * 1.05, 50}; }

inline eval::Timing timing(double reference_ms, double candidate_ms) {
  eval::Timing t;
  t.reference = stats(reference_ms);
  t.candidate = stats(candidate_ms);
  t.speedup = reference_ms / candidate_ms;
  return t;
}

inline eval::Evaluation passed(eval::Timing t) {
  eval::Evaluation e;
  e.verdict = eval::Verdict::Passed;
  e.timing = std::move(t);
  return e;
}

// An optimizer result on `gpu`: improved (with a delivered ModelNew applying
// `recipes`) or not; the plan's regions bound 0.25 + 0.25 ms; attempts c1
// (rejected), c2 (passed when improved, else failed) and c3 (passed).
inline optimize::OptimizeResult optimized(bool improved, const std::string& gpu = "NVIDIA H200",
                                          std::vector<std::string> recipes = {}) {
  optimize::OptimizeResult r;
  r.outcome = improved ? optimize::Outcome::Improved : optimize::Outcome::NoImprovement;
  r.message = improved ? "c2 is 2.00x faster" : "none verified faster";
  r.target = "relu.py::Model";
  r.gpu = gpu;
  spec::SpecInputs inputs;
  inputs.target = r.target;
  inputs.source = kModelSource;
  r.spec = spec::build_spec(inputs).spec.to_json();
  r.plan = {{"regions", {{{"name", "a"}, {"bound_ms", 0.25}}, {{"name", "b"}, {"bound_ms", 0.25}}}}};
  r.reference_timing = timing(2.0, 2.0);
  r.figures.proposed = 6;
  r.figures.correct = 4;
  r.figures.faster = improved ? 1 : 0;
  r.run_dir = "/out/runs/relu";
  // Three attempts in proposal order: a rejected reply, a failed and a passed candidate.
  const auto attempt = [&](const std::string& id, knowledge::Space space, std::vector<std::string> attempt_recipes,
                           const std::string& source, const std::string& verdict) {
    optimize::AttemptRecord a;
    a.attempt.candidate.id = id;
    a.attempt.candidate.space = space;
    a.attempt.candidate.recipes = std::move(attempt_recipes);
    a.attempt.candidate.source = source;
    a.verdict = verdict;
    r.attempts.push_back(a);
  };
  attempt("c1", knowledge::Space::S3, {}, "", "rejected");
  attempt("c2", knowledge::Space::S1, {"s1_fused_op"}, "class ModelNew: pass  # candidate", improved ? "passed" : "failed");
  attempt("c3", knowledge::Space::S3, {"s3_elementwise_fusion", "s3_vectorize"}, "class ModelNew: pass  # other", "passed");
  if (improved) {
    optimize::BestResult best;
    best.candidate.id = "c2";
    best.candidate.space = knowledge::Space::S1;
    best.candidate.recipes = std::move(recipes);
    best.candidate.source = "class ModelNew: pass  # candidate";
    best.delivered_source = "class ModelNew: pass  # delivered";
    best.evaluation = passed(timing(2.0, 1.0));
    best.speedup = 2.0;
    r.best = best;
  }
  return r;
}

}  // namespace hiera::engine::bench::testing
