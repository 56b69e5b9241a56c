// hiera-worker's profile on a real GPU, its hardware metrics (issue 3): a
// memory-bound copy kernel profiled through the job protocol reports DRAM
// throughput well above half the peak and above its SM throughput, or, where
// the machine does not allow CUPTI's range profiler, a metrics object that
// says why with one of the known reasons (the test prints which). Profiling
// twice and evaluating afterwards show the profiler leaves the worker as it
// found it. Skips when no GPU is visible.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "temp_directory.h"
#include "worker_run.h"

namespace {

using hiera::testing::WorkerRequests;
using hiera::testing::WorkerRun;
using nlohmann::json;

const std::filesystem::path& metrics_cache_dir() {
  static const hiera::testing::TempDirectory dir("hiera-gpu-metrics-cache-");
  return dir.path();
}

// One worker over the requests (ids 1..n) and a shutdown.
WorkerRun run_worker(const WorkerRequests& requests) {
  return hiera::testing::run_worker_requests(requests, metrics_cache_dir());
}

bool worker_has_gpu() {
  static const bool has = [] {
    auto r = run_worker({{"hello", {{"engine_version", "0.1.0"}}}});
    return !r.replies.empty() && r.replies[0].contains("result") && r.replies[0]["result"]["cuda"] == true;
  }();
  return has;
}

const char* kCopy = R"(
extern "C" __global__ void copy(const float* in, float* out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}
)";

const char* kCopyStride = R"(
extern "C" __global__ void copy_stride(const float* __restrict__ in, float* __restrict__ out, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    out[i] = in[i];
  }
}
)";

// 128 MiB in and out: well past any L2, so the copy streams through DRAM.
constexpr long long kElements = 1LL << 25;

json copy_task() {
  json contract = {
      {"sizes", {{"N", kElements}}},
      {"args",
       {{{"name", "in"}, {"role", "input"}, {"type", "float32"}, {"extent", "N"}},
        {{"name", "out"}, {"role", "output"}, {"type", "float32"}, {"extent", "N"}},
        {{"name", "n"}, {"role", "scalar"}, {"type", "int64"}, {"value", "N"}}}},
      {"reference_launch", {{"grid", {"(N+255)/256", "1", "1"}}, {"block", {"256", "1", "1"}}, {"shared_bytes", "0"}}},
      {"candidate_launch", {{"grid", {"1056", "1", "1"}}, {"block", {"512", "1", "1"}}, {"shared_bytes", "0"}}},
      {"flops", "0"},
      {"bytes", "8*N"},
      {"inout_allowed", false}};
  return {{"kind", "cuda"},
          {"reference", {{"source", kCopy}, {"kernel", "copy"}, {"options", json::array()}}},
          {"candidate", {{"source", kCopyStride}, {"kernel", "copy_stride"}, {"options", json::array()}}},
          {"contract", contract},
          {"numerics", {{"atol", 0.0}, {"rtol", 0.0}}}};
}

// The leading words of the reasons a machine may legitimately give (see
// JOB_PROTOCOL.md, profile). "the CUPTI range profiler failed" is not among
// them: it means the collection itself went wrong.
const std::vector<std::string_view> kKnownReasons = {
    "GPU performance counters are restricted to administrators on this machine",
    "GPU performance counters are in use by another profiler",
    "hardware metrics are not supported on this device",
    "CUPTI's metric library libnvperf_host.so could not be loaded",
};

