// hiera-worker on a real GPU, driven through the job protocol as the engine
// drives it: correct candidates pass and are timed; each verification rule
// rejects the adversarial candidate made to break it; a faulting or hung
// kernel is reported and only its kernel host ends (the worker serves the next
// job without a restart); the probe and
// the profile report plausible numbers. Skips when no GPU is visible.
#include <gtest/gtest.h>

#include <filesystem>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "worker_run.h"

namespace {

using hiera::testing::WorkerRequests;
using hiera::testing::WorkerRun;
using nlohmann::json;

const std::filesystem::path& cache_dir() { return hiera::testing::gpu_test_cache_dir(); }

// Runs a worker over the requests (ids 1..n) and collects every reply.
WorkerRun run_worker(const WorkerRequests& requests, bool then_shutdown = true) {
  return hiera::testing::run_worker_requests(requests, cache_dir(), then_shutdown);
}

const json& hello() { return hiera::testing::worker_hello(); }

const char* kSaxpyReference = R"(
extern "C" __global__ void saxpy(float a, const float* x, const float* y, float* out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}
)";

// Correct, and shaped differently: a grid-stride loop over a fixed grid.
const char* kSaxpyGridStride = R"(
extern "C" __global__ void saxpy_stride(float a, const float* __restrict__ x, const float* __restrict__ y,
                                        float* __restrict__ out, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    out[i] = fmaf(a, x[i], y[i]);
  }
}
)";

json saxpy_contract(long long n, long long second_n) {
  json contract = {
      {"sizes", {{"N", n}}},
      {"args",
       {{{"name", "a"}, {"role", "scalar"}, {"type", "float32"}, {"value", "2.5"}},
        {{"name", "x"}, {"role", "input"}, {"type", "float32"}, {"extent", "N"}},
        {{"name", "y"}, {"role", "input"}, {"type", "float32"}, {"extent", "N"}},
        {{"name", "out"}, {"role", "output"}, {"type", "float32"}, {"extent", "N"}},
        {{"name", "n"}, {"role", "scalar"}, {"type", "int64"}, {"value", "N"}}}},
      {"reference_launch", {{"grid", {"(N+255)/256", "1", "1"}}, {"block", {"256", "1", "1"}}, {"shared_bytes", "0"}}},
      {"candidate_launch", {{"grid", {"264"}}, {"block", {"256"}}, {"shared_bytes", "0"}}},
      {"flops", "2*N"},
      {"bytes", "12*N"},
      {"inout_allowed", false}};
  if (second_n > 0) contract["second_sizes"] = {{"N", second_n}};
  return contract;
}

json saxpy_task(const std::string& candidate_source, const std::string& candidate_kernel, long long n = 1 << 22,
                long long second_n = 1000003) {
  json contract = saxpy_contract(n, second_n);
  if (candidate_kernel == "saxpy") contract["candidate_launch"] = contract["reference_launch"];
  return {{"kind", "cuda"},
          {"reference", {{"source", kSaxpyReference}, {"kernel", "saxpy"}, {"options", json::array()}}},
          {"candidate", {{"source", candidate_source}, {"kernel", candidate_kernel}, {"options", json::array()}}},
          {"contract", contract},
          {"numerics", {{"atol", 1e-4}, {"rtol", 1e-4}}}};
}

json evaluate_params(const json& task) { return {{"task", task}, {"trials", 5}, {"timing_trials", 50}, {"seed", 1234}}; }

// The failures of a result, as "check: message" lines for assertion output.
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

// ---------------------------------------------------------------- passing

