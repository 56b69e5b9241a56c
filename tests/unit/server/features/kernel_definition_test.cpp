// textDocument/definition through the whole server: from a launch's kernel
// name (chevron or cudaLaunchKernel) to the kernel, in the same document or
// another open one; from a layer's call in forward to its assignment in
// __init__; elsewhere an empty list.
#include "server/features/kernel_definition.h"

#include "analysis_views_fixture.h"

namespace hiera::server::views_test {
namespace {

json location(const std::string& uri, json at) { return json::array({{{"uri", uri}, {"range", std::move(at)}}}); }

TEST_F(AnalysisViewsTest, DefinitionFromAChevronLaunchIsTheKernelsName) {
  start();
  open(kCuUri, "cuda", kCu);
  EXPECT_EQ(definition(kCuUri, 14, 2)["result"], location(kCuUri, range(4, 16, 4, 21)));  // on its first letter
  EXPECT_EQ(definition(kCuUri, 14, 7)["result"], location(kCuUri, range(4, 16, 4, 21)));  // just after it
  EXPECT_EQ(definition(kCuUri, 15, 32)["result"], location(kCuUri, range(9, 16, 9, 20)));  // fill, in a loop
}

TEST_F(AnalysisViewsTest, DefinitionFromCudaLaunchKernelsFirstArgumentIsTheKernel) {
  start();
  open(kCuUri, "cuda", kCu);
  EXPECT_EQ(definition(kCuUri, 17, 28)["result"], location(kCuUri, range(4, 16, 4, 21)));
}

TEST_F(AnalysisViewsTest, DefinitionElsewhereIsEmpty) {
  start();
  open(kCuUri, "cuda", kCu);
  EXPECT_EQ(definition(kCuUri, 14, 9)["result"], json::array());   // the grid
  EXPECT_EQ(definition(kCuUri, 4, 18)["result"], json::array());   // the kernel's own name
  EXPECT_EQ(definition(kCuUri, 6, 24)["result"], json::array());   // a device call is not a launch
}

TEST_F(AnalysisViewsTest, DefinitionFindsAKernelOfAnotherOpenDocument) {
  start();
  open(kCuUri, "cuda", kCu);
  const std::string main_uri = "file:///w/main.cu";
  open(main_uri, "cuda",
       "void go(float* y) {\n"
       "  fill<<<1, 32>>>(y, 1.f);\n"
       "  missing<<<1, 32>>>(y);\n"
       "}\n");
  EXPECT_EQ(definition(main_uri, 1, 3)["result"], location(kCuUri, range(9, 16, 9, 20)));
  EXPECT_EQ(definition(main_uri, 2, 3)["result"], json::array());  // defined nowhere open
}

TEST_F(AnalysisViewsTest, DefinitionFromALayerCallInForwardIsItsAssignmentInInit) {
  start();
  open(kPyUri, "python", kPy);
  EXPECT_EQ(definition(kPyUri, 10, 12)["result"], location(kPyUri, range(7, 8, 7, 39)));  // on `self`
  EXPECT_EQ(definition(kPyUri, 10, 19)["result"], location(kPyUri, range(7, 8, 7, 39)));  // just after `self.fc`
  EXPECT_EQ(definition(kPyUri, 10, 20)["result"], json::array());  // its argument
  EXPECT_EQ(definition(kPyUri, 11, 14)["result"], json::array());  // torch.relu is no layer
}

TEST(KernelDefinition, TheLaunchAtAKernelNameCoversTheNameAndTheByteAfterIt) {
  const auto a = engine::analysis::analyze(kCu, engine::analysis::Language::Cuda);
  const auto at = kCu.find("saxpy<<<");
  EXPECT_EQ(launch_at_kernel_name(a, at - 1), nullptr);
  ASSERT_NE(launch_at_kernel_name(a, at), nullptr);
  EXPECT_EQ(launch_at_kernel_name(a, at)->kernel, "saxpy");
  EXPECT_EQ(launch_at_kernel_name(a, at + 5), launch_at_kernel_name(a, at));
  EXPECT_EQ(launch_at_kernel_name(a, at + 6), nullptr);
}

}  // namespace
}  // namespace hiera::server::views_test
