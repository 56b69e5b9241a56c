// Data-driven: every source under tests/fixtures/analysis/ (.cu, .cuh, .py)
// has its findings, hints and problems, with exact ranges, in
// <source>.expected.json (analysis_json.h's form, without the rules'
// explanations, which hint_rules_test checks). HIERA_UPDATE_FIXTURES=1 rewrites
// the expected files from the current output, for review in the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/analysis/analysis.h"
#include "engine/analysis/analysis_json.h"
#include "build_paths.h"

namespace hiera::engine::analysis {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kFixtures = fs::path(::hiera::testing::source_dir()) / "tests" / "fixtures" / "analysis";

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void drop_explanations(json& j) {
  for (auto& hint : j["hints"]) hint.erase("explanation");
}

std::vector<fs::path> sources() {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(kFixtures)) {
    if (language_for_path(entry.path().string())) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(AnalysisFixturesTest, EveryFixtureMatchesItsExpectedFindings) {
  const auto files = sources();
  // The suite covers both languages, broken and half-typed code included.
  ASSERT_GE(files.size(), 12u) << kFixtures;
  const bool update = std::getenv("HIERA_UPDATE_FIXTURES") != nullptr;
  for (const auto& source : files) {
    SCOPED_TRACE(source.filename().string());
    const std::string text = read(source);
    const Analysis analysis = analyze(text, *language_for_path(source.string()));
    json actual = to_json(analysis, text);
    drop_explanations(actual);
    const fs::path expected_path = source.string() + ".expected.json";
    if (update) std::ofstream(expected_path) << actual.dump(2) << "\n";
    ASSERT_TRUE(fs::exists(expected_path)) << "missing " << expected_path << " (HIERA_UPDATE_FIXTURES=1 writes it)";
    const json expected = json::parse(read(expected_path));
    EXPECT_EQ(actual, expected) << "diff (expected -> actual): " << json::diff(expected, actual).dump(1);
  }
}

// What each fixture is there for, stated independently of the expected files:
// the rules it must trigger and the problems it must report.
TEST(AnalysisFixturesTest, FixturesTriggerTheRulesTheyAreAbout) {
  const std::map<std::string, std::multiset<std::string>> rules = {
      {"coalescing.cu", {"cuda.uncoalesced_access", "cuda.uncoalesced_access", "cuda.uncoalesced_access",
                         "cuda.uncoalesced_access", "cuda.uncoalesced_access"}},
      {"restrict_and_bounds.cu", {"cuda.missing_restrict", "cuda.missing_restrict", "cuda.missing_bounds_check"}},
      {"shared_banks.cu", {"cuda.shared_bank_conflict", "cuda.shared_bank_conflict", "cuda.shared_bank_conflict"}},
      {"launches.cu", {"cuda.atomic_in_loop", "cuda.double_in_loop", "cuda.block_size", "cuda.block_size", "cuda.launch_in_loop"}},
      {"lexing_edge_cases.cu", {}},
      {"unseen_shapes.py", {"torch.diagonal_matmul", "torch.fusable_elementwise_chain"}},
      {"row_reduction_overrun.cu", {"cuda.uncoalesced_access", "cuda.missing_bounds_check", "cuda.block_size", "cuda.grid_overrun"}},
      {"unseen_torch_hints.py", {"torch.fusable_elementwise_chain", "torch.fusable_elementwise_chain", "torch.gemm_epilogue",
                                 "torch.gemm_epilogue", "torch.foldable_batch_norm", "torch.diagonal_matmul",
                                 "torch.dropout_mode", "torch.dropout_mode", "torch.handwritten_attention"}},
      {"kernelbench_conv_chain.py", {"torch.fusable_elementwise_chain"}},
      {"handwritten_ops.py", {"torch.handwritten_attention", "torch.handwritten_softmax", "torch.handwritten_layer_norm"}},
      {"sync_loops_copies.py", {"torch.python_loop", "torch.python_loop", "torch.python_loop", "torch.host_sync",
                                "torch.host_sync", "torch.host_sync", "torch.host_sync", "torch.host_sync", "torch.host_sync",
                                "torch.contiguous_copy", "torch.contiguous_copy"}},
  };
  for (const auto& [name, expected] : rules) {
    SCOPED_TRACE(name);
    const std::string text = read(kFixtures / name);
    const Analysis analysis = analyze(text, *language_for_path(name));
    std::multiset<std::string> actual;
    for (const auto& hint : analysis.hints) actual.insert(hint.rule);
    EXPECT_EQ(actual, expected);
    EXPECT_TRUE(analysis.problems.empty()) << analysis.problems.front().message;
  }
  for (const char* broken : {"broken_half_typed.cu", "broken_unterminated.cu", "broken_python.py"}) {
    SCOPED_TRACE(broken);
    const std::string text = read(kFixtures / broken);
    EXPECT_FALSE(analyze(text, *language_for_path(broken)).problems.empty());
  }
}

}  // namespace
}  // namespace hiera::engine::analysis
