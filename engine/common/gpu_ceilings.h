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

// The fastest a float32-accurate matrix product runs on these peaks (0 when none is listed): cuBLAS's
// float32 rate, or 3xTF32's where that is higher (each operand split in two TF32 parts, three products on
// the TF32 tensor cores: a third of their peak). A float32 GEMM's speed of light is held against it, so a
// 3xTF32 candidate (s2_split_tf32_gemm) is not "faster than light" against the CUDA cores' rate.
inline double float32_accurate_tflops(const std::map<std::string, double>& peak_tflops) {
  const auto fp32 = peak_tflops.find("float32");
  const auto tf32 = peak_tflops.find("tf32");
  const double own = fp32 != peak_tflops.end() ? fp32->second : 0.0;
  const double split = tf32 != peak_tflops.end() ? tf32->second / 3.0 : 0.0;
  return own > split ? own : split;
}

}  // namespace hiera::engine
