// A big file must not stall the server: the built `hiera lsp` driven over its
// stdio (pipes), as an editor drives it, on a generated 20,000-line .cu with
// 1,249 kernels (each with `hiera:` flops/bytes annotations, a launch in a
// loop and hints). Measured:
//
// - BM_LspEditStorm20k: 500 didChange edits, one every 5 ms, with a hover sent
//   after every 4th edit (not waiting for its answer, as an editor does not
//   stop typing for a hover); counters hover_p50_ms / hover_p99_ms / hover_max_ms
//   (send → reply during the storm), final_diagnostics_ms (last edit → the
//   publishDiagnostics of the final version), publishes (diagnostics sent during
//   the storm), diagnostics_kb (the size of one publish), settle_ms (last edit →
//   every hover answered and the final diagnostics in).
// - BM_AnalyzeCli20k: `hiera analyze FILE` on the same file, process start included.
// - BM_DocumentAnalysesEdit20k: one build's analysis in-process (DocumentAnalyses
//   after a one-line edit): what each coalesced build costs.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "protocol/framing.h"
#include "server/state/document_analyses.h"
#include "subprocess.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr int kKernels = 1249;
constexpr int kBlockLines = 16;
constexpr int kEdits = 500;
constexpr auto kEditInterval = std::chrono::milliseconds(5);
constexpr int kHoverEvery = 4;

// Line 0: the file's size; then per kernel k, 16 lines from line 1 + 16k:
// comment, annotation, kernel head (line +2), body (+3..+5), a host function
// launching it in a loop, blank lines.
std::string twenty_thousand_lines() {
  std::string text = "// hiera: size N=1048576\n";
  for (int b = 0; b < kKernels; ++b) {
    const std::string k = "saxpy_" + std::to_string(b);
    text += "// block " + std::to_string(b) + "\n"
            "// hiera: flops=2*N bytes=12*N\n"
            "__global__ void " + k + "(int n, float a, float* x, float* y) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (i < n) y[i] = a * x[i] + y[i];\n"
            "  if (i < n) x[i] = y[i] * 0.5f;\n"
            "}\n"
            "void run_" + k + "(int n, float a, float* x, float* y, int reps) {\n"
            "  for (int r = 0; r < reps; ++r) {\n"
            "    " + k + "<<<(n + 255) / 256, 256>>>(n, a + r, x, y);\n"
            "  }\n"
            "}\n"
            "\n\n\n\n";
  }
  return text;
}

int body_line(int kernel) { return 1 + kBlockLines * kernel + 3; }
int head_line(int kernel) { return 1 + kBlockLines * kernel + 2; }

