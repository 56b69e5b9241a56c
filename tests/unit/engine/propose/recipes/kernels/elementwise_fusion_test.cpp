// Elementwise fusion: the groups it fuses (conv + bias + activation + scale),
// the exact launch statements, the generated kernels' key lines, and that
// both kernels (vectorised and scalar) compile with NVRTC for sm_90.
#include "engine/propose/recipes/kernels/elementwise_fusion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/propose/recipes/kernels/unsupported.h"
#include "graph_builder.h"
#include "kernel_test_support.h"

namespace {

using namespace hiera::engine::propose::recipes;
using namespace hiera::engine::propose::recipes::kernels;
using hiera::engine::graph::OpGraph;
using hiera::testing::GraphBuilder;
using hiera::testing::int_arg;
using hiera::testing::list_arg;
using hiera::testing::node_arg;
using hiera::testing::number_arg;
using hiera::testing::slice_arg;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

KernelRewriteOptions options() { return hiera::testing::source_options(); }

// conv -> + bias[C,1,1] -> leaky_relu(0.2) -> * 2.0
OpGraph conv_bias_leaky_scale(const std::string& dtype = "float32") {
  GraphBuilder b;
  b.input("x", {8, 3, 32, 32}, dtype);
  b.module("conv", "Conv2d", {{"in_channels", 3}, {"out_channels", 16}}, {{"weight", {16, 3, 3, 3}}});
  b.call("conv", "call_module", "conv", "conv2d", {node_arg("x")}, {}, {8, 16, 32, 32}, dtype, "self.conv(x)");
  b.parameter("bias", "bias", {16, 1, 1}, dtype);
  b.call("add", "call_function", "operator.add", "add", {node_arg("conv"), node_arg("bias")}, {}, {8, 16, 32, 32}, dtype);
  b.call("leaky_relu", "call_function", "torch.nn.functional.leaky_relu", "leaky_relu", {node_arg("add")},
         {{"negative_slope", number_arg(0.2)}}, {8, 16, 32, 32}, dtype);
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("leaky_relu"), number_arg(2.0)}, {}, {8, 16, 32, 32}, dtype);
  return b.build({"mul"});
}

std::vector<Replacement> fusions(const OpGraph& graph, const KernelRewriteOptions& o = options()) {
  std::vector<SkippedRewrite> skipped;
  auto replacements = find_elementwise_fusions(graph, {}, o, skipped);
  for (const auto& s : skipped) ADD_FAILURE() << s.node << ": " << s.reason;
  return replacements;
}

Replacement only_fusion(const OpGraph& graph, const KernelRewriteOptions& o = options()) {
  auto replacements = fusions(graph, o);
  if (replacements.size() != 1) throw std::runtime_error(std::to_string(replacements.size()) + " replacements");
  return replacements[0];
}

const std::string& source_of(const Replacement& r, const std::string& name) {
  for (const auto& k : r.kernels)
    if (k.name == name) return k.source;
  throw std::runtime_error("no kernel " + name);
}

