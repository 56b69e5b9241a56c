#pragma once
// Datasheet vs measurement: a probed ceiling above the spec's peak is
// impossible (a bad probe or a wrong spec), one far below it means a
// throttled or shared GPU. Either makes roofline estimates untrustworthy.
#include <map>
#include <string>
#include <vector>

#include "engine/knowledge/gpu_spec.h"

namespace hiera::engine::knowledge {

// Below this fraction of the peak a measurement is flagged.
inline constexpr double kProbeLowFraction = 0.5;

struct ProbeDeviation {
  enum class Kind { AbovePeak, FarBelowPeak };
  Kind kind = Kind::AbovePeak;
  std::string quantity;  // "copy_gbs" or "gemm_tflops.<dtype>", as the probe names them
  double measured = 0, peak = 0;
  double fraction = 0;   // measured / peak
  std::string message;
};

// Checks the probe's copy bandwidth (GB/s) against memory_bandwidth_gbs and each
// GEMM rate (TFLOP/s, by dtype) against peak_tflops. A measurement that is not
// positive (not measured) or has no peak in the spec is not checked.
std::vector<ProbeDeviation> check_against_probe(const GpuSpec& spec, double measured_copy_gbs,
                                                const std::map<std::string, double>& measured_tflops);

}  // namespace hiera::engine::knowledge
