// `hiera bench`: its option parsing and fingerprint, and the real
// executable's answers to bad usage (exit code 2, a clear message,
// nothing written).
#include "cli/bench_command.h"

#include <gtest/gtest.h>

#include <fstream>

#include "subprocess.h"
#include "temp_directory.h"
#include "build_paths.h"

namespace hiera::cli {
namespace {

namespace fs = std::filesystem;
using hiera::testing::run_process;
using nlohmann::json;

TEST(BenchBaselines, EagerAlwaysFirstThenCompileOnce) {
  EXPECT_EQ(parse_baselines("eager"), (std::vector<std::string>{"eager"}));
  EXPECT_EQ(parse_baselines("eager,compile"), (std::vector<std::string>{"eager", "compile"}));
  EXPECT_EQ(parse_baselines("compile"), (std::vector<std::string>{"eager", "compile"}));
  EXPECT_EQ(parse_baselines("compile, eager,compile"), (std::vector<std::string>{"eager", "compile"}));
}

TEST(BenchBaselines, RejectsUnknownAndEmptyNames) {
  for (const auto& [list, name] : std::vector<std::pair<std::string, std::string>>{
           {"eager,inductor", "inductor"}, {"", ""}, {"eager,", ""}, {"Eager", "Eager"}}) {
    try {
      parse_baselines(list);
      FAIL() << "accepted '" << list << "'";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), "--baseline: '" + name + "' is not a baseline (eager, compile)");
    }
  }
}

TEST(BenchFingerprint, NamesEverythingThatShapesAResult) {
  engine::optimize::OptimizeOptions options;
  options.budget = 8;
  options.target_gpu = "h100";
  options.configuration = {{"target_speedup", 1.2}};
  const json f = bench_fingerprint(options, {"eager", "compile"}, {"llm:local"});
  EXPECT_EQ(f, (json{{"hiera", "0.1.0"}, {"baselines", {"eager", "compile"}}, {"budget", 8}, {"time_limit_s", nullptr},
                     {"candidates_per_round", nullptr}, {"proposers", {"llm:local"}}, {"target_gpu", "h100"}, {"spec", {{"target_speedup", 1.2}}},
                     {"trials", 5}, {"timing_trials", 50}, {"seed", 1234}}));
  options.time_limit_s = 60;
  EXPECT_NE(bench_fingerprint(options, {"eager", "compile"}, {"llm:local"}), f);
  const json with_time = bench_fingerprint(options, {"eager", "compile"}, {"llm:local"});
  options.candidates_per_round = 2;
  EXPECT_EQ(bench_fingerprint(options, {"eager", "compile"}, {"llm:local"})["candidates_per_round"], 2);
  EXPECT_NE(bench_fingerprint(options, {"eager", "compile"}, {"llm:local"}), with_time);
  EXPECT_NE(bench_fingerprint(options, {"eager"}, {"llm:local"}), bench_fingerprint(options, {"eager", "compile"}, {"llm:local"}));
}

// Bad usage exits 2 before any worker starts, says why, and writes nothing.
TEST(BenchUsage, BadUsageExitsTwoWithItsReason) {
  hiera::testing::TempDirectory dir("hiera-bench-usage-");
  fs::create_directories(dir.path() / "suite" / "fusion");
  std::ofstream(dir.path() / "suite" / "fusion" / "notes.py") << "x = 1\n";
  std::ofstream(dir.path() / "suite" / "fusion" / "relu.py")
      << "import torch\nclass Model(torch.nn.Module):\n    pass\ndef get_inputs():\n    return []\ndef get_init_inputs():\n    return []\n";
  const std::string suite = (dir.path() / "suite").string();
  const std::string out = (dir.path() / "out").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{::hiera::testing::hiera_bin(), "bench"}, "dir is required"},
      {{::hiera::testing::hiera_bin(), "bench", suite, "--out", out, "--baseline", "eager,inductor"},
       "--baseline: 'inductor' is not a baseline (eager, compile)"},
      {{::hiera::testing::hiera_bin(), "bench", (dir.path() / "missing").string(), "--out", out},
       (dir.path() / "missing").string() + ": not a directory"},
      {{::hiera::testing::hiera_bin(), "bench", suite, "--out", out, "--filter", "("},
       "--filter '(': not a valid regular expression"},
      {{::hiera::testing::hiera_bin(), "bench", suite, "--out", out, "--filter", "^norm/"},
       suite + ": no problems matching --filter '^norm/'"},
      {{::hiera::testing::hiera_bin(), "bench", (dir.path() / "suite" / "fusion" / "..").string() + "/fusion/", "--out",
        out, "--filter", "x"},
       "no problems matching --filter 'x'"},
      {{::hiera::testing::hiera_bin(), "bench", suite, "--no-such-option"}, "--no-such-option"},
      {{::hiera::testing::hiera_bin(), "bench", suite, "--workers", "0"}, "--workers"},
  };
  for (const auto& [argv, message] : cases) {
    const auto r = run_process(argv, "");
    EXPECT_EQ(r.exit_code, 2) << argv.back() << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  EXPECT_FALSE(fs::exists(out));
}

