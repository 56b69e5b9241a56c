// Slice stencils: the 3D 7-point Laplacian written with shifted slices becomes
// one z-marching kernel with its taps and coefficients compiled in; the exact
// launch statements; 2D stencils; what is refused; NVRTC compiles each kernel.
#include "engine/propose/recipes/kernels/stencil_slices.h"

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
using hiera::testing::slice_arg;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

KernelRewriteOptions options() { return hiera::testing::source_options(); }

// x[z, y, x] with each dimension's slice written as Python would print it.
struct SliceSpec {
  std::string name;
  std::vector<std::pair<std::optional<long long>, std::optional<long long>>> bounds;
  std::string code;
};

Arg index_of(const SliceSpec& s) {
  std::vector<Arg> items;
  for (const auto& [a, b] : s.bounds) items.push_back(slice_arg(a, b));
  return list_arg(items);
}

// out = x[2:,1:-1,1:-1] + x[:-2,1:-1,1:-1] + x[1:-1,2:,1:-1] + x[1:-1,:-2,1:-1]
//       + x[1:-1,1:-1,2:] + x[1:-1,1:-1,:-2] - 6 * x[1:-1,1:-1,1:-1] on a 512^3 grid.
OpGraph laplacian_7pt(std::int64_t n = 512) {
  const std::optional<long long> none;
  const std::vector<SliceSpec> slices = {
      {"getitem", {{2, none}, {1, -1}, {1, -1}}, "x[2:, 1:-1, 1:-1]"},
      {"getitem_1", {{none, -2}, {1, -1}, {1, -1}}, "x[:-2, 1:-1, 1:-1]"},
      {"getitem_2", {{1, -1}, {2, none}, {1, -1}}, "x[1:-1, 2:, 1:-1]"},
      {"getitem_3", {{1, -1}, {none, -2}, {1, -1}}, "x[1:-1, :-2, 1:-1]"},
      {"getitem_4", {{1, -1}, {1, -1}, {2, none}}, "x[1:-1, 1:-1, 2:]"},
      {"getitem_5", {{1, -1}, {1, -1}, {none, -2}}, "x[1:-1, 1:-1, :-2]"},
      {"getitem_6", {{1, -1}, {1, -1}, {1, -1}}, "x[1:-1, 1:-1, 1:-1]"},
  };
  const std::vector<std::int64_t> out = {n - 2, n - 2, n - 2};
  GraphBuilder b;
  b.input("x", {n, n, n});
  for (const auto& s : slices)
    b.call(s.name, "call_function", "operator.getitem", "getitem", {node_arg("x"), index_of(s)}, {}, out, "float32", s.code);
  b.call("add", "call_function", "operator.add", "add", {node_arg("getitem"), node_arg("getitem_1")}, {}, out);
  b.call("add_1", "call_function", "operator.add", "add", {node_arg("add"), node_arg("getitem_2")}, {}, out);
  b.call("add_2", "call_function", "operator.add", "add", {node_arg("add_1"), node_arg("getitem_3")}, {}, out);
  b.call("add_3", "call_function", "operator.add", "add", {node_arg("add_2"), node_arg("getitem_4")}, {}, out);
  b.call("add_4", "call_function", "operator.add", "add", {node_arg("add_3"), node_arg("getitem_5")}, {}, out);
  b.call("mul", "call_function", "operator.mul", "mul", {int_arg(6), node_arg("getitem_6")}, {}, out);
  b.call("sub", "call_function", "operator.sub", "sub", {node_arg("add_4"), node_arg("mul")}, {}, out);
  return b.build({"sub"});
}

