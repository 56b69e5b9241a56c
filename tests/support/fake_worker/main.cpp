// hiera-fake-worker: a FAKE worker, for the engine's tests only (never
// installed). It speaks the real job protocol (engine/eval/JOB_PROTOCOL.md:
// Content-Length frames, JSON-RPC 2.0 on stdin/stdout) but touches no GPU and
// verifies nothing: it answers with canned results and misbehaves on command.
// Real GPU workers are out of reach in CI, and the engine's failure paths
// (hangs, crashes, garbage on stdout, restarts) need real processes to test.
//
// Options:
//   --version V         the worker version it reports (default: this build's)
//   --no-version-check  accept any engine version (to test the engine's own check)
//   --device N          the device index it reports in hello (default 0); "none":
//                       no device, as a worker without a GPU says
//   --hello B           how it handles hello: ok (default), hang, die, garbage
//   --ignore-shutdown   answer `shutdown` but keep running (until stdin closes)
//   --ignore-eof        keep running when stdin closes
//   --ignore-sigterm    ignore SIGTERM, so only SIGKILL ends it
//   --candidate-ms MS   the candidate's canned timing: median MS, p10 0.95*MS,
//                       p90 1.05*MS, speedup 0.1/MS (default: median 0.05 with
//                       the reference's spread, which is not faster beyond noise)
//   --phases-ms JSON    "phases_ms" of every canned evaluation (evaluate, and
//                       deliver's evaluation), as given; none by default
//
// Per request, params.behave (or params.task.behave, as evaluate nests it):
//   ok (default)  canned result for the method
//   hang          never answer (sleep until killed)
//   die           write to stderr, exit(1)
//   segv          write to stderr, raise SIGSEGV
//   garbage       write a line that is not a frame to stdout, then hang
//   slow:MS       sleep MS milliseconds, then answer
//   restart       answer with "restart": true, then exit(3)
//   error         answer with JSON-RPC error -32602
//   wrong-id      answer with an id nobody asked for
//   stderr:N      write N bytes to stderr (ending in "END-OF-STDERR"), then answer
// "reply" in params (or params.task) replaces the canned result. Canned
// results: probe, compile, evaluate (with timing.baselines when asked for),
// capture (a conv -> relu graph that also records the seed it was sent;
// {"graph": null} for a CUDA task), profile (one kernel "fake_kernel", 2 calls,
// 200000 ns in all; metrics unavailable), deliver (the candidate's source as
// delivered, with the canned evaluation). Object
// results also get "pid", "started_ns" and "finished_ns" (CLOCK_MONOTONIC,
// comparable across processes: the tests use them to see jobs overlap).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <ctime>
#include <string>
#include <string_view>
#include <thread>
#include <variant>

#include <sys/resource.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "hiera/version.h"
#include "protocol/framing.h"
#include "protocol/message.h"