TEST(ElementwiseFusion, ConvBiasActivationScaleIsOneKernel) {
  const Replacement r = only_fusion(conv_bias_leaky_scale());
  EXPECT_EQ(r.recipe, "s3_elementwise_fusion");
  EXPECT_EQ(r.space, hiera::engine::knowledge::Space::S3);
  EXPECT_EQ(r.produces, "mul");
  EXPECT_THAT(r.covered, ElementsAre("add", "leaky_relu", "mul"));
  EXPECT_EQ(r.description, "add + leaky_relu + mul fused into one elementwise kernel (16-byte vector loads when aligned)");
  EXPECT_THAT(r.statements,
              ElementsAre("_mul_shape = _broadcast_shapes(conv.shape, bias.shape)",
                          "assert conv.dtype == torch.float32 and bias.dtype == torch.float32, "
                          "\"kernel fused_mul expects float32 conv, float32 bias\"",
                          "mul = torch.empty(_mul_shape, dtype=conv.dtype, device=conv.device)",
                          "_mul_n = mul.numel()",
                          "assert _mul_n < 2**31, \"kernel fused_mul indexes with 32 bits\"",
                          "_mul_a0 = conv.contiguous()",
                          "_mul_vec = (_mul_a0.data_ptr() | mul.data_ptr()) % 16 == 0",
                          "(_kernel(\"fused_mul_vec\") if _mul_vec else _kernel(\"fused_mul\"))(_grid((_mul_n + 3) // 4 "
                          "if _mul_vec else _mul_n, 256, 8), 256, _mul_a0, bias.contiguous(), _mul_shape[2:].numel(), "
                          "nvrtc_runtime.uint64(_divider(_mul_shape[2:].numel())), _mul_shape[1:2].numel(), "
                          "nvrtc_runtime.uint64(_divider(_mul_shape[1:2].numel())), mul, nvrtc_runtime.int64(_mul_n))"));
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[0].name, "fused_mul_vec");
  EXPECT_EQ(r.kernels[1].name, "fused_mul");
  const std::string& scalar = source_of(r, "fused_mul");
  EXPECT_EQ(scalar.rfind("// hiera: generated from knowledge/templates/elementwise_fusion.cu\n", 0), 0u);
  EXPECT_THAT(scalar, HasSubstr(
      "__device__ __forceinline__ float fused_mul_element(const index_t i, const float a0_v, "
      "const float* __restrict__ a1, const int a1_inner0, const unsigned long long a1_inner0_div, const int a1_size0, "
      "const unsigned long long a1_size0_div) {\n"
      "  const float a1_v = static_cast<float>(a1[hiera_mod(hiera_div(i, a1_inner0_div), a1_size0, a1_size0_div)]);\n"
      "  const float t0 = a0_v + a1_v;\n"
      "  const float t1 = hiera_leaky_relu(t0, 0.2f);\n"
      "  const float t2 = t1 * 2.0f;\n"
      "  return t2;\n}"));
  EXPECT_THAT(scalar, HasSubstr("extern \"C\" __global__ void fused_mul(const float* __restrict__ a0, const float* "
                                "__restrict__ a1, int a1_inner0, unsigned long long a1_inner0_div, int a1_size0, "
                                "unsigned long long a1_size0_div, out_t* __restrict__ out, long long n)"));
  EXPECT_THAT(scalar, HasSubstr("typedef int index_t;\ntypedef float out_t;"));
  const std::string& vec = source_of(r, "fused_mul_vec");
  EXPECT_THAT(vec, HasSubstr("#define HIERA_VEC 4\n"));
  EXPECT_THAT(vec, HasSubstr("const hiera_pack<float> a0_pack = reinterpret_cast<const hiera_pack<float>*>(a0)[v];"));
  EXPECT_THAT(vec, HasSubstr("fused_mul_vec_element(i, static_cast<float>(a0_pack.v[k]), a1, a1_inner0, a1_inner0_div, a1_size0, "
                             "a1_size0_div)"));
  hiera::testing::expect_kernels_compile(r);
}

// Each intermediate is rounded to half as eager stores it; the conversions
// torch's kernel builds turn off are turned back on before the header. That
// kernel is the second variant, after the one that keeps them in float.
TEST(ElementwiseFusion, HalfPrecisionPacksEightElementsAndRoundsEachIntermediateAsEager) {
  const auto variants = fusions(conv_bias_leaky_scale("float16"));
  ASSERT_EQ(variants.size(), 2u);
  const Replacement& r = variants[1];
  EXPECT_FALSE(r.risky);
  EXPECT_EQ(r.kernels[0].name, "fused_mul_vec");
  const std::string& vec = source_of(r, "fused_mul_vec");
  EXPECT_THAT(vec, HasSubstr("#undef __CUDA_NO_HALF_CONVERSIONS__\n#undef __CUDA_NO_HALF_OPERATORS__\n"
                             "#undef __CUDA_NO_BFLOAT16_CONVERSIONS__\n#undef __CUDA_NO_BFLOAT16_OPERATORS__\n"
                             "#include <cuda_fp16.h>\n"));
  EXPECT_THAT(vec, HasSubstr("  const float t0 = a0_v + a1_v;\n  const float t1 = hiera_round_half(t0);\n"
                             "  const float t2 = hiera_leaky_relu(t1, 0.2f);\n  const float t3 = hiera_round_half(t2);\n"
                             "  const float t4 = t3 * 2.0f;\n  const float t5 = hiera_round_half(t4);\n  return t5;"));
  EXPECT_THAT(vec, HasSubstr("typedef __half out_t;"));
  EXPECT_THAT(vec, HasSubstr("#define HIERA_VEC 8\n"));
  EXPECT_THAT(vec, HasSubstr("const hiera_pack<__half> a0_pack"));
  EXPECT_THAT(r.statements[1], HasSubstr("conv.dtype == torch.float16 and bias.dtype == torch.float16"));
  EXPECT_EQ(r.statements[2], "mul = torch.empty(_mul_shape, dtype=conv.dtype, device=conv.device)");
  EXPECT_THAT(r.statements.back(), HasSubstr("_grid((_mul_n + 7) // 8 if _mul_vec else _mul_n, 256, 8)"));
  hiera::testing::expect_kernels_compile(r);
}