TEST(StencilSlices, Laplacian7PointIsOneZMarchingKernel) {
  const OpGraph graph = laplacian_7pt();
  std::set<std::string> covered;
  std::vector<SkippedRewrite> skipped;
  const auto found = find_slice_stencils(graph, covered, options(), skipped);
  // Two variants of one kernel for the same nodes: direct reads first, then the shared-memory ring.
  ASSERT_EQ(found.size(), 2u);
  EXPECT_TRUE(skipped.empty());
  const Replacement& direct = found[0];
  EXPECT_EQ(direct.recipe, "s3_stencil3d_vec4_direct");
  EXPECT_EQ(direct.covered, found[1].covered);
  EXPECT_EQ(direct.description, "7-point 3D stencil over x (shifted slices) as one kernel with its coefficients compiled in, "
                                "four outputs per thread from 16-byte loads, neighbours through the caches");
  // 512 outputs x 4 rows per vec4 block and 8-plane chunks, for the 512^3 grid it was compiled for; any other
  // grid, or a misaligned start, takes the scalar kernel: 32 x 8 tiles, 8 blocks of 256 threads per SM on 132
  // SMs want 9 chunks of 57 planes.
  EXPECT_EQ(direct.statements.back(),
            "_kernel(\"stencil_sub_vec4\")(((_sub_shape[-1] + 511) // 512, (_sub_shape[-2] + 3) // 4, "
            "_sub_shape[:-3].numel() * ((_sub_shape[-3] + 7) // 8)), (128, 4), _sub_x, sub, "
            "_sub_x.shape[-1], _sub_x.shape[-2], _sub_x.shape[-3], _sub_shape[-1], _sub_shape[-2], "
            "_sub_shape[-3], 8) if _sub_x.shape[-3:] == (512, 512, 512) and _sub_x.data_ptr() % 16 == 0 else "
            "_kernel(\"stencil_sub\")(((_sub_shape[-1] + 31) // 32, (_sub_shape[-2] + 7) // 8, "
            "_sub_shape[:-3].numel() * ((_sub_shape[-3] + 56) // 57)), (32, 8), _sub_x, sub, "
            "_sub_x.shape[-1], _sub_x.shape[-2], _sub_x.shape[-3], _sub_shape[-1], _sub_shape[-2], "
            "_sub_shape[-3], 57)");
  ASSERT_EQ(direct.kernels.size(), 2u);
  const std::string& vec4_source = direct.kernels[0].source;
  EXPECT_EQ(vec4_source.rfind("// hiera: generated from knowledge/templates/stencil3d_vec4.cu\n", 0), 0u);
  // Sizes compiled in; the centre column's three planes march as one chain (x offsets 0..2: the thread's
  // float4 and the next lane's), loading one row per plane; the y neighbours load theirs each plane.
  EXPECT_THAT(vec4_source, HasSubstr("#define TILE_Y 4\n#define J_LO (0)\n#define J_N (2)\n"));
  EXPECT_THAT(vec4_source, HasSubstr("  nz = 512, ny = 512, nx = 512, oz_n = 510, oy_n = 510, ox_n = 510;"));
  // A valid-region stencil: every output's taps are inside the grid, so no row is bounds-checked.
  EXPECT_THAT(vec4_source, HasSubstr("  const long long off4 = (long long)(2) * plane + (long long)(1) * nx;\n"
                                     "  float4 row0[J_N];\n"
                                     "  hiera_load_row<0, 2>(row0, at + off0, true, x4, nx, lane);\n"
                                     "  float4 row2[J_N];\n"
                                     "  hiera_load_row<0, 2>(row2, at + off2, true, x4, nx, lane);\n"
                                     "  for (int z = z_begin; z < z_end; ++z, at += plane, o += out_plane) {\n"
                                     "    float4 row4[J_N];\n"
                                     "    hiera_load_row<0, 2>(row4, at + off4, true, x4, nx, lane);\n"
                                     "    float4 row1[J_N];\n"
                                     "    hiera_load_row<1, 1>(row1, at + off1, true, x4, nx, lane);\n"));
  EXPECT_THAT(vec4_source, Not(HasSubstr("const bool y0")));
  EXPECT_THAT(vec4_source, HasSubstr("    for (int j = 0; j < J_N; ++j) row0[j] = row2[j], row2[j] = row4[j];\n"));
  EXPECT_THAT(vec4_source, HasSubstr("const float t4 = t3 + TAP(2, 0);\n"));
  EXPECT_THAT(vec4_source, HasSubstr("result[i] = t6;"));
  const std::string& direct_source = direct.kernels[1].source;
  EXPECT_EQ(direct_source.rfind("// hiera: generated from knowledge/templates/stencil3d_direct.cu\n", 0), 0u);
  EXPECT_THAT(direct_source, HasSubstr("#define COL(oz) TAP(oz, COLUMN_Y, COLUMN_X)\n"
                                       "#define PLANE(oz, oy, ox) TAP(oz, oy, ox)\n"));
  // The update twice: at constant offsets where every tap is inside, bounds-checked at the border.
  EXPECT_THAT(direct_source, HasSubstr("#define TAP(oz, oy, ox) static_cast<float>(at[(oz) * plane + (oy) * nx + (ox)])"));
  EXPECT_THAT(direct_source, HasSubstr("#define TAP(oz, oy, ox) load(z + (oz), yo + (oy), xo + (ox))"));
  const auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (auto at = direct_source.find(needle); at != std::string::npos; at = direct_source.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("const float t4 = t3 + PLANE(1, 1, 0);\n"), 2u);
  EXPECT_EQ(count("result[u] = t6;"), 2u);
  EXPECT_THAT(direct_source, Not(HasSubstr("__syncthreads")));
  hiera::testing::expect_kernels_compile(direct);

  const Replacement& r = found[1];
  EXPECT_EQ(r.recipe, "s3_stencil3d_7pt_register_z");
  EXPECT_EQ(r.produces, "sub");
  EXPECT_THAT(r.covered, ElementsAre("add", "add_1", "add_2", "add_3", "add_4", "getitem", "getitem_1", "getitem_2",
                                     "getitem_3", "getitem_4", "getitem_5", "getitem_6", "mul", "sub"));
  EXPECT_EQ(covered, r.covered);
  EXPECT_EQ(r.description, "7-point 3D stencil over x (shifted slices) as one kernel with its coefficients compiled in");
  // 510^3 outputs in 32 x 16 tiles: 16 x 32 tiles per plane, z in 9 chunks of 57 planes
  // (about 8 waves of 4 blocks per SM on 132 SMs).
  EXPECT_THAT(r.statements,
              ElementsAre("_sub_x = x.contiguous()",
                          "assert _sub_x.dtype == torch.float32, \"kernel stencil_sub expects float32 x\"",
                          "_sub_shape = x[2:, 1:-1, 1:-1].shape",
                          "sub = torch.empty(_sub_shape, dtype=_sub_x.dtype, device=_sub_x.device)",
                          "_kernel(\"stencil_sub\")(((_sub_shape[-1] + 31) // 32, (_sub_shape[-2] + 15) // 16, "
                          "_sub_shape[:-3].numel() * ((_sub_shape[-3] + 56) // 57)), (32, 16), _sub_x, sub, "
                          "_sub_x.shape[-1], _sub_x.shape[-2], _sub_x.shape[-3], _sub_shape[-1], _sub_shape[-2], "
                          "_sub_shape[-3], 57)"));
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_EQ(r.kernels[0].name, "stencil_sub");
  const std::string& source = r.kernels[0].source;
  EXPECT_EQ(source.rfind("// hiera: generated from knowledge/templates/stencil3d_7pt.cu\n", 0), 0u);
  // Taps span 0..2 in every dimension; the centre column (1, 1) lives in registers and only plane
  // offset 1 (the in-plane neighbours) goes through shared memory.
  EXPECT_THAT(source, HasSubstr("#define LO_Z (0)\n#define HI_Z (2)\n#define LO_Y (0)\n#define HI_Y (2)\n"
                                "#define LO_X (0)\n#define HI_X (2)\n#define COLUMN_Y (1)\n#define COLUMN_X (1)\n"
                                "#define PLANE_LO (1)\n#define PLANE_HI (1)\n"));
  EXPECT_THAT(source, HasSubstr("      const float t0 = COL(2) + COL(0);\n"
                                "      const float t1 = t0 + PLANE(1, 2, 1);\n"
                                "      const float t2 = t1 + PLANE(1, 0, 1);\n"
                                "      const float t3 = t2 + PLANE(1, 1, 2);\n"
                                "      const float t4 = t3 + PLANE(1, 1, 0);\n"
                                "      const float t5 = 6.0f * COL(1);\n"
                                "      const float t6 = t4 - t5;\n"
                                "      volume_out[((long long)z * oy_n + yo) * ox_n + xo] = static_cast<out_t>(t6);"));
  hiera::testing::expect_kernels_compile(r);
}

