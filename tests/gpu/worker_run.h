#pragma once
// For the GPU tests that drive hiera-worker as a process through the job
// protocol, as the engine does: one worker run over a list of requests, with
// its replies, its log and its exit, and a cache directory that lives as long
// as the test binary.
#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "protocol/framing.h"
#include "subprocess.h"
#include "temp_directory.h"

namespace hiera::testing {

struct WorkerRun {
  int exit_code = -1;
  bool timed_out = false;
  std::vector<nlohmann::json> replies;
  std::string log;  // the worker's stderr
};

// (method, params) in the order sent; the ids are 1..n.
using WorkerRequests = std::vector<std::pair<std::string, nlohmann::json>>;

// Runs `hiera-worker --cache-dir CACHE --device 0` over the requests, and a
// shutdown after them unless told not to, and collects every reply; anything
// on its stdout that is not a frame fails the test.
inline WorkerRun run_worker_requests(const WorkerRequests& requests, const std::filesystem::path& cache_dir,
                                        bool then_shutdown = true) {
  using nlohmann::json;
  std::string input;
  int id = 0;
  for (const auto& [method, params] : requests) {
    input += protocol::FrameWriter::encode(
        json{{"jsonrpc", "2.0"}, {"id", ++id}, {"method", method}, {"params", params}}.dump());
  }
  if (then_shutdown) {
    input += protocol::FrameWriter::encode(json{{"jsonrpc", "2.0"}, {"id", ++id}, {"method", "shutdown"}}.dump());
  }
  const ProcessResult r = run_process({HIERA_WORKER_BIN, "--cache-dir", cache_dir.string(), "--device", "0"}, input,
                                      std::chrono::seconds(300));
  WorkerRun run;
  run.exit_code = r.exit_code;
  run.timed_out = r.timed_out;
  run.log = r.err;
  protocol::FrameReader reader;
  reader.feed(r.out);
  while (auto event = reader.next()) {
    if (auto* frame = std::get_if<protocol::Frame>(&*event)) run.replies.push_back(json::parse(frame->body));
    else ADD_FAILURE() << "stdout carried something that is not a frame";
  }
  return run;
}

// One cache directory for the whole test binary: the probe is measured once.
inline const std::filesystem::path& gpu_test_cache_dir() {
  static const TempDirectory dir("hiera-gpu-test-cache-");
  return dir.path();
}

// The worker's hello, asked once for the whole test binary: the GPU tests
// skip when it names no GPU.
inline const nlohmann::json& worker_hello() {
  static const nlohmann::json reply = [] {
    auto run = run_worker_requests({{"hello", {{"engine_version", "0.1.0"}}}}, gpu_test_cache_dir());
    return run.replies.empty() ? nlohmann::json(nullptr) : run.replies[0];
  }();
  return reply;
}

}  // namespace hiera::testing

// Skips the test (with the worker's hello) where hiera-worker sees no CUDA device.
#define REQUIRE_GPU()                                                                      \
  do {                                                                                     \
    const nlohmann::json& hiera_hello_ = hiera::testing::worker_hello();                   \
    if (!hiera_hello_.is_object() || hiera_hello_["result"]["cuda"] != true) {             \
      GTEST_SKIP() << "hiera-worker sees no CUDA device: " << hiera_hello_.dump();         \
    }                                                                                      \
  } while (0)
