#pragma once
// The Markdown report of an optimization run (report.md in the run's
// directory, `hiera optimize --report`): outcome and evidence first, then the
// spec, the plan with its reasons, every attempt, and the run's figures.
#include <string>

#include "engine/optimize/optimize_result.h"

namespace hiera::engine::optimize {

std::string to_markdown(const OptimizeResult& result);

// "1.234 ms (p10 1.200, p90 1.300, 50 trials)"
std::string timing_text(const eval::TimingStats& stats);

// "KernelBench criterion (5 trials, allclose atol=rtol=1e-4): passed, max abs error 1.7e-4"
// (a failure adds its message in parentheses).
std::string kernelbench_text(const eval::KernelBenchVerdict& verdict);

}  // namespace hiera::engine::optimize
