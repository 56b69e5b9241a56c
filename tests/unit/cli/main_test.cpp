// The real hiera executable, run as a process: option parsing, exit codes,
// and the stdio LSP session's robustness at the process boundary.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "engine/common/child_process.h"
#include "protocol/framing.h"
#include "annotated_kernel.h"
#include "frame_assertions.h"
#include "subprocess.h"
#include "build_paths.h"

namespace {

using hiera::testing::frame;
using hiera::testing::frames;
using hiera::testing::run_process;
using nlohmann::json;

const json kInitialize = {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"}, {"params", {{"processId", nullptr}, {"capabilities", json::object()}}}};

TEST(HieraCli, VersionAndHelp) {
  auto version = run_process({::hiera::testing::hiera_bin(), "--version"}, "");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out, "hiera 0.1.0\n");
  auto help = run_process({::hiera::testing::hiera_bin(), "--help"}, "");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* sub : {"lsp", "optimize", "analyze", "bench", "doctor", "worker"}) EXPECT_NE(help.out.find(sub), std::string::npos) << sub;
}

TEST(HieraCli, OptimizeRefusesABadTargetWithExitOneAndItsReason) {
  const auto dir = std::filesystem::temp_directory_path() / ("hiera-cli-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "notes.txt") << "hello\n";
    std::ofstream(dir / "two.cu") << "__global__ void a(float* x) {}\n__global__ void b(float* x) {}\n";
    std::ofstream(dir / "m.py") << "import torch\nclass Model(torch.nn.Module):\n    pass\n";
  }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {(dir / "missing.py").string(), "missing.py: cannot read the file"},
      {(dir / "notes.txt").string(), "not '.txt' files"},
      {(dir / "two.cu").string(), "name the kernel to optimize (FILE::KERNEL); kernels here: a, b"},
      {(dir / "two.cu").string() + "::c", "no __global__ kernel 'c' (kernels here: a, b)"},
      {(dir / "m.py").string(), "no get_inputs() function"},
  };
  for (const auto& [target, message] : cases) {
    auto r = run_process({::hiera::testing::hiera_bin(), "optimize", target, "--quiet"}, "");
    EXPECT_EQ(r.exit_code, 1) << target;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  std::filesystem::remove_all(dir);
}

TEST(HieraCli, WorkerRunsTheSiblingWorkerOrSaysWhyNot) {
  const auto worker = std::filesystem::path(::hiera::testing::hiera_bin()).parent_path() / "hiera-worker";
  auto r = run_process({::hiera::testing::hiera_bin(), "worker", "--help"}, "");
  if (std::filesystem::exists(worker)) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("--device"), std::string::npos) << r.out;
  } else {
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("built without the CUDA toolkit"), std::string::npos) << r.err;
  }
}

TEST(HieraCli, BadOptionsAreRejected) {
  auto none = run_process({::hiera::testing::hiera_bin()}, "");
  EXPECT_NE(none.exit_code, 0);
  auto unknown = run_process({::hiera::testing::hiera_bin(), "lsp", "--frobnicate"}, "");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("frobnicate"), std::string::npos);
  auto remote = run_process({::hiera::testing::hiera_bin(), "lsp", "--listen", "0.0.0.0:0"}, "");
  EXPECT_EQ(remote.exit_code, 2);
  EXPECT_NE(remote.err.find("refusing to listen on non-loopback address 0.0.0.0"), std::string::npos);
}

TEST(HieraLspProcess, ShutdownThenExitIsZeroAndStdoutHoldsOnlyFrames) {
  const std::string input = frame(kInitialize) + frame({{"jsonrpc", "2.0"}, {"method", "initialized"}, {"params", json::object()}}) +
                            frame({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "shutdown"}}) +
                            frame({{"jsonrpc", "2.0"}, {"method", "exit"}});
  auto r = run_process({::hiera::testing::hiera_bin(), "lsp"}, input);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto messages = frames(r.out);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0]["id"], 1);
  EXPECT_EQ(messages[0]["result"]["serverInfo"]["version"], "0.1.0");
  EXPECT_EQ(messages[1], (json{{"jsonrpc", "2.0"}, {"id", 2}, {"result", nullptr}}));
}

