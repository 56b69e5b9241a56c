#pragma once
// What an optimizer run measured about the reference, in the terms a front
// end shows next to the source: its timing, where it sits on the roofline,
// the bottleneck the planner named and its per-kernel profile; with the
// verified speed-up when the run improved it. The server keeps it per symbol
// for hover and code lenses (server/features/result_measurement.h).
#include <optional>
#include <string>
#include <vector>

#include "engine/optimize/optimize_result.h"

namespace hiera::engine::facade {

struct KernelTime {
  std::string name;     // the kernel as the profiler names it
  double ms = 0;        // its time per call of the symbol
  double fraction = 0;  // of the symbol's GPU time
};

struct RunMeasurement {
  std::string gpu;  // "NVIDIA H200"
  std::optional<double> median_ms, p10_ms, p90_ms;
  std::optional<double> sol_fraction;  // speed-of-light time / measured time
  std::string bottleneck;              // "memory-bound", "compute-bound", "launch-bound"; "" unknown
  std::vector<KernelTime> kernels;     // the reference profile's per-kernel breakdown
  std::optional<double> verified_speedup;
  std::optional<double> optimized_median_ms;
  std::string report_path;  // the run's full Markdown report; "" none
};

// Reference fields only (`with_optimization` false), or also verified_speedup,
// optimized_median_ms (only for a result that improved()) and report_path.
RunMeasurement run_measurement(const optimize::OptimizeResult& result, bool with_optimization);

}  // namespace hiera::engine::facade
