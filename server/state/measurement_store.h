#pragma once
// What the server has measured for one symbol of one document: the last
// profile of a kernel or module and the last verified optimization. Written
// by the optimize and profile jobs, read by hover and code lenses; shared by
// the features of one server and safe across threads.
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/facade/run_measurement.h"

namespace hiera::server {

// A run's measurement (engine/facade/run_measurement.h) with the symbol it is
// of and when the server took it.
struct Measurement : engine::facade::RunMeasurement {
  std::string uri;
  std::string symbol;  // kernel name, or nn.Module class name
  std::string when;    // ISO 8601, UTC
};

class MeasurementStore {
 public:
  // Replaces what was stored for (uri, symbol), keeping the optimization
  // fields of the old record when the new one has none (a profile after an
  // optimization keeps its speed-up).
  void put(Measurement measurement) {
    std::lock_guard lock(mutex_);
    auto key = std::make_pair(measurement.uri, measurement.symbol);
    auto found = records_.find(key);
    if (found != records_.end() && !measurement.verified_speedup) {
      measurement.verified_speedup = found->second.verified_speedup;
      measurement.optimized_median_ms = found->second.optimized_median_ms;
      if (measurement.report_path.empty()) measurement.report_path = found->second.report_path;
    }
    records_[std::move(key)] = std::move(measurement);
  }
  std::optional<Measurement> get(const std::string& uri, const std::string& symbol) const {
    std::lock_guard lock(mutex_);
    auto found = records_.find({uri, symbol});
    if (found == records_.end()) return std::nullopt;
    return found->second;
  }
  std::vector<Measurement> of_document(const std::string& uri) const {
    std::lock_guard lock(mutex_);
    std::vector<Measurement> out;
    for (const auto& [key, record] : records_) {
      if (key.first == uri) out.push_back(record);
    }
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, Measurement> records_;
};

}  // namespace hiera::server
