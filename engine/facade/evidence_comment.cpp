#include "engine/facade/evidence_comment.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "engine/spec/task_spec.h"
#include "engine/common/number_text.h"

namespace hiera::engine::facade {

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

Evidence evidence_of(const optimize::OptimizeResult& result) {
  if (!result.improved() || !result.best->evaluation.timing) {
    throw std::invalid_argument("no verified improvement: nothing to annotate");
  }
  const auto& best = *result.best;
  Evidence e;
  e.gpu = result.gpu;
  e.speedup = best.speedup;
  e.reference = best.evaluation.timing->reference;
  e.optimized = best.evaluation.timing->candidate;
  e.verification_trials = static_cast<int>(best.evaluation.trials.size());
  e.delivered_space = knowledge::to_string(best.candidate.space);
  for (const auto& attempt : result.attempts) {
    const std::string space = knowledge::to_string(attempt.attempt.candidate.space);
    if (std::find(e.spaces_tried.begin(), e.spaces_tried.end(), space) == e.spaces_tried.end()) e.spaces_tried.push_back(space);
  }
  if (!result.run_dir.empty()) e.report_path = (result.run_dir / "report.md").string();
  try {
    const auto spec = spec::TaskSpec::from_json(result.spec);
    const auto dtypes = spec.output_dtypes();
    e.dtype = dtypes.empty() ? "float32" : dtypes.front();
    e.atol = spec.atol(e.dtype);
    e.rtol = spec.rtol(e.dtype);
  } catch (const std::exception&) {
    e.dtype.clear();  // a spec that does not read back: the comment leaves the tolerance out
  }
  return e;
}

std::string annotation_comment(const Evidence& e, const std::string& prefix) {
  std::string out;
  out += prefix + "Optimized by hiera on " + e.gpu + ": " + fixed(e.speedup, 2) + "x faster than the original, verified.\n";
  out += prefix + "Median " + fixed(e.reference.median_ms, 4) + " ms -> " + fixed(e.optimized.median_ms, 4) + " ms (p10-p90 " +
         fixed(e.reference.p10_ms, 4) + "-" + fixed(e.reference.p90_ms, 4) + " ms -> " + fixed(e.optimized.p10_ms, 4) + "-" +
         fixed(e.optimized.p90_ms, 4) + " ms, " + std::to_string(e.optimized.trials) + " timed runs each).\n";
  std::string checks = "Verified on " + std::to_string(e.verification_trials) + " trials";
  if (e.atol || e.rtol) {
    checks += " within";
    if (e.atol) checks += " atol " + general(*e.atol);
    if (e.atol && e.rtol) checks += ",";
    if (e.rtol) checks += " rtol " + general(*e.rtol);
    checks += " (" + e.dtype + ")";
  }
  if (!e.spaces_tried.empty()) checks += "; spaces tried: " + joined(e.spaces_tried);
  checks += "; delivered from " + e.delivered_space + ".";
  out += prefix + checks + "\n";
  if (!e.report_path.empty()) out += prefix + "Full report: " + e.report_path + "\n";
  return out;
}

}  // namespace hiera::engine::facade
