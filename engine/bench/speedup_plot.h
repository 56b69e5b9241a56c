#pragma once
// OUT/speedups.svg: the distribution of the delivered speed-ups, one point per
// problem, each series (over eager; over torch.compile when it ran) sorted
// ascending, on a log-2 scale with a dashed line at 1.0x. Problems without a
// measured speed-up are left out of their series (the caption counts them).
#include <string>
#include <vector>

#include "engine/bench/problem_result.h"

namespace hiera::engine::bench {

std::string speedup_plot_svg(const std::vector<ProblemResult>& results, bool with_compile);

}  // namespace hiera::engine::bench
