// Splitting a candidate budget (budget.h).
#include "engine/plan/budget.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace hiera::engine::plan {

std::vector<int> split_budget(int total, const std::vector<double>& weights, int minimum_each) {
  const int steps = static_cast<int>(weights.size());
  if (steps == 0) return {};
  if (minimum_each < 0 || total < steps * minimum_each) {
    throw std::invalid_argument("a budget of " + std::to_string(total) + " cannot give " +
                                std::to_string(minimum_each) + " to each of " + std::to_string(steps) + " steps");
  }
  for (const double weight : weights) {
    if (!(weight >= 0.0)) throw std::invalid_argument("budget weights must be non-negative");
  }
  const int rest = total - steps * minimum_each;
  double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<double> shares(weights);
  if (sum <= 0.0) {
    std::fill(shares.begin(), shares.end(), 1.0);
    sum = steps;
  }
  std::vector<int> out(steps, minimum_each);
  std::vector<double> remainders(steps);
  int given = 0;
  for (int i = 0; i < steps; ++i) {
    const double quota = rest * shares[i] / sum;
    const int whole = static_cast<int>(std::floor(quota));
    out[i] += whole;
    given += whole;
    remainders[i] = quota - whole;
  }
  std::vector<int> order(steps);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return remainders[a] > remainders[b]; });
  for (int i = 0; given < rest; ++i, ++given) ++out[order[i % steps]];
  return out;
}

}  // namespace hiera::engine::plan
