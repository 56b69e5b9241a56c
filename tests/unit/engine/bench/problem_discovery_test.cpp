// Problem discovery: KernelBench files at any depth, grouped by subfolder,
// in natural order, filtered by a regular expression over group/name;
// everything that is not a problem is skipped.
#include "engine/bench/problem_discovery.h"

#include <gtest/gtest.h>

#include <fstream>

#include "temp_directory.h"

namespace hiera::engine::bench {
namespace {

namespace fs = std::filesystem;

const char* kProblem =
    "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def forward(self, x):\n        return x\n\n"
    "def get_inputs():\n    return [torch.randn(4)]\n\ndef get_init_inputs():\n    return []\n";

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

std::vector<std::string> ids(const std::vector<Problem>& problems) {
  std::vector<std::string> out;
  for (const auto& p : problems) out.push_back(p.id());
  return out;
}

class ProblemDiscovery : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path root = dir_.path();
    write(root / "10_top.py", kProblem);
    write(root / "2_top.py", kProblem);
    write(root / "fusion" / "10_conv_relu.py", kProblem);
    write(root / "fusion" / "9_gelu.py", kProblem);
    write(root / "fusion" / "deep" / "1_norm.py", kProblem);
    write(root / "attention" / "1_sdpa.py", kProblem);
    // Not problems: helpers, packages, notes, other languages, caches, hidden folders.
    write(root / "fusion" / "helpers.py", "import torch\n\ndef scale(x):\n    return 2 * x\n");
    write(root / "fusion" / "__init__.py", "");
    write(root / "README.md", "class Model(nn.Module):\n");
    write(root / "kernel.cu", "__global__ void k(float* x) {}\n");
    write(root / "__pycache__" / "cached.py", kProblem);
    write(root / ".hiera" / "bench" / "copy.py", kProblem);
    write(root / "other" / "not_model.py", "import torch\nclass Net(torch.nn.Module):\n    pass\n");
  }
  hiera::testing::TempDirectory dir_{"hiera-bench-discovery-"};
};

TEST_F(ProblemDiscovery, FindsProblemsAtAnyDepthGroupedBySubfolderInNaturalOrder) {
  const auto problems = discover_problems(dir_.path());
  EXPECT_EQ(ids(problems), (std::vector<std::string>{"2_top", "10_top", "attention/1_sdpa", "fusion/9_gelu",
                                                     "fusion/10_conv_relu", "fusion/deep/1_norm"}));
  ASSERT_EQ(problems.size(), 6u);
  EXPECT_EQ(problems[0].name, "2_top");
  EXPECT_EQ(problems[0].group, ".");
  EXPECT_EQ(problems[0].file, dir_.path() / "2_top.py");
  EXPECT_EQ(problems[3].group, "fusion");
  EXPECT_EQ(problems[3].name, "9_gelu");
  EXPECT_EQ(problems[5].group, "fusion/deep");
  EXPECT_EQ(problems[5].file, dir_.path() / "fusion" / "deep" / "1_norm.py");
}

TEST_F(ProblemDiscovery, TheFilterIsSearchedInGroupSlashName) {
  EXPECT_EQ(ids(discover_problems(dir_.path(), "^fusion/")),
            (std::vector<std::string>{"fusion/9_gelu", "fusion/10_conv_relu", "fusion/deep/1_norm"}));
  EXPECT_EQ(ids(discover_problems(dir_.path(), "relu|sdpa")), (std::vector<std::string>{"attention/1_sdpa", "fusion/10_conv_relu"}));
  EXPECT_EQ(ids(discover_problems(dir_.path(), "^10_")), (std::vector<std::string>{"10_top"}));
  EXPECT_TRUE(discover_problems(dir_.path(), "nothing-matches").empty());
}

TEST_F(ProblemDiscovery, RejectsABadFilterAndAMissingDirectoryWithTheReason) {
  try {
    discover_problems(dir_.path(), "(unclosed");
    FAIL() << "a bad regular expression was accepted";
  } catch (const DiscoveryError& e) {
    EXPECT_NE(std::string(e.what()).find("--filter '(unclosed': not a valid regular expression"), std::string::npos) << e.what();
  }
  try {
    discover_problems(dir_.path() / "missing");
    FAIL() << "a missing directory was accepted";
  } catch (const DiscoveryError& e) {
    EXPECT_EQ(std::string(e.what()), (dir_.path() / "missing").string() + ": not a directory");
  }
  EXPECT_THROW(discover_problems(dir_.path() / "2_top.py"), DiscoveryError);
}

TEST(ProblemDiscoveryRules, AModelIsAnNnModuleClassNamedModel) {
  EXPECT_TRUE(defines_model("class Model(nn.Module):\n"));
  EXPECT_TRUE(defines_model("import torch\nclass Model(torch.nn.Module):\n    pass\n"));
  EXPECT_FALSE(defines_model("class ModelNew(nn.Module):\n"));
  EXPECT_FALSE(defines_model("class Model:\n"));
  EXPECT_FALSE(defines_model("    class Model(nn.Module):\n"));  // nested: not the module's entry point
  EXPECT_FALSE(defines_model("# class Model(nn.Module):\n"));
}

TEST(ProblemDiscoveryRules, NaturalOrderComparesDigitRunsByValue) {
  EXPECT_TRUE(natural_less("2_a", "10_a"));
  EXPECT_FALSE(natural_less("10_a", "2_a"));
  EXPECT_TRUE(natural_less("level1", "level2"));
  EXPECT_TRUE(natural_less("a9b", "a10a"));
  EXPECT_TRUE(natural_less("1", "01"));  // equal values: the shorter spelling first, so the order is total
  EXPECT_FALSE(natural_less("01", "1"));
  EXPECT_TRUE(natural_less("abc", "abd"));
  EXPECT_TRUE(natural_less("ab", "abc"));
  EXPECT_FALSE(natural_less("same_7", "same_7"));
}

}  // namespace
}  // namespace hiera::engine::bench
