// textDocument/inlayHint through the whole server: per-line op costs in
// forward, the module's cost on its def line (measured once profiled), and per
// launch its threads per block and the occupancy the block shape allows,
// limited to the requested range.
#include "server/features/inlay_hints.h"

#include "analysis_views_fixture.h"
#include "server/features/launch_occupancy.h"

namespace hiera::server::views_test {
namespace {

json hint(int line, int character, const std::string& label, const std::string& tooltip) {
  return {{"position", position(line, character)}, {"label", label}, {"kind", 1}, {"tooltip", tooltip}, {"paddingLeft", true}};
}

const json kLaunchHints = json::array({
    hint(14, 48, "256 threads/block · occupancy ≤ 100%",
         "The block (block) has 256 threads. Estimated occupancy on H200: at most 8 blocks of 8 warps per SM (64 of 64 "
         "warps), limited by warps; registers are not counted"),
    hint(15, 60, "32 threads/block · occupancy ≤ 50%",
         "The block (32) has 32 threads. Estimated occupancy on H200: at most 32 blocks of 1 warp per SM (32 of 64 warps), "
         "limited by blocks per SM; registers are not counted"),
    hint(17, 68, "256 threads/block · occupancy ≤ 100%",
         "The block (dim3(256)) has 256 threads. Estimated occupancy on H200: at most 8 blocks of 8 warps per SM (64 of 64 "
         "warps), limited by warps; registers are not counted"),
});

TEST_F(AnalysisViewsTest, InlayHintsGiveEachLaunchItsThreadsPerBlockAndOccupancy) {
  start();
  open(kCuUri, "cuda", kCu);
  EXPECT_EQ(inlay_hints(kCuUri, range(0, 0, 19, 0))["result"], kLaunchHints);
}

TEST_F(AnalysisViewsTest, InlayHintsAreLimitedToTheRequestedRange) {
  start();
  open(kCuUri, "cuda", kCu);
  EXPECT_EQ(inlay_hints(kCuUri, range(15, 0, 16, 0))["result"], json::array({kLaunchHints[1]}));
  EXPECT_EQ(inlay_hints(kCuUri, range(0, 0, 13, 99))["result"], json::array());
}

TEST_F(AnalysisViewsTest, InlayHintsWithoutAKnownGpuGiveThreadsPerBlockOnly) {
  start({{"gpu", "no-such-gpu"}});
  open(kCuUri, "cuda", kCu);
  EXPECT_EQ(inlay_hints(kCuUri, range(15, 0, 16, 0))["result"],
            json::array({hint(15, 60, "32 threads/block", "The block (32) has 32 threads")}));
}

TEST_F(AnalysisViewsTest, InlayHintsGiveEachForwardLineItsOpsEstimate) {
  start();
  open(kPyUri, "python", kPy);
  const json expected = json::array({
      hint(9, 25, "≈ 3.00 µs",
           "Block.forward estimated on H200 (speed of light, at least one launch a pass), launch-bound: 3 of 3 ops, "
           "2 elementwise ops fused into the pass of the op before (9.00 µs op by op)"),
      hint(10, 22, "≈ 3.00 µs", "Estimate on H200 op by op (speed of light, at least one launch each), launch-bound: linear 3.00 µs"),
      hint(11, 25, "≈ 3.00 µs", "Estimate on H200 op by op (speed of light, at least one launch each), launch-bound: relu 3.00 µs"),
      hint(12, 20, "≈ 3.00 µs", "Estimate on H200 op by op (speed of light, at least one launch each), launch-bound: add 3.00 µs"),
  });
  EXPECT_EQ(inlay_hints(kPyUri, range(0, 0, 21, 0))["result"], expected);
  EXPECT_EQ(inlay_hints(kPyUri, range(11, 0, 11, 25))["result"], json::array({expected[2]}));
}

TEST_F(AnalysisViewsTest, InlayHintOnTheForwardLineIsTheMeasurementOnceProfiled) {
  start();
  Measurement measured;
  measured.uri = kPyUri;
  measured.symbol = "Block";
  measured.gpu = "NVIDIA H200";
  measured.median_ms = 0.00061;
  measurements->put(measured);
  open(kPyUri, "python", kPy);
  EXPECT_EQ(inlay_hints(kPyUri, range(9, 0, 9, 99))["result"],
            json::array({hint(9, 25, "measured 0.61 µs", "Block.forward as profiled: median 0.61 µs on NVIDIA H200")}));
}

TEST_F(AnalysisViewsTest, InlayHintsOfSeveralOpsOnOneLineAreSummed) {
  start();
  std::string text = kPy;
  text.replace(text.find("        y = self.fc(x)\n        y = torch.relu(y)\n"), 0, "");
  const std::string one_line = "        return torch.relu(self.fc(x)) + x\n";
  const auto body = text.find("        y = self.fc(x)");
  text.replace(body, text.find("\n\n\ndef get_inputs") - body + 1, one_line);
  open(kPyUri, "python", text);
  const json result = inlay_hints(kPyUri, range(10, 0, 10, 99))["result"];
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0]["label"], "≈ 9.00 µs");  // op by op, a launch each
  EXPECT_EQ(result[0]["tooltip"], "Estimate on H200 op by op (speed of light, at least one launch each), launch-bound: "
                                  "linear 3.00 µs + relu 3.00 µs + add 3.00 µs");
}

