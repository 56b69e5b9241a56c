#pragma once
// Summary statistics of a set of timings: median with min/p10/p90, the
// spread that tells a real difference from noise.
#include <vector>

#include <nlohmann/json.hpp>

namespace hiera::engine::worker {

struct TimingStats {
  double median_ms = 0.0;
  double min_ms = 0.0;
  double p10_ms = 0.0;
  double p90_ms = 0.0;
  int trials = 0;
};

// Percentiles interpolate linearly between order statistics (numpy's default).
TimingStats summarize_timings(std::vector<double> samples_ms);
nlohmann::json to_json(const TimingStats& stats);

}  // namespace hiera::engine::worker
