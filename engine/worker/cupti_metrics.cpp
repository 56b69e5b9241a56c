#include "engine/worker/cupti_metrics.h"

#include <cmath>
#include <cstdint>
#include <sstream>
#include <utility>

namespace hiera::engine::worker {

namespace {

constexpr const char* kSource = "CUPTI range profiler";

std::string with(std::string_view lead, std::string_view rest) {
  std::string reason(lead);
  if (!rest.empty()) reason.append(": ").append(rest);
  return reason;
}

std::string unsupported(std::string_view why) { return with(unavailable::kUnsupported, why); }

double one_decimal(double value) { return std::round(value * 10.0) / 10.0; }

std::string number_text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

MetricsOutcome combine_ranges(const std::vector<RangeValues>& ranges, std::size_t passes, std::size_t ranges_dropped) {
  if (ranges.empty()) {
    return MetricsOutcome::none(with(unavailable::kNoKernel,
                                     ranges_dropped > 0 ? "every kernel launch was dropped from the counter data"
                                                        : "no kernel ran in the profiled region"));
  }
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    for (std::size_t m = 0; m < kMetricCount; ++m) {
      const double value = ranges[r][m];
      if (!std::isfinite(value) || value < 0.0) {
        return MetricsOutcome::none(with(unavailable::kFailed, std::string("CUPTI gave ") + kProfileMetrics[m].cupti_name +
                                                                   " = " + number_text(value) + " for kernel launch " +
                                                                   std::to_string(r + 1)));
      }
    }
  }
  double total_ns = 0.0;
  for (const auto& range : ranges) total_ns += range[kDuration];
  HardwareMetrics metrics;
  metrics.duration_ns = total_ns;
  metrics.ranges = ranges.size();
  metrics.passes = passes;
  metrics.ranges_dropped = ranges_dropped;
  auto average = [&](MetricIndex m) {
    double sum = 0.0;
    for (const auto& range : ranges) sum += total_ns > 0.0 ? range[m] * range[kDuration] : range[m];
    return total_ns > 0.0 ? sum / total_ns : sum / static_cast<double>(ranges.size());
  };
  metrics.dram_throughput_pct = average(kDramThroughput);
  metrics.sm_throughput_pct = average(kSmThroughput);
  metrics.achieved_occupancy_pct = average(kAchievedOccupancy);
  return MetricsOutcome::of(metrics);
}

nlohmann::json metrics_json(const MetricsOutcome& outcome) {
  if (!outcome.metrics) {
    return {{"unavailable", outcome.unavailable.empty() ? std::string(unavailable::kFailed) : outcome.unavailable}};
  }
  const HardwareMetrics& m = *outcome.metrics;
  nlohmann::json out = {{kProfileMetrics[kDramThroughput].field, one_decimal(m.dram_throughput_pct)},
                        {kProfileMetrics[kSmThroughput].field, one_decimal(m.sm_throughput_pct)},
                        {kProfileMetrics[kAchievedOccupancy].field, one_decimal(m.achieved_occupancy_pct)},
                        {kProfileMetrics[kDuration].field, static_cast<std::int64_t>(std::llround(m.duration_ns))},
                        {"ranges", m.ranges},
                        {"passes", m.passes},
                        {"source", kSource}};
  if (m.ranges_dropped > 0) out["ranges_dropped"] = m.ranges_dropped;
  return out;
}

std::string unavailable_reason(CUptiResult result, std::string_view step, std::string_view result_text) {
  switch (result) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      return with(unavailable::kRestricted,
                  "ERR_NVGPUCTRPERM, the NVIDIA driver's NVreg_RestrictProfilingToAdminUsers=1. Run the worker as root "
                  "(in a container: with --cap-add=SYS_ADMIN), or have an administrator load the driver with "
                  "NVreg_RestrictProfilingToAdminUsers=0; see https://developer.nvidia.com/ERR_NVGPUCTRPERM");
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return unsupported("the hypervisor does not allow profiling on this virtual GPU");
    case CUPTI_ERROR_HARDWARE_BUSY:
      return with(unavailable::kBusy,
                  "another process holds them (Nsight Compute, Nsight Systems GPU metrics, or DCGM profiling metrics "
                  "such as dcgm-exporter's DCP fields; pause DCGM's with `dcgmi profile --pause`)");
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return with(unavailable::kBusy,
                  "another CUPTI client is attached to this worker (Nsight Systems, Nsight Compute or cuda-gdb)");
    case CUPTI_ERROR_DISABLED:
      return with(unavailable::kBusy, "CUPTI is disabled because another profiler is enabled in this worker");
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
      return with(unavailable::kBusy, "the legacy CUPTI event and metric API is active in this worker");
    case CUPTI_ERROR_NOT_SUPPORTED:
      return unsupported("CUPTI does not support the range profiler on this GPU or system");
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
      return unsupported("CUPTI's profiling API needs compute capability 7.5 or newer");
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
      return unsupported("profiling is not supported on this virtual GPU");
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
      return unsupported("confidential computing mode is on, and it forbids profiling");
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
      return unsupported("NVIDIA CMP (crypto mining) processors do not support profiling");
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
      return unsupported("the GPU is a MIG instance, on which CUPTI cannot profile");
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
      return unsupported("SLI is enabled");
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
      return unsupported("profiling is not supported under WSL with this driver");
    case CUPTI_ERROR_INVALID_CHIP_NAME:
      return unsupported("this CUPTI does not know the GPU's chip (a CUPTI older than the GPU)");
    case CUPTI_ERROR_INVALID_METRIC_NAME:
      return unsupported("CUPTI does not offer a requested metric on this GPU (while " + std::string(step) + ")");
    default: {
      std::string detail = "while " + std::string(step);
      detail += ": ";
      detail += result_text.empty() ? "CUPTI error " + std::to_string(static_cast<int>(result)) : std::string(result_text);
      return with(unavailable::kFailed, detail);
    }
  }
}

