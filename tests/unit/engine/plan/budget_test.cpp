// Splitting the candidate budget across steps.
#include "engine/plan/budget.h"

#include <gtest/gtest.h>

namespace hiera::engine::plan {
namespace {

TEST(BudgetTest, TwoEachAndTheRestByWeight) {
  EXPECT_EQ(split_budget(24, {1.0, 1.0, 1.0}, 2), (std::vector<int>{8, 8, 8}));
  EXPECT_EQ(split_budget(24, {0.9, 0.9, 0.3, 0.3}, 2), (std::vector<int>{8, 8, 4, 4}));
  EXPECT_EQ(split_budget(24, {5.0}, 2), (std::vector<int>{24}));
  EXPECT_EQ(split_budget(20, {1.0, 0.0}, 2), (std::vector<int>{18, 2}));
}

TEST(BudgetTest, LargestRemaindersAndTiesToTheEarlierStep) {
  EXPECT_EQ(split_budget(10, {3.0, 1.0}, 2), (std::vector<int>{7, 3}));  // 4.5 and 1.5 of 6
  EXPECT_EQ(split_budget(5, {1.0, 1.0}, 2), (std::vector<int>{3, 2}));
  EXPECT_EQ(split_budget(11, {1.0, 1.0, 1.0}, 2), (std::vector<int>{4, 4, 3}));
  EXPECT_EQ(split_budget(7, {0.0, 0.0, 0.0}, 2), (std::vector<int>{3, 2, 2}));  // all zero: equal shares
}

TEST(BudgetTest, EveryPartAddsUpToTheTotal) {
  const std::vector<double> weights = {0.13, 2.7, 0.001, 1.0, 0.5};
  for (int total = 10; total <= 60; ++total) {
    const std::vector<int> parts = split_budget(total, weights, 2);
    int sum = 0;
    for (const int part : parts) {
      EXPECT_GE(part, 2);
      sum += part;
    }
    EXPECT_EQ(sum, total);
  }
}

TEST(BudgetTest, TooSmallABudgetOrANegativeWeightIsRefused) {
  EXPECT_TRUE(split_budget(24, {}, 2).empty());
  EXPECT_THROW(split_budget(5, {1.0, 1.0, 1.0}, 2), std::invalid_argument);
  EXPECT_THROW(split_budget(24, {1.0, -1.0}, 2), std::invalid_argument);
}

}  // namespace
}  // namespace hiera::engine::plan
