// Hover round trips through the real `hiera lsp` features in-process
// (MemoryTransport → LspServer with AnalysisFeature, SymbolJobs and
// JobCommands, as `hiera lsp` assembles them) on a 5,000-line .cu document:
// idle, and while optimize jobs keep both job threads busy.
//
// The background load: hiera.optimizeSymbol jobs, back to back on both job
// threads (LspServer's default two), each a real optimizer run (task spec from
// the 5,000-line text, plan, worker pool, proposers, run log, report) against
// hiera-fake-worker, a FAKE worker speaking the real job protocol (there is no
// GPU here: it answers canned measurements at once), with an LLM on loopback
// (HttpTestServer) answering candidates at once. A job lasts a fraction of a
// second (the planner stops the step after a few candidates without a gain):
// whenever one ends, the client side starts another, as a user queueing
// optimizations would, so the job threads never idle while hovers are measured.
// Counters: the jobs finished and $/progress values sent during a run.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <future>
#include <memory>
#include <thread>

#include <unistd.h>

#include "engine/knowledge/knowledge_base.h"
#include "http_test_server.h"
#include "memory_transport.h"
#include "server/features/analysis_feature.h"
#include "server/features/job_commands.h"
#include "server/features/symbol_jobs.h"
#include "server/lsp_server.h"
#include "server/state/measurement_store.h"

