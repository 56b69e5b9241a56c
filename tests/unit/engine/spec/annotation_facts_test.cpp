// annotation_facts: each CUDA kernel takes the annotations between the
// previous function and its own end, on a file of many kernels (the comments
// are split once for the file, each kernel reads only its range).
#include "engine/spec/annotation_facts.h"

#include <gtest/gtest.h>

namespace hiera::engine::spec {
namespace {

TEST(AnnotationFactsTest, EveryKernelOfAManyKernelFileTakesOnlyItsOwnAnnotations) {
  std::string text = "// hiera: size N=1024\n";
  constexpr int kKernels = 300;
  for (int k = 0; k < kKernels; ++k) {
    const std::string n = std::to_string(k);
    if (k % 3 != 2) text += "// hiera: flops=" + n + "*N bytes=" + std::to_string(k + 1) + "*N\n";  // every third has none
    text += "__global__ void k" + n + "(float* y) { y[threadIdx.x] = 0; }\n"
            "void host" + n + "(float* y) { k" + n + "<<<1, 32>>>(y); }\n";
  }
  const auto structure = analysis::analyze(text, analysis::Language::Cuda);
  const auto facts = annotation_facts(text, analysis::Language::Cuda, structure);
  ASSERT_EQ(facts.kernels.size(), static_cast<std::size_t>(kKernels - kKernels / 3));
  for (int k = 0; k < kKernels; ++k) {
    const auto found = facts.kernels.find("k" + std::to_string(k));
    if (k % 3 == 2) {
      EXPECT_EQ(found, facts.kernels.end()) << k;
      continue;
    }
    ASSERT_NE(found, facts.kernels.end()) << k;
    EXPECT_EQ(found->second.flops, std::to_string(k) + "*N");
    EXPECT_EQ(found->second.bytes, std::to_string(k + 1) + "*N");
    // The file's size line precedes only the first kernel.
    EXPECT_EQ(found->second.sizes.count("N"), k == 0 ? 1u : 0u) << k;
  }
}

}  // namespace
}  // namespace hiera::engine::spec
