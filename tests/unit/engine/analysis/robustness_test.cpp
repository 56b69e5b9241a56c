// Whatever the text, analysis answers: every prefix of every fixture (code
// being typed), single-byte deletions, and pathological nesting. Every range
// it reports lies inside the text, in order.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/analysis/analysis.h"
#include "build_paths.h"

namespace hiera::engine::analysis {
namespace {

namespace fs = std::filesystem;

void expect_spans_inside(const Analysis& a, std::size_t size, const std::string& what) {
  auto check = [&](const Span& s, const char* kind) {
    EXPECT_LE(s.begin, s.end) << kind << " in " << what;
    EXPECT_LE(s.end, size) << kind << " in " << what;
  };
  for (const auto& f : a.functions) {
    check(f.span, "function");
    check(f.name_span, "function name");
    for (const auto& p : f.parameters) check(p.span, "parameter");
  }
  for (const auto& l : a.launches) check(l.span, "launch");
  for (const auto& m : a.modules) {
    check(m.span, "module");
    for (const auto& o : m.ops) check(o.span, "op");
    for (const auto& l : m.layers) check(l.span, "layer");
  }
  for (const auto& h : a.hints) {
    check(h.span, "hint");
    for (const auto& e : h.fix) check(e.span, "fix");
  }
  for (const auto& p : a.problems) check(p.span, "problem");
}

TEST(AnalysisRobustnessTest, PrefixesAndDeletionsOfEveryFixture) {
  for (const auto& entry :
       fs::directory_iterator(fs::path(::hiera::testing::source_dir()) / "tests" / "fixtures" / "analysis")) {
    const auto language = language_for_path(entry.path().string());
    if (!language) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    for (std::size_t end = 0; end <= text.size(); end += 13) {
      const std::string prefix = text.substr(0, end);
      expect_spans_inside(analyze(prefix, *language), prefix.size(), entry.path().filename().string() + " prefix " + std::to_string(end));
    }
    for (std::size_t at = 0; at < text.size(); at += 29) {
      std::string cut = text;
      cut.erase(at, 1);
      expect_spans_inside(analyze(cut, *language), cut.size(), entry.path().filename().string() + " without byte " + std::to_string(at));
    }
  }
}

TEST(AnalysisRobustnessTest, PathologicalNestingIsBounded) {
  const std::string parens = "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return " +
                             std::string(20000, '(') + "x" + std::string(20000, ')') + " + -" + std::string(5000, '-') + "x\n";
  expect_spans_inside(analyze(parens, Language::Python), parens.size(), "parentheses");
  std::string chain = "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return x";
  for (int i = 0; i < 20000; ++i) chain += " + x";
  chain += "\n";
  const Analysis sum = analyze(chain, Language::Python);
  expect_spans_inside(sum, chain.size(), "a long sum");
  std::string stairs;
  for (int i = 0; i < 2000; ++i) stairs += std::string(static_cast<std::size_t>(i), ' ') + "if x:\n";
  expect_spans_inside(analyze(stairs, Language::Python), stairs.size(), "deep blocks");
  std::string ifs = "__global__ void k(float* a, int n) {\n";
  for (int i = 0; i < 20000; ++i) ifs += "if (n) ";
  ifs += "a[threadIdx.x * 2] = " + std::string(5000, '(') + "1" + std::string(5000, ')') + ";\n}\n";
  const Analysis cuda = analyze(ifs, Language::Cuda);
  expect_spans_inside(cuda, ifs.size(), "nested ifs");
  EXPECT_EQ(cuda.functions.size(), 1u);
}

}  // namespace
}  // namespace hiera::engine::analysis
