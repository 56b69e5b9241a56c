#include "server/features/result_measurement.h"

#include <chrono>
#include <ctime>

#include "engine/facade/run_measurement.h"

namespace hiera::server {

namespace {

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace

Measurement measurement_of(const engine::optimize::OptimizeResult& result, const std::string& uri, const std::string& symbol,
                           bool with_optimization) {
  const auto run = engine::facade::run_measurement(result, with_optimization);
  Measurement m;
  m.uri = uri;
  m.symbol = symbol;
  m.gpu = run.gpu;
  m.when = utc_now();
  m.median_ms = run.median_ms;
  m.p10_ms = run.p10_ms;
  m.p90_ms = run.p90_ms;
  m.sol_fraction = run.sol_fraction;
  m.bottleneck = run.bottleneck;
  for (const auto& k : run.kernels) m.kernels.push_back({k.name, k.ms, k.fraction});
  m.verified_speedup = run.verified_speedup;
  m.optimized_median_ms = run.optimized_median_ms;
  m.report_path = run.report_path;
  return m;
}

}  // namespace hiera::server
