// The stencil kernel's geometry: bounding box of the taps, the register
// column and the shared planes, accessor names, and the z chunking.
#include "engine/propose/recipes/kernels/stencil_kernel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"

namespace {

using namespace hiera::engine::propose::recipes::kernels;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(StencilKernel, SevenPointKeepsItsCentreColumnInRegisters) {
  // Centre (1,1,1) of a 0..2 box and its six neighbours.
  const std::vector<StencilTap> taps = {{2, 1, 1}, {0, 1, 1}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}, {1, 1, 0}, {1, 1, 1}};
  const StencilGeometry g = stencil_geometry(3, taps);
  EXPECT_EQ(g.lo_z, 0);
  EXPECT_EQ(g.hi_z, 2);
  EXPECT_EQ(g.lo_y, 0);
  EXPECT_EQ(g.hi_x, 2);
  EXPECT_EQ(g.column_y, 1);
  EXPECT_EQ(g.column_x, 1);
  EXPECT_EQ(g.plane_lo, 1);  // only the centre plane needs in-plane neighbours
  EXPECT_EQ(g.plane_hi, 1);
  EXPECT_EQ(tap_accessor(g, {0, 1, 1}), "COL(0)");
  EXPECT_EQ(tap_accessor(g, {1, 2, 1}), "PLANE(1, 2, 1)");
  // Rows (oz, oy) for the vec4 kernel, ordered, each with the x offsets its taps read.
  EXPECT_EQ(g.rows, (std::vector<StencilRow>{{0, 1, 1, 1}, {1, 0, 1, 1}, {1, 1, 0, 2}, {1, 2, 1, 1}, {2, 1, 1, 1}}));
  EXPECT_EQ(vec4_tap_accessor(g, {1, 1, 2}), "TAP(2, 2)");
  EXPECT_EQ(vec4_tap_accessor(g, {2, 1, 1}), "TAP(4, 1)");
  EXPECT_THROW(vec4_tap_accessor(g, {2, 2, 1}), std::invalid_argument);
}

TEST(StencilKernel, Vec4IsForFloat32ThreeDimensionalStencilsOverRowsOfFourFloats) {
  EXPECT_TRUE(stencil_vec4_applies(3, "float32", "float32", 512));
  EXPECT_FALSE(stencil_vec4_applies(3, "float32", "float32", 45));
  EXPECT_FALSE(stencil_vec4_applies(2, "float32", "float32", 512));
  EXPECT_FALSE(stencil_vec4_applies(3, "float16", "float32", 512));
  EXPECT_FALSE(stencil_vec4_applies(3, "float32", "bfloat16", 512));
}

TEST(StencilKernel, RowsOfOneOffsetInConsecutivePlanesMarchAsAChain) {
  // 7-point: the centre column's three planes are one chain (x offsets of all three), the y neighbours one each.
  const StencilGeometry seven = stencil_geometry(3, {{2, 1, 1}, {0, 1, 1}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}, {1, 1, 0}, {1, 1, 1}});
  EXPECT_EQ(stencil_chains(seven), (std::vector<StencilChain>{{{0, 2, 4}, 0, 2}, {{1}, 1, 1}, {{3}, 1, 1}}));
  // A gap in z starts a new chain.
  const StencilGeometry gap = stencil_geometry(3, {{0, 0, 0}, {2, 0, 1}, {3, 0, -1}});
  EXPECT_EQ(stencil_chains(gap), (std::vector<StencilChain>{{{0}, 0, 0}, {{1, 2}, -1, 1}}));
}

TEST(StencilKernel, TwentySevenPointSharesEveryPlaneAndPicksTheCentreColumn) {
  std::vector<StencilTap> taps;
  for (int z = -1; z <= 1; ++z)
    for (int y = -1; y <= 1; ++y)
      for (int x = -1; x <= 1; ++x) taps.push_back({z, y, x});
  const StencilGeometry g = stencil_geometry(3, taps);
  EXPECT_EQ(g.lo_z, -1);
  EXPECT_EQ(g.hi_y, 1);
  // Every in-plane offset appears three times: the tie goes to the centre.
  EXPECT_EQ(g.column_y, 0);
  EXPECT_EQ(g.column_x, 0);
  EXPECT_EQ(g.plane_lo, -1);
  EXPECT_EQ(g.plane_hi, 1);
}

