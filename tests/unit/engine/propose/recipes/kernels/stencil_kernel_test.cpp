// The stencil kernel's geometry: bounding box of the taps, the register
// column and the shared planes, accessor names, and the z chunking.
#include "engine/propose/recipes/kernels/stencil_kernel.h"

#include <gtest/gtest.h>

namespace {

using namespace hiera::engine::propose::recipes::kernels;

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
