// The editor's settings onto the optimizer's setup: each key, and bad values named.
#include "server/features/optimizer_settings.h"

#include <gtest/gtest.h>

#include "thrown_message.h"

namespace hiera::server {
namespace {

using nlohmann::json;

TEST(OptimizerSettings, MapsWorkerGpuLlmBudgetAndRunsDir) {
  const auto args = optimizer_args_from_settings(
      {{"worker", {{"command", {"/opt/w", "--device", "1"}}}},
       {"gpu", "H100_SXM"},
       {"llm", {{"endpoint", "http://127.0.0.1:8000"}, {"model", "m"}, {"apiKeyEnv", "MY_KEY"}}},
       {"budget", {{"candidates", 7}, {"minutes", 1.5}}},
       {"hints", {{"enabled", true}}}},
      "/proj/src");
  EXPECT_EQ(args.worker_argv, (std::vector<std::vector<std::string>>{{"/opt/w", "--device", "1"}}));
  EXPECT_EQ(args.target_gpu, "h100_sxm");
  ASSERT_TRUE(args.endpoint);
  EXPECT_EQ(args.endpoint->base_url, "http://127.0.0.1:8000");
  EXPECT_EQ(args.endpoint->model, "m");
  EXPECT_EQ(args.endpoint->api_key_env, "MY_KEY");
  EXPECT_EQ(args.endpoint->provider, engine::propose::llm::Provider::OpenAI);
  EXPECT_EQ(args.budget, 7);
  EXPECT_EQ(args.time_limit_s, 90.0);
  EXPECT_EQ(args.runs_dir, "/proj/src/.hiera/runs");
}

TEST(OptimizerSettings, DefaultsAreAWorkerPerGpuNoLlmAndTheDocumentsRunsDir) {
  const auto args = optimizer_args_from_settings(json::object(), "/proj");
  EXPECT_TRUE(args.worker_argv.empty());
  EXPECT_FALSE(args.worker_count);  // one worker per visible GPU
  EXPECT_EQ(args.llm, "none");
  EXPECT_FALSE(args.endpoint);
  EXPECT_FALSE(args.budget);
  EXPECT_EQ(args.runs_dir, "/proj/.hiera/runs");
  EXPECT_EQ(optimizer_args_from_settings({{"runsDir", "/abs/runs"}}, "/proj").runs_dir, "/abs/runs");
  EXPECT_EQ(optimizer_args_from_settings({{"runsDir", "out/../r"}}, "/proj").runs_dir, "/proj/r");
}

TEST(OptimizerSettings, WorkerSpecsAndCountSpreadJobsOverMoreWorkers) {
  const auto args = optimizer_args_from_settings(
      {{"worker", {{"specs", {"ssh://gpu-a", "slurm:gpu,gres=gpu:2"}}, {"count", 2}}}}, "/p");
  EXPECT_EQ(args.workers, (std::vector<std::string>{"ssh://gpu-a", "slurm:gpu,gres=gpu:2"}));
  EXPECT_EQ(args.worker_count, 2);
  EXPECT_TRUE(args.worker_argv.empty());
}

TEST(OptimizerSettings, WorkerDeviceAsksForACpuRunOrAGpu) {
  EXPECT_EQ(optimizer_args_from_settings({{"worker", {{"device", "cpu"}}}}, "/p").device, "cpu");
  EXPECT_EQ(optimizer_args_from_settings({{"worker", {{"device", "gpu"}}}}, "/p").device, "gpu");
  EXPECT_EQ(optimizer_args_from_settings(json::object(), "/p").device, "");  // the configuration's, else gpu
  EXPECT_EQ(optimizer_args_from_settings({{"worker", {{"device", ""}}}}, "/p").device, "");  // a client's "default"
}

TEST(OptimizerSettings, BadValuesAreNamed) {
  auto message = [](json settings) {
    return hiera::testing::thrown_message<std::invalid_argument>([&] { optimizer_args_from_settings(settings, "/p"); });
  };
  EXPECT_EQ(message({{"worker", {{"command", "hiera worker"}}}}),
            "hiera settings: worker.command must be a non-empty list of strings (the worker's argv)");
  EXPECT_EQ(message({{"budget", {{"candidates", 0}}}}), "hiera settings: budget.candidates must be an integer from 1 to 100000");
  EXPECT_EQ(message({{"budget", {{"minutes", -1}}}}), "hiera settings: budget.minutes must be a positive number");
  EXPECT_EQ(message({{"llm", {{"endpoint", "http://x"}}}}), "hiera settings: llm.model is required with llm.endpoint");
  EXPECT_EQ(message({{"gpu", 5}}), "hiera settings: gpu must be a string");
  EXPECT_EQ(message({{"worker", {{"specs", {"ssh://a", ""}}}}}),
            "hiera settings: worker.specs must be a list of worker specs (ssh://host, slurm:..., or a command line)");
  EXPECT_EQ(message({{"worker", {{"count", 0}}}}),
            "hiera settings: worker.count must be an integer from 1 to 64 (copies of the default worker)");
  EXPECT_EQ(message({{"worker", {{"device", "CPU0"}}}}),
            "hiera settings: worker.device must be \"gpu\" (a GPU worker, the default) or \"cpu\" (a CPU run), not \"CPU0\"");
}

}  // namespace
}  // namespace hiera::server
