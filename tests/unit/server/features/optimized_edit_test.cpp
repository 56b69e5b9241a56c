// The server's delivery edits are the facade's source splicing as ByteEdits:
// the same spans and texts, the same error.
#include "server/features/optimized_edit.h"

#include <gtest/gtest.h>

namespace hiera::server {
namespace {

const std::string kCuda = "__global__ void scale(const float* x, float* y, int n) { y[0] = x[0]; }\n";

TEST(OptimizedEdit, KernelReplacementIsTheFacadesSpliceAsByteEdits) {
  const std::string delivered = "__global__ void scale(const float* x, float* y, int n) { y[0] = 2.0f * x[0]; }\n";
  const auto facade = engine::facade::kernel_replacement(kCuda, "scale", delivered, "", "// NOTE\n");
  const auto edits = kernel_replacement(kCuda, "scale", delivered, "", "// NOTE\n");
  ASSERT_EQ(edits.size(), 1u);
  ASSERT_EQ(facade.size(), 1u);
  EXPECT_EQ(edits[0].begin, 0u);
  EXPECT_EQ(edits[0].end, kCuda.size() - 1);
  EXPECT_EQ(edits[0].text, "// NOTE\n__global__ void scale(const float* x, float* y, int n) { y[0] = 2.0f * x[0]; }");
  EXPECT_EQ(edits[0].text, facade[0].new_text);
}

TEST(OptimizedEdit, ModuleInsertionKeepsTheFacadesError) {
  const std::string python = "class Model:\n    pass\n";
  try {
    module_insertion(python, "Other", python, "# NOTE\n");
    FAIL() << "no error";
  } catch (const OptimizedEditError& e) {
    EXPECT_STREQ(e.what(), "the document no longer defines the class Other");
  }
}

}  // namespace
}  // namespace hiera::server