namespace {

using nlohmann::json;
using hiera::testing::notification;
using hiera::testing::request;
namespace fs = std::filesystem;

constexpr int kBlocks = 500;      // 10 lines each
constexpr int kJobs = 2;             // one per job thread
constexpr int kLlmReplies = 5000;  // more than a run asks for (most prompts hit the LLM cache; past them: 500s, failed jobs)

// The job's target first (with the annotations its task spec needs: they are
// the file's, so the other kernels carry none), then 499 blocks of a kernel and
// a host function launching it in a loop, each with hints (missing
// __restrict__, a launch in a loop).
std::string five_thousand_lines() {
  std::string text =
      "// hiera: size N=1048576\n"
      "// hiera: arg x input float32[N]\n"
      "// hiera: arg y output float32[N]\n"
      "// hiera: arg n scalar int32 = N\n"
      "// hiera: launch grid=N/256 block=256\n"
      "__global__ void scale(const float* x, float* y, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = 2.0f * x[i];\n"
      "}\n"
      "\n";
  for (int b = 1; b < kBlocks; ++b) {
    const std::string k = "saxpy_" + std::to_string(b);
    text += "// block " + std::to_string(b) + "\n"
            "__global__ void " + k + "(int n, float a, float* x, float* y) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (i < n) y[i] = a * x[i] + y[i];\n"
            "}\n"
            "void run_" + k + "(int n, float a, float* x, float* y, int reps) {\n"
            "  for (int r = 0; r < reps; ++r) {\n"
            "    " + k + "<<<(n + 255) / 256, 256>>>(n, a + r, x, y);\n"
            "  }\n"
            "}\n";
  }
  return text;
}

// A candidate the fake worker accepts; `salt` names its index variable, so
// each one is new code (no cache hit, not a duplicate).
std::string chat_reply(int salt) {
  const std::string i = "i" + std::to_string(salt);
  const std::string code =
      "__global__ void scale(const float* __restrict__ x, float* __restrict__ y, int n) {\n"
      "  int " + i + " = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (" + i + " < n) y[" + i + "] = x[" + i + "] + x[" + i + "];\n"
      "}\n";
  return json{{"id", "x"}, {"object", "chat.completion"}, {"model", "scripted-model"},
              {"choices", {{{"index", 0}, {"finish_reason", "stop"},
                            {"message", {{"role", "assistant"}, {"content", "Faster:\n```cuda\n" + code + "```\n"}}}}}},
              {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", 100}}}}
      .dump();
}

class Session {
 public:
  explicit Session(bool with_jobs) {
    runs_ = fs::temp_directory_path() / ("hiera-hover-bench-" + std::to_string(::getpid()) + (with_jobs ? "-jobs" : ""));
    uri_ = "file://" + (runs_ / "big.cu").string();
    auto measurements = std::make_shared<hiera::server::MeasurementStore>();
    server_.add_feature(std::make_unique<hiera::server::JobCommands>());
    server_.add_feature(std::make_unique<hiera::server::SymbolJobs>(measurements, HIERA_BIN));
    server_.add_feature(std::make_unique<hiera::server::AnalysisFeature>(
        std::make_shared<const hiera::engine::knowledge::KnowledgeBase>(
            hiera::engine::knowledge::load_knowledge(fs::path(HIERA_SOURCE_DIR) / "knowledge")),
        measurements));
    done_ = std::async(std::launch::async, [this] { return server_.run(); });
    const json settings = {{"gpu", "h200"},
                           {"worker", {{"command", {HIERA_FAKE_WORKER}}}},
                           {"budget", {{"candidates", 100000}, {"minutes", 60}}},
                           {"llm", {{"endpoint", llm_.base_url()}, {"model", "scripted-model"}, {"maxRetries", 0}}},
                           {"runsDir", runs_.string()}};
    json caps = hiera::testing::full_capabilities();
    caps["workspace"]["configuration"] = false;  // the settings come as initializationOptions only
    call("initialize", {{"processId", nullptr}, {"capabilities", caps}, {"initializationOptions", settings}});
    transport_.push_message(notification("initialized"));
    transport_.push_message(notification(
        "textDocument/didOpen",
        {{"textDocument", {{"uri", uri_}, {"languageId", "cuda"}, {"version", 1}, {"text", five_thousand_lines()}}}}));
    // The document is analysed once opened (its diagnostics): hovers measure the round trip, not the first analysis.
    transport_.wait_for([](const json& m) { return m.value("method", "") == "textDocument/publishDiagnostics"; },
                        std::chrono::seconds(120));
    if (with_jobs) start_jobs();
  }
  ~Session() {
    keep_jobs_ = false;
    call("workspace/executeCommand", {{"command", "hiera.cancelJob"}, {"arguments", json::array()}});  // all of them
    transport_.push_message(request(1, "shutdown"));
    transport_.push_message(notification("exit"));
    done_.get();
    std::error_code ec;
    fs::remove_all(runs_, ec);
  }

  json call(const std::string& method, json params) {
    const auto id = next_id_++;
    transport_.push_message(request(id, method, std::move(params)));
    auto reply = transport_.wait_for_response(id, std::chrono::seconds(30));
    pump();
    return reply.value_or(json());
  }

  // What an editor does with the rest of the traffic: answers the server's
  // requests (progress tokens), drops the notifications (counting the jobs'
  // progress); and, here, starts a job for each one that ended.
  void pump() {
    int ended = 0;
    for (const auto& m : transport_.drain()) {
      if (m.contains("id") && m.contains("method")) {
        transport_.push_message({{"jsonrpc", "2.0"}, {"id", m["id"]}, {"result", nullptr}});
      }
      if (m.value("method", "") != "$/progress") continue;
      ++progress_values_;
      if (m["params"]["value"].value("kind", "") == "end") ++ended;
    }
    jobs_ended_ += ended;
    for (; keep_jobs_ && ended > 0; --ended) start_job();
  }

  int running_jobs() {
    const json jobs = call("workspace/executeCommand", {{"command", "hiera.jobs"}, {"arguments", json::array()}});
    int running = 0;
    for (const auto& job : jobs.value("result", json::array())) running += job.value("state", "") == "running";
    return running;
  }
  const std::string& uri() const { return uri_; }
  long jobs_ended() const { return jobs_ended_; }
  long progress_values() const { return progress_values_; }

 private:
  // Sent without waiting: its {"jobId"} answer is dropped with the rest.
  void start_job() {
    transport_.push_message(request(next_id_++, "workspace/executeCommand",
                                    {{"command", "hiera.optimizeSymbol"},
                                     {"arguments", json::array({{{"uri", uri_}, {"version", 1}, {"symbol", "scale"}, {"kind", "kernel"}}})}}));
  }
  void start_jobs() {
    for (int i = 0; i < kLlmReplies; ++i) llm_.enqueue_json(200, chat_reply(i));
    keep_jobs_ = true;
    for (int i = 0; i < kJobs; ++i) start_job();
    // Measure once jobs are proposing and evaluating candidates.
    for (int i = 0; llm_.request_count() == 0 && i < 6000; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      pump();
    }
  }

  hiera::testing::HttpTestServer llm_;
  hiera::testing::MemoryTransport transport_;
  hiera::server::LspServer server_{transport_};
  std::future<int> done_;
  fs::path runs_;
  std::string uri_;
  bool keep_jobs_ = false;
  std::int64_t next_id_ = 100;
  long jobs_ended_ = 0;
  long progress_values_ = 0;
};

// One session per case for the whole program: Google Benchmark calls each
// function several times (to size the iteration count), and opening the
// document or starting the jobs each time would measure the setup.
std::unique_ptr<Session> sessions[2];

Session& session_for(bool with_jobs) {
  auto& session = sessions[with_jobs ? 1 : 0];
  if (!session) session = std::make_unique<Session>(with_jobs);
  return *session;
}

void hover_loop(benchmark::State& state, bool with_jobs) {
  Session& session = session_for(with_jobs);
  const long ended_before = session.jobs_ended();
  const long progress_before = session.progress_values();
  int block = 0;
  for (auto _ : state) {
    block = (block + 97) % kBlocks;  // spread over the document: kernel names and launches in turn
    const bool launch = block % 2 == 1;
    const int line = block == 0 ? 5 : 10 * block + (launch ? 7 : 1);
    auto reply = session.call("textDocument/hover", {{"textDocument", {{"uri", session.uri()}}},
                                                     {"position", {{"line", line}, {"character", launch ? 8 : 18}}}});
    if (!reply.contains("result") || reply["result"].is_null()) {
      state.SkipWithError(("no hover at line " + std::to_string(line) + ": " + reply.dump().substr(0, 300)).c_str());
      break;
    }
  }
  if (with_jobs) {
    state.counters["jobs_finished"] = static_cast<double>(session.jobs_ended() - ended_before);
    state.counters["progress_values"] = static_cast<double>(session.progress_values() - progress_before);
    if (session.running_jobs() == 0) state.SkipWithError("no optimize job was running at the end of the measurement");
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_HoverRealServer5000LinesIdle(benchmark::State& state) { hover_loop(state, false); }
void BM_HoverRealServer5000LinesWhileOptimizing(benchmark::State& state) { hover_loop(state, true); }
BENCHMARK(BM_HoverRealServer5000LinesIdle)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_HoverRealServer5000LinesWhileOptimizing)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  for (auto& session : sessions) session.reset();  // cancel the jobs, shut the servers down, remove the runs
  benchmark::Shutdown();
  return 0;
}