TEST(HieraLspProcess, AbruptEofExitsOneWithoutHanging) {
  auto r = run_process({::hiera::testing::hiera_bin(), "lsp"},
                       frame(kInitialize) + "Content-Length: 50\r\n\r\n{\"jsonrpc\"");
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 1);
  auto messages = frames(r.out);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[1]["error"]["code"], -32700);
  EXPECT_NE(r.err.find("without 'exit'"), std::string::npos);
}

TEST(HieraLspProcess, GarbageAndAnOversizedClaimGetErrorsAndACleanExit) {
  const std::string input = std::string("\x00\x01garbage\r\n\r\n", 13) + "Content-Length: 100000000\r\n\r\n" ;
  auto r = run_process({::hiera::testing::hiera_bin(), "lsp"}, input);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 1);
  auto messages = frames(r.out);
  ASSERT_GE(messages.size(), 2u);
  EXPECT_EQ(messages[0]["error"]["code"], -32700);
  EXPECT_EQ(messages[1]["error"]["code"], -32600);
}

}  // namespace

namespace {

TEST(HieraCli, OptimizeHelpCallsTheBudgetACeiling) {
  const auto help = run_process({::hiera::testing::hiera_bin(), "optimize", "--help"}, "");
  EXPECT_EQ(help.exit_code, 0);
  // CLI11 wraps long descriptions: compare with the whitespace folded.
  std::string text;
  for (char c : help.out) {
    if (c == '\n' || c == ' ') {
      if (!text.empty() && text.back() != ' ') text += ' ';
    } else {
      text += c;
    }
  }
  EXPECT_NE(text.find("At most N candidates (a ceiling: the run stops earlier when the plan is exhausted, the time limit "
                      "is reached or the result is near the speed of light; default: the spec's, else 24)"),
            std::string::npos)
      << help.out;
}

// `kill -9` of `hiera optimize` while its worker runs (here a fake one that
// hangs in the handshake and would outlive the end of its stdin): the worker
// ends with it.
TEST(HieraCli, AKilledOptimizeLeavesNoWorkerRunning) {
  const auto dir = std::filesystem::temp_directory_path() / ("hiera-cli-kill-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto pid_file = dir / "worker.pid";
  const std::string worker = "/bin/sh -c 'echo $$ > " + pid_file.string() + "; exec " +
                             ::hiera::testing::fake_worker_bin() + " --hello hang --ignore-eof --ignore-sigterm'";
  hiera::engine::ChildProcess optimize(
      {::hiera::testing::hiera_bin(), "optimize",
       ::hiera::testing::source_dir() + "/tests/fixtures/analysis/kernelbench_conv_chain.py", "--quiet", "--llm",
       "none", "--runs-dir", (dir / "runs").string(), "--worker", worker});
  pid_t worker_pid = -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (worker_pid <= 0 && std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(pid_file);
    if (!(in >> worker_pid)) {
      worker_pid = -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ASSERT_GT(worker_pid, 0) << "the worker never started";
  ASSERT_EQ(::kill(optimize.pid(), SIGKILL), 0);
  EXPECT_EQ(optimize.wait().describe(), "signal 9 SIGKILL");
  bool gone = false;
  while (!gone && std::chrono::steady_clock::now() < deadline + std::chrono::seconds(10)) {
    std::ifstream stat("/proc/" + std::to_string(worker_pid) + "/stat");
    std::string line;
    gone = !std::getline(stat, line) || line.find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "worker " << worker_pid << " outlived hiera optimize";
  if (!gone) ::kill(worker_pid, SIGKILL);
  std::filesystem::remove_all(dir);
}

}  // namespace

namespace {

// An invalid UTF-8 byte in an annotation: the run ends with its error, and its
// record (result.json, run.jsonl, report.md) is written, as valid UTF-8.
TEST(HieraCli, InvalidUtf8InAnAnnotationKeepsTheRunRecord) {
  const auto dir = std::filesystem::temp_directory_path() / ("hiera-cli-utf8-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "k.cu", std::ios::binary)
      << "// hiera: size N=1024\n// hiera: arg x inout float32[N\xff]\n// hiera: arg n scalar int32 = N\n"
         "// hiera: launch grid=(N+255)/256 block=256\n"
         "__global__ void scale(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2.0f; }\n";
  const auto r = run_process(
      {::hiera::testing::hiera_bin(), "optimize", (dir / "k.cu").string(), "--quiet", "--llm", "none", "--runs-dir",
       (dir / "runs").string(), "--worker", ::hiera::testing::fake_worker_bin(), "--json", (dir / "out.json").string()},
      "", std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // The terminal gets the bytes as they are; the record gets U+FFFD in their place.
  EXPECT_NE(r.err.find("size expression 'N\xff': unexpected '\xff' at column 2"), std::string::npos) << r.err;
  std::vector<std::filesystem::path> runs;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "runs")) runs.push_back(entry.path());
  ASSERT_EQ(runs.size(), 1u);
  for (const char* name : {"result.json", "report.md", "run.jsonl"}) {
    EXPECT_TRUE(std::filesystem::exists(runs[0] / name)) << name;
  }
  std::ifstream result(runs[0] / "result.json");
  const json j = json::parse(result);  // throws on invalid UTF-8
  EXPECT_EQ(j["outcome"], "error");
  EXPECT_EQ(j["stopped"]["reason"], "error");
  EXPECT_NE(j["message"].get<std::string>().find("size expression 'N\xef\xbf\xbd'"), std::string::npos) << j["message"];
  std::ifstream out(dir / "out.json");
  EXPECT_EQ(json::parse(out)["outcome"], "error");
  std::filesystem::remove_all(dir);
}

// Without a worker that has a GPU, hiera optimize stops before the run and
// says what to give it (exit 4); --device cpu runs on that worker.
TEST(HieraCli, OptimizeWithoutAGpuWorkerStopsUnlessACpuRunIsAskedFor) {
  const auto dir = std::filesystem::temp_directory_path() / ("hiera-cli-no-gpu-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "scale.cu") << hiera::testing::annotated_scale_kernel();
  const std::string worker = ::hiera::testing::fake_worker_bin() + " --device none";
  const std::vector<std::string> argv = {::hiera::testing::hiera_bin(),
                                         "optimize",
                                         (dir / "scale.cu").string(),
                                         "--quiet",
                                         "--llm",
                                         "none",
                                         "--runs-dir",
                                         (dir / "runs").string(),
                                         "--worker",
                                         worker};
  const auto refused = run_process(argv, "", std::chrono::seconds(60));
  EXPECT_EQ(refused.exit_code, 4) << refused.err;
  EXPECT_EQ(refused.out, "");
  EXPECT_EQ(refused.err, "hiera optimize: no GPU: no worker has one (" + worker +
                             " answered without a CUDA device). Optimizing needs a GPU worker: --worker ssh://gpu-host (a "
                             "host with a GPU and hiera installed), --worker slurm:PARTITION,gres=gpu:1, or worker.command "
                             "in .hiera/config.json; or ask for a CPU run with --device cpu (PyTorch-operator candidates "
                             "only, timed on the CPU)\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "runs"));  // nothing ran
  auto cpu = argv;
  cpu.insert(cpu.end(), {"--device", "cpu"});
  const auto ran = run_process(cpu, "", std::chrono::seconds(60));
  EXPECT_EQ(ran.exit_code, 3) << ran.err;  // the fake worker's canned run: no candidate, no improvement
  EXPECT_NE(ran.out.find("# hiera optimize: scale.cu::scale"), std::string::npos) << ran.out;
  std::filesystem::remove_all(dir);
}

}  // namespace