// A 5-point Jacobi step on a batch of 2D fields [B, Y, X] with coefficients 0.25.
TEST(StencilSlices, Batched2DStencilIsATiledKernel) {
  const std::optional<long long> none;
  const std::vector<std::int64_t> out = {4, 1022, 1022};
  GraphBuilder b;
  b.input("u", {4, 1024, 1024});
  const std::vector<SliceSpec> slices = {
      {"n", {{none, none}, {none, -2}, {1, -1}}, "u[:, :-2, 1:-1]"},
      {"s", {{none, none}, {2, none}, {1, -1}}, "u[:, 2:, 1:-1]"},
      {"w", {{none, none}, {1, -1}, {none, -2}}, "u[:, 1:-1, :-2]"},
      {"e", {{none, none}, {1, -1}, {2, none}}, "u[:, 1:-1, 2:]"},
  };
  for (const auto& s : slices)
    b.call(s.name, "call_function", "operator.getitem", "getitem", {node_arg("u"), index_of(s)}, {}, out, "float32", s.code);
  b.call("add", "call_function", "operator.add", "add", {node_arg("n"), node_arg("s")}, {}, out);
  b.call("add_1", "call_function", "operator.add", "add", {node_arg("add"), node_arg("w")}, {}, out);
  b.call("add_2", "call_function", "operator.add", "add", {node_arg("add_1"), node_arg("e")}, {}, out);
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("add_2"), hiera::testing::number_arg(0.25)}, {}, out);
  const OpGraph graph = b.build({"mul"});
  std::set<std::string> covered;
  std::vector<SkippedRewrite> skipped;
  const auto found = find_slice_stencils(graph, covered, options(), skipped);
  ASSERT_EQ(found.size(), 3u);
  // float32 rows of 1024: first the vec4 kernel marching down each of the planes' rows (a plane's sizes
  // compiled in, the planes from the input), falling back on the scalar direct kernel for other rows, a
  // misaligned start or a grid beyond 65535 blocks in z.
  const Replacement& vec4 = found[0];
  EXPECT_EQ(vec4.recipe, "s3_stencil2d_vec4_direct");
  ASSERT_EQ(vec4.kernels.size(), 2u);
  EXPECT_EQ(vec4.kernels[0].name, "stencil_mul_vec4");
  EXPECT_EQ(vec4.kernels[1].name, "stencil_mul");
  EXPECT_EQ(vec4.statements[4],
            "_kernel(\"stencil_mul_vec4\")((2, 1, (_mul_x.numel() // 1048576) * 64), (128, 1), _mul_x, mul, 1024, 1, 1024, "
            "1022, 1, 1022, 16) if _mul_x.shape[-2:] == (1024, 1024) and (_mul_x.numel() // 1048576) * 64 <= 65535 and "
            "_mul_x.data_ptr() % 16 == 0 else " +
                found[1].statements[4]);
  EXPECT_THAT(vec4.kernels[0].source, HasSubstr("  nz = 1024, ny = 1, nx = 1024, oz_n = 1022, oy_n = 1, ox_n = 1022;"));
  EXPECT_THAT(vec4.kernels[0].source, HasSubstr("#define TILE_Y 1\n"));
  // The rows oy 0, 1, 2 are one chain down the plane: two loaded before the march, one new row a step, shifted
  // down in registers; no bounds checks (a valid-region stencil).
  EXPECT_THAT(vec4.kernels[0].source, HasSubstr("  hiera_load_row<0, 2>(row1, at + off1, true, x4, nx, lane);\n"
                                                "  for (int z = z_begin; z < z_end; ++z, at += plane, o += out_plane) {\n"
                                                "    float4 row2[J_N];\n"
                                                "    hiera_load_row<0, 2>(row2, at + off2, true, x4, nx, lane);\n"));
  EXPECT_THAT(vec4.kernels[0].source, HasSubstr("const float t0 = TAP(0, 1) + TAP(2, 1);\n"));
  EXPECT_THAT(vec4.kernels[0].source, HasSubstr("for (int j = 0; j < J_N; ++j) row0[j] = row1[j], row1[j] = row2[j];"));
  hiera::testing::expect_kernels_compile(vec4);
  const Replacement& direct = found[1];
  EXPECT_EQ(direct.recipe, "s3_stencil2d_direct_l1");
  EXPECT_EQ(direct.statements[4], found[2].statements[4]);  // the same launch geometry as the tile
  EXPECT_EQ(direct.kernels[0].source.rfind("// hiera: generated from knowledge/templates/stencil2d_direct.cu\n", 0), 0u);
  EXPECT_THAT(direct.kernels[0].source, HasSubstr("#define IN(oy, ox) static_cast<float>(at[(oy) * nx + (ox)])"));
  EXPECT_THAT(direct.kernels[0].source, HasSubstr("#define IN(oy, ox) load(yo + (oy), xo + (ox))"));
  EXPECT_THAT(direct.kernels[0].source, Not(HasSubstr("__syncthreads")));
  hiera::testing::expect_kernels_compile(direct);
  const Replacement& r = found[2];
  EXPECT_EQ(r.recipe, "s3_stencil2d_shared_tile");
  EXPECT_EQ(r.description, "4-point 2D stencil over u (shifted slices) as one kernel with its coefficients compiled in");
  EXPECT_EQ(r.statements[2], "_mul_shape = u[:, :-2, 1:-1].shape");
  EXPECT_EQ(r.statements[4],
            "_kernel(\"stencil_mul\")(((_mul_shape[-1] + 31) // 32, (_mul_shape[-2] + 7) // 8, max(1, min("
            "_mul_shape[:-2].numel(), 65535))), (32, 8), _mul_x, mul, _mul_x.shape[-1], _mul_x.shape[-2], "
            "_mul_shape[-1], _mul_shape[-2], nvrtc_runtime.int64(_mul_shape[:-2].numel()))");
  const std::string& source = r.kernels[0].source;
  EXPECT_EQ(source.rfind("// hiera: generated from knowledge/templates/stencil2d_tiled.cu\n", 0), 0u);
  EXPECT_THAT(source, HasSubstr("#define LO_Y (0)\n#define HI_Y (2)\n#define LO_X (0)\n#define HI_X (2)\n"));
  EXPECT_THAT(source, HasSubstr("const float t0 = IN(0, 1) + IN(2, 1);\n      const float t1 = t0 + IN(1, 0);\n"
                                "      const float t2 = t1 + IN(1, 2);\n      const float t3 = t2 * 0.25f;"));
  hiera::testing::expect_kernels_compile(r);
}

