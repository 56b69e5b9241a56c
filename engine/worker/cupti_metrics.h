#pragma once
// Hardware metrics of a profiled region, the part that needs no GPU: which
// metrics are asked of CUPTI's range profiler, how the per-kernel values
// (one range per kernel launch) combine into the region's, the protocol's
// "metrics" object, and the "unavailable" reason for every way CUPTI can
// refuse (counters restricted to administrators, in use by another profiler,
// an unsupported device, its metric library missing). The collection itself,
// on the GPU, is cupti_range_profiler.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <cupti_profiler_target.h>
#include <cupti_result.h>
#include <nlohmann/json.hpp>

namespace hiera::engine::worker {

// One metric: its CUPTI (Perfworks) name and the protocol field it becomes.
struct MetricSpec {
  const char* cupti_name;
  const char* field;
};

enum MetricIndex : std::size_t { kDramThroughput = 0, kSmThroughput, kAchievedOccupancy, kDuration, kMetricCount };

// In MetricIndex order. Percentages of the peak over the kernel's elapsed
// cycles (DRAM, SM) or its active cycles (occupancy: warps resident per SM
// over the maximum); the duration in nanoseconds, a cross-check of the trace.
inline constexpr std::array<MetricSpec, kMetricCount> kProfileMetrics = {{
    {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram_throughput_pct"},
    {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "sm_throughput_pct"},
    {"sm__warps_active.avg.pct_of_peak_sustained_active", "achieved_occupancy_pct"},
    {"gpu__time_duration.sum", "duration_ns"},
}};

using RangeValues = std::array<double, kMetricCount>;  // one kernel launch, MetricIndex order

struct HardwareMetrics {
  double dram_throughput_pct = 0.0;
  double sm_throughput_pct = 0.0;
  double achieved_occupancy_pct = 0.0;
  double duration_ns = 0.0;
  std::size_t ranges = 0;          // kernel launches measured
  std::size_t passes = 0;          // replays of each launch CUPTI needed
  std::size_t ranges_dropped = 0;  // launches beyond the counter data's room
};

// The metrics, or why there are none: exactly one of the two is set.
struct MetricsOutcome {
  std::optional<HardwareMetrics> metrics;
  std::string unavailable;

  static MetricsOutcome of(HardwareMetrics values) { return {values, {}}; }
  static MetricsOutcome none(std::string reason) { return {std::nullopt, std::move(reason)}; }
};

// The region's values from its kernels': durations add up, the percentages
// are averaged weighted by each launch's duration (plainly when none has
// one). No range, or a value that is not a finite number >= 0, makes the
// outcome unavailable, naming the metric.
MetricsOutcome combine_ranges(const std::vector<RangeValues>& ranges, std::size_t passes, std::size_t ranges_dropped);

// {"dram_throughput_pct", "sm_throughput_pct", "achieved_occupancy_pct"
// (one decimal), "duration_ns" (integer), "ranges", "passes",
// "ranges_dropped" (only when > 0), "source": "CUPTI range profiler"} or
// {"unavailable": reason}.
nlohmann::json metrics_json(const MetricsOutcome& outcome);

// The leading words of every "unavailable" reason, one per cause; the rest of
// the reason says what to do about it.
namespace unavailable {
inline constexpr std::string_view kRestricted =
    "GPU performance counters are restricted to administrators on this machine";
inline constexpr std::string_view kBusy = "GPU performance counters are in use by another profiler";
inline constexpr std::string_view kUnsupported = "hardware metrics are not supported on this device";
inline constexpr std::string_view kLibraryMissing = "CUPTI's metric library libnvperf_host.so could not be loaded";
inline constexpr std::string_view kNoKernel = "the CUPTI range profiler measured no kernel";
inline constexpr std::string_view kFailed = "the CUPTI range profiler failed";
}  // namespace unavailable

// The reason for a CUPTI call that failed while `step` ("enabling the range
// profiler"); `result_text` is cuptiGetResultString's, for the reasons that
// quote it. Privileges, a busy or shared profiler and unsupported devices get
// their own reasons; anything else is kFailed with the step and the text.
std::string unavailable_reason(CUptiResult result, std::string_view step, std::string_view result_text);

// Whether a reason is the catch-all kFailed one (where a missing library or
// an injected profiler may be the better explanation).
bool is_generic_reason(std::string_view reason);

// nullopt when cuptiProfilerDeviceSupported says SUPPORTED (or UNKNOWN: the
// profiler's own calls then decide); otherwise the kUnsupported reason naming
// each flag that is not (architecture, SLI, vGPU, confidential computing,
// CMP, WSL).
std::optional<std::string> unsupported_device_reason(const CUpti_Profiler_DeviceSupported_Params& support);

// The kLibraryMissing reason: `detail` is the loader's error, `cupti_dir` the
// directory libcupti was loaded from (where the toolkit puts libnvperf_host).
std::string library_missing_reason(std::string_view detail, std::string_view cupti_dir);

// The kBusy reason when a CUDA injection library (an Nsight tool) is loaded
// into the worker through CUDA_INJECTION64_PATH.
std::string injected_profiler_reason(std::string_view injection_path);

}  // namespace hiera::engine::worker
