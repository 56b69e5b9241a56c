// Hardware metrics without a GPU: the metric table, the per-kernel values
// combined into the region's, the protocol's "metrics" object, and the
// "unavailable" reason for each way CUPTI refuses.
#ifdef HIERA_HAVE_WORKER
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "engine/worker/cupti_metrics.h"

namespace {

using namespace hiera::engine::worker;
using nlohmann::json;

bool starts_with(const std::string& text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

RangeValues range(double dram, double sm, double occupancy, double duration_ns) { return {dram, sm, occupancy, duration_ns}; }

CUpti_Profiler_DeviceSupported_Params all_supported() {
  CUpti_Profiler_DeviceSupported_Params support{};
  support.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE;
  support.isSupported = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  support.architecture = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  support.sli = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  support.vGpu = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  support.confidentialCompute = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  support.cmp = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  support.wsl = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  return support;
}

// ---------------------------------------------------------------- the table

TEST(CuptiMetrics, TheTableAsksForTheIssuesMetricsUnderTheProtocolsNames) {
  EXPECT_STREQ(kProfileMetrics[kDramThroughput].cupti_name, "dram__throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_STREQ(kProfileMetrics[kSmThroughput].cupti_name, "sm__throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_STREQ(kProfileMetrics[kAchievedOccupancy].cupti_name, "sm__warps_active.avg.pct_of_peak_sustained_active");
  EXPECT_STREQ(kProfileMetrics[kDuration].cupti_name, "gpu__time_duration.sum");
  EXPECT_STREQ(kProfileMetrics[kDramThroughput].field, "dram_throughput_pct");
  EXPECT_STREQ(kProfileMetrics[kSmThroughput].field, "sm_throughput_pct");
  EXPECT_STREQ(kProfileMetrics[kAchievedOccupancy].field, "achieved_occupancy_pct");
  EXPECT_STREQ(kProfileMetrics[kDuration].field, "duration_ns");
  std::set<std::string> names, fields;
  for (const auto& spec : kProfileMetrics) {
    names.insert(spec.cupti_name);
    fields.insert(spec.field);
  }
  EXPECT_EQ(names.size(), kProfileMetrics.size());
  EXPECT_EQ(fields.size(), kProfileMetrics.size());
}

// ---------------------------------------------------------------- combining

TEST(CuptiMetrics, OneKernelIsTheRegion) {
  const MetricsOutcome outcome = combine_ranges({range(87.14, 12.3, 71.0, 123456.0)}, 2, 0);
  ASSERT_TRUE(outcome.metrics) << outcome.unavailable;
  EXPECT_DOUBLE_EQ(outcome.metrics->dram_throughput_pct, 87.14);
  EXPECT_DOUBLE_EQ(outcome.metrics->sm_throughput_pct, 12.3);
  EXPECT_DOUBLE_EQ(outcome.metrics->achieved_occupancy_pct, 71.0);
  EXPECT_DOUBLE_EQ(outcome.metrics->duration_ns, 123456.0);
  EXPECT_EQ(outcome.metrics->ranges, 1u);
  EXPECT_EQ(outcome.metrics->passes, 2u);
  EXPECT_TRUE(outcome.unavailable.empty());
}

TEST(CuptiMetrics, KernelsAreWeightedByTheirDurations) {
  // 3 us at 90% DRAM and 1 us at 10%: the region spends three quarters of its time at 90%.
  const MetricsOutcome outcome = combine_ranges({range(90.0, 20.0, 80.0, 3000.0), range(10.0, 60.0, 40.0, 1000.0)}, 1, 0);
  ASSERT_TRUE(outcome.metrics) << outcome.unavailable;
  EXPECT_DOUBLE_EQ(outcome.metrics->dram_throughput_pct, 70.0);
  EXPECT_DOUBLE_EQ(outcome.metrics->sm_throughput_pct, 30.0);
  EXPECT_DOUBLE_EQ(outcome.metrics->achieved_occupancy_pct, 70.0);
  EXPECT_DOUBLE_EQ(outcome.metrics->duration_ns, 4000.0);
  EXPECT_EQ(outcome.metrics->ranges, 2u);
}

TEST(CuptiMetrics, WithoutDurationsKernelsCountAlike) {
  const MetricsOutcome outcome = combine_ranges({range(90.0, 20.0, 80.0, 0.0), range(10.0, 60.0, 40.0, 0.0)}, 1, 0);
  ASSERT_TRUE(outcome.metrics) << outcome.unavailable;
  EXPECT_DOUBLE_EQ(outcome.metrics->dram_throughput_pct, 50.0);
  EXPECT_DOUBLE_EQ(outcome.metrics->duration_ns, 0.0);
}

TEST(CuptiMetrics, NoKernelOrAValueThatIsNoNumberIsUnavailable) {
  const MetricsOutcome none = combine_ranges({}, 1, 0);
  EXPECT_FALSE(none.metrics);
  EXPECT_TRUE(starts_with(none.unavailable, unavailable::kNoKernel)) << none.unavailable;
  EXPECT_NE(combine_ranges({}, 1, 3).unavailable.find("dropped"), std::string::npos);

  const double nan = std::numeric_limits<double>::quiet_NaN();
  const MetricsOutcome bad = combine_ranges({range(50.0, 20.0, nan, 100.0)}, 1, 0);
  EXPECT_FALSE(bad.metrics);
  EXPECT_TRUE(starts_with(bad.unavailable, unavailable::kFailed)) << bad.unavailable;
  EXPECT_NE(bad.unavailable.find("sm__warps_active"), std::string::npos) << bad.unavailable;
  EXPECT_FALSE(combine_ranges({range(-1.0, 20.0, 50.0, 100.0)}, 1, 0).metrics);
  EXPECT_FALSE(combine_ranges({range(1.0, 20.0, 50.0, std::numeric_limits<double>::infinity())}, 1, 0).metrics);
}

// ---------------------------------------------------------------- the protocol's object

TEST(CuptiMetrics, TheJsonHasTheProtocolsFields) {
  const json out = metrics_json(combine_ranges({range(87.14, 12.26, 70.96, 123456.4)}, 3, 0));
  EXPECT_EQ(out["dram_throughput_pct"], 87.1);
  EXPECT_EQ(out["sm_throughput_pct"], 12.3);
  EXPECT_EQ(out["achieved_occupancy_pct"], 71.0);
  ASSERT_TRUE(out["duration_ns"].is_number_integer()) << out.dump();
  EXPECT_EQ(out["duration_ns"], 123456);
  EXPECT_EQ(out["ranges"], 1);
  EXPECT_EQ(out["passes"], 3);
  EXPECT_EQ(out["source"], "CUPTI range profiler");
  EXPECT_FALSE(out.contains("unavailable"));
  EXPECT_FALSE(out.contains("ranges_dropped"));
  EXPECT_EQ(metrics_json(combine_ranges({range(1, 1, 1, 1)}, 1, 2))["ranges_dropped"], 2);
}

TEST(CuptiMetrics, AnUnavailableOutcomeIsOnlyItsReason) {
  const json out = metrics_json(MetricsOutcome::none("because"));
  EXPECT_EQ(out, json({{"unavailable", "because"}}));
  EXPECT_TRUE(metrics_json(MetricsOutcome{})["unavailable"].is_string());  // never an empty object
}

// ---------------------------------------------------------------- reasons

TEST(CuptiMetrics, RestrictedCountersSayHowToLiftTheRestriction) {
  const std::string reason = unavailable_reason(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "enabling the range profiler", "x");
  EXPECT_TRUE(starts_with(reason, unavailable::kRestricted)) << reason;
  EXPECT_NE(reason.find("NVreg_RestrictProfilingToAdminUsers"), std::string::npos) << reason;
  EXPECT_NE(reason.find("ERR_NVGPUCTRPERM"), std::string::npos) << reason;
  EXPECT_FALSE(is_generic_reason(reason));
}

TEST(CuptiMetrics, EachRefusalHasItsReason) {
  const std::vector<std::pair<CUptiResult, std::string_view>> cases = {
      {CUPTI_ERROR_HARDWARE_BUSY, unavailable::kBusy},
      {CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, unavailable::kBusy},
      {CUPTI_ERROR_DISABLED, unavailable::kBusy},
      {CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED, unavailable::kBusy},
      {CUPTI_ERROR_NOT_SUPPORTED, unavailable::kUnsupported},
      {CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED, unavailable::kUnsupported},
      {CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED, unavailable::kUnsupported},
      {CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES, unavailable::kUnsupported},
      {CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED, unavailable::kUnsupported},
      {CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED, unavailable::kUnsupported},
      {CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED, unavailable::kUnsupported},
      {CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED, unavailable::kUnsupported},
      {CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED, unavailable::kUnsupported},
      {CUPTI_ERROR_INVALID_CHIP_NAME, unavailable::kUnsupported},
      {CUPTI_ERROR_INVALID_METRIC_NAME, unavailable::kUnsupported},
      {CUPTI_ERROR_UNKNOWN, unavailable::kFailed},
      {CUPTI_ERROR_INVALID_PARAMETER, unavailable::kFailed},
      {CUPTI_ERROR_OUT_OF_MEMORY, unavailable::kFailed},
  };
  for (const auto& [result, lead] : cases) {
    const std::string reason = unavailable_reason(result, "enabling the range profiler", "CUPTI_ERROR_SOMETHING");
    EXPECT_TRUE(starts_with(reason, lead)) << static_cast<int>(result) << ": " << reason;
    EXPECT_EQ(is_generic_reason(reason), lead == unavailable::kFailed) << reason;
  }
}

TEST(CuptiMetrics, AnUnexpectedFailureNamesItsStepAndCuptisText) {
  const std::string reason = unavailable_reason(CUPTI_ERROR_UNKNOWN, "decoding the counter data", "CUPTI_ERROR_UNKNOWN");
  EXPECT_EQ(reason, "the CUPTI range profiler failed: while decoding the counter data: CUPTI_ERROR_UNKNOWN");
  EXPECT_NE(unavailable_reason(CUPTI_ERROR_UNKNOWN, "x", "").find("999"), std::string::npos);
}

TEST(CuptiMetrics, ASupportedDeviceHasNoReason) {
  EXPECT_FALSE(unsupported_device_reason(all_supported()));
  auto unknown = all_supported();  // CUPTI could not tell: the profiler's own calls decide
  unknown.isSupported = CUPTI_PROFILER_CONFIGURATION_UNKNOWN;
  EXPECT_FALSE(unsupported_device_reason(unknown));
}

TEST(CuptiMetrics, AnUnsupportedDeviceNamesEachFlag) {
  auto support = all_supported();
  support.isSupported = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
  support.architecture = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
  support.vGpu = CUPTI_PROFILER_CONFIGURATION_DISABLED;
  const auto reason = unsupported_device_reason(support);
  ASSERT_TRUE(reason);
  EXPECT_TRUE(starts_with(*reason, unavailable::kUnsupported)) << *reason;
  EXPECT_NE(reason->find("7.5"), std::string::npos) << *reason;
  EXPECT_NE(reason->find("disabled on this virtual GPU"), std::string::npos) << *reason;
  EXPECT_EQ(reason->find("SLI"), std::string::npos) << *reason;

  auto vague = all_supported();  // unsupported, and no flag says why
  vague.isSupported = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
  const auto vague_reason = unsupported_device_reason(vague);
  ASSERT_TRUE(vague_reason);
  EXPECT_TRUE(starts_with(*vague_reason, unavailable::kUnsupported)) << *vague_reason;
}

TEST(CuptiMetrics, AMissingMetricLibrarySaysWhereItBelongs) {
  const std::string reason = library_missing_reason("libnvperf_host.so: cannot open shared object file", "/usr/local/cuda/lib64");
  EXPECT_TRUE(starts_with(reason, unavailable::kLibraryMissing)) << reason;
  EXPECT_NE(reason.find("/usr/local/cuda/lib64"), std::string::npos) << reason;
  EXPECT_NE(reason.find("cannot open shared object file"), std::string::npos) << reason;
  EXPECT_FALSE(is_generic_reason(reason));
}

TEST(CuptiMetrics, AnInjectedProfilerIsABusyOne) {
  const std::string reason = injected_profiler_reason("/opt/nsight/libToolsInjection64.so");
  EXPECT_TRUE(starts_with(reason, unavailable::kBusy)) << reason;
  EXPECT_NE(reason.find("CUDA_INJECTION64_PATH=/opt/nsight/libToolsInjection64.so"), std::string::npos) << reason;
}

}  // namespace
#endif  // HIERA_HAVE_WORKER
