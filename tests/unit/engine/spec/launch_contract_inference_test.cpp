// Data-driven: every .cu under tests/fixtures/launch_contract/ has, for each
// of its kernels in order, the contract infer_launch_contract writes (or
// "none") in <source>.expected, exactly. HIERA_UPDATE_FIXTURES=1 rewrites the
// expected files from the current output, for review in the diff.
// Independently of the expected files: a complete contract inserted above its
// kernel is a contract build_spec accepts, and every `?` of an incomplete one
// is an error build_spec reports at that `?`.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/analysis/analysis.h"
#include "engine/analysis/line_index.h"
#include "engine/spec/kernel_annotation_lines.h"
#include "engine/spec/launch_contract_inference.h"
#include "engine/spec/spec_builder.h"
#include "build_paths.h"

namespace hiera::engine::spec {
namespace {

namespace fs = std::filesystem;
namespace an = engine::analysis;

const fs::path kFixtures = fs::path(::hiera::testing::source_dir()) / "tests" / "fixtures" / "launch_contract";

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<fs::path> sources() {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(kFixtures)) {
    if (entry.path().extension() == ".cu") out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string describe(const std::string& text, const an::Analysis& analysis) {
  const an::LineIndex lines(text);
  std::string out;
  for (const auto& f : analysis.functions) {
    if (f.kind != an::CudaFunctionKind::Kernel) continue;
    const auto contract = infer_launch_contract(text, analysis, f.name);
    if (!contract) {
      out += "== " + f.name + ": none\n";
      continue;
    }
    out += "== " + f.name + ": before line " + std::to_string(lines.line_of(contract->insert_at) + 1) + "\n" + contract->text;
  }
  return out;
}

std::string inserted(const std::string& text, const InferredContract& contract) {
  return text.substr(0, contract.insert_at) + contract.text + text.substr(contract.insert_at);
}

TEST(LaunchContractInferenceTest, EveryFixtureMatchesItsExpectedContracts) {
  const auto files = sources();
  ASSERT_GE(files.size(), 6u) << kFixtures;
  const bool update = std::getenv("HIERA_UPDATE_FIXTURES") != nullptr;
  for (const auto& source : files) {
    SCOPED_TRACE(source.filename().string());
    const std::string text = read(source);
    const std::string actual = describe(text, an::analyze(text, an::Language::Cuda));
    const fs::path expected_path = source.string() + ".expected";
    if (update) std::ofstream(expected_path, std::ios::binary) << actual;
    ASSERT_TRUE(fs::exists(expected_path)) << "missing " << expected_path << " (HIERA_UPDATE_FIXTURES=1 writes it)";
    EXPECT_EQ(actual, read(expected_path));
  }
}

TEST(LaunchContractInferenceTest, CompleteContractsBuildAndEachQuestionMarkIsAnError) {
  std::size_t complete = 0, incomplete = 0;
  for (const auto& source : sources()) {
    const std::string text = read(source);
    const auto analysis = an::analyze(text, an::Language::Cuda);
    for (const auto& f : analysis.functions) {
      if (f.kind != an::CudaFunctionKind::Kernel) continue;
      const auto contract = infer_launch_contract(text, analysis, f.name);
      if (!contract) continue;
      SCOPED_TRACE(source.filename().string() + " " + f.name);
      const std::string annotated = inserted(text, *contract);
      // The kernel's annotations as every reader takes them: its own lines, the inserted ones included.
      const auto reanalysed = an::analyze(annotated, an::Language::Cuda);
      const auto index = static_cast<std::size_t>(
          std::find_if(reanalysed.functions.begin(), reanalysed.functions.end(), [&](const an::CudaFunction& g) { return g.name == f.name; }) -
          reanalysed.functions.begin());
      ASSERT_LT(index, reanalysed.functions.size());
      const LineRange range = kernel_annotation_lines(reanalysed, index, an::LineIndex(annotated));
      SpecInputs inputs;
      inputs.target = source.filename().string() + "::" + f.name;
      inputs.kind = TargetKind::Cuda;
      inputs.source = annotated;
      inputs.first_line = range.first;
      inputs.last_line = range.last;
      const auto built = build_spec(inputs);
      if (contract->complete()) {
        ++complete;
        EXPECT_TRUE(built.ok()) << built.problems.front().to_string();
        EXPECT_EQ(built.spec.args().size(), f.parameters.size());
        EXPECT_TRUE(built.spec.launch().has_value());
        continue;
      }
      ++incomplete;
      // Each '?' on an annotation line is reported at its column.
      const an::LineIndex lines(annotated);
      std::size_t marks = 0;
      for (std::size_t at = annotated.find('?', contract->insert_at); at < contract->insert_at + contract->text.size();
           at = annotated.find('?', at + 1)) {
        const int line = static_cast<int>(lines.line_of(at)) + 1;
        if (annotated.compare(lines.line_start(static_cast<std::size_t>(line - 1)), 9, "// hiera:") != 0) continue;  // the note
        ++marks;
        const int column = static_cast<int>(at - lines.line_start(static_cast<std::size_t>(line - 1))) + 1;
        const bool reported = std::any_of(built.problems.begin(), built.problems.end(), [&](const SpecProblem& p) {
          return p.line == line && p.column <= column && column <= p.column + 12;
        });
        EXPECT_TRUE(reported) << "no problem at line " << line << ", column " << column;
      }
      EXPECT_EQ(marks, contract->unknown.size());
    }
  }
  EXPECT_GE(complete, 5u);
  EXPECT_GE(incomplete, 2u);
}

TEST(LaunchContractInferenceTest, NoContractForWhatIsNotAnUnannotatedKernel) {
  const std::string text =
      "__device__ float twice(float v) { return 2 * v; }\n"
      "__global__ void half_typed(float* x, int n\n";
  const auto analysis = an::analyze(text, an::Language::Cuda);
  EXPECT_FALSE(infer_launch_contract(text, analysis, "twice"));
  EXPECT_FALSE(infer_launch_contract(text, analysis, "half_typed"));
  EXPECT_FALSE(infer_launch_contract(text, analysis, "missing"));
}

TEST(LaunchContractInferenceTest, IndentedKernelGetsIndentedLines) {
  const std::string text =
      "namespace k {\n"
      "  __global__ void copy(const float* x, float* y, int n) { int i = threadIdx.x; if (i < n) y[i] = x[i]; }\n"
      "  void go(const float* x, float* y) { copy<<<1, 64>>>(x, y, 64); }\n"
      "}\n";
  const auto contract = infer_launch_contract(text, an::analyze(text, an::Language::Cuda), "copy");
  ASSERT_TRUE(contract);
  EXPECT_EQ(contract->insert_at, text.find("  __global__"));
  EXPECT_EQ(contract->text,
            "  // Launch contract inferred by hiera from the launch in go: hiera verifies candidates against it.\n"
            "  // hiera: arg x input float32[64]\n"
            "  // hiera: arg y output float32[64]\n"
            "  // hiera: arg n scalar int32 = 64\n"
            "  // hiera: launch grid=1 block=64\n");
  EXPECT_TRUE(contract->complete());
  EXPECT_TRUE(contract->chosen.empty());
}

}  // namespace
}  // namespace hiera::engine::spec