void expect_metrics_or_known_reason(const std::string& which, const json& result) {
  ASSERT_TRUE(result.contains("metrics")) << result.dump();
  const json& metrics = result["metrics"];
  ASSERT_TRUE(metrics.is_object()) << metrics.dump();
  if (metrics.contains("unavailable")) {
    ASSERT_TRUE(metrics["unavailable"].is_string()) << metrics.dump();
    const std::string reason = metrics["unavailable"].get<std::string>();
    std::printf("%s metrics unavailable: %s\n", which.c_str(), reason.c_str());
    bool known = false;
    for (const auto lead : kKnownReasons) known = known || reason.rfind(lead, 0) == 0;
    EXPECT_TRUE(known) << "an unexpected reason: " << reason;
    EXPECT_EQ(metrics.size(), 1u) << metrics.dump();
    return;
  }
  std::printf("%s metrics: %s\n", which.c_str(), metrics.dump().c_str());
  EXPECT_EQ(metrics["source"], "CUPTI range profiler");
  EXPECT_EQ(metrics["ranges"], 1) << "one kernel launch in the profiled region";
  EXPECT_GE(metrics["passes"].get<int>(), 1);
  const double dram = metrics["dram_throughput_pct"].get<double>();
  const double sm = metrics["sm_throughput_pct"].get<double>();
  const double occupancy = metrics["achieved_occupancy_pct"].get<double>();
  EXPECT_GT(dram, 50.0) << "a streaming copy keeps DRAM busy";
  EXPECT_LE(dram, 100.5);
  EXPECT_LT(sm, dram) << "a copy is bound by memory, not by the SMs";
  EXPECT_GT(occupancy, 0.0);
  EXPECT_LE(occupancy, 100.5);
  // The profiler's own duration agrees with the activity trace's within reason
  // (replay adds cache and clock differences, not an order of magnitude).
  ASSERT_TRUE(metrics["duration_ns"].is_number_integer()) << metrics.dump();
  const double profiled_ns = metrics["duration_ns"].get<double>();
  const double traced_ns = result["kernels"][0]["total_ns"].get<double>();
  EXPECT_GT(profiled_ns, traced_ns / 3.0) << metrics.dump() << " vs " << result["kernels"].dump();
  EXPECT_LT(profiled_ns, traced_ns * 3.0) << metrics.dump() << " vs " << result["kernels"].dump();
}

TEST(WorkerGpuMetrics, ACopyKernelIsMemoryBoundOrTheMetricsSayWhyNot) {
  if (!worker_has_gpu()) GTEST_SKIP() << "hiera-worker sees no CUDA device";
  const json task = copy_task();
  auto r = run_worker({{"profile", {{"task", task}, {"which", "reference"}}},
                       {"profile", {{"task", task}, {"which", "candidate"}}},
                       {"evaluate", {{"task", task}, {"trials", 5}, {"timing_trials", 50}, {"seed", 7}}}});
  ASSERT_EQ(r.replies.size(), 4u) << r.log;
  EXPECT_EQ(r.exit_code, 0) << r.log;

  for (int i = 0; i < 2; ++i) {
    const std::string which = i == 0 ? "reference" : "candidate";
    const json& reply = r.replies[static_cast<std::size_t>(i)];
    ASSERT_TRUE(reply.contains("result")) << which << ": " << reply.dump() << "\n" << r.log;
    const json& kernels = reply["result"]["kernels"];
    ASSERT_EQ(kernels.size(), 1u) << kernels.dump();
    EXPECT_EQ(kernels[0]["name"], i == 0 ? "copy" : "copy_stride");
    EXPECT_EQ(kernels[0]["calls"], 1) << "the metric pass stays out of the activity trace";
    expect_metrics_or_known_reason(which, reply["result"]);
  }
  // Both sides got the same answer about availability: it is the machine's, not the kernel's.
  EXPECT_EQ(r.replies[0]["result"]["metrics"].contains("unavailable"), r.replies[1]["result"]["metrics"].contains("unavailable"));

  // The worker goes on as before: the same task verifies and is timed.
  const json& evaluation = r.replies[2];
  ASSERT_TRUE(evaluation.contains("result")) << evaluation.dump();
  EXPECT_EQ(evaluation["result"]["verdict"], "passed") << evaluation.dump();
  EXPECT_TRUE(evaluation["result"].contains("timing")) << evaluation.dump();
}

}  // namespace