// (x[2:] + x[:-2]) * y with y of the output's shape: y is a kernel argument read at the output point,
// in the direct and the shared-tile kernels; the vec4 kernel (four outputs a thread) is not offered.
TEST(StencilSlices, AFieldOfTheOutputsShapeIsReadAtTheOutputPoint) {
  const std::optional<long long> none;
  GraphBuilder b;
  b.input("x", {64, 64}).input("y", {62, 64});
  b.call("a", "call_function", "operator.getitem", "getitem", {node_arg("x"), index_of({"a", {{2, none}}, "x[2:]"})}, {},
         {62, 64}, "float32", "x[2:]");
  b.call("b", "call_function", "operator.getitem", "getitem", {node_arg("x"), index_of({"b", {{none, -2}}, "x[:-2]"})}, {},
         {62, 64}, "float32", "x[:-2]");
  b.call("add", "call_function", "operator.add", "add", {node_arg("a"), node_arg("b")}, {}, {62, 64});
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("add"), node_arg("y")}, {}, {62, 64});
  std::set<std::string> covered;
  std::vector<SkippedRewrite> skipped;
  const auto found = find_slice_stencils(b.build({"mul"}), covered, options(), skipped);
  EXPECT_TRUE(skipped.empty());
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].recipe, "s3_stencil2d_direct_l1");
  EXPECT_EQ(found[1].recipe, "s3_stencil2d_shared_tile");
  EXPECT_THAT(found[0].covered, ElementsAre("a", "add", "b", "mul"));
  EXPECT_EQ(found[1].description, "2-point 2D stencil over x (shifted slices) as one kernel with its coefficients "
                                  "compiled in, reading y at each output point");
  for (const Replacement& r : found) {
    EXPECT_THAT(r.statements,
                ElementsAre("_mul_x = x.contiguous()",
                            "assert _mul_x.dtype == torch.float32, \"kernel stencil_mul expects float32 x\"",
                            "_mul_shape = x[2:].shape",
                            "assert y.dtype == torch.float32 and y.shape == _mul_shape, \"kernel stencil_mul expects "
                            "float32 y of the output's shape\"",
                            "mul = torch.empty(_mul_shape, dtype=_mul_x.dtype, device=_mul_x.device)",
                            "_kernel(\"stencil_mul\")(((_mul_shape[-1] + 31) // 32, (_mul_shape[-2] + 7) // 8, max(1, "
                            "min(_mul_shape[:-2].numel(), 65535))), (32, 8), _mul_x, mul, y.contiguous(), "
                            "_mul_x.shape[-1], _mul_x.shape[-2], _mul_shape[-1], _mul_shape[-2], "
                            "nvrtc_runtime.int64(_mul_shape[:-2].numel()))"));
    ASSERT_EQ(r.kernels.size(), 1u);
    EXPECT_THAT(r.kernels[0].source, HasSubstr("out_t* __restrict__ out, const float* __restrict__ field0, int nx,"));
    EXPECT_THAT(r.kernels[0].source, HasSubstr("const float t1 = t0 * static_cast<float>(field0[(batch * oy_n + yo) * "
                                               "(long long)ox_n + xo]);"));
    hiera::testing::expect_kernels_compile(r);
  }
}

