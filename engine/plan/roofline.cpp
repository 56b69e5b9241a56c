// GpuCeilings from a probe or a datasheet, and placing regions on the roofline (roofline.h).
#include "engine/plan/roofline.h"

#include <algorithm>
#include <stdexcept>

#include "engine/plan/allowance.h"
#include "engine/plan/units.h"

namespace hiera::engine::plan {
namespace {

using knowledge::Bottleneck;

std::map<std::string, double> positive_rates(const std::map<std::string, double>& rates) {
  std::map<std::string, double> out;
  for (const auto& [dtype, rate] : rates) {
    if (rate > 0.0) out.emplace(dtype, rate);
  }
  return out;
}

struct ComputePeak {
  std::string dtype;
  double tflops = 0.0;
  std::string label;  // "bfloat16", "tf32, allowed for float32", "float32: no float64 ceiling"
};

// The peak the region's flops are held against: its own dtype's, or a higher
// one a precision allowance unlocks; float32's when its dtype has no ceiling.
std::optional<ComputePeak> compute_peak(const GpuCeilings& ceilings, const std::string& dtype,
                                        const std::vector<std::string>& allowed) {
  std::optional<ComputePeak> best;
  if (const auto own = ceilings.peak_tflops.find(dtype); own != ceilings.peak_tflops.end()) {
    best = ComputePeak{dtype, own->second, dtype};
  }
  if (dtype == "float32") {
    // float32's accuracy on the TF32 tensor cores (3xTF32) is float32 work too.
    const double accurate = float32_accurate_tflops(ceilings.peak_tflops);
    if (accurate > 0.0 && (!best || accurate > best->tflops)) best = ComputePeak{dtype, accurate, "float32 as 3xTF32"};
  }
  for (const std::string& allowance : effective_allowances(allowed, dtype)) {
    const auto unlocked = ceiling_of_allowance(allowance);
    if (!unlocked || *unlocked == dtype) continue;
    const auto rate = ceilings.peak_tflops.find(*unlocked);
    if (rate == ceilings.peak_tflops.end() || (best && rate->second <= best->tflops)) continue;
    best = ComputePeak{*unlocked, rate->second, *unlocked + ", allowed for " + (dtype.empty() ? "this region" : dtype)};
  }
  if (best) return best;
  if (const auto fp32 = ceilings.peak_tflops.find("float32"); fp32 != ceilings.peak_tflops.end()) {
    return ComputePeak{"float32", fp32->second,
                       dtype.empty() ? "float32: the region names no dtype" : "float32: no " + dtype + " ceiling"};
  }
  return std::nullopt;
}

std::string of_speed_of_light(double fraction) { return "(" + format_percent(fraction) + " of speed of light)"; }

}  // namespace

GpuCeilings ceilings_from_probe(double copy_gbs, const std::map<std::string, double>& gemm_tflops,
                             const std::string& device_name) {
  if (!(copy_gbs > 0.0)) throw std::invalid_argument("the probe measured no copy bandwidth");
  GpuCeilings ceilings;
  ceilings.bandwidth_gbs = copy_gbs;
  ceilings.peak_tflops = positive_rates(gemm_tflops);
  ceilings.source = "probe of " + device_name;
  return ceilings;
}

GpuCeilings ceilings_from_spec(const knowledge::GpuSpec& spec) {
  if (!(spec.memory_bandwidth_gbs > 0.0)) {
    throw std::invalid_argument("GPU spec " + spec.id + " has no memory bandwidth");
  }
  GpuCeilings ceilings;
  ceilings.bandwidth_gbs = spec.memory_bandwidth_gbs;
  ceilings.peak_tflops = positive_rates(spec.peak_tflops);
  ceilings.source = "knowledge: " + spec.id + " datasheet";
  return ceilings;
}

std::string describe(const GpuCeilings& ceilings) {
  std::string out = ceilings.source + ": " + format_bandwidth(ceilings.bandwidth_gbs);
  if (!ceilings.peak_tflops.empty()) {
    out += ";";
    const char* separator = " ";
    for (const auto& [dtype, rate] : ceilings.peak_tflops) {
      const std::string rate_text = format_tflops(rate);  // "806.3 TFLOP/s": the number, the unit once at the end
      out += separator + dtype + " " + rate_text.substr(0, rate_text.find(' '));
      separator = ", ";
    }
    out += " TFLOP/s";
  }
  return out + "; " + format_time_ms(ceilings.launch_overhead_us / 1e3) + " per launch";
}

bool is_compute_pattern(const std::string& pattern) {
  static const char* const compute[] = {"gemm", "gemm_epilogue", "batched_gemm", "conv", "conv_epilogue", "attention"};
  return std::find(std::begin(compute), std::end(compute), pattern) != std::end(compute);
}

RooflinePoint place(const Region& region, const GpuCeilings& ceilings, const std::vector<std::string>& allowed_precision) {
  if (!(region.measured_ms > 0.0)) {
    throw std::invalid_argument("region " + region.name + ": the measured time must be positive");
  }
  RooflinePoint point;
  const double measured = region.measured_ms;
  const double one_launch = ceilings.launch_overhead_us / 1e3;
  point.launch_ms = region.launches * one_launch;
  point.byte_ms = ceilings.bandwidth_gbs > 0.0 ? region.bytes / ceilings.bandwidth_gbs / 1e6 : 0.0;
  const auto peak = compute_peak(ceilings, region.dtype, allowed_precision);
  if (peak) {
    point.compute_dtype = peak->dtype;
    point.flop_ms = region.flops / peak->tflops / 1e9;
  }
  point.speed_of_light_ms = std::max(point.flop_ms, point.byte_ms);
  point.work_counted = region.flops > 0.0 || region.bytes > 0.0;
  const double sol = point.speed_of_light_ms;
  const bool compute_side = point.flop_ms > point.byte_ms;

  // The side of the roofline the work lies on, in words.
  auto work_sentence = [&] {
    if (compute_side) {
      return "compute-bound: " + format_flops(region.flops) + " at " + format_tflops(peak->tflops) + " (" +
             peak->label + ") is " + format_time_ms(point.flop_ms);
    }
    return "memory-bound: " + format_bytes(region.bytes) + " at " + format_bandwidth(ceilings.bandwidth_gbs) + " is " +
           format_time_ms(point.byte_ms);
  };
  auto settle = [&](Bottleneck bottleneck, double bound) {
    point.bottleneck = bottleneck;
    point.bound_ms = bound;
    point.headroom_ms = std::max(0.0, measured - bound);
    point.fraction_of_sol = bound / measured;
  };

  const bool launch_heavy = region.launches > 0 && point.launch_ms >= 0.5 * measured;
  const bool tiny_work = point.work_counted && region.launches > 0 && sol < 0.1 * one_launch;
  if (point.work_counted && measured < sol) {
    point.faster_than_light = true;
    settle(compute_side ? Bottleneck::Compute : Bottleneck::Memory, sol);
    point.reason = work_sentence() + "; measured " + format_time_ms(measured) +
                   ", faster than the speed of light: the counted work or the timing is wrong";
  } else if (launch_heavy) {
    settle(Bottleneck::Latency, std::max(sol, one_launch));
    point.reason = "latency-bound: " + count_of(region.launches, "launch", "launches") + " × " +
                   format_time_ms(one_launch) + " = " + format_time_ms(point.launch_ms) + " of fixed cost in " +
                   format_time_ms(measured) + " measured; ";
    if (!point.work_counted) {
      point.reason += "the work is not counted, so the bound is one launch, " + format_time_ms(one_launch);
    } else if (sol < one_launch) {
      point.reason += "the work needs " + format_time_ms(sol) + ", so the bound is one launch, " +
                      format_time_ms(one_launch);
    } else {
      point.reason += "the work needs " + format_time_ms(sol);
    }
    point.reason += " " + of_speed_of_light(point.fraction_of_sol);
  } else if (tiny_work) {
    settle(Bottleneck::Latency, one_launch);
    point.reason = "latency-bound: the work needs " + format_time_ms(sol) + ", far below one launch (" +
                   format_time_ms(one_launch) + "); measured " + format_time_ms(measured) + " in " +
                   count_of(region.launches, "launch", "launches") + ", so the bound is one launch " +
                   of_speed_of_light(point.fraction_of_sol);
  } else if (!point.work_counted) {
    const bool compute = is_compute_pattern(region.pattern);
    point.bottleneck = compute ? Bottleneck::Compute : Bottleneck::Memory;
    point.bound_ms = 0.0;
    point.headroom_ms = measured;
    point.fraction_of_sol = 0.0;
    point.reason = std::string(compute ? "compute" : "memory") + "-bound by its pattern (" + region.pattern +
                   "): no flops or bytes counted, so no speed of light; measured " + format_time_ms(measured);
  } else {
    settle(compute_side ? Bottleneck::Compute : Bottleneck::Memory, sol);
    point.reason = work_sentence() + "; measured " + format_time_ms(measured) + " " +
                   of_speed_of_light(point.fraction_of_sol);
  }
  if (point.work_counted && region.flops > 0.0 && !peak) {
    point.reason += "; no compute ceiling for " + (region.dtype.empty() ? std::string("this region") : region.dtype) +
                    ", so its flops are not counted";
  }
  if (!region.note.empty()) point.reason += "; " + region.note;
  return point;
}

}  // namespace hiera::engine::plan
