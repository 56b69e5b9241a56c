#pragma once
// OUT/sol.svg: each problem's achieved fraction of its speed-of-light bound
// (the plan's bound over the delivered time), one horizontal bar per problem
// in suite order, 0 to 100%. A problem without a bound gets "n/a" and no bar;
// a fraction above 1 (measured faster than light: the counted work or the
// timing is wrong) is drawn full and labelled with its value.
#include <string>
#include <vector>

#include "engine/bench/problem_result.h"

namespace hiera::engine::bench {

std::string sol_plot_svg(const std::vector<ProblemResult>& results);

}  // namespace hiera::engine::bench
