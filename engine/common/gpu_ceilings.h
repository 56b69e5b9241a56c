#pragma once
// The ceilings of one GPU, the one type every speed of light is held against
// (MEASURING.md: speed of light = max(flops / peak, bytes / bandwidth)): the
// worker's probe fills it from measurements, engine/plan from a probe or a
// datasheet, the editor's estimates from a datasheet. The fixed cost of one
// launch is part of it: the planner's latency bound and the estimates' launch
// floor count the same figure.
#include <map>
#include <string>

namespace hiera::engine {

inline constexpr double kKernelLaunchUs = 3.0;

struct GpuCeilings {
  double bandwidth_gbs = 0.0;                 // device memory, bytes read + written per second / 1e9
  std::map<std::string, double> peak_tflops;  // by dtype: float32, tf32, float16, bfloat16, float64, int8
  double launch_overhead_us = kKernelLaunchUs;  // 0: the pure speed of light, no launch floor
  std::string source;  // "probe of NVIDIA H200", "knowledge: h200 datasheet", a GPU id
};

}  // namespace hiera::engine