TEST(StencilKernel, PlaneSumsHoldASlotPerOutputPlaneAndNoRows) {
  // Taps at oz = -1, 0, 2 (a gap) in rows oy = 0 and 1, zero borders, and the input at the output point: each
  // loaded plane (z + 2) adds into the slot of the output it serves, slot s the output s planes up.
  StencilKernel k;
  k.name = "sums";
  k.variant = StencilVariant::DirectVec4;
  k.in_dtype = k.out_dtype = "float32";
  k.sums = {{"acc", {{{-1, 0, 0}, "0.5f"}, {{0, 1, -1}, "2.0f"}, {{2, 0, 1}, "-1.0f"}}}, {"centre", {{{0, 0, 0}, ""}}}};
  k.geometry = stencil_geometry(3, {{-1, 0, 0}, {0, 1, -1}, {2, 0, 1}, {0, 0, 0}});
  k.in_size = {16, 8, 32};
  k.out_size = {16, 8, 32};
  k.update_result = "acc - centre";
  const std::string source = stencil_source(hiera::testing::source_knowledge(), k).source;
  // acc's slots reach its lowest plane (oz = -1: 2 - -1 = 3), centre's the plane of oz = 0 (slot 2).
  EXPECT_THAT(source, HasSubstr("float acc_s3[4] = {0.0f, 0.0f, 0.0f, 0.0f};\n"));
  EXPECT_THAT(source, Not(HasSubstr("acc_s4")));
  EXPECT_THAT(source, HasSubstr("float centre_s2[4]"));
  EXPECT_THAT(source, Not(HasSubstr("centre_s3")));
  // The three planes below the first output's last (oz = 2) come first, then one plane a step.
  EXPECT_THAT(source, HasSubstr("for (int zp = z_begin - 3; zp < z_begin; ++zp) {\n"));
  EXPECT_THAT(source, HasSubstr("const long long off0 = (long long)(2) * plane + (long long)(0) * nx;\n"));
  EXPECT_THAT(source, HasSubstr("hiera_load_row<0, 1>(row0, at + off0, y0 && (unsigned)(z + (2)) < (unsigned)nz, x4, nx, lane);\n"));
  EXPECT_THAT(source, HasSubstr("hiera_load_row<-1, -1>(row1, (at + (long long)(zp - z_begin) * plane) + off1, "
                                "y1 && (unsigned)(zp + (2)) < (unsigned)nz, x4, nx, lane);\n"));
  EXPECT_THAT(source, HasSubstr("acc_s3[i] += 0.5f * TAP(0, 0);\n"));
  EXPECT_THAT(source, HasSubstr("acc_s2[i] += 2.0f * TAP(1, -1);\n"));
  EXPECT_THAT(source, HasSubstr("acc_s0[i] += -1.0f * TAP(0, 1);\n"));
  EXPECT_THAT(source, HasSubstr("centre_s2[i] += TAP(0, 0);\n"));
  // The finished slot is the update's value; the slots move down, the top one cleared; no row is kept.
  EXPECT_THAT(source, HasSubstr("const float acc = acc_s0[i];\n      const float centre = centre_s0[i];\n"));
  EXPECT_THAT(source, HasSubstr("result[i] = acc - centre;"));
  EXPECT_THAT(source, HasSubstr("acc_s2[i] = acc_s3[i];\n      acc_s3[i] = 0.0f;\n"));
  EXPECT_THAT(source, Not(HasSubstr("row0[j] =")));
  hiera::engine::propose::recipes::Replacement compiled;
  compiled.kernels.push_back({k.name, source, {}});
  hiera::testing::expect_kernels_compile(compiled);
}

TEST(StencilKernel, APureZStencilNeedsNoSharedPlane) {
  const StencilGeometry g = stencil_geometry(3, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}});
  EXPECT_EQ(g.plane_hi, g.plane_lo - 1);
  EXPECT_EQ(tap_accessor(g, {2, 0, 0}), "COL(2)");
}

TEST(StencilKernel, TwoDimensionalAccessors) {
  const StencilGeometry g = stencil_geometry(2, {{0, -1, 0}, {0, 1, 0}, {0, 0, -2}});
  EXPECT_EQ(g.tile_y, 8);
  EXPECT_EQ(g.lo_y, -1);
  EXPECT_EQ(g.lo_x, -2);
  EXPECT_EQ(g.hi_x, 0);
  EXPECT_EQ(tap_accessor(g, {0, 1, 0}), "IN(1, 0)");
  EXPECT_THROW(stencil_geometry(3, {}), std::invalid_argument);
}

TEST(StencilKernel, ZChunksFillTheDevice) {
  // 510 planes, 512 tiles per plane set, 132 SMs x 4 blocks of 512 threads: 8 waves want 9 chunks.
  EXPECT_EQ(stencil_z_chunk(510, 512, 132, 512), 57);
  EXPECT_EQ(stencil_z_chunk(510, 512, 16, 512), 510);  // a small GPU is full with one chunk
  EXPECT_EQ(stencil_z_chunk(20, 512, 132, 512), 20);   // thin grids: one chunk
  EXPECT_EQ(stencil_z_chunk(4096, 4, 132, 512), 32);   // few tiles: as many chunks as 32-plane chunks allow
  // The vec4 kernel: 8-plane chunks, fewer planes in one chunk.
  EXPECT_EQ(stencil_vec4_z_chunk(510), 8);
  EXPECT_EQ(stencil_vec4_z_chunk(5), 5);
  EXPECT_EQ(stencil_vec4_z_chunk(0), 1);
}

}  // namespace