TEST(WorkerGpu, ACorrectSaxpyCandidatePassesEveryRuleAndIsTimed) {
  REQUIRE_GPU();
  // 16M elements: 200 MB, well past the L2, so the time is the memory's.
  auto run = run_worker({{"evaluate", evaluate_params(saxpy_task(kSaxpyGridStride, "saxpy_stride", 1 << 24))}});
  ASSERT_EQ(run.replies.size(), 2u) << run.log;
  EXPECT_EQ(run.exit_code, 0) << run.log;
  const json& result = run.replies[0]["result"];
  ASSERT_EQ(result["verdict"], "passed") << failures_text(result) << run.replies[0].dump();
  ASSERT_EQ(result["trials"].size(), 6u);  // 5 at the main size and one at the second
  EXPECT_EQ(result["trials"][0]["distribution"], "uniform");
  EXPECT_EQ(result["trials"][1]["distribution"], "normal");
  EXPECT_EQ(result["trials"][2]["distribution"], "large");
  EXPECT_EQ(result["trials"][0]["seed"], 1234);
  EXPECT_EQ(result["trials"][5]["sizes"]["N"], 1000003);
  for (const auto& trial : result["trials"]) EXPECT_EQ(trial["mismatches"], 0);
  const json& timing = result["timing"];
  EXPECT_EQ(timing["reference"]["trials"], 50);
  EXPECT_EQ(timing["candidate"]["trials"], 50);
  for (const char* side : {"reference", "candidate"}) {
    const json& t = timing[side];
    EXPECT_GT(t["median_ms"].get<double>(), 0.0);
    EXPECT_LE(t["min_ms"].get<double>(), t["p10_ms"].get<double>());
    EXPECT_LE(t["p10_ms"].get<double>(), t["median_ms"].get<double>());
    EXPECT_LE(t["median_ms"].get<double>(), t["p90_ms"].get<double>());
  }
  EXPECT_GT(timing["speedup"].get<double>(), 0.2);
  EXPECT_LT(timing["speedup"].get<double>(), 5.0);
  ASSERT_TRUE(result.contains("speed_of_light_ms"));
  // 12 bytes per element at about 4 TB/s: some 0.05 ms.
  EXPECT_GT(result["speed_of_light_ms"].get<double>(), 0.01);
  EXPECT_LT(result["speed_of_light_ms"].get<double>(), 1.0);
  std::printf("saxpy N=16M: reference %.4f ms, candidate %.4f ms, speed of light %.4f ms\n",
              timing["reference"]["median_ms"].get<double>(), timing["candidate"]["median_ms"].get<double>(),
              result["speed_of_light_ms"].get<double>());
}

const char* kRowSumReference = R"(
extern "C" __global__ void row_sum(const float* in, float* out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float s = 0.0f;
  for (int c = 0; c < cols; ++c) s += in[(long long)r * cols + c];
  out[r] = s;
}
)";

// One warp per row, shuffles to combine: a different summation order, still deterministic.
const char* kRowSumWarp = R"(
template <typename T>
__device__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}
__global__ void row_sum_warp(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x % 32;
  if (warp >= rows) return;
  float s = 0.0f;
  for (int c = lane; c < cols; c += 32) s += in[(long long)warp * cols + c];
  s = warp_sum(s);
  if (lane == 0) out[warp] = s;
}
)";

TEST(WorkerGpu, ACorrectReductionCandidatePasses) {
  REQUIRE_GPU();
  json task = {{"kind", "cuda"},
               {"reference", {{"source", kRowSumReference}, {"kernel", "row_sum"}}},
               // Not extern "C": found through its mangled name.
               {"candidate", {{"source", kRowSumWarp}, {"kernel", "row_sum_warp"}}},
               {"contract",
                {{"sizes", {{"R", 65536}, {"C", 256}}},
                 {"second_sizes", {{"R", 1001}, {"C", 77}}},
                 {"args",
                  {{{"name", "in"}, {"role", "input"}, {"type", "float32"}, {"extent", "R*C"}},
                   {{"name", "out"}, {"role", "output"}, {"type", "float32"}, {"extent", "R"}},
                   {{"name", "rows"}, {"role", "scalar"}, {"type", "int32"}, {"value", "R"}},
                   {{"name", "cols"}, {"role", "scalar"}, {"type", "int32"}, {"value", "C"}}}},
                 {"reference_launch", {{"grid", {"(R+127)/128"}}, {"block", {"128"}}}},
                 {"candidate_launch", {{"grid", {"(R*32+255)/256"}}, {"block", {"256"}}}},
                 {"flops", "R*C"},
                 {"bytes", "4*R*C + 4*R"}}},
               // Summation order differs: an absolute tolerance for sums near zero of large values.
               {"numerics", {{"atol", 0.5}, {"rtol", 1e-3}}}};
  auto run = run_worker({{"evaluate", evaluate_params(task)}});
  ASSERT_GE(run.replies.size(), 1u) << run.log;
  const json& result = run.replies[0]["result"];
  EXPECT_EQ(result["verdict"], "passed") << failures_text(result) << run.replies[0].dump();
  EXPECT_TRUE(result.contains("timing"));
}

