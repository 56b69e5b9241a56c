// Which configuration `hiera optimize` and `hiera bench` read, run as
// processes: the first .hiera/config.json above the target file (optimize) or
// the current directory (bench), --config and $HIERA_CONFIG before it, and a
// warning line per unknown key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "subprocess.h"
#include "temp_directory.h"
#include "build_paths.h"

namespace {

namespace fs = std::filesystem;
using hiera::testing::run_process;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

hiera::testing::ProcessResult hiera_in(const fs::path& dir, const std::string& env, const std::string& args) {
  return run_process({"/bin/sh", "-c",
                      "cd " + quoted(dir.string()) + " && exec env -u HIERA_CONFIG " + env + " " +
                          quoted(::hiera::testing::hiera_bin()) + " " + args},
                     "", std::chrono::seconds(60));
}

class ConfigurationLookup : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::canonical(dir_.path());
    fs::create_directories(root_ / "project" / ".hiera");
    fs::create_directories(root_ / "project" / "models" / "deep");
    fs::create_directories(root_ / "elsewhere");
    // No get_inputs(): optimize stops at the target, after the configuration was read.
    std::ofstream(root_ / "project" / "models" / "deep" / "m.py") << "import torch\nclass Model(torch.nn.Module):\n    pass\n";
  }
  fs::path config() const { return root_ / "project" / ".hiera" / "config.json"; }
  hiera::testing::TempDirectory dir_{"hiera-config-lookup-"};
  fs::path root_;
};

TEST_F(ConfigurationLookup, OptimizeFindsTheConfigurationAboveTheTargetAndNamesUnknownKeys) {
  std::ofstream(config()) << R"({"target_gpu": "h200", "targetgpu": "h100", "worker": {"cmd": "x"}})";
  const auto run = hiera_in(root_ / "elsewhere", "", "optimize " + quoted((root_ / "project/models/deep/m.py").string()) + " --quiet");
  EXPECT_EQ(run.exit_code, 1);
  const std::string warnings = "hiera optimize: " + config().string() +
                               ": unknown configuration key 'targetgpu' (ignored; the keys are in docs/config.schema.json)\n"
                               "hiera optimize: " + config().string() +
                               ": unknown configuration key 'worker.cmd' (ignored; the keys are in docs/config.schema.json)\n";
  EXPECT_EQ(run.err.substr(0, warnings.size()), warnings) << run.err;
  // Then the target's own error: the configuration came first.
  EXPECT_EQ(run.err.find("hiera optimize: " + (root_ / "project/models/deep/m.py").string() + ": no get_inputs() function"),
            warnings.size())
      << run.err;
}

TEST_F(ConfigurationLookup, ConfigAndEnvironmentComeBeforeTheOneFound) {
  std::ofstream(config()) << "{broken";
  const std::string target = quoted((root_ / "project/models/deep/m.py").string());
  const auto found = hiera_in(root_ / "elsewhere", "", "optimize " + target + " --quiet");
  EXPECT_EQ(found.exit_code, 1);
  EXPECT_EQ(found.err.rfind("hiera optimize: the configuration " + config().string() + " is not valid: ", 0), 0u) << found.err;

  std::ofstream(root_ / "good.json") << R"({"runsdir": "x"})";
  const std::string warning = ": unknown configuration key 'runsdir' (ignored; the keys are in docs/config.schema.json)\n";
  const auto given = hiera_in(root_ / "elsewhere", "", "optimize " + target + " --quiet --config " + quoted((root_ / "good.json").string()));
  EXPECT_EQ(given.err.rfind("hiera optimize: " + (root_ / "good.json").string() + warning, 0), 0u) << given.err;
  const auto env = hiera_in(root_ / "elsewhere", "HIERA_CONFIG=" + quoted((root_ / "good.json").string()), "optimize " + target + " --quiet");
  EXPECT_EQ(env.err.rfind("hiera optimize: " + (root_ / "good.json").string() + warning, 0), 0u) << env.err;
}

TEST_F(ConfigurationLookup, BenchLooksUpFromTheCurrentDirectory) {
  std::ofstream(config()) << "{broken";
  const auto inside = hiera_in(root_ / "project" / "models", "", "bench deep --quiet --out out");
  EXPECT_EQ(inside.exit_code, 1);
  EXPECT_NE(inside.err.find("the configuration " + config().string() + " is not valid: "), std::string::npos) << inside.err;
  const auto outside = hiera_in(root_ / "elsewhere", "", "bench ../project/models/deep --quiet --out out");
  EXPECT_EQ(outside.err.find("the configuration"), std::string::npos) << outside.err;
}

}  // namespace
