// The engine's optimizer setup, shared by hiera optimize, hiera bench and the
// LSP server's jobs: worker command lines and the LLM endpoint, however given.
#include "engine/optimize/optimizer_setup.h"

#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "temp_directory.h"
#include "thrown_message.h"
#include "build_paths.h"

namespace hiera::engine::optimize {
namespace {

using nlohmann::json;

const std::filesystem::path kExe = ::hiera::testing::hiera_bin();

TEST(EngineOptimizerSetup, WorkerArgvIsUsedAsGivenAndCommandLinesAreSplit) {
  hiera::testing::TempDirectory runs("hiera-setup-");
  OptimizerSetupArgs args;
  args.worker_argv = {{"/opt/my worker", "--flag"}};
  args.workers = {"other 'a b'"};
  args.runs_dir = runs.path().string();
  args.llm = "none";
  const auto setup = make_optimizer_setup(args, json::object(), kExe, "test", "unused");
  EXPECT_EQ(setup.pool.commands, (std::vector<std::vector<std::string>>{{"/opt/my worker", "--flag"}, {"other", "a b"}}));
  // The built-in proposers, in turn order: the knowledge base's rewrites, then torch.compile.
  ASSERT_EQ(setup.proposers.size(), 2u);
  EXPECT_EQ(setup.proposers[0]->name(), "knowledge");
  EXPECT_EQ(setup.proposers[1]->name(), "torch.compile");
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

TEST(EngineOptimizerSetup, ACpuRunIsAskedForByTheArgsOrTheConfigurationsWorkerDevice) {
  OptimizerSetupArgs args;
  args.worker_count = 1;
  args.llm = "none";
  args.no_knowledge = true;
  EXPECT_FALSE(make_optimizer_setup(args, json::object(), kExe, "test", "unused").cpu_run);  // a GPU by default
  EXPECT_TRUE(make_optimizer_setup(args, {{"worker", {{"device", "cpu"}}}}, kExe, "test", "unused").cpu_run);
  args.device = "gpu";  // the flag over the file
  EXPECT_FALSE(make_optimizer_setup(args, {{"worker", {{"device", "cpu"}}}}, kExe, "test", "unused").cpu_run);
  args.device = "cpu";
  EXPECT_TRUE(make_optimizer_setup(args, json::object(), kExe, "test", "unused").cpu_run);
  args.device = "";
  EXPECT_EQ(hiera::testing::thrown_message<std::invalid_argument>(
                [&] { make_optimizer_setup(args, {{"worker", {{"device", "tpu"}}}}, kExe, "test", "unused"); }),
            "device: 'tpu' is not a device; accepted: gpu (a GPU worker, the default), cpu (a CPU run)");
}

TEST(EngineOptimizerSetup, AnEndpointGivenWholeAddsTheLlmProposerWithItsCacheInTheRunsDir) {
  OptimizerSetupArgs args;
  args.worker_count = 1;
  args.no_knowledge = true;
  args.runs_dir = "/tmp/runs";
  args.endpoint = propose::llm::parse_endpoint({{"name", "settings"}, {"provider", "openai"}, {"base_url", "http://127.0.0.1:1"}, {"model", "m"}});
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

TEST(EngineOptimizerSetup, SshWorkerSpecsBecomeSshCommandLinesThroughHieraSshCommand) {
  OptimizerSetupArgs args;
  args.llm = "none";
  args.no_knowledge = true;
  args.workers = {"ssh://ann@gpu1:2222?gpus=2", "hiera worker --device 3"};
  args.worker_argv = {{"ssh://gpu2/opt/bin/hiera"}};  // editor settings: worker.command = ["ssh://gpu2/..."]
  ::setenv("HIERA_SSH_COMMAND", "ssh -F '/tmp/my config'", 1);
  const auto setup = make_optimizer_setup(args, json::object(), kExe, "t", "r");
  ::unsetenv("HIERA_SSH_COMMAND");
  const std::vector<std::string> ssh{"ssh", "-F", "/tmp/my config", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=15",
                                     "-o", "ServerAliveCountMax=3", "-e", "none", "-T"};
  auto with = [&](std::vector<std::string> tail) {
    std::vector<std::string> argv = ssh;
    argv.insert(argv.end(), tail.begin(), tail.end());
    return argv;
  };
  EXPECT_EQ(setup.pool.commands,
            (std::vector<std::vector<std::string>>{with({"--", "gpu2", "exec /opt/bin/hiera worker"}),
                                                   with({"-p", "2222", "--", "ann@gpu1", "exec hiera worker --device 0"}),
                                                   with({"-p", "2222", "--", "ann@gpu1", "exec hiera worker --device 1"}),
                                                   {"hiera", "worker", "--device", "3"}}));
  EXPECT_TRUE(setup.pool.allocations.empty());  // nothing to wait for or release
}

TEST(EngineOptimizerSetup, ASlurmSpecSubmitsItsJobAndTellsTheGivenChannel) {
  hiera::testing::TempDirectory bin("hiera-setup-slurm-");
  for (const auto& [tool, body] : {std::pair{"sbatch", "echo 42"}, std::pair{"scancel", "true"}}) {
    std::ofstream(bin.path() / tool) << "#!/bin/sh\n" << body << "\n";
    std::filesystem::permissions(bin.path() / tool, std::filesystem::perms::owner_all);
  }
  const std::string path = std::getenv("PATH");
  ::setenv("PATH", (bin.path().string() + ":" + path).c_str(), 1);
  OptimizerSetupArgs args;
  args.llm = "none";
  args.no_knowledge = true;
  args.workers = {"slurm,workers=2,mem=16G,hiera=/shared/hiera"};
  eval::AllocationNotices notices;
  args.allocation_notices = notices;
  std::vector<eval::AllocationNotice> heard;
  auto subscription = notices.subscribe([&](const eval::AllocationNotice& n) { heard.push_back(n); });
  auto setup = make_optimizer_setup(args, json::object(), kExe, "t", "r");
  ASSERT_EQ(heard.size(), 1u);
  EXPECT_EQ(heard[0], (eval::AllocationNotice{eval::AllocationNoticeKind::Info, "Slurm job 42",
                                              "submitted Slurm job 42 to hold 2 worker(s); it is cancelled when the run ends"}));
  ASSERT_EQ(setup.pool.commands.size(), 2u);
  EXPECT_EQ(setup.pool.commands[1],
            (std::vector<std::string>{"srun", "--jobid=42", "--job-name=hiera-worker-1", "--nodes=1", "--ntasks=1", "--cpus-per-task=1",
                                      "--mem=0", "--exact", "--unbuffered", "--quiet", "--kill-on-bad-exit=1", "/shared/hiera",
                                      "worker"}));
  ASSERT_EQ(setup.pool.allocations.size(), 2u);
  EXPECT_EQ(setup.pool.allocations[0], setup.pool.allocations[1]);
  EXPECT_EQ(setup.pool.allocations[0]->describe(), "Slurm job 42");
  setup.pool.allocations[0]->release();  // the fake scancel, not a real one
  ::setenv("PATH", path.c_str(), 1);
  EXPECT_EQ(heard.back().line, "cancelled Slurm job 42: its resources are released");
}

TEST(EngineOptimizerSetup, BadWorkerSpecsAreErrors) {
  OptimizerSetupArgs args;
  args.llm = "none";
  args.workers = {"ssh://gpu1:99999"};
  EXPECT_EQ(hiera::testing::thrown_message<std::invalid_argument>([&] { make_optimizer_setup(args, json::object(), kExe, "t", "r"); }),
            "--worker ssh://gpu1:99999: the port must be a number from 1 to 65535");
  args.workers = {"slurm:gres=gpu:0"};
  EXPECT_EQ(hiera::testing::thrown_message<std::invalid_argument>([&] { make_optimizer_setup(args, json::object(), kExe, "t", "r"); }),
            "--worker slurm:gres=gpu:0: gres must be gpu:N or gpu:TYPE:N (N from 1 to 64)");
}

}  // namespace
}  // namespace hiera::engine::optimize

namespace hiera::engine::optimize {
namespace {

// Every configured endpoint's key, not only the one in use: no worker has business with any.
TEST(EngineOptimizerSetup, TheWorkerPoolKnowsEveryConfiguredSecret) {
  ::setenv("HIERA_SETUP_TEST_KEY_A", "key-aaaaaaaaaaaa", 1);
  ::setenv("HIERA_SETUP_TEST_KEY_B", "key-bbbbbbbbbbbb", 1);
  ::setenv("HIERA_SETUP_TEST_KEY_C", "key-cccccccccccc", 1);
  ::unsetenv("HIERA_SETUP_TEST_UNSET");
  const json config = {{"llm",
                        {{"default", "none"},
                         {"endpoints",
                          {{{"name", "a"}, {"api_key_env", "HIERA_SETUP_TEST_KEY_A"}},
                           {{"name", "b"}, {"api_key_env", "HIERA_SETUP_TEST_KEY_B"}},
                           {{"name", "c"}, {"api_key_env", "HIERA_SETUP_TEST_UNSET"}},
                           {{"name", "d"}, {"api_key_env", ""}},
                           "not an endpoint"}}}}};
  OptimizerSetupArgs args;
  args.worker_count = 1;
  args.no_knowledge = true;
  args.llm = "none";
  args.runs_dir = "/tmp/runs";
  args.endpoint = propose::llm::parse_endpoint({{"name", "settings"}, {"provider", "openai"}, {"base_url", "http://127.0.0.1:1"},
                                       {"model", "m"}, {"api_key_env", "HIERA_SETUP_TEST_KEY_C"}});
  const auto setup = make_optimizer_setup(args, config, kExe, "test", "unused");
  ::unsetenv("HIERA_SETUP_TEST_KEY_A");
  ::unsetenv("HIERA_SETUP_TEST_KEY_B");
  ::unsetenv("HIERA_SETUP_TEST_KEY_C");
  EXPECT_EQ(setup.pool.secrets.names(), (std::vector<std::string>{"HIERA_SETUP_TEST_KEY_C", "HIERA_SETUP_TEST_KEY_A",
                                                                  "HIERA_SETUP_TEST_KEY_B", "HIERA_SETUP_TEST_UNSET"}));
  EXPECT_EQ(setup.pool.secrets.redact("key-aaaaaaaaaaaa key-bbbbbbbbbbbb key-cccccccccccc"),
            "[redacted $HIERA_SETUP_TEST_KEY_A] [redacted $HIERA_SETUP_TEST_KEY_B] [redacted $HIERA_SETUP_TEST_KEY_C]");
  EXPECT_TRUE(configured_secrets(OptimizerSetupArgs{}, json::object()).names().empty());
}

}  // namespace
}  // namespace hiera::engine::optimize
