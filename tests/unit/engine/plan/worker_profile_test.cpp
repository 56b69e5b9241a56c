// Parsing the worker's profile result.
#include "engine/plan/worker_profile.h"

#include <gtest/gtest.h>

#include "thrown_message.h"

namespace hiera::engine::plan {
namespace {

using nlohmann::json;

std::string parse_error(const json& value) {
  return hiera::testing::thrown_message<MalformedProfile>([&] { parse_profile(value); });
}

TEST(WorkerProfileTest, ParsesKernelsAndKeepsMetrics) {
  const Profile profile = parse_profile(json::parse(R"json({
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
  EXPECT_EQ(profile.metrics, json({{"unavailable", "not wired in"}}));
}

TEST(WorkerProfileTest, MalformedProfilesNameTheField) {
  EXPECT_EQ(parse_error(json::array()), "profile must be an object");
  EXPECT_EQ(parse_error(json::object()), "profile.kernels is missing");
  EXPECT_EQ(parse_error(json{{"kernels", 3}}), "profile.kernels must be an array");
  EXPECT_EQ(parse_error(json{{"kernels", {1}}}), "profile.kernels[0] must be an object");
  EXPECT_EQ(parse_error(json{{"kernels", {{{"calls", 1}, {"total_ns", 1}}}}}),
            "profile.kernels[0].name must be a non-empty string");
  EXPECT_EQ(parse_error(json{{"kernels", {{{"name", "k"}, {"total_ns", 1}}}}}), "profile.kernels[0].calls is missing");
  EXPECT_EQ(parse_error(json{{"kernels", {{{"name", "k"}, {"calls", 1}, {"total_ns", -5}}}}}),
            "profile.kernels[0].total_ns must be a non-negative integer");
  EXPECT_EQ(parse_error(json{{"kernels", {{{"name", "k"}, {"calls", 1.5}, {"total_ns", 5}}}}}),
            "profile.kernels[0].calls must be a non-negative integer");
  EXPECT_EQ(parse_error(json{{"kernels", {{{"name", "k"}, {"calls", 1}, {"total_ns", 5}, {"grid", {1, 2}}}}}}),
            "profile.kernels[0].grid must be [x, y, z] or null");
  EXPECT_TRUE(parse_profile(json{{"kernels", json::array()}}).kernels.empty());
}

}  // namespace
}  // namespace hiera::engine::plan