// The first variant computes as torch.compile does: float intermediates, one
// rounding when the result is stored (static_cast<out_t>). Risky, so the
// proposer also offers the rounding kernel.
TEST(ElementwiseFusion, HalfPrecisionChainAlsoComesWithFloatIntermediates) {
  const auto variants = fusions(conv_bias_leaky_scale("float16"));
  ASSERT_EQ(variants.size(), 2u);
  const Replacement& r = variants[0];
  EXPECT_TRUE(r.risky);
  EXPECT_EQ(r.produces, "mul");
  EXPECT_EQ(r.covered, variants[1].covered);
  EXPECT_EQ(r.description, "add + leaky_relu + mul fused into one elementwise kernel (16-byte vector loads when "
                           "aligned; intermediates in float, rounded once when stored)");
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[0].name, "fused_mul_f32_vec");
  EXPECT_EQ(r.kernels[1].name, "fused_mul_f32");
  const std::string& vec = source_of(r, "fused_mul_f32_vec");
  EXPECT_THAT(vec, HasSubstr("  const float t0 = a0_v + a1_v;\n  const float t1 = hiera_leaky_relu(t0, 0.2f);\n"
                             "  const float t2 = t1 * 2.0f;\n  return t2;"));
  EXPECT_THAT(vec, Not(HasSubstr("hiera_round_half")));
  EXPECT_THAT(vec, HasSubstr("typedef __half out_t;"));
  EXPECT_THAT(r.statements.back(), HasSubstr("(_kernel(\"fused_mul_f32_vec\") if _mul_vec else _kernel(\"fused_mul_f32\"))"));
  hiera::testing::expect_kernels_compile(r);
}

// A float32 chain has one kernel: nothing in it is rounded.
TEST(ElementwiseFusion, NoFloatVariantWithoutReducedPrecision) {
  const auto one = fusions(conv_bias_leaky_scale());
  ASSERT_EQ(one.size(), 1u);
  EXPECT_FALSE(one[0].risky);
  EXPECT_EQ(one[0].kernels[1].name, "fused_mul");
}

// x * sigmoid(x) + r: x is read once although two members use it.
TEST(ElementwiseFusion, DagsShareTheirLeaves) {
  GraphBuilder b;
  b.input("x", {4, 1024}).input("r", {4, 1024});
  b.call("sigmoid", "call_function", "torch.sigmoid", "sigmoid", {node_arg("x")}, {}, {4, 1024});
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("x"), node_arg("sigmoid")}, {}, {4, 1024});
  b.call("add", "call_function", "operator.add", "add", {node_arg("mul"), node_arg("r")}, {}, {4, 1024});
  const Replacement r = only_fusion(b.build({"add"}));
  EXPECT_THAT(r.covered, ElementsAre("add", "mul", "sigmoid"));
  EXPECT_EQ(r.statements[0], "_add_shape = _broadcast_shapes(x.shape, r.shape)");
  const std::string& scalar = source_of(r, "fused_add");
  EXPECT_THAT(scalar, HasSubstr("(const index_t i, const float a0_v, const float a1_v)"));
  EXPECT_THAT(scalar, HasSubstr("  const float t0 = hiera_sigmoid(a0_v);\n  const float t1 = a0_v * t0;\n"
                                "  const float t2 = t1 + a1_v;\n  return t2;"));
  EXPECT_EQ(r.statements[7], "_add_vec = (_add_a0.data_ptr() | _add_a1.data_ptr() | add.data_ptr()) % 16 == 0");
  hiera::testing::expect_kernels_compile(r);
}

