// Roll stencils: torch.roll of one tensor in its spellings (method and
// function, ints and tuples, dims from either end, rolls of rolls) becomes one
// direct stencil kernel with the circular boundary; other fields of the
// output's shape are read at the output point; the exact launch statements;
// what is refused; NVRTC compiles each kernel.
#include "engine/propose/recipes/kernels/stencil_rolls.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph_builder.h"
#include "kernel_test_support.h"

namespace {

using namespace hiera::engine::propose::recipes;
using namespace hiera::engine::propose::recipes::kernels;
using hiera::engine::graph::Arg;
using hiera::engine::graph::OpGraph;
using hiera::testing::GraphBuilder;
using hiera::testing::int_arg;
using hiera::testing::list_arg;
using hiera::testing::node_arg;
using hiera::testing::number_arg;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Shape = std::vector<std::int64_t>;

KernelRewriteOptions options() { return hiera::testing::source_options(); }

// u.roll(shifts, dims) as the capture records a method call.
void method_roll(GraphBuilder& b, const std::string& name, const std::string& input, Arg shifts, Arg dims, const Shape& shape) {
  b.call(name, "call_method", "roll", "unknown", {node_arg(input), shifts, dims}, {}, shape);
}
// torch.roll(u, shifts=..., dims=...).
void function_roll(GraphBuilder& b, const std::string& name, const std::string& input, Arg shifts, Arg dims,
                   const Shape& shape) {
  b.call(name, "call_function", "torch.roll", "unknown", {node_arg(input)}, {{"shifts", shifts}, {"dims", dims}}, shape);
}

struct Found {
  std::vector<Replacement> replacements;
  std::vector<SkippedRewrite> skipped;
  std::set<std::string> covered;
};

Found roll_stencils(const OpGraph& graph) {
  Found f;
  f.replacements = find_roll_stencils(graph, f.covered, options(), f.skipped);
  return f;
}

// u + 0.1 * (u.roll(1, -1) + torch.roll(u, shifts=-1, dims=-1) + u.roll(1, -2) + torch.roll(u, -1, 1) - 4 * u)
// over a batch of 4 periodic 256 x 512 fields.
OpGraph heat_step_2d() {
  const Shape shape = {4, 256, 512};
  GraphBuilder b;
  b.input("u", shape);
  method_roll(b, "roll", "u", int_arg(1), int_arg(-1), shape);
  function_roll(b, "roll_1", "u", int_arg(-1), int_arg(-1), shape);
  method_roll(b, "roll_2", "u", int_arg(1), int_arg(-2), shape);
  b.call("roll_3", "call_function", "torch.roll", "unknown", {node_arg("u"), int_arg(-1), int_arg(1)}, {}, shape);
  b.call("add", "call_function", "operator.add", "add", {node_arg("roll"), node_arg("roll_1")}, {}, shape);
  b.call("add_1", "call_function", "operator.add", "add", {node_arg("add"), node_arg("roll_2")}, {}, shape);
  b.call("add_2", "call_function", "operator.add", "add", {node_arg("add_1"), node_arg("roll_3")}, {}, shape);
  b.call("mul", "call_function", "operator.mul", "mul", {int_arg(4), node_arg("u")}, {}, shape);
  b.call("sub", "call_function", "operator.sub", "sub", {node_arg("add_2"), node_arg("mul")}, {}, shape);
  b.call("mul_1", "call_function", "operator.mul", "mul", {node_arg("sub"), number_arg(0.1)}, {}, shape);
  b.call("add_3", "call_function", "operator.add", "add", {node_arg("u"), node_arg("mul_1")}, {}, shape);
  return b.build({"add_3"});
}

TEST(StencilRolls, PeriodicHeatStep2DIsOneDirectKernelWithACircularBoundary) {
  const Found f = roll_stencils(heat_step_2d());
  EXPECT_TRUE(f.skipped.empty());
  ASSERT_EQ(f.replacements.size(), 1u);  // only the direct kernel maps taps through a boundary mode
  const Replacement& r = f.replacements[0];
  EXPECT_EQ(r.recipe, "s3_stencil2d_direct_l1");
  EXPECT_EQ(r.produces, "add_3");
  EXPECT_THAT(r.covered, ElementsAre("add", "add_1", "add_2", "add_3", "mul", "mul_1", "roll", "roll_1", "roll_2",
                                     "roll_3", "sub"));
  EXPECT_EQ(f.covered, r.covered);
  EXPECT_EQ(r.description, "5-point 2D periodic stencil over u (torch.roll) as one kernel with its coefficients compiled "
                           "in, the wrap-around read through a circular boundary, neighbours read through the caches");
  EXPECT_THAT(r.statements,
              ElementsAre("_add_3_x = u.contiguous()",
                          "assert _add_3_x.dtype == torch.float32, \"kernel stencil_add_3 expects float32 u\"",
                          "_add_3_shape = _add_3_x.shape",
                          "add_3 = torch.empty(_add_3_shape, dtype=_add_3_x.dtype, device=_add_3_x.device)",
                          "_kernel(\"stencil_add_3\")(((_add_3_shape[-1] + 31) // 32, (_add_3_shape[-2] + 7) // 8, "
                          "max(1, min(_add_3_shape[:-2].numel(), 65535))), (32, 8), _add_3_x, add_3, _add_3_x.shape[-1], "
                          "_add_3_x.shape[-2], _add_3_shape[-1], _add_3_shape[-2], "
                          "nvrtc_runtime.int64(_add_3_shape[:-2].numel()))"));
  ASSERT_EQ(r.kernels.size(), 1u);
  const std::string& source = r.kernels[0].source;
  EXPECT_EQ(source.rfind("// hiera: generated from knowledge/templates/stencil2d_direct.cu\n", 0), 0u);
  // roll(u, s, d)[i] = u[i - s]: a shift of +1 along x is the tap at x offset -1.
  EXPECT_THAT(source, HasSubstr("#define LO_Y (-1)\n#define HI_Y (1)\n#define LO_X (-1)\n#define HI_X (1)\n#define BOUNDARY (3)\n"));
  EXPECT_THAT(source, HasSubstr("      const float t0 = IN(0, -1) + IN(0, 1);\n"
                                "      const float t1 = t0 + IN(-1, 0);\n"
                                "      const float t2 = t1 + IN(1, 0);\n"
                                "      const float t3 = 4.0f * IN(0, 0);\n"
                                "      const float t4 = t2 - t3;\n"));
  hiera::testing::expect_kernels_compile(r);
}

TEST(StencilRolls, KernelRewritesTakeTheRollStencilBeforeTheElementwiseFusion) {
  const KernelRewriteResult result = analyze_kernel_rewrites(heat_step_2d(), options());
  ASSERT_EQ(result.replacements.size(), 1u);
  EXPECT_EQ(result.replacements[0].recipe, "s3_stencil2d_direct_l1");
  EXPECT_EQ(result.replacements[0].produces, "add_3");
}

// A 3D diffusion step with a coefficient field, the Laplacian written in a Python loop over the dims:
// lap = -6 * u; for d in (0, 1, 2): lap = lap + torch.roll(u, 1, d) + torch.roll(u, -1, d); u + 0.05 * k * lap.
TEST(StencilRolls, DiffusionStep3DReadsItsCoefficientFieldAtTheOutputPoint) {
  const Shape shape = {64, 64, 64};
  GraphBuilder b;
  b.input("u", shape).input("k", shape);
  b.call("lap", "call_function", "operator.mul", "mul", {number_arg(-6.0), node_arg("u")}, {}, shape);
  std::string lap = "lap";
  for (int d : {0, 1, 2}) {
    const std::string id = std::to_string(d);
    function_roll(b, "plus" + id, "u", int_arg(1), int_arg(d), shape);
    b.call("p" + id, "call_function", "operator.add", "add", {node_arg(lap), node_arg("plus" + id)}, {}, shape);
    function_roll(b, "minus" + id, "u", int_arg(-1), int_arg(d), shape);
    b.call("m" + id, "call_function", "operator.add", "add", {node_arg("p" + id), node_arg("minus" + id)}, {}, shape);
    lap = "m" + id;
  }
  b.call("dk", "call_function", "operator.mul", "mul", {number_arg(0.05), node_arg("k")}, {}, shape);
  b.call("flux", "call_function", "operator.mul", "mul", {node_arg("dk"), node_arg(lap)}, {}, shape);
  b.call("step", "call_function", "operator.add", "add", {node_arg("u"), node_arg("flux")}, {}, shape);
  const Found f = roll_stencils(b.build({"step"}));
  EXPECT_TRUE(f.skipped.empty());
  ASSERT_EQ(f.replacements.size(), 1u);
  const Replacement& r = f.replacements[0];
  EXPECT_EQ(r.recipe, "s3_stencil3d_direct_l1");
  EXPECT_THAT(r.covered, ElementsAre("dk", "flux", "lap", "m0", "m1", "m2", "minus0", "minus1", "minus2", "p0", "p1", "p2",
                                     "plus0", "plus1", "plus2", "step"));
  EXPECT_EQ(r.description, "7-point 3D periodic stencil over u (torch.roll) as one kernel with its coefficients compiled "
                           "in, the wrap-around read through a circular boundary, neighbours read through the caches, "
                           "reading k at each output point");
  EXPECT_EQ(r.statements[1], "assert _step_x.dtype == torch.float32 and k.dtype == torch.float32 and k.shape == "
                             "_step_x.shape, \"kernel stencil_step expects float32 u, float32 k of the output's shape\"");
  // 64^3 in 32 x 8 tiles: 16 tiles a plane set want many chunks; at least 32 planes each leaves 2.
  EXPECT_EQ(r.statements[4],
            "_kernel(\"stencil_step\")(((_step_shape[-1] + 31) // 32, (_step_shape[-2] + 7) // 8, "
            "_step_shape[:-3].numel() * ((_step_shape[-3] + 31) // 32)), (32, 8), _step_x, step, k.contiguous(), "
            "_step_x.shape[-1], _step_x.shape[-2], _step_x.shape[-3], _step_shape[-1], _step_shape[-2], "
            "_step_shape[-3], 32)");
  ASSERT_EQ(r.kernels.size(), 1u);
  const std::string& source = r.kernels[0].source;
  EXPECT_EQ(source.rfind("// hiera: generated from knowledge/templates/stencil3d_direct.cu\n", 0), 0u);
  EXPECT_THAT(source, HasSubstr("out_t* __restrict__ out, const float* __restrict__ field0, int nx,"));
  EXPECT_THAT(source, HasSubstr("#define BOUNDARY (3)\n"));
  // The field at the stored element; a step's planes past the chunk recompute the last one.
  EXPECT_THAT(source, HasSubstr("const float t0 = 0.05f * static_cast<float>(field0[((batch * oz_n + min(z0 + u, z_end - 1)) * "
                                "(long long)oy_n + yo) * ox_n + xo]);"));
  // z neighbours and the centre in the column each thread holds; the in-plane ones as plane reads.
  EXPECT_THAT(source, HasSubstr("const float t1 = -6.0f * COL(0);\n      const float t2 = t1 + COL(-1);\n"));
  EXPECT_THAT(source, HasSubstr("const float t4 = t3 + PLANE(0, -1, 0);\n"));
  hiera::testing::expect_kernels_compile(r);
}

// (torch.roll(u, shifts=(1, -2), dims=(-1, 0)) - u.roll(3, 1).roll(-1, -2)) * 0.5 + u.roll((1,), (0,))
TEST(StencilRolls, TupleShiftsAndRollsOfRollsAddUpPerDimension) {
  const Shape shape = {96, 128};
  GraphBuilder b;
  b.input("u", shape);
  function_roll(b, "pair", "u", list_arg({int_arg(1), int_arg(-2)}), list_arg({int_arg(-1), int_arg(0)}), shape);
  method_roll(b, "inner", "u", int_arg(3), int_arg(1), shape);
  method_roll(b, "outer", "inner", int_arg(-1), int_arg(-2), shape);
  method_roll(b, "single", "u", list_arg({int_arg(1)}), list_arg({int_arg(0)}), shape);
  b.call("diff", "call_function", "operator.sub", "sub", {node_arg("pair"), node_arg("outer")}, {}, shape);
  b.call("half", "call_function", "operator.mul", "mul", {node_arg("diff"), number_arg(0.5)}, {}, shape);
  b.call("out", "call_function", "operator.add", "add", {node_arg("half"), node_arg("single")}, {}, shape);
  const Found f = roll_stencils(b.build({"out"}));
  EXPECT_TRUE(f.skipped.empty());
  ASSERT_EQ(f.replacements.size(), 1u);
  const Replacement& r = f.replacements[0];
  EXPECT_THAT(r.covered, ElementsAre("diff", "half", "inner", "out", "outer", "pair", "single"));
  EXPECT_EQ(r.description, "3-point 2D periodic stencil over u (torch.roll) as one kernel with its coefficients compiled "
                           "in, the wrap-around read through a circular boundary, neighbours read through the caches");
  // Offsets up to 2 in y and 3 in x: a grid that small would wrap more than once.
  EXPECT_EQ(r.statements[1], "assert _out_x.dtype == torch.float32 and _out_x.shape[-2] >= 2 and _out_x.shape[-1] >= 3, "
                             "\"kernel stencil_out expects float32 u with at least 3 points along each rolled dimension\"");
  const std::string& source = r.kernels[0].source;
  EXPECT_THAT(source, HasSubstr("#define LO_Y (-1)\n#define HI_Y (2)\n#define LO_X (-3)\n#define HI_X (0)\n"));
  EXPECT_THAT(source, HasSubstr("const float t0 = IN(2, -1) - IN(1, -3);\n"));
  EXPECT_THAT(source, HasSubstr("+ IN(-1, 0);\n"));
  hiera::testing::expect_kernels_compile(r);
}

TEST(StencilRolls, RefusesWhatIsNoPeriodicStencilOfOneTensor) {
  const auto refused = [](const OpGraph& graph) {
    const Found f = roll_stencils(graph);
    EXPECT_TRUE(f.replacements.empty());
    EXPECT_TRUE(f.covered.empty());
    return f.skipped.size() == 1 ? f.skipped[0].reason : std::to_string(f.skipped.size()) + " skipped";
  };
  const Shape square = {64, 64};
  // Along the batch dimension of a 4D tensor: no 3D stencil.
  {
    GraphBuilder b;
    b.input("x", {4, 8, 8, 8});
    method_roll(b, "r", "x", int_arg(1), int_arg(0), {4, 8, 8, 8});
    b.call("add", "call_function", "operator.add", "add", {node_arg("r"), node_arg("x")}, {}, {4, 8, 8, 8});
    EXPECT_EQ(refused(b.build({"add"})), "add: the rolls shift a dimension before the last three");
  }
  // A roll that another op also reads must stay a tensor.
  {
    GraphBuilder b;
    b.input("u", square);
    method_roll(b, "r", "u", int_arg(1), int_arg(-1), square);
    b.call("sub", "call_function", "operator.sub", "sub", {node_arg("r"), node_arg("u")}, {}, square);
    EXPECT_EQ(refused(b.build({"sub", "r"})), "r is also read outside the stencil");
  }
  // Another operand that is not of the output's shape (a row broadcast over it).
  {
    GraphBuilder b;
    b.input("u", square).input("w", {64});
    method_roll(b, "r", "u", int_arg(1), int_arg(-1), square);
    b.call("sub", "call_function", "operator.sub", "sub", {node_arg("r"), node_arg("u")}, {}, square);
    b.call("mul", "call_function", "operator.mul", "mul", {node_arg("sub"), node_arg("w")}, {}, square);
    EXPECT_EQ(refused(b.build({"mul"})), "mul: the stencil also reads w, which is not of the output's shape");
  }
  // Rolls of two tensors.
  {
    GraphBuilder b;
    b.input("u", square).input("v", square);
    method_roll(b, "r", "u", int_arg(1), int_arg(-1), square);
    method_roll(b, "s", "v", int_arg(1), int_arg(-1), square);
    b.call("add", "call_function", "operator.add", "add", {node_arg("r"), node_arg("s")}, {}, square);
    EXPECT_EQ(refused(b.build({"add"})), "add: rolls of different tensors");
  }
  // A shift longer than the grid: the circular boundary wraps an offset once.
  {
    GraphBuilder b;
    b.input("u", square);
    function_roll(b, "r", "u", int_arg(70), int_arg(-1), square);
    b.call("sub", "call_function", "operator.sub", "sub", {node_arg("r"), node_arg("u")}, {}, square);
    EXPECT_EQ(refused(b.build({"sub"})), "sub: a roll by 70 over 64 points wraps more than once");
  }
  // A roll of the flattened tensor (no dims) is no tap: not a stencil, nothing to skip.
  {
    GraphBuilder b;
    b.input("u", square);
    b.call("r", "call_method", "roll", "unknown", {node_arg("u"), int_arg(1)}, {}, square);
    b.call("sub", "call_function", "operator.sub", "sub", {node_arg("r"), node_arg("u")}, {}, square);
    EXPECT_EQ(refused(b.build({"sub"})), "0 skipped");
  }
}

}  // namespace
