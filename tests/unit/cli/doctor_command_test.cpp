// `hiera doctor`, the real executable run as a process: one line per check,
// on this machine's setup (a CPU worker where hiera-worker is built, CPU torch,
// no GPU), and the failing cases with the line that names what failed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/knowledge/knowledge_base.h"
#include "subprocess.h"
#include "temp_directory.h"
#include "build_paths.h"

namespace {

namespace fs = std::filesystem;
using hiera::testing::run_process;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// `hiera doctor ARGS` from `dir`, with neither $HIERA_CONFIG nor $HIERA_KNOWLEDGE_DIR.
hiera::testing::ProcessResult doctor(const fs::path& dir, const std::string& args = "") {
  return run_process({"/bin/sh", "-c",
                      "cd " + quoted(dir.string()) + " && exec env -u HIERA_CONFIG -u HIERA_KNOWLEDGE_DIR " +
                          quoted(::hiera::testing::hiera_bin()) + " doctor " + args},
                     "", std::chrono::seconds(120));
}

std::string hiera_line() { return "ok   hiera: 0.1.0 (" + fs::canonical(::hiera::testing::hiera_bin()).string() + ")"; }

std::string knowledge_line() {
  const auto kb = hiera::engine::knowledge::load_knowledge(fs::path(::hiera::testing::source_dir()) / "knowledge");
  return "ok   knowledge: " + (fs::path(::hiera::testing::source_dir()) / "knowledge").string() + " (" +
         std::to_string(kb.recipes.size()) + " recipes, " + std::to_string(kb.gpus.size()) + " GPUs)";
}

const std::string kNoGpu =
    "warn gpu: no GPU: optimizing needs a GPU worker; set worker.command or worker.specs, e.g. ssh://gpu-host";

// The python that imports torch, as the worker finds it, and its torch version; empty without one.
// (Read only where the build has a worker.)
[[maybe_unused]] std::pair<std::string, std::string> torch_python() {
  const auto found = run_process({fs::path(::hiera::testing::source_dir()) / "scripts/find-torch-python"}, "",
                                 std::chrono::seconds(60));
  if (found.exit_code != 0) return {};
  std::string python = found.out.substr(0, found.out.find('\n'));
  const auto version = run_process({python, "-c", "import torch, sys; sys.stdout.write(torch.__version__)"}, "",
                                   std::chrono::seconds(60));
  return {python, version.out};
}

TEST(HieraDoctor, ChecksThisMachinesCpuSetupOneLineEach) {
  hiera::testing::TempDirectory dir("hiera-doctor-");
  const auto run = doctor(dir.path());
  ASSERT_FALSE(run.timed_out) << run.err;
  const auto lines = lines_of(run.out);
  ASSERT_EQ(lines.size(), 6u) << run.out << run.err;
  EXPECT_EQ(lines[0], hiera_line());
  EXPECT_EQ(lines[1], "ok   configuration: none found in " + fs::canonical(dir.path()).string() + " or above (the defaults apply)");
  EXPECT_EQ(lines[2], knowledge_line());
#ifdef HIERA_HAVE_WORKER
  const std::string worker = fs::canonical(::hiera::testing::hiera_bin()).string() + " worker";
  EXPECT_EQ(lines[3], "ok   worker: hiera-worker 0.1.0 (" + worker + ")") << run.err;
  const auto [python, torch] = torch_python();
  if (python.empty()) {
    EXPECT_EQ(lines[4], "fail python: the worker found no python3 that imports torch; install PyTorch for python3, or set "
                        "HIERA_PYTHON to a python that has it");
    EXPECT_EQ(run.exit_code, 1);
  } else {
    EXPECT_EQ(lines[4], "ok   python: " + python + ", torch " + torch + ", no CUDA");
    EXPECT_EQ(run.exit_code, 0) << run.out;  // a warning is not a failure
  }
  EXPECT_EQ(lines[5], kNoGpu);
#else
  EXPECT_EQ(lines[3].rfind("fail worker: ", 0), 0u) << lines[3];
  EXPECT_EQ(run.exit_code, 1);
#endif
}

TEST(HieraDoctor, AWorkerThatDoesNotStartFailsNamingIt) {
  hiera::testing::TempDirectory dir("hiera-doctor-");
  const auto run = doctor(dir.path(), "--worker /nonexistent");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  const auto lines = lines_of(run.out);
  ASSERT_EQ(lines.size(), 6u) << run.out << run.err;
  EXPECT_EQ(lines[0], hiera_line());
  EXPECT_EQ(lines[3].rfind("fail worker: /nonexistent: ", 0), 0u) << lines[3];
  const std::string fix = "; build hiera-worker (it needs the CUDA toolkit), or point --worker or worker.command at one that starts";
  EXPECT_EQ(lines[3].substr(lines[3].size() - fix.size()), fix) << lines[3];
  EXPECT_EQ(lines[4], "warn python: not checked: the worker did not start");
  EXPECT_EQ(lines[5], "warn gpu: not checked: the worker did not start");
}

TEST(HieraDoctor, TheConfigurationFoundAboveIsCheckedAndItsWorkerUsed) {
  hiera::testing::TempDirectory dir("hiera-doctor-");
  const fs::path nested = dir.path() / "a" / "b";
  fs::create_directories(nested);
  fs::create_directories(dir.path() / ".hiera");
  const fs::path config = fs::canonical(dir.path()) / ".hiera" / "config.json";
  std::ofstream(config) << R"({"worker": {"command": "/nonexistent/hiera worker"}, "runsdir": "x"})";
  const auto run = doctor(nested, "--knowledge /nonexistent/knowledge");
  EXPECT_EQ(run.exit_code, 1);
  const auto lines = lines_of(run.out);
  ASSERT_EQ(lines.size(), 6u) << run.out << run.err;
  EXPECT_EQ(lines[1], "warn configuration: " + config.string() +
                          ": unknown keys runsdir; remove or correct them (the keys are in docs/config.schema.json)");
  EXPECT_EQ(lines[2], "fail knowledge: /nonexistent/knowledge is not a directory; point --knowledge or $HIERA_KNOWLEDGE_DIR at "
                      "hiera's knowledge/, or reinstall (cmake --install)");
  EXPECT_EQ(lines[3].rfind("fail worker: /nonexistent/hiera worker: ", 0), 0u) << lines[3];

  std::ofstream(config) << "{not json";
  const auto bad = doctor(nested);
  EXPECT_EQ(bad.exit_code, 1);
  const auto bad_lines = lines_of(bad.out);
  ASSERT_GE(bad_lines.size(), 2u) << bad.out;
  EXPECT_EQ(bad_lines[1].rfind("fail configuration: the configuration " + config.string() + " is not valid: ", 0), 0u)
      << bad_lines[1];
  const std::string fix = "; correct the file, or point --config or $HIERA_CONFIG at a valid one";
  EXPECT_EQ(bad_lines[1].substr(bad_lines[1].size() - fix.size()), fix);
}

}  // namespace