bool is_generic_reason(std::string_view reason) { return reason.substr(0, unavailable::kFailed.size()) == unavailable::kFailed; }

std::optional<std::string> unsupported_device_reason(const CUpti_Profiler_DeviceSupported_Params& support) {
  // UNKNOWN: CUPTI could not tell; the profiler's own calls will.
  if (support.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED ||
      support.isSupported == CUPTI_PROFILER_CONFIGURATION_UNKNOWN) {
    return std::nullopt;
  }
  std::vector<std::string> why;
  auto is_not = [](CUpti_Profiler_Support_Level level) { return level != CUPTI_PROFILER_CONFIGURATION_SUPPORTED; };
  if (is_not(support.architecture)) why.push_back("the range profiler needs compute capability 7.5 or newer");
  if (is_not(support.sli)) why.push_back("SLI is enabled");
  if (support.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED) {
    why.push_back("profiling is disabled on this virtual GPU (the hypervisor must enable it)");
  } else if (is_not(support.vGpu)) {
    why.push_back("profiling is not supported on this virtual GPU");
  }
  if (is_not(support.confidentialCompute)) why.push_back("confidential computing mode is on");
  if (is_not(support.cmp)) why.push_back("NVIDIA CMP (crypto mining) processors do not support profiling");
  if (is_not(support.wsl)) why.push_back("profiling is not supported under WSL with this driver");
  std::string text;
  for (const auto& w : why) text += (text.empty() ? "" : "; ") + w;
  return unsupported(text.empty() ? "CUPTI reports the device as not supported for range profiling" : text);
}

std::string library_missing_reason(std::string_view detail, std::string_view cupti_dir) {
  std::string rest = "(";
  rest += detail.empty() ? "not found" : std::string(detail);
  rest += "); the CUDA toolkit ships it next to libcupti.so";
  if (!cupti_dir.empty()) rest += " (" + std::string(cupti_dir) + ")";
  rest += ": install it there, or add its directory to LD_LIBRARY_PATH";
  return std::string(unavailable::kLibraryMissing) + " " + rest;
}

std::string injected_profiler_reason(std::string_view injection_path) {
  return with(unavailable::kBusy, "a CUDA injection library is loaded into this worker (CUDA_INJECTION64_PATH=" +
                                      std::string(injection_path) + ", as Nsight tools do)");
}

}  // namespace hiera::engine::worker
