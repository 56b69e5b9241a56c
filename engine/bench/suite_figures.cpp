#include "engine/bench/suite_figures.h"

#include <cmath>

namespace hiera::engine::bench {

namespace {

// What "correct" means for a fast_p: hiera's verdict, or KernelBench's criterion.
bool hiera_correct(const ProblemResult& r) { return r.correct; }
bool kernelbench_correct(const ProblemResult& r) { return r.kernelbench && r.kernelbench->passed; }

std::map<std::string, double> fast_p(const std::vector<ProblemResult>& results,
                                     std::optional<double> ProblemResult::*speedup,
                                     bool (*correct)(const ProblemResult&) = hiera_correct) {
  std::map<std::string, double> fractions;
  for (const auto& [key, p] : kFastPThresholds) {
    int count = 0;
    for (const auto& r : results) {
      if (correct(r) && delivered_speedup(r.*speedup) > p) ++count;
    }
    fractions[key] = results.empty() ? 0.0 : static_cast<double>(count) / static_cast<double>(results.size());
  }
  return fractions;
}

double geomean(const std::vector<ProblemResult>& results, std::optional<double> ProblemResult::*speedup) {
  if (results.empty()) return 1.0;
  double log_sum = 0.0;
  for (const auto& r : results) log_sum += std::log(delivered_speedup(r.*speedup));
  return std::exp(log_sum / static_cast<double>(results.size()));
}

}  // namespace

double delivered_speedup(const std::optional<double>& measured) {
  // A ratio of two positive times; anything else was not a measurement.
  return measured && std::isfinite(*measured) && *measured > 0.0 ? *measured : 1.0;
}

SuiteFigures compute_figures(const std::vector<ProblemResult>& results, bool with_compile) {
  SuiteFigures figures;
  figures.problems = static_cast<int>(results.size());
  for (const auto& r : results) figures.correct += r.correct ? 1 : 0;
  figures.fast_p = fast_p(results, &ProblemResult::speedup_eager);
  figures.fast_p_kernelbench = fast_p(results, &ProblemResult::speedup_eager, kernelbench_correct);
  figures.geomean_eager = geomean(results, &ProblemResult::speedup_eager);
  if (with_compile) {
    figures.fast_p_compile = fast_p(results, &ProblemResult::speedup_compile);
    figures.fast_p_kernelbench_compile = fast_p(results, &ProblemResult::speedup_compile, kernelbench_correct);
    figures.geomean_compile = geomean(results, &ProblemResult::speedup_compile);
  }
  return figures;
}

}  // namespace hiera::engine::bench
