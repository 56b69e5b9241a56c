#include "engine/facade/run_measurement.h"

#include <nlohmann/json.hpp>

namespace hiera::engine::facade {

using nlohmann::json;

namespace {

std::string bottleneck_text(const std::string& planner) {
  if (planner == "memory") return "memory-bound";
  if (planner == "compute") return "compute-bound";
  if (planner == "latency") return "launch-bound";
  return "";
}

}  // namespace

RunMeasurement run_measurement(const optimize::OptimizeResult& result, bool with_optimization) {
  RunMeasurement m;
  m.gpu = result.gpu;
  if (result.reference_timing) {
    m.median_ms = result.reference_timing->reference.median_ms;
    m.p10_ms = result.reference_timing->reference.p10_ms;
    m.p90_ms = result.reference_timing->reference.p90_ms;
  }
  // The roofline: the module's own bound where the op graph gave one, else
  // the regions' bounds added up; the costliest region names the bottleneck.
  const json regions = result.plan.is_object() ? result.plan.value("regions", json::array()) : json::array();
  double bound_ms = 0.0;
  bool counted = false;
  double costliest = -1.0;
  for (const auto& r : regions) {
    if (r.value("work_counted", false)) {
      bound_ms += r.value("bound_ms", 0.0);
      counted = true;
    }
    if (r.value("measured_ms", 0.0) > costliest) {
      costliest = r.value("measured_ms", 0.0);
      m.bottleneck = bottleneck_text(r.value("bottleneck", std::string()));
    }
  }
  if (result.plan.is_object() && result.plan.contains("module_speed_of_light_ms")) {
    bound_ms = result.plan["module_speed_of_light_ms"].get<double>();
    counted = true;
  }
  if (counted && m.median_ms && *m.median_ms > 0 && bound_ms > 0) m.sol_fraction = bound_ms / *m.median_ms;

  if (result.reference_profile.is_object()) {
    double total_ns = 0.0;
    for (const auto& k : result.reference_profile.value("kernels", json::array())) total_ns += k.value("total_ns", 0.0);
    const double calls = result.profiled_calls > 0 ? result.profiled_calls : 1;
    for (const auto& k : result.reference_profile.value("kernels", json::array())) {
      const double ns = k.value("total_ns", 0.0);
      m.kernels.push_back({k.value("name", std::string("?")), ns / calls / 1e6, total_ns > 0 ? ns / total_ns : 0.0});
    }
  }
  if (with_optimization && result.improved() && result.best->evaluation.timing) {
    m.verified_speedup = result.best->speedup;
    m.optimized_median_ms = result.best->evaluation.timing->candidate.median_ms;
  }
  if (with_optimization && !result.run_dir.empty()) m.report_path = (result.run_dir / "report.md").string();
  return m;
}

}  // namespace hiera::engine::facade
