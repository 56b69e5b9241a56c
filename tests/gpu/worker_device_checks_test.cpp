// hiera-worker's evaluate with verification on the device, end to end: the
// result reports where its time went ("phases_ms"), and a failure message
// quotes the reference's output computed from inputs the host generator
// reproduces exactly, so the GPU generated the documented values. Skips when
// no GPU is visible.
#ifdef HIERA_WORKER_BIN
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/worker/input_generator.h"
#include "engine/worker/output_checks.h"
#include "protocol/framing.h"
#include "subprocess.h"

namespace {

using hiera::testing::run_process;
using nlohmann::json;
namespace worker = hiera::engine::worker;

// Runs a worker over `evaluate` requests and returns its replies (shutdown's last).
std::vector<json> evaluate_all(const std::vector<json>& params, std::string* log) {
  static const std::filesystem::path cache = [] {
    std::random_device entropy;
    auto path = std::filesystem::temp_directory_path() / ("hiera-device-checks-test-" + std::to_string(entropy()));
    std::filesystem::create_directories(path);
    return path;
  }();
  std::string input;
  int id = 0;
  for (const auto& p : params) {
    input += hiera::protocol::FrameWriter::encode(
        json{{"jsonrpc", "2.0"}, {"id", ++id}, {"method", "evaluate"}, {"params", p}}.dump());
  }
  input += hiera::protocol::FrameWriter::encode(json{{"jsonrpc", "2.0"}, {"id", ++id}, {"method", "shutdown"}}.dump());
  const auto r = run_process({HIERA_WORKER_BIN, "--cache-dir", cache.string(), "--device", "0"}, input, std::chrono::seconds(300));
  *log = r.err;
  std::vector<json> replies;
  hiera::protocol::FrameReader reader;
  reader.feed(r.out);
  while (auto event = reader.next()) {
    if (auto* frame = std::get_if<hiera::protocol::Frame>(&*event)) replies.push_back(json::parse(frame->body));
  }
  return replies;
}

bool have_gpu() {
  static const bool yes = [] {
    auto r = run_process({HIERA_WORKER_BIN, "--device", "0"},
                         hiera::protocol::FrameWriter::encode(
                             json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "hello"}, {"params", {{"engine_version", "0.1.0"}}}}.dump()),
                         std::chrono::seconds(60));
    return r.out.find("\"cuda\":true") != std::string::npos;
  }();
  return yes;
}

const char* kReference = R"(
extern "C" __global__ void saxpy(float a, const float* x, const float* y, float* out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}
)";

// Right everywhere but the last element, which it never writes.
const char* kSkipsTheLast = R"(
extern "C" __global__ void cand(float a, const float* x, const float* y, float* out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n - 1) out[i] = a * x[i] + y[i];
}
)";

json task(const char* candidate, const char* kernel, long long n) {
  const json launch = {{"grid", {"(N+255)/256", "1", "1"}}, {"block", {"256", "1", "1"}}, {"shared_bytes", "0"}};
  return {{"kind", "cuda"},
          {"reference", {{"source", kReference}, {"kernel", "saxpy"}}},
          {"candidate", {{"source", candidate}, {"kernel", kernel}}},
          {"contract",
           {{"sizes", {{"N", n}}},
            {"args",
             {{{"name", "a"}, {"role", "scalar"}, {"type", "float32"}, {"value", "2.5"}},
              {{"name", "x"}, {"role", "input"}, {"type", "float32"}, {"extent", "N"}},
              {{"name", "y"}, {"role", "input"}, {"type", "float32"}, {"extent", "N"}},
              {{"name", "out"}, {"role", "output"}, {"type", "float32"}, {"extent", "N"}},
              {{"name", "n"}, {"role", "scalar"}, {"type", "int64"}, {"value", "N"}}}},
            {"reference_launch", launch},
            {"candidate_launch", launch},
            {"flops", "2*N"},
            {"bytes", "12*N"}}},
          {"numerics", {{"atol", 1e-4}, {"rtol", 1e-4}}}};
}

TEST(WorkerDeviceChecks, AnEvaluationReportsItsPhases) {
  if (!have_gpu()) GTEST_SKIP() << "hiera-worker sees no CUDA device";
  std::string log;
  const auto replies = evaluate_all({{{"task", task(kReference, "saxpy", 1 << 24)}, {"seed", 1234}},
                                     {{"task", task(kSkipsTheLast, "cand", 1 << 20)}, {"seed", 1234}}},
                                    &log);
  ASSERT_EQ(replies.size(), 3u) << log;
  const json& passed = replies[0]["result"];
  ASSERT_EQ(passed["verdict"], "passed") << passed.dump();
  const json& phases = passed["phases_ms"];
  for (const char* phase : {"compile", "verify", "time"}) {
    ASSERT_TRUE(phases.contains(phase)) << phases.dump();
    EXPECT_GT(phases[phase].get<double>(), 0.0) << phase;
  }
  // host_start: taking the kernel host the candidate runs in (a spare is started ahead, so it may be near 0).
  ASSERT_TRUE(phases.contains("host_start")) << phases.dump();
  EXPECT_GE(phases["host_start"].get<double>(), 0.0);
  EXPECT_EQ(phases.size(), 4u);
  std::printf("saxpy N=16M, phases: compile %.1f ms, verify %.1f ms, time %.1f ms, host start %.1f ms\n",
              phases["compile"].get<double>(), phases["verify"].get<double>(), phases["time"].get<double>(),
              phases["host_start"].get<double>());
  // A failed verification has no timing phase.
  const json& failed = replies[1]["result"];
  EXPECT_EQ(failed["verdict"], "failed");
  EXPECT_EQ(failed["phases_ms"]["time"], 0.0);
  EXPECT_GT(failed["phases_ms"]["verify"].get<double>(), 0.0);
}

TEST(WorkerDeviceChecks, AMessageQuotesTheReferenceOnTheHostGeneratorsInputs) {
  if (!have_gpu()) GTEST_SKIP() << "hiera-worker sees no CUDA device";
  const long long n = 1 << 20;
  std::string log;
  const auto replies = evaluate_all({{{"task", task(kSkipsTheLast, "cand", n)}, {"seed", 1234}}}, &log);
  ASSERT_EQ(replies.size(), 2u) << log;
  const json& result = replies[0]["result"];
  ASSERT_EQ(result["failures"].size(), 1u) << result.dump();
  const json& failure = result["failures"][0];
  EXPECT_EQ(failure["check"], "unwritten_output");
  // Trial 0 (uniform, seed 1234): x and y are arguments 1 and 2.
  const auto element = [&](std::size_t argument) {
    const auto bits = worker::random_element(worker::ScalarType::Float32, static_cast<std::uint64_t>(n - 1),
                                             worker::Distribution::Uniform, worker::argument_seed(1234, argument));
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
  };
  const float x = element(1), y = element(2);
  // NVRTC contracts a * x + y into one FMA by default; either rounding is the reference's.
  const std::string prefix = "trial 0 (uniform, seed 1234, N=1048576): 'out': 1 of 1048576 elements were never written "
                             "by the candidate; first [1048575]: expected ";
  const std::string fused = prefix + worker::format_value(std::fmaf(2.5f, x, y)) + ", never written";
  const std::string separate = prefix + worker::format_value(2.5f * x + y) + ", never written";
  const std::string message = failure["message"].get<std::string>();
  EXPECT_TRUE(message == fused || message == separate) << message << "\nexpected\n" << fused << "\nor\n" << separate;
  EXPECT_EQ(result["trials"][0]["mismatches"], 1);
}

}  // namespace
#endif  // HIERA_WORKER_BIN
