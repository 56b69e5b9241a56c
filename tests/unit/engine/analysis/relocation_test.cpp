#include "engine/analysis/relocation.h"

#include <gtest/gtest.h>

namespace hiera::engine::analysis {
namespace {

TEST(RelocationTest, EverySpanOfAFindingMoves) {
  CudaFunction f;
  f.span = {10, 50};
  f.name_span = {20, 25};
  f.body = Span{30, 50};
  f.parameters.push_back({"x", "float*", {26, 28}, true, false, false});
  relocate(f, -5);
  EXPECT_EQ(f.span, (Span{5, 45}));
  EXPECT_EQ(f.name_span, (Span{15, 20}));
  EXPECT_EQ(*f.body, (Span{25, 45}));
  EXPECT_EQ(f.parameters[0].span, (Span{21, 23}));

  LaunchSite l;
  l.span = {1, 9};
  l.kernel_span = {1, 2};
  l.grid_span = {4, 5};
  l.block_span = {6, 7};
  l.sizing.push_back({"t", "256", {0, 1}});
  relocate(l, 3);
  EXPECT_EQ(l.span, (Span{4, 12}));
  EXPECT_EQ(l.block_span, (Span{9, 10}));
  EXPECT_EQ(l.sizing[0].span, (Span{3, 4}));

  TorchModule m;
  m.span = {0, 100};
  m.forward = Span{40, 100};
  m.ops.push_back({"relu", "torch.relu", {60, 70}, {}, false, std::nullopt, "", std::nullopt, {}});
  m.layers.push_back({"fc", "Linear", "4, 4", {20, 30}});
  relocate(m, 7);
  EXPECT_EQ(m.span, (Span{7, 107}));
  EXPECT_EQ(*m.forward, (Span{47, 107}));
  EXPECT_EQ(m.ops[0].span, (Span{67, 77}));
  EXPECT_EQ(m.layers[0].span, (Span{27, 37}));

  Hint h;
  h.span = {5, 6};
  h.fix.push_back({{6, 6}, "f"});
  relocate(h, 10);
  EXPECT_EQ(h.span, (Span{15, 16}));
  EXPECT_EQ(h.fix[0].span, (Span{16, 16}));
}

// Found by tests/fuzz/fuzz_analyze_source: a launch cut off before its block
// (`e<<<<`) has no block span, and moving one to {1, 1} made re-analysis of
// "\ni(){e<<<<" differ from a fresh one.
TEST(RelocationTest, ALaunchsUnsetGridAndBlockSpansStayUnset) {
  LaunchSite l;
  l.span = {4, 9};
  l.kernel_span = {4, 5};
  relocate(l, 1);
  EXPECT_EQ(l.span, (Span{5, 10}));
  EXPECT_EQ(l.grid_span, (Span{}));
  EXPECT_EQ(l.block_span, (Span{}));
}

}  // namespace
}  // namespace hiera::engine::analysis
