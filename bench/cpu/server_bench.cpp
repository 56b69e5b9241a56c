// Server round trips in-process (MemoryTransport): request → reader thread →
// message loop → feature → reply frame, on a 5,000-line document; hover
// latency measured idle and while a background job is running, side by side.
#include <benchmark/benchmark.h>

#include <future>

#include "memory_transport.h"
#include "server/features/job_commands.h"
#include "server/lsp_server.h"
#include "test_feature.h"

namespace {

using nlohmann::json;
using hiera::testing::notification;
using hiera::testing::request;

std::string five_thousand_lines() {
  std::string text;
  for (int i = 0; i < 5000; ++i) {
    text += "__global__ void kernel_" + std::to_string(i) + "(const float* __restrict__ x, float* y) { y[threadIdx.x] = x[threadIdx.x]; }\n";
  }
  return text;
}

struct Session {
  hiera::testing::MemoryTransport transport;
  hiera::server::LspServer server{transport};
  std::future<int> done;
  std::int64_t next_id = 100;

  Session() {
    server.add_feature(std::make_unique<hiera::server::JobCommands>());
    server.add_feature(std::make_unique<hiera::testing::TestFeature>());
    done = std::async(std::launch::async, [this] { return server.run(); });
    // A client without progress support keeps the job's traffic to log messages.
    transport.push_message(request(0, "initialize", {{"capabilities", json::object()}}));
    transport.wait_for_response(0);
    transport.push_message(notification("textDocument/didOpen",
                                        {{"textDocument", {{"uri", "file:///big.cu"}, {"languageId", "cuda-cpp"}, {"version", 1}, {"text", five_thousand_lines()}}}}));
  }
  ~Session() {
    transport.push_message(request(1, "shutdown"));
    transport.push_message(notification("exit"));
    done.get();
  }
  json call(const std::string& method, json params) {
    const auto id = next_id++;
    transport.push_message(request(id, method, std::move(params)));
    auto reply = transport.wait_for_response(id);
    transport.drain();  // drop notifications so the inbox stays small
    return reply.value_or(json());
  }
};

void hover_loop(benchmark::State& state, bool with_job) {
  Session session;
  if (with_job) {
    const json job = {{"uri", "file:///big.cu"}, {"steps", 1000000}, {"stepMs", 1}};
    session.call("workspace/executeCommand", {{"command", "hiera.test.slowJob"}, {"arguments", json::array({job})}});
  }
  int line = 0;
  for (auto _ : state) {
    line = (line + 997) % 5000;  // spread over the document
    auto reply = session.call("textDocument/hover", {{"textDocument", {{"uri", "file:///big.cu"}}}, {"position", {{"line", line}, {"character", 20}}}});
    if (!reply.contains("result") || reply["result"].is_null()) state.SkipWithError("hover failed");
  }
  if (with_job) session.call("workspace/executeCommand", {{"command", "hiera.cancelJob"}, {"arguments", json::array()}});
  state.SetItemsProcessed(state.iterations());
}

void BM_HoverLatency5000LinesIdle(benchmark::State& state) { hover_loop(state, false); }
void BM_HoverLatency5000LinesWhileJobRuns(benchmark::State& state) { hover_loop(state, true); }
BENCHMARK(BM_HoverLatency5000LinesIdle)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_HoverLatency5000LinesWhileJobRuns)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_DispatchThroughput(benchmark::State& state) {
  // Pipelined requests: how many the server parses, dispatches and answers per second.
  Session session;
  const int batch = 256;
  for (auto _ : state) {
    const auto first = session.next_id;
    for (int i = 0; i < batch; ++i) {
      session.transport.push_message(request(session.next_id++, "textDocument/hover",
                                             {{"textDocument", {{"uri", "file:///big.cu"}}}, {"position", {{"line", i * 13}, {"character", 20}}}}));
    }
    if (!session.transport.wait_for_response(first + batch - 1)) state.SkipWithError("no reply");
    session.transport.drain();
  }
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_DispatchThroughput)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
