// Reading the worker's profile result: the typed kernels and counters, and
// the field a malformed one names.
#include "engine/eval/profile_result.h"

#include <gtest/gtest.h>

#include "engine/eval/job_results.h"
#include "thrown_message.h"

namespace hiera::engine::eval {
namespace {

using nlohmann::json;

std::string read_error(const json& value) {
  return hiera::testing::thrown_message<MalformedResult>([&] { read_kernel_profile(value); });
}

TEST(ProfileResultTest, ReadsKernelsAndTheReasonMetricsAreUnavailable) {
  const KernelProfile profile = read_kernel_profile(json::parse(R"json({
    "kernels": [{"name": "saxpy", "grid": [16384, 1, 1], "block": [256, 1, 1], "calls": 1, "total_ns": 15328, "mean_ns": 15328},
                {"name": "Memcpy DtoD (Device -> Device)", "grid": null, "block": null, "calls": 2.0, "total_ns": 800}],
    "metrics": {"unavailable": "not wired in"}})json"));
  ASSERT_EQ(profile.kernels.size(), 2u);
  EXPECT_EQ(profile.kernels[0].name, "saxpy");
  EXPECT_EQ(profile.kernels[0].grid, (std::array<std::int64_t, 3>{16384, 1, 1}));
  EXPECT_EQ(profile.kernels[0].block, (std::array<std::int64_t, 3>{256, 1, 1}));
  EXPECT_EQ(profile.kernels[0].calls, 1);
  EXPECT_EQ(profile.kernels[0].total_ns, 15328);
  EXPECT_EQ(profile.kernels[0].mean_ns, 15328);
  EXPECT_FALSE(profile.kernels[1].grid);
  EXPECT_FALSE(profile.kernels[1].block);
  EXPECT_EQ(profile.kernels[1].calls, 2);
  EXPECT_EQ(profile.kernels[1].mean_ns, 0);
  EXPECT_FALSE(profile.counters);
  EXPECT_EQ(profile.metrics_unavailable, "not wired in");
}

TEST(ProfileResultTest, ReadsTheCountersWhenTheWorkerMeasuredThem) {
  const KernelProfile profile = read_kernel_profile(json::parse(R"json({"kernels": [],
    "metrics": {"dram_throughput_pct": 87.1, "sm_throughput_pct": 12.3, "achieved_occupancy_pct": 71.0,
                "duration_ns": 123456, "ranges": 1, "passes": 2, "source": "CUPTI range profiler"}})json"));
  ASSERT_TRUE(profile.counters);
  EXPECT_EQ(profile.counters->dram_throughput_pct, 87.1);
  EXPECT_EQ(profile.counters->sm_throughput_pct, 12.3);
  EXPECT_EQ(profile.counters->achieved_occupancy_pct, 71.0);
  EXPECT_EQ(profile.metrics_unavailable, "");
  // A missing counter reads as 0 (as the prompt always showed it); no metrics, no counters.
  EXPECT_EQ(read_kernel_profile(json{{"kernels", json::array()}, {"metrics", {{"dram_throughput_pct", 5}}}})
                .counters->sm_throughput_pct,
            0.0);
  EXPECT_FALSE(read_kernel_profile(json{{"kernels", json::array()}}).counters);
  EXPECT_FALSE(read_kernel_profile(json{{"kernels", json::array()}, {"metrics", nullptr}}).counters);
}

TEST(ProfileResultTest, MalformedProfilesNameTheField) {
  EXPECT_EQ(read_error(json::array()), "profile must be an object");
  EXPECT_EQ(read_error(json::object()), "profile.kernels is missing");
  EXPECT_EQ(read_error(json{{"kernels", 3}}), "profile.kernels must be an array");
  EXPECT_EQ(read_error(json{{"kernels", {1}}}), "profile.kernels[0] must be an object");
  EXPECT_EQ(read_error(json{{"kernels", {{{"calls", 1}, {"total_ns", 1}}}}}),
            "profile.kernels[0].name must be a non-empty string");
  EXPECT_EQ(read_error(json{{"kernels", {{{"name", "k"}, {"total_ns", 1}}}}}), "profile.kernels[0].calls is missing");
  EXPECT_EQ(read_error(json{{"kernels", {{{"name", "k"}, {"calls", 1}, {"total_ns", -5}}}}}),
            "profile.kernels[0].total_ns must be a non-negative integer");
  EXPECT_EQ(read_error(json{{"kernels", {{{"name", "k"}, {"calls", 1.5}, {"total_ns", 5}}}}}),
            "profile.kernels[0].calls must be a non-negative integer");
  EXPECT_EQ(read_error(json{{"kernels", {{{"name", "k"}, {"calls", 1}, {"total_ns", 5}, {"grid", {1, 2}}}}}}),
            "profile.kernels[0].grid must be [x, y, z] or null");
  EXPECT_EQ(read_error(json{{"kernels", json::array()}, {"metrics", {{"dram_throughput_pct", "high"}}}}),
            "profile.metrics.dram_throughput_pct must be a number");
  EXPECT_TRUE(read_kernel_profile(json{{"kernels", json::array()}}).kernels.empty());
}

// parse_profile: a result whose kernels cannot be read is still a profile job
// that ran (ok, its raw result kept for the records), with no typed profile and
// the reason; one without a kernel list is a malformed result.
TEST(ProfileResultTest, ParseProfileKeepsTheRecordAndSaysWhyNoProfile) {
  const json good = {{"kernels", {{{"name", "k"}, {"calls", 1}, {"total_ns", 5}}}}};
  const ProfileResult parsed = parse_profile(good);
  ASSERT_TRUE(parsed.profile);
  EXPECT_EQ(parsed.profile->kernels.size(), 1u);
  EXPECT_EQ(parsed.raw, good);
  EXPECT_EQ(parsed.unreadable, "");
  EXPECT_TRUE(parsed.ok());

  const json bad = {{"kernels", {{{"name", "k"}, {"calls", 1}}}}};
  const ProfileResult unreadable = parse_profile(bad);
  EXPECT_FALSE(unreadable.profile);
  EXPECT_EQ(unreadable.unreadable, "profile.kernels[0].total_ns is missing");
  EXPECT_EQ(unreadable.raw, bad);
  EXPECT_TRUE(unreadable.ok());

  EXPECT_THROW(parse_profile(json{{"kernels", 3}}), MalformedResult);
}

}  // namespace
}  // namespace hiera::engine::eval
