#include "engine/knowledge/probe_check.h"

#include <cmath>
#include <cstdio>
#include <optional>

namespace hiera::engine::knowledge {

namespace {

std::string format(double value, const char* pattern) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

std::optional<ProbeDeviation> compare(const GpuSpec& spec, std::string quantity, std::string what, std::string unit,
                                      double measured, double peak) {
  if (!(measured > 0) || !std::isfinite(measured) || !(peak > 0)) return std::nullopt;
  ProbeDeviation deviation;
  deviation.quantity = std::move(quantity);
  deviation.measured = measured;
  deviation.peak = peak;
  deviation.fraction = measured / peak;
  const std::string figures = "measured " + what + " " + format(measured, "%.1f") + " " + unit + " is " +
                              format(100 * deviation.fraction, "%.0f") + "% of the " + spec.name + " peak of " +
                              format(peak, "%.1f") + " " + unit;
  if (measured > peak) {
    deviation.kind = ProbeDeviation::Kind::AbovePeak;
    deviation.message = figures + ": above the peak is impossible, so the probe or the spec (" + spec.id + ") is wrong";
  } else if (deviation.fraction < kProbeLowFraction) {
    deviation.kind = ProbeDeviation::Kind::FarBelowPeak;
    deviation.message = figures + ": below " + format(100 * kProbeLowFraction, "%.0f") +
                        "%, the GPU may be throttled or shared, or it is not the GPU the spec describes";
  } else {
    return std::nullopt;
  }
  return deviation;
}

}  // namespace

std::vector<ProbeDeviation> check_against_probe(const GpuSpec& spec, double measured_copy_gbs,
                                                const std::map<std::string, double>& measured_tflops) {
  std::vector<ProbeDeviation> out;
  if (auto deviation = compare(spec, "copy_gbs", "copy bandwidth", "GB/s", measured_copy_gbs, spec.memory_bandwidth_gbs))
    out.push_back(std::move(*deviation));
  for (const auto& [dtype, measured] : measured_tflops) {
    const auto peak = spec.peak_tflops.find(dtype);
    if (peak == spec.peak_tflops.end()) continue;
    if (auto deviation = compare(spec, "gemm_tflops." + dtype, dtype + " GEMM", "TFLOP/s", measured, peak->second))
      out.push_back(std::move(*deviation));
  }
  return out;
}

}  // namespace hiera::engine::knowledge