// ---------------------------------------------------------------- adversarial

struct Adversary {
  const char* name;
  const char* source;
  const char* check;  // the failure it must produce
};

const Adversary kAdversaries[] = {
    {"wrong values", R"(
extern "C" __global__ void cand(float a, const float* x, const float* y, float* out, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    out[i] = a * x[i] + y[i] + 1e-2f;
})",
     "values"},
    {"writes half the output", R"(
extern "C" __global__ void cand(float a, const float* x, const float* y, float* out, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n / 2; i += (long long)gridDim.x * blockDim.x)
    out[i] = a * x[i] + y[i];
})",
     "unwritten_output"},
    {"mutates an input", R"(
extern "C" __global__ void cand(float a, float* x, const float* y, float* out, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    out[i] = a * x[i] + y[i];
    x[i] = 0.0f;
  }
})",
     "input_mutation"},
    {"keeps state between calls", R"(
__device__ unsigned int seen[1 << 22];  // one counter per element: no race, the second call differs
extern "C" __global__ void cand(float a, const float* x, const float* y, float* out, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned int calls = seen[i]++;
    out[i] = a * x[i] + y[i] + (calls > 0 ? 1.0f : 0.0f);
  }
})",
     "determinism"},
    {"NaN where the reference has none", R"(
extern "C" __global__ void cand(float a, const float* x, const float* y, float* out, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    out[i] = (i == 12345) ? __int_as_float(0x7fc00000) : a * x[i] + y[i];
})",
     "nan_inf"},
    {"converts to fp16 without permission", R"(
#include <cuda_fp16.h>
extern "C" __global__ void cand(float a, const float* x, const float* y, float* out, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    out[i] = __half2float(__float2half(a * x[i] + y[i]));
})",
     "static"},
    {"synchronises the device", R"(
extern "C" __global__ void cand(float a, const float* x, const float* y, float* out, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    out[i] = a * x[i] + y[i];
}
void helper() { cudaStream_t s; cudaStreamCreate(&s); cudaDeviceSynchronize(); }
)",
     "static"},
    {"does not compile", R"(
extern "C" __global__ void cand(float a, const float* x, const float* y, float* out, long long n) {
  out[0] = missing_variable;
})",
     "compile"},
};

TEST(WorkerGpu, EachVerificationRuleRejectsItsAdversary) {
  REQUIRE_GPU();
  std::vector<std::pair<std::string, json>> requests;
  for (const auto& adversary : kAdversaries) requests.push_back({"evaluate", evaluate_params(saxpy_task(adversary.source, "cand"))});
  auto run = run_worker(requests);
  ASSERT_EQ(run.replies.size(), requests.size() + 1) << run.log;
  EXPECT_EQ(run.exit_code, 0) << run.log;
  for (std::size_t i = 0; i < std::size(kAdversaries); ++i) {
    const json& reply = run.replies[i];
    ASSERT_TRUE(reply.contains("result")) << kAdversaries[i].name << ": " << reply.dump();
    const json& result = reply["result"];
    EXPECT_EQ(result["verdict"], "failed") << kAdversaries[i].name;
    EXPECT_TRUE(has_failure(result, kAdversaries[i].check))
        << kAdversaries[i].name << " should fail '" << kAdversaries[i].check << "', got:\n" << failures_text(result);
    EXPECT_FALSE(result.contains("timing")) << kAdversaries[i].name;
    EXPECT_FALSE(result.value("restart", false)) << kAdversaries[i].name;
  }
  // The state-keeping candidate is right on its first run: only determinism catches it.
  EXPECT_FALSE(has_failure(run.replies[3]["result"], "values")) << failures_text(run.replies[3]["result"]);
}