namespace {

using nlohmann::json;
namespace protocol = hiera::protocol;

struct Options {
  std::string version = hiera::kVersion;
  bool check_version = true;
  int device = 0;  // -1: none
  std::string hello = "ok";
  bool ignore_shutdown = false;
  bool ignore_eof = false;
  double candidate_ms = 0.0;  // 0: the default canned candidate timing
  json phases_ms;             // null: no "phases_ms" in canned evaluations
};

std::int64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      std::_Exit(4);  // the engine is gone
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void send(const json& message) { write_all(STDOUT_FILENO, protocol::FrameWriter::encode(message.dump())); }

void say(const std::string& line) { write_all(STDERR_FILENO, "fake worker: " + line + "\n"); }

[[noreturn]] void hang() {
  for (;;) pause();
}

std::string major_minor(const std::string& version) {
  const auto first = version.find('.');
  if (first == std::string::npos) return version;
  const auto second = version.find('.', first + 1);
  return version.substr(0, second);
}

json canned_hello(const Options& options) {
  return {{"worker_version", options.version},
          {"cuda", false},
          {"device", options.device < 0 ? json(nullptr) : json{{"index", options.device}, {"name", "Fake GPU"}, {"cc", "9.0"}}},
          {"pytorch", nullptr}};
}

json canned_probe() {
  return {{"name", "Fake GPU"}, {"cc", "9.0"}, {"sm_count", 132}, {"sm_clock_mhz", 1980}, {"mem_clock_mhz", 2619},
          {"memory_bytes", 150754820096LL}, {"l2_bytes", 52428800}, {"smem_per_block_optin", 232448},
          {"driver", "570.86"}, {"cuda_runtime", "12.8"},
          {"measured", {{"copy_gbs", 4300.0},
                        {"gemm_tflops", {{"float32", 51.0}, {"tf32", nullptr}, {"float16", 700.0}, {"bfloat16", 690.5}}}}},
          {"cached", false}};
}

// A source with "#error" on some line fails there, as NVRTC would say it.
json canned_compile(const json& params) {
  const std::string source = params.value("source", std::string());
  const int offset = params.value("line_offset", 0);
  const auto at = source.find("#error");
  json result = {{"ok", at == std::string::npos}, {"cache_hit", false},
                 {"key", "fake-" + std::to_string(std::hash<std::string>{}(source))}, {"log", ""},
                 {"diagnostics", json::array()}, {"compile_ms", 1.5}};
  if (at != std::string::npos) {
    const int line = 1 + static_cast<int>(std::count(source.begin(), source.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    result["log"] = "fake.cu(" + std::to_string(line) + "): error: #error directive";
    result["diagnostics"].push_back(
        {{"line", line - offset}, {"column", 2}, {"severity", "error"}, {"message", "#error directive"}});
  }
  return result;
}

json canned_evaluation(const json& params, const Options& options) {
  const std::int64_t seed = params.value("seed", 1234);
  const int trials = params.value("trials", 5);
  const char* distributions[] = {"uniform", "normal", "large"};
  json result = {{"verdict", "passed"}, {"failures", json::array()}, {"trials", json::array()}};
  for (int i = 0; i < trials; ++i) {
    result["trials"].push_back({{"seed", seed + i}, {"distribution", distributions[i % 3]}, {"sizes", {{"N", 1024}}},
                                {"max_abs_error", 0.0}, {"max_rel_error", 0.0}, {"mismatches", 0}});
  }
  const json stats = {{"median_ms", 0.1}, {"min_ms", 0.09}, {"p10_ms", 0.095}, {"p90_ms", 0.11},
                      {"trials", params.value("timing_trials", 50)}};
  json faster = stats;
  faster["median_ms"] = 0.05;
  double speedup = 2.0;
  if (options.candidate_ms > 0) {
    faster["median_ms"] = options.candidate_ms;
    faster["min_ms"] = 0.9 * options.candidate_ms;
    faster["p10_ms"] = 0.95 * options.candidate_ms;
    faster["p90_ms"] = 1.05 * options.candidate_ms;
    speedup = 0.1 / options.candidate_ms;
  }
  result["timing"] = {{"reference", stats}, {"candidate", faster}, {"speedup", speedup}};
  result["speed_of_light_ms"] = 0.01;
  if (!options.phases_ms.is_null()) result["phases_ms"] = options.phases_ms;
  // Baselines asked for: "compile" is timed (0.08 ms), any other name is reported as unavailable.
  if (auto baselines = params.find("baselines"); baselines != params.end() && baselines->is_array()) {
    json timed = json::object();
    json errors = json::object();
    for (const auto& name : *baselines) {
      const std::string n = name.is_string() ? name.get<std::string>() : name.dump();
      if (n == "compile") {
        json compiled = stats;
        compiled["median_ms"] = 0.08;
        timed[n] = compiled;
      } else {
        errors[n] = "the fake worker has no baseline " + n;
      }
    }
    result["timing"]["baselines"] = timed;
    result["timing"]["baseline_errors"] = errors;
  }
  return result;
}

// A conv -> relu graph for PyTorch tasks, as the runner's capture job answers; null for CUDA tasks.
json canned_capture(const json& params) {
  const auto task = params.find("task");
  if (task != params.end() && task->is_object() && task->value("kind", std::string()) == "cuda") return {{"graph", nullptr}};
  const json meta = {{"shape", {8, 16, 64, 64}}, {"stride", {65536, 4096, 64, 1}}, {"dtype", "float32"}};
  json nodes = json::array();
  nodes.push_back({{"name", "x"}, {"op", "placeholder"}, {"target", "x"}, {"kind", "input"}, {"args", json::array()},
                   {"kwargs", json::object()}, {"normalized", nullptr},
                   {"meta", {{"shape", {8, 3, 64, 64}}, {"stride", {12288, 4096, 64, 1}}, {"dtype", "float32"}}},
                   {"flops", 0}, {"bytes", 0}, {"code", "x"}, {"users", {"conv"}}});
  nodes.push_back({{"name", "conv"}, {"op", "call_module"}, {"target", "conv"}, {"kind", "conv2d"},
                   {"args", {{{"node", "x"}}}}, {"kwargs", json::object()}, {"normalized", {{"input", {{"node", "x"}}}}},
                   {"meta", meta}, {"flops", 28311552}, {"bytes", 2492160}, {"code", "self.conv(x)"}, {"users", {"relu"}}});
  nodes.push_back({{"name", "relu"}, {"op", "call_function"}, {"target", "torch.relu"}, {"kind", "relu"},
                   {"args", {{{"node", "conv"}}}}, {"kwargs", json::object()}, {"normalized", {{"input", {{"node", "conv"}}}}},
                   {"meta", meta}, {"flops", 524288}, {"bytes", 4194304}, {"code", "torch.relu(conv)"}, {"users", {"output"}}});
  nodes.push_back({{"name", "output"}, {"op", "output"}, {"target", "output"}, {"kind", "output"},
                   {"args", {{{"node", "relu"}}}}, {"kwargs", json::object()}, {"normalized", nullptr}, {"meta", meta},
                   {"flops", 0}, {"bytes", 0}, {"code", "relu"}, {"users", json::array()}});
  return {{"graph",
           {{"method", "fx"}, {"fallback", nullptr}, {"class_name", "Model"}, {"forward_params", {"x"}}, {"training", true},
            {"submodules", {{"conv", {{"type", "Conv2d"}, {"attrs", {{"in_channels", 3}, {"out_channels", 16}}}}}}},
            {"parameters", {{"conv.weight", {{"shape", {16, 3, 3, 3}}, {"dtype", "float32"}}},
                            {"conv.bias", {{"shape", {16}}, {"dtype", "float32"}}}}},
            {"buffers", json::object()}, {"nodes", nodes}, {"total_flops", 28835840}, {"total_bytes", 6686464},
            {"seed", params.value("seed", json(nullptr))}}}};
}

// Where a request's instructions are: params, or params.task for evaluate.
const json* find_in_params(const json& params, const char* name) {
  if (params.is_object()) {
    if (auto it = params.find(name); it != params.end()) return &*it;
    if (auto task = params.find("task"); task != params.end() && task->is_object()) {
      if (auto it = task->find(name); it != task->end()) return &*it;
    }
  }
  return nullptr;
}

void answer(const protocol::RequestId& id, json result, std::int64_t started) {
  if (result.is_object()) {
    result["pid"] = static_cast<std::int64_t>(getpid());
    result["started_ns"] = started;
    result["finished_ns"] = monotonic_ns();
  }
  send(protocol::make_result(id, std::move(result)));
}

void handle(const protocol::Request& request, const Options& options) {
  const std::int64_t started = monotonic_ns();
  const json& params = request.params;
  if (request.method == "hello") {
    if (options.hello == "hang") hang();
    if (options.hello == "die") {
      say("cannot initialise (hello: die)");
      std::exit(2);
    }
    if (options.hello == "garbage") {
      write_all(STDOUT_FILENO, "this is not a frame\r\n");
      hang();
    }
    const std::string engine = params.value("engine_version", std::string());
    if (options.check_version && major_minor(engine) != major_minor(options.version)) {
      send(protocol::make_error(request.id, protocol::ErrorCode::InvalidRequest,
                                "engine version " + engine + " is incompatible with worker version " + options.version));
      return;
    }
    answer(request.id, canned_hello(options), started);
    return;
  }
  if (request.method == "shutdown") {
    send(protocol::make_result(request.id, nullptr));
    if (!options.ignore_shutdown) std::exit(0);
    return;
  }

  const json* behave_field = find_in_params(params, "behave");
  const std::string behave = behave_field && behave_field->is_string() ? behave_field->get<std::string>() : "ok";
  if (behave == "hang") hang();
  if (behave == "die") {
    say("dying on request during " + request.method);
    std::exit(1);
  }
  if (behave == "segv") {
    say("segfault on request during " + request.method);
    // The default action, whatever a sanitizer installed, and no core file left behind.
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    std::signal(SIGSEGV, SIG_DFL);
    std::raise(SIGSEGV);
    hang();
  }
  if (behave == "garbage") {
    write_all(STDOUT_FILENO, "this is not a frame\r\n");
    hang();
  }
  if (behave == "error") {
    send(protocol::make_error(request.id, protocol::ErrorCode::InvalidParams, "bad parameters on request"));
    return;
  }
  if (behave.rfind("slow:", 0) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(behave.c_str() + 5)));
  if (behave.rfind("stderr:", 0) == 0) {
    const std::size_t n = static_cast<std::size_t>(std::atol(behave.c_str() + 7));
    std::string noise;
    for (std::size_t i = 0; noise.size() < n; ++i) noise += "noise line " + std::to_string(i) + "\n";
    write_all(STDERR_FILENO, noise.substr(0, n));
    write_all(STDERR_FILENO, "END-OF-STDERR\n");
  }

  json result;
  if (const json* reply = find_in_params(params, "reply")) {
    result = *reply;
  } else if (request.method == "probe") {
    result = canned_probe();
  } else if (request.method == "compile") {
    result = canned_compile(params);
  } else if (request.method == "evaluate") {
    result = canned_evaluation(params, options);
  } else if (request.method == "profile") {
    result = {{"kernels", {{{"name", "fake_kernel"}, {"grid", {64, 1, 1}}, {"block", {256, 1, 1}}, {"calls", 2},
                            {"total_ns", 200000}, {"mean_ns", 100000}}}},
              {"metrics", {{"unavailable", "the fake worker measures nothing"}}}};
  } else if (request.method == "deliver") {
    const json* task = find_in_params(params, "candidate");
    result = {{"delivered_source", task && task->is_object() ? task->value("source", std::string()) : std::string()},
              {"evaluation", canned_evaluation(params, options)}};
  } else if (request.method == "capture") {
    result = canned_capture(params);
  } else if (request.method == "echo") {
    result = {{"params", params}};
  } else {
    send(protocol::make_error(request.id, protocol::ErrorCode::MethodNotFound, "no method " + request.method));
    return;
  }
  if (behave == "restart") result["restart"] = true;
  if (behave == "wrong-id") {
    send(protocol::make_result(protocol::RequestId(std::int64_t{1000000}), result));
    return;
  }
  answer(request.id, std::move(result), started);
  if (behave == "restart") {
    say("exiting after a restart request");
    std::exit(3);
  }
}

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        say("missing value after " + arg);
        std::exit(64);
      }
      return argv[++i];
    };
    if (arg == "--version") {
      options.version = value();
    } else if (arg == "--no-version-check") {
      options.check_version = false;
    } else if (arg == "--device") {
      const std::string device = value();
      options.device = device == "none" ? -1 : std::atoi(device.c_str());
    } else if (arg == "--hello") {
      options.hello = value();
    } else if (arg == "--ignore-shutdown") {
      options.ignore_shutdown = true;
    } else if (arg == "--ignore-eof") {
      options.ignore_eof = true;
    } else if (arg == "--candidate-ms") {
      options.candidate_ms = std::atof(value().c_str());
    } else if (arg == "--phases-ms") {
      options.phases_ms = json::parse(value(), nullptr, false);
      if (options.phases_ms.is_discarded()) {
        say("--phases-ms needs JSON");
        std::exit(64);
      }
    } else if (arg == "--ignore-sigterm") {
      std::signal(SIGTERM, SIG_IGN);
    } else {
      say("unknown option " + arg);
      std::exit(64);
    }
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  protocol::FrameReader reader;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (options.ignore_eof) hang();
      return 0;  // the engine closed our stdin: done
    }
    reader.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    while (auto event = reader.next()) {
      if (const auto* frame = std::get_if<protocol::Frame>(&*event)) {
        auto parsed = protocol::parse_message(frame->body);
        if (auto* message = std::get_if<protocol::Message>(&parsed)) {
          if (const auto* request = std::get_if<protocol::Request>(message)) handle(*request, options);
        }
      }
    }
  }
}