TEST(StencilSlices, RefusesWhatIsNoStencilOfOneTensor) {
  const std::optional<long long> none;
  // Shifted along the batch dimension of a 4D tensor: no 3D stencil.
  {
    GraphBuilder b;
    b.input("x", {4, 8, 8, 8});
    b.call("a", "call_function", "operator.getitem", "getitem",
           {node_arg("x"), index_of({"a", {{1, none}}, "x[1:]"})}, {}, {3, 8, 8, 8}, "float32", "x[1:]");
    b.call("b", "call_function", "operator.getitem", "getitem",
           {node_arg("x"), index_of({"b", {{none, -1}}, "x[:-1]"})}, {}, {3, 8, 8, 8}, "float32", "x[:-1]");
    b.call("add", "call_function", "operator.add", "add", {node_arg("a"), node_arg("b")}, {}, {3, 8, 8, 8});
    b.call("relu", "call_function", "torch.relu", "relu", {node_arg("add")}, {}, {3, 8, 8, 8});
    std::set<std::string> covered;
    std::vector<SkippedRewrite> skipped;
    EXPECT_TRUE(find_slice_stencils(b.build({"relu"}), covered, options(), skipped).empty());
    ASSERT_EQ(skipped.size(), 1u);
    EXPECT_EQ(skipped[0].reason, "relu: the slices shift a dimension before the last three");
    EXPECT_TRUE(covered.empty());
  }
  // Slices plus another tensor that is not of the output's shape (a row broadcast over it).
  {
    GraphBuilder b;
    b.input("x", {64, 64}).input("y", {64});
    b.call("a", "call_function", "operator.getitem", "getitem", {node_arg("x"), index_of({"a", {{2, none}}, "x[2:]"})},
           {}, {62, 64}, "float32", "x[2:]");
    b.call("b", "call_function", "operator.getitem", "getitem", {node_arg("x"), index_of({"b", {{none, -2}}, "x[:-2]"})},
           {}, {62, 64}, "float32", "x[:-2]");
    b.call("add", "call_function", "operator.add", "add", {node_arg("a"), node_arg("b")}, {}, {62, 64});
    b.call("mul", "call_function", "operator.mul", "mul", {node_arg("add"), node_arg("y")}, {}, {62, 64});
    std::set<std::string> covered;
    std::vector<SkippedRewrite> skipped;
    EXPECT_TRUE(find_slice_stencils(b.build({"mul"}), covered, options(), skipped).empty());
    ASSERT_EQ(skipped.size(), 1u);
    EXPECT_EQ(skipped[0].reason, "mul: the stencil also reads y, which is not of the output's shape");
  }
  // A slice that another op also reads must stay a tensor.
  {
    GraphBuilder b;
    b.input("x", {64, 64});
    b.call("a", "call_function", "operator.getitem", "getitem", {node_arg("x"), index_of({"a", {{2, none}}, "x[2:]"})},
           {}, {62, 64}, "float32", "x[2:]");
    b.call("b", "call_function", "operator.getitem", "getitem", {node_arg("x"), index_of({"b", {{none, -2}}, "x[:-2]"})},
           {}, {62, 64}, "float32", "x[:-2]");
    b.call("add", "call_function", "operator.add", "add", {node_arg("a"), node_arg("b")}, {}, {62, 64});
    std::set<std::string> covered;
    std::vector<SkippedRewrite> skipped;
    EXPECT_TRUE(find_slice_stencils(b.build({"add", "a"}), covered, options(), skipped).empty());
    ASSERT_EQ(skipped.size(), 1u);
    EXPECT_EQ(skipped[0].reason, "a is also read outside the stencil");
  }
}

}  // namespace
