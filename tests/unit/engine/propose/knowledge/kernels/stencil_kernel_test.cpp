// The stencil kernel's geometry: bounding box of the taps, the register
// column and the shared planes, accessor names, and the z chunking.
#include "engine/propose/knowledge/kernels/stencil_kernel.h"

#include <gtest/gtest.h>

namespace {

using namespace hiera::engine::propose::knowledge_proposer::kernels;

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
}

}  // namespace
