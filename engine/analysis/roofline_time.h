#pragma once
// The roofline time of a piece of work on one GPU: the larger of its flops at
// the peak rate of its dtype and its bytes at the memory bandwidth (the
// speed-of-light time of MEASURING.md), held against engine/common's
// GpuCeilings. The ceilings come from the caller (knowledge/gpus through
// engine/knowledge, or a probe): analysis itself reads no files.
#include <map>
#include <optional>
#include <string>

#include "engine/analysis/work.h"
#include "engine/common/gpu_ceilings.h"

namespace hiera::engine::analysis {

struct RooflineTime {
  double seconds = 0.0;
  double compute_seconds = 0.0;  // flops / peak
  double memory_seconds = 0.0;   // bytes / bandwidth
  bool memory_bound = false;
  std::string peak_dtype;        // whose peak the flops were held against
  double speed_of_light_seconds = 0.0;  // max(compute, memory), before the launch floor
  bool launch_bound = false;     // the launch floor, not the work, sets `seconds`
};

// nullopt when the ceilings have no bandwidth. A dtype without a peak of its
// own (int64 fills) is held against float32's; tf32 without one, too. Work
// that moves or computes anything takes at least one launch
// (`launch_overhead_us`; 0 for the pure speed of light).
std::optional<RooflineTime> roofline_time(const Work& work, const GpuCeilings& ceilings);

}  // namespace hiera::engine::analysis
