#include "engine/analysis/roofline_time.h"

#include <algorithm>

namespace hiera::engine::analysis {

std::optional<RooflineTime> roofline_time(const Work& work, const GpuCeilings& ceilings) {
  if (ceilings.bandwidth_gbs <= 0) return std::nullopt;
  RooflineTime t;
  auto peak = ceilings.peak_tflops.find(work.dtype);
  if (peak == ceilings.peak_tflops.end() || peak->second <= 0) peak = ceilings.peak_tflops.find("float32");
  if (peak != ceilings.peak_tflops.end() && peak->second > 0) {
    t.peak_dtype = peak->first;
    t.compute_seconds = work.flops / (peak->second * 1e12);
  }
  t.memory_seconds = work.bytes / (ceilings.bandwidth_gbs * 1e9);
  t.memory_bound = t.memory_seconds >= t.compute_seconds;
  t.seconds = t.speed_of_light_seconds = std::max(t.compute_seconds, t.memory_seconds);
  const double floor = ceilings.launch_overhead_us * 1e-6;
  if ((work.flops > 0 || work.bytes > 0) && t.seconds < floor) {
    t.seconds = floor;
    t.launch_bound = true;
  }
  return t;
}

}  // namespace hiera::engine::analysis
