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

namespace hiera::server {

struct KernelShare {
  std::string name;  // the kernel as the profiler names it
  double ms = 0;     // its time per call of the symbol
  double fraction = 0;  // of the symbol's GPU time
};

struct Measurement {
  std::string uri;
  std::string symbol;  // kernel name, or nn.Module class name
  std::string gpu;     // "NVIDIA H200"
  std::string when;    // ISO 8601, UTC
  // The reference as measured: median and the p10-p90 spread.
  std::optional<double> median_ms, p10_ms, p90_ms;
  std::optional<double> sol_fraction;  // speed-of-light time / measured time
  std::string bottleneck;              // "memory-bound", "compute-bound", "launch-bound"; "" unknown
  std::vector<KernelShare> kernels;    // the last profile's per-kernel breakdown
  // After an optimize run that delivered a verified edit.
  std::optional<double> verified_speedup;
  std::optional<double> optimized_median_ms;
  std::string report_path;  // the run's full Markdown report; "" none
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
