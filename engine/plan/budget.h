#pragma once
// Splitting a candidate budget across plan steps: every step gets a floor
// (enough candidates to learn whether its space pays), the rest goes in
// proportion to the steps' weights (their region's headroom), by largest
// remainder, so the parts are whole numbers that add up to the total.
#include <vector>

namespace hiera::engine::plan {

// `minimum_each` to every step, then total - n x minimum_each by weight
// (Hamilton's method; ties to the earlier step). Equal shares when every
// weight is zero. Throws std::invalid_argument when total < n x minimum_each
// or a weight is negative.
std::vector<int> split_budget(int total, const std::vector<double>& weights, int minimum_each);

}  // namespace hiera::engine::plan