TEST(WorkerGpu, ATooLargeContractIsOutOfMemoryAndTheWorkerGoesOn) {
  REQUIRE_GPU();
  // 40e9 floats = 160 GB per buffer: more than an H200 holds.
  json huge = saxpy_task(kSaxpyGridStride, "saxpy_stride", 40000000000LL, 0);
  auto run = run_worker({{"evaluate", evaluate_params(huge)},
                              {"evaluate", evaluate_params(saxpy_task(kSaxpyGridStride, "saxpy_stride", 1 << 24, 0))}});
  ASSERT_EQ(run.replies.size(), 3u) << run.log;
  EXPECT_EQ(run.exit_code, 0) << run.log;
  const json& oom = run.replies[0]["result"];
  EXPECT_EQ(oom["verdict"], "failed");
  ASSERT_TRUE(has_failure(oom, "runtime")) << failures_text(oom);
  EXPECT_NE(failures_text(oom).find("out of memory"), std::string::npos) << failures_text(oom);
  EXPECT_FALSE(oom.value("restart", false));
  EXPECT_EQ(run.replies[1]["result"]["verdict"], "passed") << failures_text(run.replies[1]["result"]);
}

TEST(WorkerGpu, AnIllegalAddressIsReportedAndOnlyItsKernelHostEnds) {
  REQUIRE_GPU();
  const char* faulting = R"(
extern "C" __global__ void cand(float a, const float* x, const float* y, float* out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i + (1LL << 40)] = a * x[i] + y[i];
})";
  // The fault is the kernel host's context's: the worker answers the shutdown after it and exits 0.
  auto run = run_worker({{"evaluate", evaluate_params(saxpy_task(faulting, "cand"))}});
  EXPECT_EQ(run.exit_code, 0) << run.log;
  ASSERT_EQ(run.replies.size(), 2u) << run.log;
  const json& result = run.replies[0]["result"];
  EXPECT_EQ(result["verdict"], "failed");
  EXPECT_TRUE(has_failure(result, "runtime")) << failures_text(result);
  EXPECT_NE(failures_text(result).find("illegal"), std::string::npos) << failures_text(result);
  EXPECT_FALSE(result.contains("restart")) << result.dump();
}

TEST(WorkerGpu, AKernelThatNeverEndsTimesOutAndOnlyItsKernelHostEnds) {
  REQUIRE_GPU();
  // Spins ~20 s (bounded, so a driver that fails to stop it frees the GPU anyway).
  const char* spinning = R"(
extern "C" __global__ void cand(float a, const float* x, const float* y, float* out, long long n) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    long long start = clock64();
    while (clock64() - start < 40000000000LL) {}
  }
})";
  json params = evaluate_params(saxpy_task(spinning, "cand", 1 << 16, 0));
  params["launch_timeout_ms"] = 2000;
  const auto started = std::chrono::steady_clock::now();
  auto run = run_worker({{"evaluate", params}});
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(run.exit_code, 0) << run.log;
  ASSERT_EQ(run.replies.size(), 2u) << run.log;
  const json& result = run.replies[0]["result"];
  EXPECT_TRUE(has_failure(result, "timeout")) << failures_text(result);
  EXPECT_FALSE(result.contains("restart")) << result.dump();
  EXPECT_LT(seconds, 60.0);
}

TEST(WorkerGpu, AMeasurementFasterThanTheSpeedOfLightIsRejected) {
  REQUIRE_GPU();
  // A contract that claims 1000x the bytes the kernel moves: the correct
  // candidate now looks impossibly fast.
  json task = saxpy_task(kSaxpyGridStride, "saxpy_stride", 1 << 24, 0);
  task["contract"]["bytes"] = "12000*N";
  auto run = run_worker({{"evaluate", evaluate_params(task)}});
  ASSERT_GE(run.replies.size(), 1u) << run.log;
  const json& result = run.replies[0]["result"];
  EXPECT_EQ(result["verdict"], "failed");
  EXPECT_TRUE(has_failure(result, "speed_of_light")) << failures_text(result);
}

// ---------------------------------------------------------------- timing, probe, profile

TEST(WorkerGpu, TheSameKernelTimedTwiceAgreesWithinItsSpread) {
  REQUIRE_GPU();
  json task = saxpy_task(kSaxpyReference, "saxpy", 1 << 24, 0);
  auto run = run_worker({{"evaluate", evaluate_params(task)}});
  ASSERT_GE(run.replies.size(), 1u) << run.log;
  const json& result = run.replies[0]["result"];
  ASSERT_EQ(result["verdict"], "passed") << failures_text(result);
  const json& a = result["timing"]["reference"];
  const json& b = result["timing"]["candidate"];
  const double slack = 0.02 * a["median_ms"].get<double>();  // event resolution and clock drift
  EXPECT_GE(b["median_ms"].get<double>(), a["p10_ms"].get<double>() - slack) << result["timing"].dump();
  EXPECT_LE(b["median_ms"].get<double>(), a["p90_ms"].get<double>() + slack) << result["timing"].dump();
  EXPECT_GE(a["median_ms"].get<double>(), b["p10_ms"].get<double>() - slack) << result["timing"].dump();
  EXPECT_LE(a["median_ms"].get<double>(), b["p90_ms"].get<double>() + slack) << result["timing"].dump();
  std::printf("same kernel twice: %s\n", result["timing"].dump().c_str());
}

