// `hiera analyze` as a process: the listing, --json, --gpu, annotations
// feeding kernel estimates, and the exit codes 0 / 1 / 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "subprocess.h"
#include "temp_directory.h"
#include "build_paths.h"

namespace {

using hiera::testing::run_process;
using nlohmann::json;

const std::string kFixtures = ::hiera::testing::source_dir() + "/tests/fixtures/analysis/";

TEST(AnalyzeCommand, JsonWithRooflineEstimatesOnTheChosenGpu) {
  const auto r = run_process({::hiera::testing::hiera_bin(), "analyze", kFixtures + "kernelbench_conv_chain.py",
                              "--json", "--gpu", "h100_sxm"},
                             "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["file"].get<std::string>(), kFixtures + "kernelbench_conv_chain.py");
  EXPECT_EQ(j["gpu"], "h100_sxm");
  const json& conv = j["modules"][0]["ops"][0];
  EXPECT_EQ(conv["op"], "conv2d");
  EXPECT_EQ(conv["work"]["bytes"], 1120000);
  // 1.12 MB at the H100 SXM's 3350 GB/s, above 12.7 MFLOP at its float32 peak.
  EXPECT_NEAR(conv["work"]["time_us"].get<double>(), 1120000 / 3350e9 * 1e6, 1e-9);
  EXPECT_EQ(conv["work"]["bound"], "memory");
  EXPECT_EQ(j["hints"][0]["rule"], "torch.fusable_elementwise_chain");
  EXPECT_FALSE(j["hints"][0]["explanation"].get<std::string>().empty());
}

TEST(AnalyzeCommand, AnnotationsGiveAKernelItsWork) {
  const hiera::testing::TempDirectory dir("hiera-analyze-");
  const auto file = dir.path() / "saxpy.cu";
  std::ofstream(file) << "// hiera: size N=1048576\n"
                         "// hiera: flops=2*N bytes=12*N\n"
                         "__global__ void saxpy(int n, float a, const float* x, float* y) {\n"
                         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                         "  if (i < n) y[i] = a * x[i] + y[i];\n"
                         "}\n"
                         "// hiera: flops=N\n"
                         "__global__ void other(float* y) {}\n";
  const auto r = run_process({::hiera::testing::hiera_bin(), "analyze", file.string(), "--json"}, "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["gpu"], "h200");
  const json& work = j["kernels"][0]["work"];
  EXPECT_EQ(work["flops"], 2097152);
  EXPECT_EQ(work["bytes"], 12582912);
  EXPECT_EQ(work["source"], "annotations");
  EXPECT_NEAR(work["time_us"].get<double>(), 12582912 / 4800e9 * 1e6, 1e-9);
  // `other`'s annotation names N, which no size of its own range defines.
  EXPECT_EQ(j["kernels"][1]["work"], nullptr);
}

TEST(AnalyzeCommand, ReadableListingWithOneBasedPositions) {
  const auto r =
      run_process({::hiera::testing::hiera_bin(), "analyze", kFixtures + "launches.cu", "--gpu", "none"}, "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("launches.cu (cuda): 3 kernel and device functions, 5 launch sites, 5 hints, 0 problems"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  28:26   error cuda.block_size: block of 2048 threads: more than 1024, the launch of 'accumulate' fails"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("          27:3    dim3 block(16, 16, 8)"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

// The module's total is the editor's estimate: conv2d with relu, add and mul
// in its pass, max_pool2d with sigmoid in its, each pass at least a launch.
TEST(AnalyzeCommand, AModulesTotalFusesWhatHieraFusesAndSaysTheOpByOpTime) {
  const auto r = run_process({::hiera::testing::hiera_bin(), "analyze", kFixtures + "kernelbench_conv_chain.py"}, "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  16:13   conv2d (self.conv) -> [16, 16, 30, 30] float32: 12.7 MFLOP, 1.1 MB: 3.00 µs on h200 (launch-bound)\n"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  total of 6 of 6 ops: 13.7 MFLOP, 2.3 MB: 6.00 µs on h200 with 4 elementwise ops fused into their "
                       "producers (18.0 µs op by op)\n"),
            std::string::npos) << r.out;
}

TEST(AnalyzeCommand, HalfTypedCodeStillExitsZeroWithItsProblems) {
  const auto r = run_process(
      {::hiera::testing::hiera_bin(), "analyze", kFixtures + "broken_python.py", "--json", "--gpu", "none"}, "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["problems"].size(), 4u);
}

TEST(AnalyzeCommand, UnreadableFileIsExitOne) {
  const hiera::testing::TempDirectory dir("hiera-analyze-");
  for (const auto& path : {(dir.path() / "missing.cu").string(), (dir.path() / "a_directory.py").string()}) {
    std::filesystem::create_directory(dir.path() / "a_directory.py");
    const auto r = run_process({::hiera::testing::hiera_bin(), "analyze", path}, "");
    EXPECT_EQ(r.exit_code, 1) << path;
    EXPECT_EQ(r.err, "hiera analyze: " + path + ": cannot read the file\n");
    EXPECT_EQ(r.out, "");
  }
}

TEST(AnalyzeCommand, GpuTakesTheUsualNamesInAnyCase) {
  const std::string kernel = ::hiera::testing::source_dir() + "/tests/fixtures/optimize/strided_scaled_relu.cu";
  const auto by_id = run_process({::hiera::testing::hiera_bin(), "analyze", kernel, "--gpu", "a100_sxm_80gb"}, "");
  ASSERT_EQ(by_id.exit_code, 0) << by_id.err;
  EXPECT_NE(by_id.out.find(" on a100_sxm_80gb"), std::string::npos) << by_id.out;
  for (const char* name : {"A100", "NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"}) {
    const auto r = run_process({::hiera::testing::hiera_bin(), "analyze", kernel, "--gpu", name}, "");
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
    EXPECT_EQ(r.out, by_id.out) << name;
  }
  const auto h200 = run_process({::hiera::testing::hiera_bin(), "analyze", kernel, "--gpu", "h200"}, "");
  EXPECT_NE(h200.out.find(" on h200"), std::string::npos) << h200.out;
  for (const char* name : {"H200", "NVIDIA H200", "nvidia-h200"}) {
    const auto r = run_process({::hiera::testing::hiera_bin(), "analyze", kernel, "--gpu", name}, "");
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
    EXPECT_EQ(r.out, h200.out) << name;
  }
}

TEST(AnalyzeCommand, BadUsageIsExitTwo) {
  const auto unsupported =
      run_process({::hiera::testing::hiera_bin(), "analyze", kFixtures + "../profiles/README.md"}, "");
  EXPECT_EQ(unsupported.exit_code, 2);
  EXPECT_NE(unsupported.err.find("not a CUDA (.cu, .cuh) or Python (.py) file"), std::string::npos) << unsupported.err;
  const auto gpu =
      run_process({::hiera::testing::hiera_bin(), "analyze", kFixtures + "launches.cu", "--gpu", "tpu9"}, "");
  EXPECT_EQ(gpu.exit_code, 2);
  EXPECT_NE(gpu.err.find("--gpu: unknown GPU \"tpu9\""), std::string::npos) << gpu.err;
  EXPECT_NE(gpu.err.find("; accepted: a knowledge GPU id (a100_sxm_80gb, h100_pcie, h100_sxm, h200, l40s, rtx_4090) or a name "
                         "such as \"H200\" or \"NVIDIA A100-SXM4-80GB\", in any case, or 'none'\n"),
            std::string::npos)
      << gpu.err;
  const auto missing = run_process({::hiera::testing::hiera_bin(), "analyze"}, "");
  EXPECT_EQ(missing.exit_code, 2);
  const auto unknown_flag =
      run_process({::hiera::testing::hiera_bin(), "analyze", kFixtures + "launches.cu", "--jsno"}, "");
  EXPECT_EQ(unknown_flag.exit_code, 2);
}

}  // namespace

namespace {

// An invalid UTF-8 byte in a kernel's name: the JSON carries U+FFFD in its
// place, and the command neither aborts nor fails.
TEST(AnalyzeCommand, InvalidUtf8InAKernelNameIsReplacedNotFatal) {
  const hiera::testing::TempDirectory dir("hiera-analyze-");
  const auto file = dir.path() / "bad.cu";
  std::ofstream(file, std::ios::binary) << "__global__ void scale\xff_kernel(float* x) { x[threadIdx.x] *= 2.0f; }\n";
  const auto json_run = run_process({::hiera::testing::hiera_bin(), "analyze", file.string(), "--json"}, "");
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  const json j = json::parse(json_run.out);  // valid UTF-8 throughout, or this throws
  ASSERT_EQ(j["kernels"].size(), 1u);
  EXPECT_EQ(j["kernels"][0]["name"], "scale\xef\xbf\xbd_kernel");
  const auto listing = run_process({::hiera::testing::hiera_bin(), "analyze", file.string()}, "");
  EXPECT_EQ(listing.exit_code, 0) << listing.err;
}

}  // namespace

TEST(AnalyzeCommand, MalformedAnnotationsAreProblemsInTheWordsOfOptimize) {
  const hiera::testing::TempDirectory dir("hiera-analyze-");
  const auto file = dir.path() / "bad.cu";
  std::ofstream(file) << "// hiera: size N=1024\n"
                         "// hiera: arg x in float32[N]\n"
                         "// hiera: launch grid=N/256\n"
                         "__global__ void first(float* x) { x[threadIdx.x] = 0; }\n";
  const auto text = run_process({::hiera::testing::hiera_bin(), "analyze", file.string(), "--gpu", "none"}, "");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(", 0 hints, 4 problems\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\nproblems\n"
                          "  1:1     launch contract: no arguments: annotate each kernel parameter, in order, e.g. "
                          "'// hiera: arg x input float32[N]'\n"
                          "  1:1     launch contract: no launch geometry: '// hiera: launch grid=(N+255)/256 block=256'\n"
                          "  2:17    unknown role 'in' (input, output, inout, scalar)\n"
                          "  3:11    launch needs block=...\n"),
            std::string::npos)
      << text.out;
  const auto r = run_process({::hiera::testing::hiera_bin(), "analyze", file.string(), "--json", "--gpu", "none"}, "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json problems = json::parse(r.out)["problems"];
  ASSERT_EQ(problems.size(), 4u) << problems.dump();
  EXPECT_EQ(problems[2], (json{{"message", "unknown role 'in' (input, output, inout, scalar)"},
                               {"range", {{"start", {{"line", 1}, {"character", 16}}}, {"end", {{"line", 1}, {"character", 18}}}}}}));
}
