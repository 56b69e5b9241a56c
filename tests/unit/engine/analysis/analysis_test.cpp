// analyze(): both languages end to end, annotation facts, and incremental
// reuse, which must give exactly what a fresh analysis gives.
#include "engine/analysis/analysis.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/analysis/analysis_json.h"
#include "build_paths.h"

namespace hiera::engine::analysis {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::filesystem::path(::hiera::testing::source_dir()) / "tests" / "fixtures" / "analysis" / name,
                   std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::json as_json(const Analysis& a, const std::string& text) { return to_json(a, text); }

// Re-analysing `edited` with `original`'s analysis must equal a fresh analysis.
Analysis expect_incremental_equals_fresh(const std::string& original, const std::string& edited, Language language) {
  const Analysis before = analyze(original, language);
  const Analysis incremental = analyze(edited, language, {}, &before);
  const Analysis fresh = analyze(edited, language);
  EXPECT_EQ(as_json(incremental, edited), as_json(fresh, edited));
  EXPECT_EQ(incremental.items, fresh.items);
  return incremental;
}

TEST(AnalysisTest, UnchangedTextReturnsThePreviousAnalysis) {
  const std::string text = fixture("launches.cu");
  const Analysis first = analyze(text, Language::Cuda);
  const Analysis again = analyze(text, Language::Cuda, {}, &first);
  EXPECT_EQ(again.cache, first.cache);  // the same analysis, not recomputed
  EXPECT_EQ(again.hints, first.hints);
}

TEST(AnalysisTest, AnEditInsideOneKernelReusesTheOthers) {
  const std::string original = fixture("coalescing.cu");
  std::string edited = original;
  edited.replace(edited.find("in[i * stride]"), 14, "in[i * stride + 1]");
  const Analysis a = expect_incremental_equals_fresh(original, edited, Language::Cuda);
  EXPECT_EQ(a.items, 6u);
  EXPECT_EQ(a.reused, 5u);
}

TEST(AnalysisTest, TextInsertedAboveShiftsReusedFindings) {
  const std::string original = fixture("restrict_and_bounds.cu");
  const std::string edited = "// a new first line, then a kernel\n__global__ void added(float* p) { p[0] = 1; }\n" + original;
  const Analysis a = expect_incremental_equals_fresh(original, edited, Language::Cuda);
  EXPECT_EQ(a.items, 7u);
  EXPECT_EQ(a.reused, 6u);
  // The shifted hint still points at its text.
  ASSERT_FALSE(a.hints.empty());
  const Hint& last = a.hints.back();
  EXPECT_EQ(edited.substr(last.span.begin, last.span.size()), "b[i]");
}

TEST(AnalysisTest, AChangedConstantReanalysesEveryKernel) {
  const std::string original = fixture("shared_banks.cu");
  std::string edited = original;
  edited.replace(edited.find("#define TILE 32"), 15, "#define TILE 33");
  const Analysis a = expect_incremental_equals_fresh(original, edited, Language::Cuda);
  EXPECT_EQ(a.reused, 0u);
  // Rows of 33 words have no conflict; the "padded" TILE + 1 = 34 now has a 2-way one.
  ASSERT_EQ(a.hints.size(), 3u);
  EXPECT_EQ(edited.substr(a.hints[0].span.begin, a.hints[0].span.size()), "tile[threadIdx.x][threadIdx.y]");
  EXPECT_NE(a.hints[0].message.find("34 words wide: a 2-way bank conflict"), std::string::npos) << a.hints[0].message;
}

TEST(AnalysisTest, OpeningACommentHidesTheRestAndClosingItBringsItBack) {
  const std::string original = fixture("launches.cu");
  std::string opened = original;
  opened.insert(opened.find("__global__ void accumulate"), "/* ");
  const Analysis hidden = expect_incremental_equals_fresh(original, opened, Language::Cuda);
  EXPECT_EQ(hidden.functions.size(), 1u);  // only `fill` is left
  const Analysis back = analyze(original, Language::Cuda, {}, &hidden);
  EXPECT_EQ(as_json(back, original), as_json(analyze(original, Language::Cuda), original));
}

TEST(AnalysisTest, PythonEditsReuseUntouchedModules) {
  const std::string original = fixture("handwritten_ops.py");
  std::string edited = original;
  edited.replace(edited.find("return weights @ v"), 18, "return (weights @ v).contiguous()");
  const Analysis a = expect_incremental_equals_fresh(original, edited, Language::Python);
  EXPECT_EQ(a.items, 4u);
  EXPECT_EQ(a.reused, 3u);
  // A module-level change is context for every module.
  const std::string renamed = "import numpy as np\n" + original;
  const Analysis b = expect_incremental_equals_fresh(original, renamed, Language::Python);
  EXPECT_EQ(b.reused, 0u);
}

TEST(AnalysisTest, KernelBenchInputsAreContextForTheModel) {
  const std::string original = fixture("kernelbench_conv_chain.py");
  std::string edited = original;
  edited.replace(edited.find("batch_size = 16"), 15, "batch_size = 64");
  const Analysis a = expect_incremental_equals_fresh(original, edited, Language::Python);
  EXPECT_EQ(a.reused, 0u);
  EXPECT_EQ(a.modules.at(0).ops.at(0).shape, (Shape{64, 16, 30, 30}));
}

TEST(AnalysisTest, EditsThroughABrokenStateStayConsistent) {
  // Typing a kernel line by line: every prefix is analysed from the previous one.
  const std::string full = fixture("launches.cu");
  Analysis previous = analyze("", Language::Cuda);
  for (std::size_t end = 0; end <= full.size(); end += 97) {
    const std::string prefix = full.substr(0, end);
    Analysis next = analyze(prefix, Language::Cuda, {}, &previous);
    EXPECT_EQ(as_json(next, prefix), as_json(analyze(prefix, Language::Cuda), prefix)) << "prefix of " << end << " bytes";
    previous = std::move(next);
  }
  const std::string py = fixture("sync_loops_copies.py");
  previous = analyze("", Language::Python);
  for (std::size_t end = 0; end <= py.size(); end += 61) {
    const std::string prefix = py.substr(0, end);
    Analysis next = analyze(prefix, Language::Python, {}, &previous);
    EXPECT_EQ(as_json(next, prefix), as_json(analyze(prefix, Language::Python), prefix)) << "prefix of " << end << " bytes";
    previous = std::move(next);
  }
}

// From tests/fuzz/fuzz_analyze_source: a line added above a launch cut off
// before its block moved the block span it does not have.
TEST(AnalysisTest, ALaunchWithoutABlockReanalysesAsItAnalysesFresh) {
  const Analysis before = analyze("i(){e<<<<", Language::Cuda);
  const Analysis incremental = analyze("\ni(){e<<<<", Language::Cuda, {}, &before);
  const Analysis fresh = analyze("\ni(){e<<<<", Language::Cuda);
  ASSERT_EQ(fresh.launches.size(), 1u);
  EXPECT_EQ(fresh.launches[0].block_span, (Span{}));
  EXPECT_EQ(incremental.launches, fresh.launches);
}

// cuda.grid_overrun pairs a launcher's grid with its kernel's bounds check
// after both are analysed: an edit to either gives what a fresh analysis gives.
TEST(AnalysisTest, ALauncherFollowsTheKernelItLaunches) {
  const std::string original = fixture("row_reduction_overrun.cu");
  auto overruns = [](const Analysis& a) {
    return std::count_if(a.hints.begin(), a.hints.end(), [](const Hint& h) { return h.rule == "cuda.grid_overrun"; });
  };
  // The kernel gains its bounds check: the launcher's overrun goes although its own text is unchanged.
  std::string checked = original;
  checked.replace(checked.find("  y[i] = a * x[i];"), 18, "  if (i < 7) y[i] = a * x[i];");
  const Analysis fixed = expect_incremental_equals_fresh(original, checked, Language::Cuda);
  EXPECT_EQ(overruns(fixed), 0);
  EXPECT_EQ(fixed.reused, 2u);  // row_sum and the launcher: the overrun is the file's, not the launcher's cached hint
  // An edit to the launcher alone still finds the overrun in the reused kernel's body.
  std::string moved = original;
  moved.replace(moved.find("  dim3 block(100);"), 18, "  dim3 block(100);  // one row per thread");
  EXPECT_EQ(overruns(expect_incremental_equals_fresh(original, moved, Language::Cuda)), 1);
}

TEST(AnalysisTest, AnotherLanguageReusesNothing) {
  const std::string text = "def f():\n    pass\n";
  const Analysis cuda = analyze(text, Language::Cuda);
  const Analysis python = analyze(text, Language::Python, {}, &cuda);
  EXPECT_EQ(python.language, Language::Python);
  EXPECT_NE(python.cache, cuda.cache);
}

TEST(AnalysisTest, AnnotatedWorkGivesAKernelItsEstimate) {
  const std::string text = "__global__ void saxpy(int n, float a, const float* x, float* y) {}\n__global__ void other() {}\n";
  AnalysisFacts facts;
  facts.kernels["saxpy"] = {"2*N", "12*N", SizeMap{{"N", 1000}}, "float32"};
  facts.kernels["other"] = {"M", "", SizeMap{}, "float32"};  // M is not a size: no estimate
  const Analysis a = analyze(text, Language::Cuda, facts);
  ASSERT_TRUE(a.functions.at(0).work);
  EXPECT_DOUBLE_EQ(a.functions[0].work->flops, 2000);
  EXPECT_DOUBLE_EQ(a.functions[0].work->bytes, 12000);
  EXPECT_EQ(a.functions[0].work->source, "annotations");
  EXPECT_FALSE(a.functions[1].work);
  // Different facts are a different analysis even for the same text.
  const Analysis without = analyze(text, Language::Cuda, {}, &a);
  EXPECT_FALSE(without.functions.at(0).work);
}

}  // namespace
}  // namespace hiera::engine::analysis
