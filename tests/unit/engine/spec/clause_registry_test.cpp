// The clause registry: every clause names a real check, and what is not a
// contract is refused with an error naming it.
#include "engine/spec/clause_registry.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "engine/spec/spec_error.h"
#include "thrown_message.h"

namespace hiera::engine::spec {
namespace {

using nlohmann::json;

std::string refusal(const std::string& name, const json& value, TargetKind kind = TargetKind::Pytorch) {
  return hiera::testing::thrown_message<SpecError>([&] { check_clause(name, value, kind); });
}

TEST(ClauseRegistryTest, EveryClauseIsInItsFamilyAndNamesAKnownCheck) {
  std::set<std::string_view> names;
  const auto& checks = enforcing_checks();
  for (const ClauseInfo& info : clause_registry()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_TRUE(info.name.starts_with(std::string(to_string(info.family)) + ".")) << info.name;
    EXPECT_FALSE(info.description.empty()) << info.name;
    if (info.enforced_by.empty()) {
      EXPECT_FALSE(info.why_unenforced.empty()) << info.name;
    } else {
      EXPECT_NE(std::find(checks.begin(), checks.end(), info.enforced_by), checks.end()) << info.name;
    }
  }
  // Families come in order, so specs list their clauses grouped.
  const auto& registry = clause_registry();
  EXPECT_TRUE(std::is_sorted(registry.begin(), registry.end(),
                             [](const ClauseInfo& a, const ClauseInfo& b) { return a.family < b.family; }));
}

TEST(ClauseRegistryTest, EnforcingChecks) {
  EXPECT_EQ(enforcing_checks(),
            (std::vector<std::string_view>{"compile", "runtime", "shape", "dtype", "count", "values", "nan_inf",
                                           "unwritten_output", "input_mutation", "determinism", "static",
                                           "speed_of_light", "timeout", "speedup", "budget", "space", "aliasing",
                                           "shape_generality", "timing", "protocol"}));
  EXPECT_EQ(find_clause_info("invariants.shape_generality")->enforced_by, "shape_generality");
  EXPECT_EQ(find_clause_info("numerics.atol")->enforced_by, "values");
  EXPECT_EQ(find_clause_info("numerics.allow")->enforced_by, "static");
  EXPECT_EQ(find_clause_info("invariants.no_input_mutation")->enforced_by, "input_mutation");
  EXPECT_EQ(find_clause_info("performance.target_speedup")->enforced_by, "speedup");
  EXPECT_EQ(find_clause_info("environment.spaces")->enforced_by, "space");
  EXPECT_EQ(find_clause_info("environment.candidate_budget")->enforced_by, "budget");
  EXPECT_EQ(find_clause_info("numerics.ulp"), nullptr);
}

TEST(ClauseRegistryTest, UnknownAndUnenforcedClausesAreNotContracts) {
  EXPECT_EQ(refusal("numerics.ulp", 2), "clause 'numerics.ulp' is not a contract: no check enforces it");
  EXPECT_EQ(refusal("interface.layout", "contiguous"),
            "clause 'interface.layout' is not a contract: no check enforces it (the worker compares shapes and "
            "values, not strides)");
  EXPECT_EQ(refusal("environment.memory_budget_bytes", 1024),
            "clause 'environment.memory_budget_bytes' is not a contract: no check enforces it (nothing measures a "
            "candidate's memory use yet)");
}

TEST(ClauseRegistryTest, ClausesOfOneTargetKind) {
  EXPECT_EQ(refusal("interface.args", json::array(), TargetKind::Pytorch),
            "clause 'interface.args' applies to cuda targets only");
  EXPECT_EQ(refusal("interface.outputs", 1, TargetKind::Cuda),
            "clause 'interface.outputs' applies to pytorch targets only");
  EXPECT_EQ(refusal("interface.outputs", 1, TargetKind::Pytorch), "");
}

TEST(ClauseRegistryTest, ValuesAreValidated) {
  EXPECT_EQ(refusal("numerics.atol", 1e-3), "");
  EXPECT_EQ(refusal("numerics.atol", json::parse(R"({"float16": 1e-2, "*": 1e-4})")), "");
  EXPECT_EQ(refusal("numerics.atol", -1),
            "clause 'numerics.atol': must be a non-negative number or an object of dtype (float64, float32, float16, "
            "bfloat16, *) to non-negative number, got -1");
  EXPECT_EQ(refusal("numerics.rtol", json::parse(R"({"int8": 1})")),
            "clause 'numerics.rtol': must be a non-negative number or an object of dtype (float64, float32, float16, "
            "bfloat16, *) to non-negative number, got {\"int8\":1}");
  EXPECT_EQ(refusal("numerics.allow", json{"tf32", "fp4"}),
            "clause 'numerics.allow': must be a list of tf32, bf16, fp16, fp8, got [\"tf32\",\"fp4\"]");
  EXPECT_EQ(refusal("numerics.allow", json{"tf32", "tf32"}), "clause 'numerics.allow': lists 'tf32' twice");
  EXPECT_EQ(refusal("numerics.deterministic", "yes"), "clause 'numerics.deterministic': must be true or false, got \"yes\"");
  EXPECT_EQ(refusal("numerics.nan_inf", "ignore"),
            "clause 'numerics.nan_inf': must be \"propagate\" or \"forbid\", got \"ignore\"");
  EXPECT_EQ(refusal("interface.sizes", json::parse(R"({"2N": 4})")),
            "clause 'interface.sizes': must be a non-empty object of size names to positive integers, got {\"2N\":4}");
  EXPECT_EQ(refusal("interface.shape_range", json::parse(R"({"N": [8, 4]})")),
            "clause 'interface.shape_range': must be a non-empty object of size names to [lo, hi] with 1 <= lo <= hi, "
            "got {\"N\":[8,4]}");
  EXPECT_EQ(refusal("interface.inputs", json::parse(R"([{"shape": [2, -1], "dtype": "float32"}])")),
            "clause 'interface.inputs': must be a list of {\"shape\": [dims], \"dtype\": name}, got "
            "[{\"dtype\":\"float32\",\"shape\":[2,-1]}]");
  EXPECT_EQ(refusal("performance.target_speedup", 0.9),
            "clause 'performance.target_speedup': must be a number >= 1 (a speedup over the reference), got 0.9");
  EXPECT_EQ(refusal("performance.flops", "2*"),
            "clause 'performance.flops': size expression '2*': expected a number, a size name or '(' at column 3");
  EXPECT_EQ(refusal("environment.spaces", json::array()),
            "clause 'environment.spaces': must be a non-empty list of S1, S2, S3, got []");
  EXPECT_EQ(refusal("environment.candidate_budget", 2.5),
            "clause 'environment.candidate_budget': must be a positive integer, got 2.5");
  EXPECT_EQ(refusal("interface.outputs_compared", json{0, 0}), "clause 'interface.outputs_compared': lists 0 twice");
}

TEST(ClauseRegistryTest, KernelArgumentsAndLaunch) {
  const json x = {{"name", "x"}, {"role", "input"}, {"type", "float32"}, {"extent", "N"}};
  EXPECT_EQ(refusal("interface.args", json::array({x}), TargetKind::Cuda), "");
  EXPECT_EQ(refusal("interface.args", json{x, x}, TargetKind::Cuda),
            "clause 'interface.args': argument 'x' is listed twice");
  EXPECT_EQ(refusal("interface.args", json::parse(R"([{"name": "x", "role": "input", "type": "half", "extent": "N"}])"),
                    TargetKind::Cuda),
            "clause 'interface.args': argument 'x': type must be one of float32, float16, bfloat16, float64, int32, "
            "int64, uint8");
  EXPECT_EQ(refusal("interface.args", json::parse(R"([{"name": "n", "role": "scalar", "type": "int32"}])"),
                    TargetKind::Cuda),
            "clause 'interface.args': argument 'n': a scalar argument needs a value");
  EXPECT_EQ(refusal("interface.launch", json::parse(R"({"grid": ["(N+1"], "block": ["1"]})"), TargetKind::Cuda),
            "clause 'interface.launch': launch: grid[0]: size expression '(N+1': expected ')' at column 5");
}

}  // namespace
}  // namespace hiera::engine::spec
