#include "server/features/hint_settings.h"

#include <gtest/gtest.h>

namespace hiera::server {
namespace {

using nlohmann::json;
using engine::analysis::Hint;
using engine::analysis::Severity;

Hint hint_of(const std::string& rule, Severity severity) {
  Hint hint;
  hint.rule = rule;
  hint.severity = severity;
  return hint;
}

TEST(HintSettings, NullIsTheDefaults) {
  const auto settings = parse_hint_settings(nullptr);
  EXPECT_TRUE(settings.enabled);
  EXPECT_TRUE(settings.disabled.empty());
  EXPECT_TRUE(settings.severity.empty());
  EXPECT_TRUE(settings.problems.empty());
  EXPECT_TRUE(settings.shows(hint_of("cuda.block_size", Severity::Warning)));
  EXPECT_EQ(settings.severity_of(hint_of("cuda.block_size", Severity::Error)), Severity::Error);
}

TEST(HintSettings, EnabledDisabledAndSeverityApply) {
  const auto settings = parse_hint_settings(
      {{"enabled", true}, {"disabled", {"torch.python_loop"}}, {"severity", {{"cuda.block_size", "information"}}}});
  EXPECT_TRUE(settings.problems.empty());
  EXPECT_FALSE(settings.shows(hint_of("torch.python_loop", Severity::Warning)));
  EXPECT_TRUE(settings.shows(hint_of("cuda.block_size", Severity::Warning)));
  EXPECT_EQ(settings.severity_of(hint_of("cuda.block_size", Severity::Warning)), Severity::Information);
  EXPECT_EQ(settings.severity_of(hint_of("torch.host_sync", Severity::Warning)), Severity::Warning);
  EXPECT_FALSE(parse_hint_settings({{"enabled", false}}).shows(hint_of("cuda.block_size", Severity::Warning)));
}

TEST(HintSettings, WhatIsNotUnderstoodIsIgnoredAndNamed) {
  const auto settings = parse_hint_settings({{"enabled", 1},
                                             {"disabled", {"cuda.block_size", 3, "cuda.typo"}},
                                             {"severity", {{"torch.host_sync", "fatal"}, {"cuda.atomic_in_loop", "hint"}}}});
  EXPECT_TRUE(settings.enabled);
  EXPECT_EQ(settings.disabled, (std::set<std::string, std::less<>>{"cuda.block_size", "cuda.typo"}));
  EXPECT_EQ(settings.severity.size(), 1u);
  EXPECT_EQ(settings.severity.at("cuda.atomic_in_loop"), Severity::Hint);
  EXPECT_EQ(settings.problems,
            (std::vector<std::string>{
                "settings: hints.enabled must be true or false, got 1",
                "settings: hints.disabled: 3 is not a rule id",
                "settings: hints.disabled: unknown rule \"cuda.typo\" (known: cuda.uncoalesced_access, cuda.missing_restrict, "
                "cuda.shared_bank_conflict, cuda.atomic_in_loop, cuda.block_size, cuda.missing_bounds_check, cuda.grid_overrun, "
                "cuda.double_in_loop, cuda.launch_in_loop, torch.fusable_elementwise_chain, torch.gemm_epilogue, torch.float32_gemm, "
                "torch.foldable_batch_norm, torch.diagonal_matmul, torch.dropout_mode, torch.handwritten_softmax, "
                "torch.handwritten_attention, "
                "torch.handwritten_layer_norm, torch.host_sync, torch.python_loop, torch.contiguous_copy)",
                "settings: hints.severity.torch.host_sync: \"fatal\" is not one of \"error\", \"warning\", \"information\", \"hint\""}));
  const auto severity_rule = parse_hint_settings({{"severity", {{"cuda.nope", "hint"}}}}).problems;
  ASSERT_EQ(severity_rule.size(), 1u);
  EXPECT_EQ(severity_rule[0].rfind("settings: hints.severity: unknown rule \"cuda.nope\" (known: cuda.uncoalesced_access, ", 0), 0u)
      << severity_rule[0];
  EXPECT_EQ(parse_hint_settings(json::array()).problems, std::vector<std::string>{"settings: hints must be an object, got []"});
  EXPECT_EQ(parse_hint_settings({{"disabled", "cuda.block_size"}}).problems,
            std::vector<std::string>{"settings: hints.disabled must be a list of rule ids, got \"cuda.block_size\""});
  EXPECT_EQ(parse_hint_settings({{"severity", {"error"}}}).problems,
            std::vector<std::string>{"settings: hints.severity must map rule ids to severities, got [\"error\"]"});
}

}  // namespace
}  // namespace hiera::server