TEST(BenchUsage, ADirectoryWithoutProblemsSaysWhatAProblemIs) {
  hiera::testing::TempDirectory dir("hiera-bench-usage-");
  std::ofstream(dir.path() / "helper.py") << "def f():\n    return 1\n";
  const auto r = run_process(
      {::hiera::testing::hiera_bin(), "bench", dir.path().string(), "--out", (dir.path() / "out").string()}, "");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir.path().string() + ": no problems (KernelBench format: a .py file defining class Model(nn.Module), "
                       "get_inputs() and get_init_inputs())"),
            std::string::npos)
      << r.err;
}

TEST(BenchUsage, ABadConfigurationStopsItWithExitOne) {
  hiera::testing::TempDirectory dir("hiera-bench-usage-");
  std::ofstream(dir.path() / "relu.py")
      << "import torch\nclass Model(torch.nn.Module):\n    pass\ndef get_inputs():\n    return []\ndef get_init_inputs():\n    return []\n";
  std::ofstream(dir.path() / "config.json") << "[1, 2]";
  const auto r = run_process({::hiera::testing::hiera_bin(), "bench", dir.path().string(), "--out",
                              (dir.path() / "out").string(), "--config", (dir.path() / "config.json").string()},
                             "");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("hiera bench: the configuration " + (dir.path() / "config.json").string() + " is not valid"),
            std::string::npos)
      << r.err;
  const auto llm =
      run_process({::hiera::testing::hiera_bin(), "bench", dir.path().string(), "--out", (dir.path() / "out").string(),
                   "--llm", "nowhere", "--config", (dir.path() / "missing.json").string()},
                  "");
  EXPECT_EQ(llm.exit_code, 1);
  EXPECT_NE(llm.err.find("cannot read the configuration"), std::string::npos) << llm.err;
}

// --report-only on a machine without the GPU: without --baseline, the
// records decide the columns, so a suite measured against torch.compile is
// reported against it (it was reported against eager alone before).
TEST(BenchReportOnly, TheRecordsSayWhichBaselinesWereMeasured) {
  hiera::testing::TempDirectory dir("hiera-bench-report-only-");
  fs::create_directories(dir.path() / "suite" / "patterns");
  std::ofstream(dir.path() / "suite" / "patterns" / "attention.py")
      << "import torch\nclass Model(torch.nn.Module):\n    pass\ndef get_inputs():\n    return []\ndef get_init_inputs():\n    return []\n";
  const fs::path out = dir.path() / "out";
  fs::create_directories(out / "problems" / "patterns");
  fs::copy_file(::hiera::testing::source_dir() + "/tests/fixtures/bench/problem_result_with_compile.json",
                out / "problems" / "patterns" / "attention.json");
  const auto r = run_process(
      {::hiera::testing::hiera_bin(), "bench", (dir.path() / "suite").string(), "--out", out.string(), "--report-only"},
      "");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("- Problems: 1, 1 correct; baselines: eager, compile"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Geometric mean speed-up: **1.32x** over eager, **0.70x** over torch.compile."), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("reported 1 of 1 problem(s)"), std::string::npos) << r.err;
  // Asked for eager alone, it reports eager alone.
  const auto eager = run_process({::hiera::testing::hiera_bin(), "bench", (dir.path() / "suite").string(), "--out",
                                  out.string(), "--report-only", "--baseline", "eager"},
                                 "");
  EXPECT_EQ(eager.exit_code, 0) << eager.err;
  EXPECT_NE(eager.out.find("- Problems: 1, 1 correct; baselines: eager\n"), std::string::npos) << eager.out;
}

}  // namespace
}  // namespace hiera::cli
