// A document's analysis through the facade: the language from the languageId
// or the path, and the facts of its `hiera:` annotations applied, with the
// structure pass only where annotations are.
#include "engine/facade/document_analysis.h"

#include <gtest/gtest.h>

namespace hiera::engine::facade {
namespace {

using analysis::Language;

const std::string kAnnotated =
    "// hiera: size N=1048576\n"
    "// hiera: flops=2*N bytes=12*N\n"
    "__global__ void saxpy(int n, float a, const float* x, float* y) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

TEST(SourceLanguage, TheLanguageIdFirstThenThePath) {
  EXPECT_EQ(source_language("cuda", "file:///a.py"), Language::Cuda);
  EXPECT_EQ(source_language("python", "kernel.cu"), Language::Python);
  EXPECT_EQ(source_language("", "/src/kernel.cuh"), Language::Cuda);
  EXPECT_EQ(source_language("plaintext", "model.py"), Language::Python);
  EXPECT_EQ(source_language("plaintext", "notes.txt"), std::nullopt);
}

TEST(AnalyzeSource, AnnotationsGiveAKernelItsWorkAndKeepTheStructure) {
  const auto result = analyze_source(kAnnotated, Language::Cuda);
  ASSERT_EQ(result.analysis.functions.size(), 1u);
  ASSERT_TRUE(result.analysis.functions[0].work.has_value());
  EXPECT_EQ(result.analysis.functions[0].work->flops, 2097152);
  EXPECT_EQ(result.analysis.functions[0].work->bytes, 12582912);
  EXPECT_EQ(result.analysis.functions[0].work->source, "annotations");
  ASSERT_NE(result.structure, nullptr);
  EXPECT_FALSE(result.structure->functions[0].work.has_value());  // the pass without facts

  // The next version reuses both: the same findings.
  const auto again = analyze_source(kAnnotated, Language::Cuda, &result.analysis, result.structure.get());
  EXPECT_EQ(again.analysis.functions[0].work, result.analysis.functions[0].work);
}

TEST(AnalyzeSource, NoAnnotationNoStructurePassAndNoWork) {
  const std::string plain = kAnnotated.substr(kAnnotated.find("__global__"));
  const auto result = analyze_source(plain, Language::Cuda);
  EXPECT_EQ(result.structure, nullptr);
  ASSERT_EQ(result.analysis.functions.size(), 1u);
  EXPECT_FALSE(result.analysis.functions[0].work.has_value());
}

TEST(AnalyzeSource, PythonHasNoStructurePass) {
  const std::string python =
      "# hiera: size batch_size=64\n"
      "import torch\n"
      "batch_size = 16\n";
  const auto result = analyze_source(python, Language::Python);
  EXPECT_EQ(result.structure, nullptr);  // Python's facts are the whole file's sizes: no kernel ranges to find
}

}  // namespace
}  // namespace hiera::engine::facade