TEST(WorkerGpu, ProbeMeasuresPlausibleCeilingsAndCachesThem) {
  REQUIRE_GPU();
  auto run = run_worker({{"probe", json::object()}, {"probe", json::object()}});
  ASSERT_EQ(run.replies.size(), 3u) << run.log;
  const json& probe = run.replies[0]["result"];
  ASSERT_TRUE(probe.contains("measured")) << run.replies[0].dump();
  std::printf("probe: %s\n", probe.dump().c_str());
  EXPECT_GT(probe["sm_count"].get<int>(), 0);
  EXPECT_GT(probe["l2_bytes"].get<long long>(), 0);
  EXPECT_GT(probe["memory_bytes"].get<long long>(), 0);
  EXPECT_FALSE(probe["driver"].get<std::string>().empty());
  const json& measured = probe["measured"];
  EXPECT_GT(measured["copy_gbs"].get<double>(), 500.0);
  EXPECT_LT(measured["copy_gbs"].get<double>(), 20000.0);
  for (const char* dtype : {"float32", "tf32", "float16", "bfloat16"}) {
    EXPECT_GT(measured["gemm_tflops"][dtype].get<double>(), 1.0) << dtype;
  }
  EXPECT_GT(measured["gemm_tflops"]["bfloat16"].get<double>(), measured["gemm_tflops"]["float32"].get<double>());
  EXPECT_EQ(run.replies[1]["result"]["cached"], true);
  EXPECT_EQ(run.replies[1]["result"]["measured"], measured);
}

TEST(WorkerGpu, ProfileListsTheKernelThatRan) {
  REQUIRE_GPU();
  json task = saxpy_task(kSaxpyGridStride, "saxpy_stride", 1 << 22, 0);
  auto run = run_worker({{"profile", {{"task", task}, {"which", "reference"}}},
                              {"profile", {{"task", task}, {"which", "candidate"}}}});
  ASSERT_EQ(run.replies.size(), 3u) << run.log;
  const json& reference = run.replies[0];
  ASSERT_TRUE(reference.contains("result")) << reference.dump();
  std::printf("profile: %s\n", reference["result"].dump().c_str());
  const json& kernels = reference["result"]["kernels"];
  ASSERT_EQ(kernels.size(), 1u) << kernels.dump();
  EXPECT_EQ(kernels[0]["name"], "saxpy");
  EXPECT_EQ(kernels[0]["grid"], json({(1 << 22) / 256, 1, 1}));
  EXPECT_EQ(kernels[0]["block"], json({256, 1, 1}));
  EXPECT_EQ(kernels[0]["calls"], 1);
  EXPECT_GT(kernels[0]["total_ns"].get<long long>(), 0);
  EXPECT_EQ(kernels[0]["mean_ns"], kernels[0]["total_ns"]);
  // Hardware metrics, or why there are none (worker_profile_metrics_test checks their values).
  const json& metrics = reference["result"]["metrics"];
  EXPECT_TRUE(metrics.contains("unavailable") || metrics.contains("dram_throughput_pct")) << metrics.dump();
  const json& candidate = run.replies[1]["result"]["kernels"];
  ASSERT_EQ(candidate.size(), 1u) << run.replies[1].dump();
  EXPECT_EQ(candidate[0]["name"], "saxpy_stride");
  EXPECT_EQ(candidate[0]["grid"], json({264, 1, 1}));
}

TEST(WorkerGpu, HelloNamesTheDevice) {
  REQUIRE_GPU();
  const json& result = hello()["result"];
  EXPECT_FALSE(result["device"]["name"].get<std::string>().empty());
  EXPECT_EQ(result["device"]["index"], 0);
  std::printf("hello: %s\n", result.dump().c_str());
}

}  // namespace
