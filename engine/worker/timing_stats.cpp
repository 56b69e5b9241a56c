#include "engine/worker/timing_stats.h"

#include <algorithm>
#include <cmath>

namespace hiera::engine::worker {

namespace {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0.0;
  const double rank = p * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (rank - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace

TimingStats summarize_timings(std::vector<double> samples_ms) {
  std::sort(samples_ms.begin(), samples_ms.end());
  TimingStats stats;
  stats.trials = static_cast<int>(samples_ms.size());
  if (samples_ms.empty()) return stats;
  stats.min_ms = samples_ms.front();
  stats.median_ms = percentile(samples_ms, 0.5);
  stats.p10_ms = percentile(samples_ms, 0.1);
  stats.p90_ms = percentile(samples_ms, 0.9);
  return stats;
}

nlohmann::json to_json(const TimingStats& stats) {
  return {{"median_ms", stats.median_ms}, {"min_ms", stats.min_ms}, {"p10_ms", stats.p10_ms},
          {"p90_ms", stats.p90_ms}, {"trials", stats.trials}};
}

}  // namespace hiera::engine::worker
