// fast_p and the geometric means, with exact values on constructed results.
#include "engine/bench/suite_figures.h"

#include <gtest/gtest.h>

#include <cmath>

namespace hiera::engine::bench {
namespace {

ProblemResult result(std::string name, bool correct, std::optional<double> eager, std::optional<double> compile = std::nullopt) {
  ProblemResult r;
  r.name = std::move(name);
  r.group = ".";
  r.correct = correct;
  r.speedup_eager = eager;
  r.speedup_compile = compile;
  return r;
}

TEST(SuiteFigures, FastPIsTheFractionOfAllProblemsCorrectAndFasterThanP) {
  const std::vector<ProblemResult> results = {
      result("a", true, 4.0, 2.0),    // faster than every p over eager; over compile only up to 1.5
      result("b", true, 1.5, 0.5),    // not faster than 1.5 (strictly greater is required)
      result("c", true, 1.0, 0.8),    // nothing faster: the original, 1.0
      result("d", false, 3.0, 3.0),   // fast but wrong: never counts
      result("e", false, std::nullopt),  // the reference failed
  };
  const SuiteFigures f = compute_figures(results, true);
  EXPECT_EQ(f.problems, 5);
  EXPECT_EQ(f.correct, 3);
  EXPECT_EQ(f.fast_p, (std::map<std::string, double>{{"0", 0.6}, {"1", 0.4}, {"1.5", 0.2}, {"2", 0.2}}));
  ASSERT_TRUE(f.fast_p_compile);
  EXPECT_EQ(*f.fast_p_compile, (std::map<std::string, double>{{"0", 0.6}, {"1", 0.2}, {"1.5", 0.2}, {"2", 0.0}}));
}

TEST(SuiteFigures, GeomeanIsOverAllProblemsWithTheUnmeasuredCountingAsOne) {
  // eager: 4 * 1 * 0.25 * 1 (d, unmeasured, counts as 1.0) * 2 = 2 over five problems.
  const std::vector<ProblemResult> results = {
      result("a", true, 4.0, 2.0), result("b", true, 1.0, 0.5), result("c", true, 0.25, 1.0),
      result("d", false, std::nullopt, std::nullopt), result("e", true, 2.0, 8.0)};
  const SuiteFigures f = compute_figures(results, true);
  EXPECT_DOUBLE_EQ(f.geomean_eager, std::pow(2.0, 1.0 / 5.0));
  ASSERT_TRUE(f.geomean_compile);
  EXPECT_DOUBLE_EQ(*f.geomean_compile, std::pow(8.0, 1.0 / 5.0));  // 2 * 0.5 * 1 * 1 * 8
}

TEST(SuiteFigures, WithoutTheCompileBaselineItsFiguresAreAbsent) {
  const SuiteFigures f = compute_figures({result("a", true, 2.0)}, false);
  EXPECT_FALSE(f.fast_p_compile);
  EXPECT_FALSE(f.geomean_compile);
  EXPECT_DOUBLE_EQ(f.geomean_eager, 2.0);
  EXPECT_EQ(f.fast_p.at("1.5"), 1.0);
}

TEST(SuiteFigures, NoProblemsGiveZeroFractionsAndTheEmptyProduct) {
  const SuiteFigures f = compute_figures({}, true);
  EXPECT_EQ(f.problems, 0);
  EXPECT_EQ(f.fast_p, (std::map<std::string, double>{{"0", 0.0}, {"1", 0.0}, {"1.5", 0.0}, {"2", 0.0}}));
  EXPECT_DOUBLE_EQ(f.geomean_eager, 1.0);
  EXPECT_DOUBLE_EQ(*f.geomean_compile, 1.0);
}

TEST(SuiteFigures, DeliveredSpeedupIsTheMeasuredOneElseOne) {
  EXPECT_DOUBLE_EQ(delivered_speedup(2.5), 2.5);
  EXPECT_DOUBLE_EQ(delivered_speedup(std::nullopt), 1.0);
  EXPECT_DOUBLE_EQ(delivered_speedup(0.0), 1.0);
  EXPECT_DOUBLE_EQ(delivered_speedup(-3.0), 1.0);
  EXPECT_DOUBLE_EQ(delivered_speedup(std::nan("")), 1.0);
}

}  // namespace
}  // namespace hiera::engine::bench
