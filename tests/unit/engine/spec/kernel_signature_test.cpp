// Parameter names of __global__ kernels.
#include "engine/spec/kernel_signature.h"

#include <gtest/gtest.h>

namespace hiera::engine::spec {
namespace {

using Names = std::vector<std::string>;

TEST(KernelSignatureTest, FindsTheKernelsParameters) {
  const std::string source =
      "__device__ float helper(float v) { return v; }\n"
      "__global__ void other(int a) {}\n"
      "__global__ void __launch_bounds__(256) saxpy(int n, float a,\n"
      "    const float* __restrict__ x, float* y) {\n"
      "  y[0] = a * x[0];\n"
      "}\n";
  EXPECT_EQ(kernel_parameters(source, "saxpy"), (Names{"n", "a", "x", "y"}));
  EXPECT_EQ(kernel_parameters(source, "other"), (Names{"a"}));
  EXPECT_EQ(kernel_parameters(source, "helper"), std::nullopt);
  EXPECT_EQ(kernel_parameters(source, "missing"), std::nullopt);
}

TEST(KernelSignatureTest, TemplatesArraysDefaultsAndVoid) {
  const std::string source =
      "template <typename T, int B>\n"
      "__global__ void scale(const T* in, T* out, Pair<int, int> p, float s[4], int n = 3) {}\n"
      "__global__ void none(void) {}\n"
      "__global__ void empty() {}\n";
  EXPECT_EQ(kernel_parameters(source, "scale<float, 128>"), (Names{"in", "out", "p", "s", "n"}));
  EXPECT_EQ(kernel_parameters(source, "none"), Names{});
  EXPECT_EQ(kernel_parameters(source, "empty"), Names{});
}

}  // namespace
}  // namespace hiera::engine::spec
