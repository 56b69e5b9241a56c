// Which lines' annotations belong to a kernel, and a target's lines as
// `hiera optimize` reads them: its kernel's own, else the whole file.
#include <gtest/gtest.h>

#include "engine/spec/kernel_annotation_lines.h"

namespace hiera::engine::spec {
namespace {

const std::string kTwoKernels =
    "// hiera: size N=1024\n"                                     // 1
    "__global__ void first(float* x) { x[0] = 1; }\n"             // 2
    "__device__ float twice(float v) { return 2 * v; }\n"         // 3
    "// hiera: size M=64\n"                                       // 4
    "template <typename T>\n"                                     // 5
    "__global__ void second(T* y) {\n"                            // 6
    "  y[0] = 2;\n"                                               // 7
    "}\n";                                                        // 8

TEST(KernelAnnotationLinesTest, EachKernelFromAfterThePreviousFunctionToItsEnd) {
  EXPECT_EQ(target_annotation_lines(kTwoKernels, "first"), (LineRange{1, 2}));
  EXPECT_EQ(target_annotation_lines(kTwoKernels, "second"), (LineRange{4, 8}));
  EXPECT_EQ(target_annotation_lines(kTwoKernels, "second<float>"), (LineRange{4, 8}));
  EXPECT_EQ(target_annotation_lines(kTwoKernels, "ns::first"), (LineRange{1, 2}));
  // A device function is no target; an unknown name reads the whole file.
  EXPECT_EQ(target_annotation_lines(kTwoKernels, "twice"), (LineRange{1, INT_MAX}));
  EXPECT_EQ(target_annotation_lines(kTwoKernels, "missing"), (LineRange{1, INT_MAX}));
}

TEST(KernelAnnotationLinesTest, ContractLinesAreArgAndLaunchItemsWellFormedOrNot) {
  auto begins = [](const std::string& text) { return begins_launch_contract(CommentLine{1, 3, text, false}); };
  EXPECT_TRUE(begins(" hiera: arg x in float32[N]"));
  EXPECT_TRUE(begins(" hiera: size N=4; launch grid=?"));
  EXPECT_TRUE(begins(" hiera: atol=1e-3, arg n scalar int32 = N"));
  EXPECT_FALSE(begins(" hiera: size N=4; flops=2*N"));
  EXPECT_FALSE(begins(" hiera: budget=4 arguments=2"));
  EXPECT_FALSE(begins(" TODO arg x"));
}

}  // namespace
}  // namespace hiera::engine::spec
