// `hiera bench` end to end on CPU: the real hiera executable and its real
// worker (the PyTorch runner on CPU torch) over a temporary suite of two tiny
// problems in two groups, with the compile baseline asked for; then the same
// command again, which must reuse both results instead of running them.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "subprocess.h"
#include "temp_directory.h"

namespace {

namespace fs = std::filesystem;
using hiera::testing::run_process;
using nlohmann::json;

const char* kRelu = R"(import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return []
)";

const char* kScale = R"(import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return x * self.factor + 1.0


def get_inputs():
    return [torch.randn(32, 32)]


def get_init_inputs():
    return [2.0]
)";

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

std::vector<std::string> keys(const json& object) {
  std::vector<std::string> out;
  for (const auto& [key, value] : object.items()) out.push_back(key);
  return out;
}

// What the records must name: HEAD, marked when tracked files differ from it (source_commit.h).
std::string head_commit() {
  const auto git = run_process({"git", "-C", HIERA_SOURCE_DIR, "rev-parse", "HEAD"}, "");
  if (git.exit_code != 0) return "unknown";
  const auto status = run_process({"git", "-C", HIERA_SOURCE_DIR, "status", "--porcelain", "--untracked-files=no"}, "");
  return git.out.substr(0, git.out.find_first_of("\r\n")) + (status.out.empty() ? "" : "+modified");
}

// Parses an SVG with a real XML parser; returns the root element's tag, or the parser's error.
std::string svg_root(const fs::path& file) {
  const auto r = run_process({"/usr/bin/python3", "-c",
                              "import sys, xml.etree.ElementTree as E; print(E.parse(sys.argv[1]).getroot().tag)", file.string()},
                             "");
  return r.exit_code == 0 ? r.out : "error: " + r.err;
}

class BenchCpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(fs::path(HIERA_BIN).parent_path() / "hiera-worker")) {
      GTEST_SKIP() << "hiera-worker was not built (no CUDA toolkit): hiera bench has no worker to run";
    }
    write(dir_.path() / "suite" / "elementwise" / "relu.py", kRelu);
    write(dir_.path() / "suite" / "linear" / "scale.py", kScale);
    write(dir_.path() / "suite" / "linear" / "helpers.py", "def scale(x):\n    return 2 * x\n");  // not a problem
    write(dir_.path() / "suite" / "README.md", "two tiny problems\n");
    write(dir_.path() / "config.json", "{}");  // whatever the machine's own configuration says
  }
  hiera::testing::ProcessResult bench(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {HIERA_BIN, "bench", (dir_.path() / "suite").string(), "--out", out().string(),
                                     "--baseline", "eager,compile", "--llm", "none", "--budget", "2",
                                     "--config", (dir_.path() / "config.json").string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_process(argv, "", std::chrono::minutes(4));
  }
  fs::path out() const { return dir_.path() / "out"; }
  hiera::testing::TempDirectory dir_{"hiera-bench-e2e-"};
};

