#pragma once
// The suite's headline figures, over every problem given (a suite or one of its
// groups):
// - fast_p (KernelBench's definition): the fraction of ALL problems that are
//   correct AND faster than p, for p = 0, 1, 1.5, 2; fast_0 is the fraction
//   correct. Computed over the speed-up against eager PyTorch, and again
//   against torch.compile when that baseline ran.
// - fast_p_kernelbench: the same fractions with "correct" meaning KernelBench's
//   own criterion passed (ProblemResult::kernelbench); a problem without that
//   verdict is not correct there.
// - the geometric mean of the delivered speed-up over all problems.
// A problem with no measured speed-up (its reference failed, or the baseline
// could not be timed) counts as 1.0 in both: what hiera hands back is then
// the original. A problem where nothing was faster is measured as 1.0 already.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/bench/problem_result.h"

namespace hiera::engine::bench {

// p as the summary's keys spell it, and its value.
inline const std::vector<std::pair<std::string, double>> kFastPThresholds = {{"0", 0.0}, {"1", 1.0}, {"1.5", 1.5}, {"2", 2.0}};

struct SuiteFigures {
  int problems = 0;
  int correct = 0;
  std::map<std::string, double> fast_p;                         // keyed as kFastPThresholds
  std::optional<std::map<std::string, double>> fast_p_compile;  // only with the compile baseline
  std::map<std::string, double> fast_p_kernelbench;             // correct by KernelBench's criterion, over eager
  std::optional<std::map<std::string, double>> fast_p_kernelbench_compile;  // and over torch.compile
  double geomean_eager = 1.0;
  std::optional<double> geomean_compile;
};

// The speed-up a problem delivers: the measured one, else 1.0 (see above).
double delivered_speedup(const std::optional<double>& measured);

// Over no problems: fractions 0 and geometric means 1.0 (the empty product).
SuiteFigures compute_figures(const std::vector<ProblemResult>& results, bool with_compile);

}  // namespace hiera::engine::bench
