// Which spaces a run may plan on its device: a CPU run keeps S1 only.
#include "engine/plan/device_spaces.h"

#include <gtest/gtest.h>

namespace hiera::engine::plan {
namespace {

using knowledge::Space;

TEST(DeviceSpacesTest, OnACudaDeviceEverySpaceStays) {
  PlanContext context;
  EXPECT_EQ(restrict_to_device(context), "");
  EXPECT_EQ(context.allowed_spaces, (std::vector<Space>{Space::S1, Space::S2, Space::S3}));
}

TEST(DeviceSpacesTest, ACpuRunKeepsS1AndSaysWhatItLeftOut) {
  PlanContext context;
  context.cuda = false;
  EXPECT_EQ(restrict_to_device(context), "the run is on the CPU: S2, S3 left out (CUDA only); S1 (PyTorch operators) only");
  EXPECT_EQ(context.allowed_spaces, (std::vector<Space>{Space::S1}));
  EXPECT_EQ(restrict_to_device(context), "");  // nothing more to leave out
}

TEST(DeviceSpacesTest, ACpuRunOfACudaOnlyContractPlansNothing) {
  PlanContext context;
  context.cuda = false;
  context.allowed_spaces = {Space::S3};
  EXPECT_EQ(restrict_to_device(context), "the run is on the CPU: S3 left out (CUDA only); the spec allows no S1, so nothing is planned");
  EXPECT_TRUE(context.allowed_spaces.empty());
}

}  // namespace
}  // namespace hiera::engine::plan
