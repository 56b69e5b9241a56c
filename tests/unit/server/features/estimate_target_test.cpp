// estimate_target: the settings' `gpu` resolved by id or usual name, and the
// exact message for a value it refuses.
#include "server/features/estimate_target.h"

#include <gtest/gtest.h>
#include "build_paths.h"

namespace hiera::server {
namespace {

using nlohmann::json;

const engine::knowledge::KnowledgeBase& knowledge() {
  static const auto kb = engine::knowledge::load_knowledge(::hiera::testing::source_dir() + "/knowledge");
  return kb;
}

TEST(EstimateTarget, UnsetIsH200AndNamesResolveInAnyCase) {
  const auto unset = estimate_target(knowledge(), nullptr);
  ASSERT_TRUE(unset.roofline);
  EXPECT_EQ(unset.roofline->source, "h200");
  EXPECT_EQ(unset.label, "H200");
  for (const char* name : {"h200", "H200", "NVIDIA H200", "nvidia-h200"}) {
    const auto target = estimate_target(knowledge(), name);
    ASSERT_TRUE(target.roofline) << name << ": " << target.problem;
    EXPECT_EQ(target.roofline->source, "h200") << name;
    EXPECT_EQ(target.problem, "") << name;
  }
  for (const char* name : {"A100", "a100", "NVIDIA A100-SXM4-80GB"}) {
    const auto target = estimate_target(knowledge(), name);
    ASSERT_TRUE(target.roofline) << name << ": " << target.problem;
    EXPECT_EQ(target.roofline->source, "a100_sxm_80gb") << name;
    EXPECT_EQ(target.label, "A100 SXM4") << name;
  }
}

TEST(EstimateTarget, RefusedValuesNameTheSettingTheValueAndWhatIsAccepted) {
  const std::string accepted =
      "accepted: a knowledge GPU id (a100_sxm_80gb, h100_pcie, h100_sxm, h200, l40s, rtx_4090) or a name such as \"H200\" or "
      "\"NVIDIA A100-SXM4-80GB\", in any case";
  const auto unknown = estimate_target(knowledge(), "tpu9");
  EXPECT_FALSE(unknown.roofline);
  EXPECT_EQ(unknown.label, "tpu9");
  EXPECT_EQ(unknown.problem, "settings: gpu: unknown GPU \"tpu9\"; " + accepted);
  const auto number = estimate_target(knowledge(), 5);
  EXPECT_FALSE(number.roofline);
  EXPECT_EQ(number.problem, "settings: gpu: 5 is not a GPU; " + accepted);
  EXPECT_EQ(estimate_target(knowledge(), "").problem, "settings: gpu: unknown GPU \"\"; " + accepted);
}

}  // namespace
}  // namespace hiera::server
