// Numerics allowances, spelled one way.
#include "engine/plan/allowance.h"

#include <gtest/gtest.h>

namespace hiera::engine::plan {
namespace {

TEST(AllowanceTest, AliasesFoldAsTheWorkersStaticChecksFoldThem) {
  EXPECT_EQ(normalise_allowance("TF32"), "tf32");
  EXPECT_EQ(normalise_allowance(" BFloat16 "), "bf16");
  EXPECT_EQ(normalise_allowance("half"), "fp16");
  EXPECT_EQ(normalise_allowance("float16"), "fp16");
  EXPECT_EQ(normalise_allowance("inplace"), "inplace");
}

TEST(AllowanceTest, WhatAnAllowanceUnlocks) {
  EXPECT_EQ(ceiling_of_allowance("tf32"), "tf32");
  EXPECT_EQ(ceiling_of_allowance("bfloat16"), "bfloat16");
  EXPECT_EQ(ceiling_of_allowance("fp16"), "float16");
  EXPECT_EQ(ceiling_of_allowance("inplace"), std::nullopt);
  EXPECT_EQ(native_allowance("bfloat16"), "bf16");
  EXPECT_EQ(native_allowance("float16"), "fp16");
  EXPECT_EQ(native_allowance("float32"), std::nullopt);
}

TEST(AllowanceTest, EffectiveAllowancesAndWhatIsMissing) {
  EXPECT_EQ(effective_allowances({"TF32", "tf32", "half"}, "bfloat16"),
            (std::vector<std::string>{"tf32", "fp16", "bf16"}));
  EXPECT_EQ(effective_allowances({}, "float32"), std::vector<std::string>{});
  EXPECT_EQ(missing_allowance({"TF32"}, {"tf32"}), std::nullopt);
  EXPECT_EQ(missing_allowance({"tf32", "bfloat16"}, {"tf32"}), "bf16");
  // A bfloat16 task needs no allowance for a bfloat16 recipe.
  EXPECT_EQ(missing_allowance({"bf16"}, effective_allowances({}, "bfloat16")), std::nullopt);
}

}  // namespace
}  // namespace hiera::engine::plan