// A value another op also reads must reach memory: it ends its group.
TEST(ElementwiseFusion, AnIntermediateUsedOutsideEndsTheGroup) {
  GraphBuilder b;
  b.input("x", {4, 1024});
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("x"), number_arg(3.0)}, {}, {4, 1024});
  b.call("exp", "call_function", "torch.exp", "exp", {node_arg("mul")}, {}, {4, 1024});
  b.call("neg", "call_function", "torch.neg", "neg", {node_arg("exp")}, {}, {4, 1024});
  b.call("tanh", "call_function", "torch.tanh", "tanh", {node_arg("mul")}, {}, {4, 1024});
  const OpGraph graph = b.build({"neg", "tanh"});
  const auto groups = elementwise_groups(graph, {});
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].root, "mul");
  EXPECT_EQ(groups[1].root, "neg");
  EXPECT_THAT(groups[1].members, ElementsAre("exp", "neg"));
  EXPECT_EQ(groups[2].root, "tanh");
  std::vector<SkippedRewrite> skipped;
  const auto replacements = find_elementwise_fusions(graph, {}, options(), skipped);
  ASSERT_EQ(replacements.size(), 1u);  // mul and tanh alone are one op each: left to torch
  EXPECT_EQ(replacements[0].produces, "neg");
  EXPECT_THAT(source_of(replacements[0], "fused_neg"), HasSubstr("const float t0 = expf(a0_v);\n  const float t1 = -t0;"));
  // Nodes another rewrite covers are no members.
  EXPECT_TRUE(find_elementwise_fusions(graph, {"exp"}, options(), skipped).empty());
}

// A row of 6 is no whole pack of 4: the vector kernel loads it per element (no lane packs).
TEST(ElementwiseFusion, BroadcastIndexMathPerPattern) {
  GraphBuilder b;
  b.input("x", {8, 16, 6, 6}).input("row", {6}).input("plane", {8, 1, 6, 6}).input("s", {1});
  b.call("add", "call_function", "operator.add", "add", {node_arg("x"), node_arg("row")}, {}, {8, 16, 6, 6});
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("add"), node_arg("plane")}, {}, {8, 16, 6, 6});
  b.call("sub", "call_function", "operator.sub", "sub", {node_arg("mul"), node_arg("s")}, {}, {8, 16, 6, 6});
  const Replacement r = only_fusion(b.build({"sub"}));
  const std::string& scalar = source_of(r, "fused_sub");
  EXPECT_THAT(scalar, HasSubstr("const float a1_v = static_cast<float>(a1[hiera_mod(i, a1_size0, a1_size0_div)]);"));
  EXPECT_THAT(scalar, HasSubstr("const float a2_v = static_cast<float>(a2[hiera_div(i, a2_inner0_div) * a2_stride0 + "
                                "hiera_mod(i, a2_size1, a2_size1_div)]);"));
  EXPECT_THAT(scalar, HasSubstr("const float a3_v = static_cast<float>(a3[0]);"));
  EXPECT_EQ(r.statements.back(),
            "(_kernel(\"fused_sub_vec\") if _sub_vec else _kernel(\"fused_sub\"))(_grid((_sub_n + 3) // 4 if _sub_vec "
            "else _sub_n, 256, 8), 256, _sub_a0, row.contiguous(), plane.contiguous(), s.contiguous(), "
            "_sub_shape[3:4].numel(), nvrtc_runtime.uint64(_divider(_sub_shape[3:4].numel())), _sub_shape[1:].numel(), "
            "nvrtc_runtime.uint64(_divider(_sub_shape[1:].numel())), plane.shape[1:].numel(), _sub_shape[2:4].numel(), "
            "nvrtc_runtime.uint64(_divider(_sub_shape[2:4].numel())), sub, nvrtc_runtime.int64(_sub_n))");
  EXPECT_EQ(r.statements[0], "_sub_shape = _broadcast_shapes(x.shape, row.shape, plane.shape, s.shape)");
  hiera::testing::expect_kernels_compile(r);
}

