#pragma once
// The roofline time of a piece of work on one GPU: the larger of its flops at
// the peak rate of its dtype and its bytes at the memory bandwidth (the
// speed-of-light time of MEASURING.md). The ceilings come from the caller
// (knowledge/gpus through engine/knowledge, or a probe): analysis itself reads
// no files.
#include <map>
#include <optional>
#include <string>

#include "engine/analysis/work.h"
#include "engine/common/launch_overhead.h"

namespace hiera::engine::analysis {

// The least time one kernel launch takes however little it does, as the
// planner counts it.
inline constexpr double kLaunchFloorUs = kKernelLaunchUs;

struct Roofline {
  std::string gpu;                          // "h200"
  double bandwidth_gbs = 0.0;               // device memory, GB/s
  std::map<std::string, double> peak_tflops;  // by dtype: float32, tf32, float16, bfloat16, float64, int8, ...
  double launch_floor_us = 0.0;             // 0: the pure speed of light, no floor
};

struct RooflineTime {
  double seconds = 0.0;
  double compute_seconds = 0.0;  // flops / peak
  double memory_seconds = 0.0;   // bytes / bandwidth
  bool memory_bound = false;
  std::string peak_dtype;        // whose peak the flops were held against
  double speed_of_light_seconds = 0.0;  // max(compute, memory), before the launch floor
  bool launch_bound = false;     // the launch floor, not the work, sets `seconds`
};

// nullopt when the roofline has no bandwidth. A dtype without a peak of its
// own (int64 fills) is held against float32's; tf32 without one, too. Work
// that moves or computes anything takes at least the launch floor.
std::optional<RooflineTime> roofline_time(const Work& work, const Roofline& roofline);

}  // namespace hiera::engine::analysis
