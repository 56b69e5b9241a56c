// speedups.svg and sol.svg, read back by a real XML parser: one point per
// measured speed-up in each series, the line at 1.0x, one bar per problem
// with a bound, and "n/a" for those without.
#include <gtest/gtest.h>

#include "engine/bench/sol_plot.h"
#include "engine/bench/speedup_plot.h"
#include "svg_parse.h"

namespace hiera::engine::bench {
namespace {

using nlohmann::json;

ProblemResult result(std::string group, std::string name, std::optional<double> eager, std::optional<double> compile,
                     std::optional<double> sol) {
  ProblemResult r;
  r.name = std::move(name);
  r.group = std::move(group);
  r.correct = eager.has_value();
  r.speedup_eager = eager;
  r.speedup_compile = compile;
  r.sol_fraction = sol;
  return r;
}

const std::vector<ProblemResult> kResults = {
    result("fusion", "a<&>", 3.0, 0.7, 0.5),
    result("fusion", "b", 1.0, 1.25, 0.1),
    result(".", "c", 0.1, std::nullopt, std::nullopt),   // slow: widens the axis below 0.5x
    result("norm", "d", std::nullopt, std::nullopt, 1.5),  // failed; a fraction above 1 (faster than light)
};

class BenchPlots : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::have_python()) GTEST_SKIP() << testing::kPython << " is not installed";
  }
};

TEST_F(BenchPlots, SpeedupsHaveOnePointPerMeasuredProblemPerSeriesSortedWithTheUnityLine) {
  const json svg = testing::parse_svg(speedup_plot_svg(kResults, true));
  ASSERT_FALSE(svg.contains("error")) << svg["error"];
  EXPECT_EQ(svg["root"], "svg");
  EXPECT_EQ(svg["classes"]["circle.eager"], 3);
  EXPECT_EQ(svg["classes"]["circle.compile"], 2);
  EXPECT_EQ(svg["classes"]["polyline.eager"], 1);
  EXPECT_EQ(svg["classes"]["polyline.compile"], 1);
  EXPECT_EQ(svg["ids"], (json{"unity"}));
  // Sorted ascending within each series; the ids name their groups.
  EXPECT_EQ(svg["tooltips"], (json{"c: 0.10x over eager", "fusion/b: 1.00x over eager", "fusion/a<&>: 3.00x over eager",
                                   "fusion/a<&>: 0.70x over torch.compile", "fusion/b: 1.25x over torch.compile"}));
  const auto& texts = svg["texts"];
  // Log-2 axis from 1/16 (below 0.1) to 4 (above 3): every power of two labelled.
  for (const char* tick : {"0.06x", "0.12x", "0.25x", "0.50x", "1.00x", "2.00x", "4.00x"}) {
    EXPECT_NE(std::find(texts.begin(), texts.end(), tick), texts.end()) << tick;
  }
  EXPECT_NE(std::find(texts.begin(), texts.end(), "1 not measured"), texts.end());  // eager: d failed
  EXPECT_NE(std::find(texts.begin(), texts.end(), "2 not measured"), texts.end());  // compile: c and d
}

TEST_F(BenchPlots, SpeedupsWithoutCompileHaveOneSeries) {
  const json svg = testing::parse_svg(speedup_plot_svg(kResults, false));
  ASSERT_FALSE(svg.contains("error")) << svg["error"];
  EXPECT_EQ(svg["classes"]["circle.eager"], 3);
  EXPECT_FALSE(svg["classes"].contains("circle.compile"));
}

TEST_F(BenchPlots, EmptySuitesStillMakeValidPlots) {
  for (const std::string& text : {speedup_plot_svg({}, true), sol_plot_svg({})}) {
    const json svg = testing::parse_svg(text);
    ASSERT_FALSE(svg.contains("error")) << svg["error"];
    const auto& texts = svg["texts"];
    EXPECT_NE(std::find(texts.begin(), texts.end(), "no problems"), texts.end());
  }
}

TEST_F(BenchPlots, SolHasOneBarPerProblemWithABoundInSuiteOrder) {
  const json svg = testing::parse_svg(sol_plot_svg(kResults));
  ASSERT_FALSE(svg.contains("error")) << svg["error"];
  EXPECT_EQ(svg["classes"]["rect.bar"], 3);
  EXPECT_EQ(svg["tooltips"], (json{"fusion/a<&>: 50.0% of its speed of light", "fusion/b: 10.0% of its speed of light",
                                   "norm/d: 150.0% of its speed of light"}));
  const auto& texts = svg["texts"];
  EXPECT_NE(std::find(texts.begin(), texts.end(), "n/a"), texts.end());  // c has no bound
  for (const char* label : {"fusion/a<&>", "fusion/b", "c", "norm/d", "0%", "100%", "50.0%", "150.0%"}) {
    EXPECT_NE(std::find(texts.begin(), texts.end(), label), texts.end()) << label;
  }
  // The height grows with the problems: a row each.
  EXPECT_EQ(svg["height"], "178");
}

}  // namespace
}  // namespace hiera::engine::bench
