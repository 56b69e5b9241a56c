#pragma once
// The comment an optimized kernel or module is delivered with: the evidence
// that it was verified and measured, in a few lines a reader can check. It
// never starts with "hiera:", which would make it a contract annotation.
// Editor-neutral: the LSP server puts it above the edit it applies; any front
// end that delivers an optimized source may.
#include <optional>
#include <string>
#include <vector>

#include "engine/eval/job_results.h"
#include "engine/optimize/optimize_result.h"

namespace hiera::engine::facade {

struct Evidence {
  std::string gpu;
  double speedup = 0.0;
  eval::TimingStats reference, optimized;
  int verification_trials = 0;
  std::string dtype;  // whose tolerance is shown
  std::optional<double> atol, rtol;
  std::vector<std::string> spaces_tried;  // "S1", "S3", in the order the run tried them
  std::string delivered_space;
  std::string report_path;
};

// From a result that improved() (std::invalid_argument otherwise: no evidence, no comment).
Evidence evidence_of(const optimize::OptimizeResult& result);

// Lines of `prefix` ("// " or "# ") comments, each ending in '\n':
//   Optimized by hiera on NVIDIA H200: 2.00x faster than the original, verified.
//   Median 0.1000 ms -> 0.0500 ms (p10-p90 0.0950-0.1100 ms -> 0.0475-0.0550 ms, 50 timed runs each).
//   Verified on 5 trials within atol 1e-05, rtol 1e-05 (float32); spaces tried: S1, S3; delivered from S3.
//   Full report: /work/.hiera/runs/.../report.md
std::string annotation_comment(const Evidence& evidence, const std::string& prefix);

}  // namespace hiera::engine::facade