TEST_F(BenchCpu, RunsTheSuiteWritesEveryOutputAndResumesOnTheSecondRun) {
  const auto first = bench();
  ASSERT_FALSE(first.timed_out) << first.err;
  ASSERT_EQ(first.exit_code, 0) << first.err << first.out;
  EXPECT_NE(first.err.find("2 problem(s) run, 0 reused"), std::string::npos) << first.err;

  // summary.json: exactly its keys, and values that agree with the problems.
  const json summary = json::parse(read(out() / "summary.json"));
  EXPECT_EQ(keys(summary), (std::vector<std::string>{"commit", "date", "fast_p", "fast_p_compile", "fast_p_kernelbench",
                                                     "fast_p_kernelbench_compile", "geomean_compile", "geomean_eager",
                                                     "gpu", "groups", "problems", "wall_s", "workers"}));
  EXPECT_GT(summary["wall_s"].get<double>(), 0.0);
  EXPECT_EQ(summary["commit"].get<std::string>(), head_commit());
  EXPECT_TRUE(std::regex_match(summary["date"].get<std::string>(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << summary["date"];
  EXPECT_FALSE(summary["gpu"].get<std::string>().empty());
  ASSERT_EQ(summary["problems"].size(), 2u) << summary.dump(1);
  EXPECT_EQ(summary["problems"][0]["name"], "elementwise/relu");
  EXPECT_EQ(summary["problems"][1]["name"], "linear/scale");
  double log_sum = 0.0;
  int faster_than_1 = 0;
  for (const auto& p : summary["problems"]) {
    EXPECT_EQ(keys(p), (std::vector<std::string>{"correct", "kernelbench_passed", "name", "sol_fraction", "spaces",
                                                 "speedup_compile", "speedup_eager"}));
    EXPECT_EQ(p["correct"], true) << p;
    EXPECT_EQ(p["kernelbench_passed"], true) << p;  // what is handed back passes KernelBench's own check too
    const double s = p["speedup_eager"].get<double>();
    log_sum += std::log(s);
    faster_than_1 += s > 1.0 ? 1 : 0;
  }
  EXPECT_EQ(keys(summary["fast_p"]), (std::vector<std::string>{"0", "1", "1.5", "2"}));
  EXPECT_EQ(summary["fast_p"]["0"], 1.0);  // both correct
  EXPECT_DOUBLE_EQ(summary["fast_p"]["1"].get<double>(), faster_than_1 / 2.0);
  EXPECT_NEAR(summary["geomean_eager"].get<double>(), std::exp(log_sum / 2), 1e-12);
  ASSERT_TRUE(summary["fast_p_compile"].is_object());
  EXPECT_EQ(summary["fast_p_compile"]["0"], 1.0);
  EXPECT_EQ(summary["fast_p_kernelbench"], summary["fast_p"]);  // the two criteria agree on these problems
  EXPECT_EQ(summary["fast_p_kernelbench_compile"], summary["fast_p_compile"]);
  EXPECT_TRUE(summary["geomean_compile"].is_number());
  EXPECT_EQ(keys(summary["groups"]), (std::vector<std::string>{"elementwise", "linear"}));
  EXPECT_EQ(keys(summary["groups"]["linear"]),
            (std::vector<std::string>{"fast_p", "fast_p_compile", "fast_p_kernelbench", "fast_p_kernelbench_compile",
                                      "geomean_compile", "geomean_eager"}));

  // Each problem's JSON, where the report links it.
  for (const auto& [group, name] : std::vector<std::pair<std::string, std::string>>{{"elementwise", "relu"}, {"linear", "scale"}}) {
    const fs::path file = out() / "problems" / group / (name + ".json");
    ASSERT_TRUE(fs::exists(file)) << file;
    const json p = json::parse(read(file));
    EXPECT_EQ(p["name"].get<std::string>(), name);
    EXPECT_EQ(p["group"].get<std::string>(), group);
    EXPECT_EQ(p["file"].get<std::string>(), (dir_.path() / "suite" / group / (name + ".py")).string());
    EXPECT_EQ(p["correct"], true);
    EXPECT_EQ(p["kernelbench"]["passed"], true) << p["kernelbench"];
    EXPECT_EQ(p["kernelbench"]["trials"], 5);
    EXPECT_TRUE(p["error"].is_null()) << p["error"];
    EXPECT_GT(p["times"]["eager"]["median_ms"].get<double>(), 0.0);
    EXPECT_GT(p["times"]["best"]["median_ms"].get<double>(), 0.0);
    EXPECT_LE(p["candidates"]["tried"].get<int>(), 2);
    EXPECT_TRUE(fs::is_directory(p["run_dir"].get<std::string>())) << p["run_dir"];
    EXPECT_EQ(p["gpu"], summary["gpu"]);
    if (p["outcome"] == "no_improvement") {
      EXPECT_EQ(p["speedup_eager"], 1.0);  // the original, handed back
      EXPECT_EQ(p["spaces"], json::array());
    } else {
      EXPECT_EQ(p["outcome"], "improved");
      EXPECT_FALSE(p["spaces"].empty());
    }
    // torch.compile: timed where torch has it (2.0 and later), else the reason why not.
    if (p["speedup_compile"].is_null()) {
      EXPECT_NE(p["baseline_errors"].value("compile", "").find("torch.compile"), std::string::npos) << p["baseline_errors"];
    } else {
      EXPECT_GT(p["speedup_compile"].get<double>(), 0.0);
      EXPECT_GT(p["times"]["compile"]["median_ms"].get<double>(), 0.0);
    }
  }

  // The report is what the terminal showed; the plots parse as SVG.
  const std::string report = read(out() / "report.md");
  EXPECT_EQ(first.out, report);
  EXPECT_EQ(report.rfind("# hiera bench: suite\n", 0), 0u) << report;
  EXPECT_NE(report.find("| [relu](problems/elementwise/relu.json) | yes |"), std::string::npos) << report;
  EXPECT_NE(report.find("| [scale](problems/linear/scale.json) | yes |"), std::string::npos) << report;
  EXPECT_EQ(svg_root(out() / "speedups.svg"), "{http://www.w3.org/2000/svg}svg\n");
  EXPECT_EQ(svg_root(out() / "sol.svg"), "{http://www.w3.org/2000/svg}svg\n");

  // The same command again: both problems are reused, nothing runs, nothing changes.
  const std::string relu_before = read(out() / "problems" / "elementwise" / "relu.json");
  const auto runs_before = std::distance(fs::directory_iterator(out() / "runs"), fs::directory_iterator());
  const auto second = bench();
  ASSERT_FALSE(second.timed_out) << second.err;
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("0 problem(s) run, 2 reused"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("2/2 problems (2 reused)"), std::string::npos) << second.err;
  EXPECT_EQ(read(out() / "problems" / "elementwise" / "relu.json"), relu_before);
  EXPECT_EQ(std::distance(fs::directory_iterator(out() / "runs"), fs::directory_iterator()), runs_before);
  const json again = json::parse(read(out() / "summary.json"));
  EXPECT_EQ(again["problems"], summary["problems"]);
  EXPECT_EQ(again["fast_p"], summary["fast_p"]);
}

}  // namespace