TEST(ElementwiseFusion, SixtyFourBitIndexingFromTwoToTheThirty) {
  GraphBuilder b;
  b.input("x", {1 << 16, 1 << 15});
  b.call("relu", "call_function", "torch.relu", "relu", {node_arg("x")}, {}, {1 << 16, 1 << 15});
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("relu"), number_arg(0.5)}, {}, {1 << 16, 1 << 15});
  const Replacement r = only_fusion(b.build({"mul"}));
  EXPECT_THAT(source_of(r, "fused_mul"), HasSubstr("typedef long long index_t;"));
  for (const auto& s : r.statements) EXPECT_THAT(s, ::testing::Not(HasSubstr("2**31")));
  hiera::testing::expect_kernels_compile(r);
}

TEST(ElementwiseFusion, BatchNormInInferenceFusesWithItsActivation) {
  GraphBuilder b;
  b.input("x", {4, 8, 5, 5});
  b.module("bn", "BatchNorm2d", {{"eps", 1e-5}, {"track_running_stats", true}}, {{"weight", {8}}, {"bias", {8}}},
           {{"running_mean", {8}}, {"running_var", {8}}});
  b.call("bn", "call_module", "bn", "batch_norm", {node_arg("x")}, {}, {4, 8, 5, 5}, "float32", "self.bn(x)");
  b.call("relu", "call_function", "torch.relu", "relu", {node_arg("bn")}, {}, {4, 8, 5, 5});
  const Replacement r = only_fusion(b.build({"relu"}));
  EXPECT_THAT(r.covered, ElementsAre("bn", "relu"));
  EXPECT_EQ(r.statements[0], "_relu_shape = x.shape");
  EXPECT_THAT(r.statements.back(),
              HasSubstr("256, _relu_a0, self.bn.running_mean.contiguous(), self.bn.running_var.contiguous(), "
                        "self.bn.weight.contiguous(), self.bn.bias.contiguous(), _relu_shape[2:].numel(), "
                        "nvrtc_runtime.uint64(_divider(_relu_shape[2:].numel())), _relu_shape[1:2].numel(), "
                        "nvrtc_runtime.uint64(_divider(_relu_shape[1:2].numel())), relu,"));
  // The four per-channel operands share one index: the compiler computes it once.
  EXPECT_THAT(source_of(r, "fused_relu"),
              HasSubstr("const float a4_v = static_cast<float>(a4[hiera_mod(hiera_div(i, a1_inner0_div), a1_size0, "
                        "a1_size0_div)]);"));
  EXPECT_THAT(source_of(r, "fused_relu"), HasSubstr("const float t0 = a3_v * (a0_v - a1_v) * (1.0f / sqrtf(a2_v + 1e-05f)) + a4_v;"));
  hiera::testing::expect_kernels_compile(r);
  // In training mode the statistics are the batch's: no elementwise kernel.
  GraphBuilder t;
  t.input("x", {4, 8, 5, 5}).training(true);
  t.module("bn", "BatchNorm2d", {{"eps", 1e-5}}, {}, {{"running_mean", {8}}, {"running_var", {8}}});
  t.call("bn", "call_module", "bn", "batch_norm", {node_arg("x")}, {}, {4, 8, 5, 5});
  t.call("relu", "call_function", "torch.relu", "relu", {node_arg("bn")}, {}, {4, 8, 5, 5});
  std::vector<SkippedRewrite> skipped;
  EXPECT_TRUE(find_elementwise_fusions(t.build({"relu"}), {}, options(), skipped).empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].node, "bn");
  EXPECT_EQ(skipped[0].reason, "bn: batch norm uses batch statistics here (training mode or no running stats)");
}

TEST(ElementwiseFusion, MaskedWhereKeepsTheComparisonInside) {
  GraphBuilder b;
  b.input("x", {64, 64});
  b.call("gt", "call_function", "operator.gt", "unknown", {node_arg("x"), number_arg(0.0)}, {}, {64, 64}, "bool");
  b.call("where", "call_function", "torch.where", "where", {node_arg("gt"), node_arg("x"), number_arg(0.5)}, {}, {64, 64});
  const Replacement r = only_fusion(b.build({"where"}));
  EXPECT_THAT(r.covered, ElementsAre("gt", "where"));
  EXPECT_THAT(source_of(r, "fused_where"), HasSubstr("const bool t0 = (a0_v > 0.0f);\n  const float t1 = (t0 ? a0_v : 0.5f);"));
  hiera::testing::expect_kernels_compile(r);
}

