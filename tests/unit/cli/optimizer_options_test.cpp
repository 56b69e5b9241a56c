// What optimize and bench share: how many GPUs the default workers cover.
#include "cli/optimizer_options.h"

#include <gtest/gtest.h>

#include <fstream>

#include "temp_directory.h"

namespace hiera::cli {
namespace {

TEST(VisibleGpus, CudaVisibleDevicesDecidesWhenSet) {
  const std::filesystem::path none = "/nonexistent/driver/gpus";
  EXPECT_EQ(visible_gpu_count("0,1,2", none), 3);
  EXPECT_EQ(visible_gpu_count("3", none), 1);
  EXPECT_EQ(visible_gpu_count("GPU-8f2c,GPU-11aa", none), 2);
  EXPECT_EQ(visible_gpu_count("", none), 0);
  EXPECT_EQ(visible_gpu_count("-1", none), 0);
  EXPECT_EQ(visible_gpu_count("0,-1,2", none), 1);  // CUDA stops at the first invalid entry
  EXPECT_EQ(visible_gpu_count("0,,1", none), 1);
}

TEST(VisibleGpus, OtherwiseTheDriversDeviceList) {
  hiera::testing::TempDirectory driver("hiera-gpus-");
  EXPECT_EQ(visible_gpu_count(nullptr, driver.path()), 0);
  for (const char* bus : {"0000:19:00.0", "0000:3b:00.0"}) std::filesystem::create_directories(driver.path() / bus);
  EXPECT_EQ(visible_gpu_count(nullptr, driver.path()), 2);
  EXPECT_EQ(visible_gpu_count(nullptr, driver.path() / "missing"), 0);
  EXPECT_EQ(visible_gpu_count("0", driver.path()), 1);
}

TEST(OptimizerConfiguration, RejectsWhatIsNotAJsonObject) {
  hiera::testing::TempDirectory dir("hiera-config-");
  std::ofstream(dir.path() / "list.json") << "[]";
  std::ofstream(dir.path() / "ok.json") << R"({"target_gpu": "h100"})";
  EXPECT_EQ(load_configuration((dir.path() / "ok.json").string(), ".", "test"), (nlohmann::json{{"target_gpu", "h100"}}));
  EXPECT_THROW(load_configuration((dir.path() / "list.json").string(), ".", "test"), std::runtime_error);
  EXPECT_THROW(load_configuration((dir.path() / "missing.json").string(), ".", "test"), std::runtime_error);
}

}  // namespace
}  // namespace hiera::cli
