// The real hiera executable, run as a process: option parsing, exit codes,
// and the stdio LSP session's robustness at the process boundary.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "protocol/framing.h"
#include "frame_assertions.h"
#include "subprocess.h"

namespace {

using hiera::testing::frame;
using hiera::testing::frames;
using hiera::testing::run_process;
using nlohmann::json;

const json kInitialize = {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"}, {"params", {{"processId", nullptr}, {"capabilities", json::object()}}}};

TEST(HieraCli, VersionAndHelp) {
  auto version = run_process({HIERA_BIN, "--version"}, "");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out, "hiera 0.1.0\n");
  auto help = run_process({HIERA_BIN, "--help"}, "");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* sub : {"lsp", "optimize", "analyze", "bench", "worker"}) EXPECT_NE(help.out.find(sub), std::string::npos) << sub;
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
    auto r = run_process({HIERA_BIN, "optimize", target, "--quiet"}, "");
    EXPECT_EQ(r.exit_code, 1) << target;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  std::filesystem::remove_all(dir);
}

TEST(HieraCli, WorkerRunsTheSiblingWorkerOrSaysWhyNot) {
  const auto worker = std::filesystem::path(HIERA_BIN).parent_path() / "hiera-worker";
  auto r = run_process({HIERA_BIN, "worker", "--help"}, "");
  if (std::filesystem::exists(worker)) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("--device"), std::string::npos) << r.out;
  } else {
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("built without the CUDA toolkit"), std::string::npos) << r.err;
  }
}

TEST(HieraCli, BadOptionsAreRejected) {
  auto none = run_process({HIERA_BIN}, "");
  EXPECT_NE(none.exit_code, 0);
  auto unknown = run_process({HIERA_BIN, "lsp", "--frobnicate"}, "");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("frobnicate"), std::string::npos);
  auto remote = run_process({HIERA_BIN, "lsp", "--listen", "0.0.0.0:0"}, "");
  EXPECT_EQ(remote.exit_code, 2);
  EXPECT_NE(remote.err.find("refusing to listen on non-loopback address 0.0.0.0"), std::string::npos);
}

TEST(HieraLspProcess, ShutdownThenExitIsZeroAndStdoutHoldsOnlyFrames) {
  const std::string input = frame(kInitialize) + frame({{"jsonrpc", "2.0"}, {"method", "initialized"}, {"params", json::object()}}) +
                            frame({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "shutdown"}}) +
                            frame({{"jsonrpc", "2.0"}, {"method", "exit"}});
  auto r = run_process({HIERA_BIN, "lsp"}, input);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto messages = frames(r.out);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0]["id"], 1);
  EXPECT_EQ(messages[0]["result"]["serverInfo"]["version"], "0.1.0");
  EXPECT_EQ(messages[1], (json{{"jsonrpc", "2.0"}, {"id", 2}, {"result", nullptr}}));
}

TEST(HieraLspProcess, AbruptEofExitsOneWithoutHanging) {
  auto r = run_process({HIERA_BIN, "lsp"}, frame(kInitialize) + "Content-Length: 50\r\n\r\n{\"jsonrpc\"");
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 1);
  auto messages = frames(r.out);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[1]["error"]["code"], -32700);
  EXPECT_NE(r.err.find("without 'exit'"), std::string::npos);
}

TEST(HieraLspProcess, GarbageAndAnOversizedClaimGetErrorsAndACleanExit) {
  const std::string input = std::string("\x00\x01garbage\r\n\r\n", 13) + "Content-Length: 100000000\r\n\r\n" ;
  auto r = run_process({HIERA_BIN, "lsp"}, input);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 1);
  auto messages = frames(r.out);
  ASSERT_GE(messages.size(), 2u);
  EXPECT_EQ(messages[0]["error"]["code"], -32700);
  EXPECT_EQ(messages[1]["error"]["code"], -32600);
}

}  // namespace