// A half output no input carries needs the contract's fp16 allowance.
TEST(ElementwiseFusion, AReducedPrecisionOutputNeedsItsAllowance) {
  GraphBuilder b;
  b.input("x", {64, 64});
  b.call("relu", "call_function", "torch.relu", "relu", {node_arg("x")}, {}, {64, 64});
  b.call("half", "call_method", "half", "to", {node_arg("relu")}, {}, {64, 64}, "float16");
  const OpGraph graph = b.build({"half"});
  std::vector<SkippedRewrite> skipped;
  EXPECT_TRUE(find_elementwise_fusions(graph, {}, options(), skipped).empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].node, "half");
  EXPECT_EQ(skipped[0].reason, "the output is float16, which no input carries and the contract does not allow (fp16)");
  KernelRewriteOptions allowed = options();
  allowed.allowed_precisions = {"fp16"};
  const Replacement r = only_fusion(graph, allowed);
  EXPECT_EQ(r.statements[2], "half = torch.empty(_half_shape, dtype=torch.float16, device=x.device)");
  EXPECT_THAT(source_of(r, "fused_half"), HasSubstr("const float t1 = hiera_round_half(t0);"));
  hiera::testing::expect_kernels_compile(r);
}

TEST(ElementwiseFusion, NeedsTheTemplates) {
  KernelRewriteOptions none;
  std::vector<SkippedRewrite> skipped;
  EXPECT_THROW(find_elementwise_fusions(conv_bias_leaky_scale(), {}, none, skipped), std::invalid_argument);
}

// x * cos + cat((-x[:, 32:], x[:, :32]), -1) * sin over [8, 64]: the cat's
// pieces are read from x at a rotated index; torch builds none of them, unless
// the cat is read elsewhere too.
OpGraph rotation(bool cat_read_elsewhere) {
  GraphBuilder b;
  b.input("x", {8, 64}).input("cos", {64}).input("sin", {64});
  const auto half = [](std::optional<long long> start, std::optional<long long> stop) {
    return list_arg({slice_arg({}, {}), slice_arg(start, stop)});
  };
  b.call("hi", "call_function", "operator.getitem", "getitem", {node_arg("x"), half(32, {})}, {}, {8, 32});
  b.call("neg", "call_function", "operator.neg", "neg", {node_arg("hi")}, {}, {8, 32});
  b.call("lo", "call_function", "operator.getitem", "getitem", {node_arg("x"), half({}, 32)}, {}, {8, 32});
  b.call("cat", "call_function", "torch.cat", "cat", {list_arg({node_arg("neg"), node_arg("lo")}), int_arg(-1)}, {},
         {8, 64});
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("x"), node_arg("cos")}, {}, {8, 64});
  b.call("mul_1", "call_function", "operator.mul", "mul", {node_arg("cat"), node_arg("sin")}, {}, {8, 64});
  b.call("add", "call_function", "operator.add", "add", {node_arg("mul"), node_arg("mul_1")}, {}, {8, 64});
  if (cat_read_elsewhere) {
    b.call("tanh", "call_function", "torch.tanh", "tanh", {node_arg("cat")}, {}, {8, 64});
    return b.build({"add", "tanh"});
  }
  return b.build({"add"});
}

TEST(ElementwiseFusion, ARotationOfSlicesIsReadInPlace) {
  const Replacement r = only_fusion(rotation(false));
  EXPECT_THAT(r.covered, ElementsAre("add", "cat", "hi", "lo", "mul", "mul_1", "neg"));
  EXPECT_THAT(r.statements, Contains("assert x.shape[-1] == 64, \"the rotation of x was generated for rows of 64\""));
  EXPECT_THAT(source_of(r, "fused_add"),
              HasSubstr("  const int c1 = i % 64;\n  const int at1 = c1 < 32 ? i + 32 : i - 32;\n"
                        "  const float g1 = static_cast<float>(a2[at1]);\n  const float t2 = c1 < 32 ? -g1 : g1;\n"));
  hiera::testing::expect_kernels_compile(r);

  // Another reader of the cat: torch still builds it, the kernel still rotates in place.
  std::vector<SkippedRewrite> skipped;
  const auto both = find_elementwise_fusions(rotation(true), {}, options(), skipped);
  ASSERT_EQ(both.size(), 1u);
  EXPECT_THAT(both[0].covered, ElementsAre("add", "mul", "mul_1"));
}

}  // namespace
