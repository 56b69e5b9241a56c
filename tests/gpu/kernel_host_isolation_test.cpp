// CUDA candidates run in a kernel host of their own (engine/worker/kernel_host.h):
// a correct candidate passes through it and is timed, with the host's sandbox
// in the result; a kernel that writes past its own output faults in the host
// (it cannot reach the worker's reference outputs, kept outputs or timer) and
// fails as a runtime error while the worker goes on; a kernel that never ends
// times out, its host is killed, and the next evaluation of the same worker
// passes. Skips when no GPU is visible.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "worker_run.h"

namespace {

using hiera::testing::WorkerRequests;
using hiera::testing::WorkerRun;
using nlohmann::json;

const std::filesystem::path& cache_dir() { return hiera::testing::gpu_test_cache_dir(); }

WorkerRun run_worker(const WorkerRequests& requests) { return hiera::testing::run_worker_requests(requests, cache_dir()); }


const char* kReference = R"(
extern "C" __global__ void saxpy(float a, const float* x, const float* y, float* out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}
)";

const char* kCorrect = R"(
extern "C" __global__ void cand(float a, const float* __restrict__ x, const float* __restrict__ y,
                                float* __restrict__ out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = fmaf(a, x[i], y[i]);
}
)";

json task(const std::string& candidate, long long n = 1 << 20) {
  const json launch = {{"grid", {"(N+255)/256", "1", "1"}}, {"block", {"256", "1", "1"}}, {"shared_bytes", "0"}};
  json contract = {
      {"sizes", {{"N", n}}},
      {"args",
       {{{"name", "a"}, {"role", "scalar"}, {"type", "float32"}, {"value", "2.5"}},
        {{"name", "x"}, {"role", "input"}, {"type", "float32"}, {"extent", "N"}},
        {{"name", "y"}, {"role", "input"}, {"type", "float32"}, {"extent", "N"}},
        {{"name", "out"}, {"role", "output"}, {"type", "float32"}, {"extent", "N"}},
        {{"name", "n"}, {"role", "scalar"}, {"type", "int64"}, {"value", "N"}}}},
      {"reference_launch", launch},
      {"candidate_launch", launch},
      {"second_sizes", {{"N", 1000003}}},
      {"inout_allowed", false}};
  return {{"kind", "cuda"},
          {"reference", {{"source", kReference}, {"kernel", "saxpy"}, {"options", json::array()}}},
          {"candidate", {{"source", candidate}, {"kernel", "cand"}, {"options", json::array()}}},
          {"contract", contract},
          {"numerics", {{"atol", 1e-4}, {"rtol", 1e-4}}}};
}

json params(const json& t, long long launch_timeout_ms = 0) {
  json p = {{"task", t}, {"trials", 5}, {"timing_trials", 50}, {"seed", 1234}};
  if (launch_timeout_ms > 0) p["launch_timeout_ms"] = launch_timeout_ms;
  return p;
}

std::string failures_text(const json& result) {
  std::string text;
  for (const auto& f : result.value("failures", json::array())) text += f.value("check", "?") + ": " + f.value("message", "") + "\n";
  return text;
}

bool has_failure(const json& result, const std::string& check) {
  for (const auto& f : result.value("failures", json::array())) {
    if (f.value("check", "") == check) return true;
  }
  return false;
}

// The passing evaluation that follows an attack in the same worker.
void expect_passed(const json& reply) {
  const json& result = reply["result"];
  EXPECT_EQ(result["verdict"], "passed") << failures_text(result);
  EXPECT_FALSE(result.value("restart", false));
}

TEST(KernelHostGpu, ACorrectCandidatePassesThroughItsHostAndIsTimed) {
  REQUIRE_GPU();
  auto run = run_worker({{"evaluate", params(task(kCorrect))}});
  EXPECT_EQ(run.exit_code, 0) << run.log;
  ASSERT_EQ(run.replies.size(), 2u) << run.log;
  const json& result = run.replies[0]["result"];
  expect_passed(run.replies[0]);
  EXPECT_GT(result["timing"]["candidate"]["median_ms"].get<double>(), 0.0) << result.dump();
  EXPECT_GT(result["timing"]["reference"]["median_ms"].get<double>(), 0.0) << result.dump();
  ASSERT_TRUE(result.contains("sandbox")) << result.dump();
  for (const char* name : {"dies_with_parent", "no_network", "resource_limits", "unprivileged_user", "syscall_filter"}) {
    EXPECT_TRUE(result["sandbox"].contains(name)) << result["sandbox"].dump();
  }
  EXPECT_TRUE(result["phases_ms"].contains("host_start")) << result["phases_ms"].dump();
  std::cout << "sandbox: " << result["sandbox"].dump() << "\nphases_ms: " << result["phases_ms"].dump() << "\n";
}

// Writes a gigabyte past its output, as an attack scanning for the worker's
// buffers would: in the host nothing but its own arguments is mapped there.
const char* kWritesPastItsOutput = R"(
extern "C" __global__ void cand(float a, const float* x, const float* y, float* out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
  for (long long k = 1; k < 256; ++k) {
    if (i < n) out[i + k * (1LL << 20)] = 1.0f;
  }
})";

// Walks backwards from its output, where an allocator would have put the
// allocations made before it (the reference's buffers, in the worker).
const char* kWritesBeforeItsOutput = R"(
extern "C" __global__ void cand(float a, const float* x, const float* y, float* out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
  for (long long k = 1; k < 256; ++k) {
    if (i < n) out[i - k * (1LL << 20)] = 0.0f;
  }
})";

TEST(KernelHostGpu, AKernelWritingOutsideItsBuffersIsContainedAndTheWorkerGoesOn) {
  REQUIRE_GPU();
  auto run = run_worker({{"evaluate", params(task(kWritesPastItsOutput))},
                              {"evaluate", params(task(kWritesBeforeItsOutput))},
                              {"evaluate", params(task(kCorrect))}});
  EXPECT_EQ(run.exit_code, 0) << run.log;
  ASSERT_EQ(run.replies.size(), 4u) << run.log;
  for (int i = 0; i < 2; ++i) {
    const json& result = run.replies[i]["result"];
    EXPECT_EQ(result["verdict"], "failed") << i;
    EXPECT_TRUE(has_failure(result, "runtime")) << failures_text(result);
    EXPECT_NE(failures_text(result).find("illegal"), std::string::npos) << failures_text(result);
    EXPECT_FALSE(result.value("restart", false)) << i;
    EXPECT_TRUE(result.contains("sandbox")) << result.dump();
  }
  expect_passed(run.replies[2]);
}

TEST(KernelHostGpu, AKernelThatNeverEndsTimesOutAndTheNextEvaluationPasses) {
  REQUIRE_GPU();
  // Spins ~20 s (bounded, so a driver that fails to stop it frees the GPU anyway).
  const char* spinning = R"(
extern "C" __global__ void cand(float a, const float* x, const float* y, float* out, long long n) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    long long start = clock64();
    while (clock64() - start < 40000000000LL) {}
  }
})";
  const auto started = std::chrono::steady_clock::now();
  auto run = run_worker({{"evaluate", params(task(spinning, 1 << 16), 2000)}, {"evaluate", params(task(kCorrect))}});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(run.exit_code, 0) << run.log;
  ASSERT_EQ(run.replies.size(), 3u) << run.log;
  const json& result = run.replies[0]["result"];
  EXPECT_TRUE(has_failure(result, "timeout")) << failures_text(result);
  EXPECT_FALSE(result.value("restart", false));
  expect_passed(run.replies[1]);
  EXPECT_LT(seconds, 120.0);
}

}  // namespace
