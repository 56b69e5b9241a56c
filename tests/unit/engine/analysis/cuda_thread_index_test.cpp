// How index expressions vary across a warp: the basis of the coalescing,
// bank-conflict and bounds-check rules.
#include "engine/analysis/cuda_thread_index.h"

#include <gtest/gtest.h>

#include "engine/analysis/cuda_lexer.h"

namespace hiera::engine::analysis {
namespace {

// The class of the index of the last subscript `a[...]` in a kernel whose body is `body`.
IndexClass index_class(const std::string& body) {
  const std::string source = "#define W 32\n__global__ void k(float* a, int n, int s) {\n" + body + "\n}\n";
  CudaScan scan = scan_cuda(source, lex_cuda(source).tokens);
  scan_cuda_body(source, scan, 0);
  const CudaBody& b = scan.bodies.at(0);
  const ThreadIndexClassifier classifier(source, scan, b);
  const CudaSubscript& last = b.subscripts.back();
  return classifier.classify(last.indices.at(0), last.name);
}

TEST(CudaThreadIndexTest, UnitStrideIsCoalesced) {
  for (const char* body : {"a[threadIdx.x];", "int i = blockIdx.x * blockDim.x + threadIdx.x; a[i];",
                           "int i = threadIdx.x + blockIdx.x * W; a[i + 3];", "int r = blockIdx.y; a[r * n + threadIdx.x];",
                           "int lane = threadIdx.x % 32; a[lane];", "a[n - 1 - threadIdx.x];", "a[(int)threadIdx.x];"}) {
    SCOPED_TRACE(body);
    const IndexClass c = index_class(body);
    EXPECT_EQ(c.variation, WarpVariation::Unit);
    EXPECT_TRUE(c.uses_thread);
  }
}

TEST(CudaThreadIndexTest, StridesAreMeasuredWhenConstant) {
  const IndexClass four = index_class("int i = threadIdx.x * 2; a[i * 2];");
  EXPECT_EQ(four.variation, WarpVariation::Strided);
  EXPECT_EQ(four.stride, 4);
  const IndexClass shifted = index_class("a[threadIdx.x << 3];");
  EXPECT_EQ(shifted.stride, 8);
  const IndexClass named = index_class("a[threadIdx.x * W + 1];");
  EXPECT_EQ(named.stride, 32);
  const IndexClass runtime = index_class("int x = blockIdx.x * blockDim.x + threadIdx.x; a[x * n + blockIdx.y];");
  EXPECT_EQ(runtime.variation, WarpVariation::Strided);
  EXPECT_EQ(runtime.stride, std::nullopt);
  EXPECT_TRUE(runtime.uses_block);
}

TEST(CudaThreadIndexTest, UniformAndIrregular) {
  EXPECT_EQ(index_class("a[blockIdx.x * 4];").variation, WarpVariation::Uniform);
  EXPECT_EQ(index_class("a[threadIdx.y];").variation, WarpVariation::Uniform);
  EXPECT_EQ(index_class("a[threadIdx.x / 32];").variation, WarpVariation::Uniform);  // a warp-wide broadcast
  EXPECT_EQ(index_class("a[threadIdx.x * threadIdx.x];").variation, WarpVariation::Irregular);
  EXPECT_EQ(index_class("a[s > 0 ? threadIdx.x : 0];").variation, WarpVariation::Irregular);
  EXPECT_EQ(index_class("int j = a[threadIdx.x]; a[j];").variation, WarpVariation::Irregular);  // a gather
}

TEST(CudaThreadIndexTest, VariablesAreFollowedToTheirLatestDefinition) {
  const IndexClass c = index_class("int i = threadIdx.x; i = threadIdx.x * 8; a[i];");
  EXPECT_EQ(c.stride, 8);
  EXPECT_EQ(c.variables, (std::set<std::string>{"i", "threadIdx"}));
}

}  // namespace
}  // namespace hiera::engine::analysis