const engine::knowledge::GpuSpec& gpu(const std::string& id) { return *source_knowledge()->gpu(id); }

TEST(InlayHintOccupancy, WarpsBlocksPerSmAndSharedMemoryLimitTheBlocksOfAnSm) {
  auto full = launch_occupancy(gpu("h200"), 100);
  ASSERT_TRUE(full);
  EXPECT_EQ(full->warps_per_block, 4);
  EXPECT_EQ(full->blocks_per_sm, 16);
  EXPECT_DOUBLE_EQ(full->fraction, 1.0);
  EXPECT_EQ(full->limited_by, "warps");

  auto big = launch_occupancy(gpu("h200"), 768);  // 24 warps: two blocks fit in 64
  ASSERT_TRUE(big);
  EXPECT_EQ(big->blocks_per_sm, 2);
  EXPECT_DOUBLE_EQ(big->fraction, 0.75);

  auto small = launch_occupancy(gpu("h200"), 32);  // 32 blocks of one warp at most
  ASSERT_TRUE(small);
  EXPECT_EQ(small->blocks_per_sm, 32);
  EXPECT_DOUBLE_EQ(small->fraction, 0.5);
  EXPECT_EQ(small->limited_by, "blocks per SM");

  auto shared = launch_occupancy(gpu("h200"), 64, 65536);  // 228 KiB per SM: three such blocks
  ASSERT_TRUE(shared);
  EXPECT_EQ(shared->blocks_per_sm, 3);
  EXPECT_DOUBLE_EQ(shared->fraction, 6.0 / 64.0);
  EXPECT_EQ(shared->limited_by, "shared memory");

  auto ada = launch_occupancy(gpu("l40s"), 1024);  // 48 warps per SM on 8.9
  ASSERT_TRUE(ada);
  EXPECT_EQ(ada->blocks_per_sm, 1);
  EXPECT_DOUBLE_EQ(ada->fraction, 32.0 / 48.0);
  EXPECT_EQ(launch_occupancy(gpu("l40s"), 32)->blocks_per_sm, 24);
}

TEST(InlayHintOccupancy, BlocksThatCannotLaunchHaveNone) {
  EXPECT_FALSE(launch_occupancy(gpu("h200"), 0));
  EXPECT_FALSE(launch_occupancy(gpu("h200"), 1025));
  EXPECT_FALSE(launch_occupancy(gpu("h200"), 256, 300000));
}

}  // namespace
}  // namespace hiera::server::views_test
