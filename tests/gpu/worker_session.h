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

namespace hiera::testing {

struct WorkerSession {
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
inline WorkerSession run_worker_session(const WorkerRequests& requests, const std::filesystem::path& cache_dir,
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
  WorkerSession session;
  session.exit_code = r.exit_code;
  session.timed_out = r.timed_out;
  session.log = r.err;
  protocol::FrameReader reader;
  reader.feed(r.out);
  while (auto event = reader.next()) {
    if (auto* frame = std::get_if<protocol::Frame>(&*event)) session.replies.push_back(json::parse(frame->body));
    else ADD_FAILURE() << "stdout carried something that is not a frame";
  }
  return session;
}

}  // namespace hiera::testing
