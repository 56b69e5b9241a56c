// The engine's optimizer setup, shared by hiera optimize, hiera bench and the
// LSP server's jobs: worker command lines and the LLM endpoint, however given.
#include "engine/optimize/optimizer_setup.h"

#include <gtest/gtest.h>

#include "temp_directory.h"
#include "thrown_message.h"

namespace hiera::engine::optimize {
namespace {

using nlohmann::json;

const std::filesystem::path kExe = HIERA_BIN;

TEST(EngineOptimizerSetup, WorkerArgvIsUsedAsGivenAndCommandLinesAreSplit) {
  hiera::testing::TempDirectory runs("hiera-setup-");
  OptimizerSetupArgs args;
  args.worker_argv = {{"/opt/my worker", "--flag"}};
  args.workers = {"other 'a b'"};
  args.runs_dir = runs.path().string();
  args.llm = "none";
  const auto setup = make_optimizer_setup(args, json::object(), kExe, "test", "unused");
  EXPECT_EQ(setup.pool.commands, (std::vector<std::vector<std::string>>{{"/opt/my worker", "--flag"}, {"other", "a b"}}));
  ASSERT_EQ(setup.proposers.size(), 1u);
  EXPECT_EQ(setup.proposers[0]->name(), "knowledge");
  EXPECT_EQ(setup.options.runs_dir, runs.path());
}

TEST(EngineOptimizerSetup, DefaultsToOneWorkerOfThisExecutablePerCount) {
  OptimizerSetupArgs args;
  args.worker_count = 2;
  args.llm = "none";
  args.no_knowledge = true;
  const auto setup = make_optimizer_setup(args, {{"target_gpu", "h100_sxm"}, {"runs_dir", "/r"}}, kExe, "test", "unused");
  EXPECT_EQ(setup.pool.commands, (std::vector<std::vector<std::string>>{{kExe.string(), "worker"}, {kExe.string(), "worker"}}));
  EXPECT_TRUE(setup.proposers.empty());
  EXPECT_EQ(setup.options.target_gpu, "h100_sxm");
  EXPECT_EQ(setup.options.runs_dir, "/r");
}

TEST(EngineOptimizerSetup, AnEndpointGivenWholeAddsTheLlmProposerWithItsCacheInTheRunsDir) {
  OptimizerSetupArgs args;
  args.worker_count = 1;
  args.no_knowledge = true;
  args.runs_dir = "/tmp/runs";
  args.endpoint = llm::parse_endpoint({{"name", "settings"}, {"provider", "openai"}, {"base_url", "http://127.0.0.1:1"}, {"model", "m"}});
  const auto setup = make_optimizer_setup(args, json::object(), kExe, "test", "unused");
  ASSERT_EQ(setup.proposers.size(), 1u);
  EXPECT_EQ(setup.proposers[0]->name().rfind("llm", 0), 0u) << setup.proposers[0]->name();
}

TEST(EngineOptimizerSetup, BadWorkerCommandsAndUnknownEndpointsAreErrors) {
  OptimizerSetupArgs args;
  args.llm = "nope";
  EXPECT_EQ(hiera::testing::thrown_message<std::runtime_error>([&] { make_optimizer_setup(args, json::object(), kExe, "t", "r"); }),
            "--llm nope: no endpoint of that name in the configuration's llm.endpoints");
  args.llm = "none";
  args.worker_argv = {{}};
  EXPECT_EQ(hiera::testing::thrown_message<std::runtime_error>([&] { make_optimizer_setup(args, json::object(), kExe, "t", "r"); }),
            "worker command: the command is empty");
}

}  // namespace
}  // namespace hiera::engine::optimize
