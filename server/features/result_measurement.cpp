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
  Measurement m;
  static_cast<engine::facade::RunMeasurement&>(m) = engine::facade::run_measurement(result, with_optimization);
  m.uri = uri;
  m.symbol = symbol;
  m.when = utc_now();
  return m;
}

}  // namespace hiera::server