// `hiera lsp` on pipes; a reader thread timestamps what comes back.
class LspProcess {
 public:
  explicit LspProcess(const std::string& binary) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      const int devnull = ::open("/dev/null", O_WRONLY);
      if (devnull >= 0) ::dup2(devnull, 2);
      ::execl(binary.c_str(), binary.c_str(), "lsp", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_server_ = in[1];
    from_server_ = out[0];
    reader_ = std::thread([this] { read_loop(); });
  }
  ~LspProcess() {
    if (to_server_ >= 0) ::close(to_server_);
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (::waitpid(pid_, &status, WNOHANG) == 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
      }
    }
    reader_.join();
    ::close(from_server_);
  }

  void send(const json& message) {
    const std::string body = message.dump();
    const std::string frame = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    std::size_t done = 0;
    while (done < frame.size()) {
      const auto n = ::write(to_server_, frame.data() + done, frame.size() - done);
      if (n <= 0) throw std::runtime_error("the server closed its stdin");
      done += static_cast<std::size_t>(n);
    }
  }
  void request(std::int64_t id, const std::string& method, json params) {
    {
      std::lock_guard lock(mutex_);
      sent_[id] = Clock::now();
    }
    send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
  }
  void notify(const std::string& method, json params) {
    send({{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
  }
  // Waits for the reply to `id`; returns its latency.
  std::optional<std::chrono::duration<double, std::milli>> wait_reply(std::int64_t id, std::chrono::seconds timeout) {
    std::unique_lock lock(mutex_);
    if (!cv_.wait_for(lock, timeout, [&] { return replied_.count(id) != 0 || eof_; })) return std::nullopt;
    if (!replied_.count(id)) return std::nullopt;
    return replied_[id] - sent_[id];
  }
  // Waits for the diagnostics of `version`; returns when they arrived and their size.
  std::optional<std::pair<Clock::time_point, std::size_t>> wait_diagnostics(std::int64_t version, std::chrono::seconds timeout) {
    std::unique_lock lock(mutex_);
    std::optional<std::pair<Clock::time_point, std::size_t>> found;
    cv_.wait_for(lock, timeout, [&] {
      for (const auto& p : publishes_) {
        if (p.version == version) found = std::make_pair(p.at, p.bytes);
      }
      return found.has_value() || eof_;
    });
    return found;
  }
  std::size_t publishes_after(Clock::time_point from) {
    std::lock_guard lock(mutex_);
    return static_cast<std::size_t>(std::count_if(publishes_.begin(), publishes_.end(), [&](const auto& p) { return p.at >= from; }));
  }

 private:
  struct Publish {
    std::int64_t version;
    Clock::time_point at;
    std::size_t bytes;
  };

  void read_loop() {
    hiera::protocol::FrameReader reader(std::size_t{1} << 30);
    std::vector<char> buffer(1 << 16);
    while (true) {
      const auto n = ::read(from_server_, buffer.data(), buffer.size());
      if (n <= 0) break;
      reader.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
      while (auto event = reader.next()) {
        const auto* frame = std::get_if<hiera::protocol::Frame>(&*event);
        if (frame) on_body(frame->body);
      }
    }
    std::lock_guard lock(mutex_);
    eof_ = true;
    cv_.notify_all();
  }
  void on_body(const std::string& body) {
    const auto now = Clock::now();
    // A diagnostics body is a megabyte: read its version (the last key) without parsing it.
    if (std::string_view(body).substr(0, 120).find("textDocument/publishDiagnostics") != std::string_view::npos) {
      const auto at = body.rfind("\"version\":");
      const std::int64_t version = at == std::string::npos ? -1 : std::atoll(body.c_str() + at + 10);
      std::lock_guard lock(mutex_);
      publishes_.push_back({version, now, body.size()});
      cv_.notify_all();
      return;
    }
    const auto message = json::parse(body, nullptr, false);
    if (!message.is_object()) return;
    if (message.contains("id") && message["id"].is_number_integer() && !message.contains("method")) {
      std::lock_guard lock(mutex_);
      replied_[message["id"].get<std::int64_t>()] = now;
      cv_.notify_all();
    } else if (message.contains("id") && message.contains("method")) {
      send({{"jsonrpc", "2.0"}, {"id", message["id"]}, {"result", nullptr}});  // server → client requests
    }
  }

  pid_t pid_ = -1;
  int to_server_ = -1;
  int from_server_ = -1;
  std::thread reader_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::int64_t, Clock::time_point> sent_, replied_;
  std::vector<Publish> publishes_;
  bool eof_ = false;
};

json position(int line, int character) { return {{"line", line}, {"character", character}}; }

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

void BM_LspEditStorm20k(benchmark::State& state) {
  const std::string text = twenty_thousand_lines();
  const std::string uri = "file:///bench/storm.cu";
  for (auto _ : state) {
    LspProcess lsp(HIERA_BIN);
    lsp.request(1, "initialize", {{"processId", nullptr},
                                  {"capabilities",
                                   {{"textDocument",
                                     {{"hover", {{"contentFormat", {"markdown", "plaintext"}}}},
                                      {"publishDiagnostics", {{"versionSupport", true}}}}}}}});
    if (!lsp.wait_reply(1, std::chrono::seconds(30))) {
      state.SkipWithError("no initialize reply");
      return;
    }
    lsp.notify("initialized", json::object());
    lsp.notify("textDocument/didOpen", {{"textDocument", {{"uri", uri}, {"languageId", "cuda-cpp"}, {"version", 1}, {"text", text}}}});
    if (!lsp.wait_diagnostics(1, std::chrono::seconds(120))) {
      state.SkipWithError("no diagnostics for the opened file");
      return;
    }

    std::vector<std::int64_t> hovers;
    std::int64_t next_id = 10;
    const auto storm_start = Clock::now();
    auto next_at = storm_start;
    for (int i = 0; i < kEdits; ++i) {
      const int kernel = (i * 37) % kKernels;
      lsp.notify("textDocument/didChange",
                 {{"textDocument", {{"uri", uri}, {"version", 2 + i}}},
                  {"contentChanges", {{{"range", {{"start", position(body_line(kernel), 0)}, {"end", position(body_line(kernel), 0)}}}, {"text", " "}}}}});
      if (i % kHoverEvery == kHoverEvery - 1) {
        const int target = (i * 101) % kKernels;
        lsp.request(next_id, "textDocument/hover", {{"textDocument", {{"uri", uri}}}, {"position", position(head_line(target), 20)}});
        hovers.push_back(next_id++);
      }
      next_at += kEditInterval;
      std::this_thread::sleep_until(next_at);
    }
    const auto last_edit = Clock::now();
    const std::int64_t final_version = 1 + kEdits;
    auto final_diagnostics = lsp.wait_diagnostics(final_version, std::chrono::seconds(600));
    std::vector<double> latencies;
    for (const auto id : hovers) {
      if (auto latency = lsp.wait_reply(id, std::chrono::seconds(600))) latencies.push_back(latency->count());
    }
    const auto settled = Clock::now();
    if (!final_diagnostics || latencies.size() != hovers.size()) {
      state.SkipWithError("the server did not answer every hover or publish the final version");
      return;
    }
    state.SetIterationTime(std::chrono::duration<double>(settled - storm_start).count());
    using ms = std::chrono::duration<double, std::milli>;
    state.counters["hover_p50_ms"] = percentile(latencies, 0.50);
    state.counters["hover_p99_ms"] = percentile(latencies, 0.99);
    state.counters["hover_max_ms"] = percentile(latencies, 1.0);
    state.counters["hovers"] = static_cast<double>(latencies.size());
    state.counters["final_diagnostics_ms"] = ms(final_diagnostics->first - last_edit).count();
    state.counters["settle_ms"] = ms(settled - last_edit).count();
    state.counters["publishes"] = static_cast<double>(lsp.publishes_after(storm_start));
    state.counters["diagnostics_kb"] = static_cast<double>(final_diagnostics->second) / 1024.0;
    lsp.request(2, "shutdown", nullptr);
    lsp.wait_reply(2, std::chrono::seconds(30));
    lsp.notify("exit", nullptr);
  }
}
BENCHMARK(BM_LspEditStorm20k)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(1);

void BM_AnalyzeCli20k(benchmark::State& state) {
  const auto dir = fs::temp_directory_path() / ("hiera-storm-bench-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto path = dir / "storm.cu";
  std::ofstream(path) << twenty_thousand_lines();
  for (auto _ : state) {
    const auto result = hiera::testing::run_process({HIERA_BIN, "analyze", path.string()}, "", std::chrono::seconds(120));
    if (result.exit_code != 0) state.SkipWithError(("hiera analyze failed: " + result.err).c_str());
  }
  fs::remove_all(dir);
}
BENCHMARK(BM_AnalyzeCli20k)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_DocumentAnalysesEdit20k(benchmark::State& state) {
  const std::string original = twenty_thousand_lines();
  std::string edited = original;
  edited.insert(edited.find("  int i", edited.size() / 2), " ");
  hiera::server::DocumentAnalyses analyses;
  analyses.of(hiera::server::TextDocument("file:///s.cu", "cuda-cpp", 1, original));
  std::int64_t version = 2;
  for (auto _ : state) {
    const hiera::server::TextDocument document("file:///s.cu", "cuda-cpp", version, version % 2 ? original : edited);
    benchmark::DoNotOptimize(analyses.of(document));
    ++version;
  }
}
BENCHMARK(BM_DocumentAnalysesEdit20k)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
