// The real hiera-worker, run as a process with pipes, on a machine without a
// GPU (CI): hello says cuda: false, compile works, GPU jobs get a clear
// error, malformed input gets JSON-RPC errors, shutdown exits 0, and stdout
// carries nothing but frames.
#ifdef HIERA_HAVE_WORKER
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "protocol/framing.h"
#include "frame_assertions.h"
#include "subprocess.h"
#include "build_paths.h"

namespace {

using hiera::testing::frame;
using hiera::testing::frames;
using hiera::testing::run_process;
using nlohmann::json;

json request(int id, const std::string& method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}


bool has_gpu() { return std::filesystem::exists("/dev/nvidia0") || std::filesystem::exists("/dev/nvidiactl"); }

class HieraWorkerProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device entropy;
    cache_ = std::filesystem::temp_directory_path() / ("hiera-worker-cache-" + std::to_string(entropy()));
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(cache_, ec);
  }
  hiera::testing::ProcessResult run(const std::vector<json>& messages, const std::string& raw_prefix = "") {
    std::string input = raw_prefix;
    for (const auto& m : messages) input += frame(m);
    // --python points at a missing interpreter, so hello does not spend seconds importing torch.
    return run_process(
        {::hiera::testing::worker_bin(), "--cache-dir", cache_.string(), "--python", "/nonexistent/python3"}, input,
        std::chrono::seconds(60));
  }
  std::filesystem::path cache_;
};

const char* kSaxpy = "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, int n) {\n"
                     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                     "  if (i < n) y[i] = a * x[i] + y[i];\n"
                     "}\n";

json saxpy_task() {
  return json::parse(R"({"kind": "cuda",
    "reference": {"source": "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, int n) {}", "kernel": "saxpy"},
    "candidate": {"source": "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, int n) {}", "kernel": "saxpy"},
    "contract": {"sizes": {"N": 1024},
      "args": [{"name": "a", "role": "scalar", "type": "float32", "value": "2.5"},
               {"name": "x", "role": "input", "type": "float32", "extent": "N"},
               {"name": "y", "role": "output", "type": "float32", "extent": "N"},
               {"name": "n", "role": "scalar", "type": "int32", "value": "N"}],
      "reference_launch": {"grid": ["(N+255)/256"], "block": ["256"], "shared_bytes": "0"}},
    "numerics": {"atol": 1e-4, "rtol": 1e-4}})");
}

TEST_F(HieraWorkerProcess, HelloReportsNoCudaWithoutAGpuAndShutdownExitsZero) {
  if (has_gpu()) GTEST_SKIP() << "this machine has a GPU; tests/gpu covers the worker there";
  auto r = run({request(1, "hello", {{"engine_version", "0.1.0"}}), request(2, "shutdown")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto messages = frames(r.out);
  ASSERT_EQ(messages.size(), 2u) << r.out;
  const json& hello = messages[0]["result"];
  EXPECT_EQ(hello["worker_version"], "0.1.0");
  EXPECT_EQ(hello["cuda"], false);
  EXPECT_TRUE(hello["device"].is_null());
  EXPECT_TRUE(hello["pytorch"].is_null());  // that python does not exist
  EXPECT_EQ(messages[1], (json{{"jsonrpc", "2.0"}, {"id", 2}, {"result", nullptr}}));
  EXPECT_NE(r.err.find("no CUDA device"), std::string::npos) << r.err;
}

TEST_F(HieraWorkerProcess, HelloRefusesAnotherMajorMinorVersion) {
  auto r = run({request(1, "hello", {{"engine_version", "0.2.0"}}), request(2, "hello", json::object()),
                request(3, "hello", {{"engine_version", "0.1.7"}}), request(4, "shutdown")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto messages = frames(r.out);
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[0]["error"]["code"], -32600);
  const std::string message = messages[0]["error"]["message"];
  EXPECT_NE(message.find("0.2.0"), std::string::npos) << message;
  EXPECT_NE(message.find("0.1.0"), std::string::npos) << message;
  EXPECT_EQ(messages[1]["error"]["code"], -32602);
  EXPECT_TRUE(messages[2].contains("result"));  // patch versions may differ
}

TEST_F(HieraWorkerProcess, CompileWorksWithoutAGpuAndCachesTheCubin) {
  auto r = run({request(1, "compile", {{"source", kSaxpy}, {"options", {"-DX=1"}}}),
                request(2, "compile", {{"source", kSaxpy}, {"options", {"-DX=1"}}, {"arch", "sm_90"}}),
                request(3, "compile", {{"source", "// prelude\n// prelude\n__global__ void k() {\n  oops;\n}\n"}, {"line_offset", 2}}),
                request(4, "compile", {{"source", kSaxpy}, {"arch", "compute_90"}}),
                request(5, "compile", {{"options", json::array()}}),
                request(6, "shutdown")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto messages = frames(r.out);
  ASSERT_EQ(messages.size(), 6u);
  const json& first = messages[0]["result"];
  EXPECT_EQ(first["ok"], true) << first;
  EXPECT_EQ(first["cache_hit"], false);
  const std::string key = first["key"];
  EXPECT_EQ(key.size(), 64u);
  EXPECT_TRUE(first["diagnostics"].empty());
  EXPECT_TRUE(first["compile_ms"].is_number());
  // Without a device the arch defaults to sm_90, so the second (explicit sm_90) request hits.
  const json& second = messages[1]["result"];
  EXPECT_EQ(second["cache_hit"], true);
  EXPECT_EQ(second["key"], key);
  std::ifstream cubin(cache_ / "cubin" / (key + ".cubin"), std::ios::binary);
  ASSERT_TRUE(cubin) << "the cubin is cached under <cache-dir>/cubin/<key>.cubin";
  char magic[4] = {};
  cubin.read(magic, 4);
  EXPECT_EQ(std::string(magic, 4), std::string("\x7f" "ELF", 4));

  const json& failed = messages[2]["result"];
  EXPECT_EQ(failed["ok"], false);
  ASSERT_EQ(failed["diagnostics"].size(), 1u) << failed;
  EXPECT_EQ(failed["diagnostics"][0]["line"], 2);  // line 4 of the source, minus the two prelude lines
  EXPECT_EQ(failed["diagnostics"][0]["column"], 3);
  EXPECT_EQ(failed["diagnostics"][0]["severity"], "error");
  EXPECT_NE(failed["log"].get<std::string>().find("oops"), std::string::npos);

  EXPECT_EQ(messages[3]["error"]["code"], -32602);
  EXPECT_NE(messages[3]["error"]["message"].get<std::string>().find("compute_90"), std::string::npos);
  EXPECT_EQ(messages[4]["error"]["code"], -32602);
}

TEST_F(HieraWorkerProcess, GpuJobsWithoutAGpuGetAClearError) {
  if (has_gpu()) GTEST_SKIP() << "this machine has a GPU; tests/gpu covers the worker there";
  json bad_task = saxpy_task();
  bad_task["contract"]["args"][1]["extent"] = "X";
  auto r = run({request(1, "evaluate", {{"task", saxpy_task()}, {"trials", 5}, {"timing_trials", 50}, {"seed", 1234}}),
                request(2, "probe"), request(3, "profile", {{"task", saxpy_task()}, {"which", "reference"}}),
                request(4, "evaluate", {{"task", bad_task}}),
                request(5, "evaluate", {{"task", {{"kind", "triton"}}}}),
                request(6, "evaluate", json::object()),
                request(7, "shutdown")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto messages = frames(r.out);
  ASSERT_EQ(messages.size(), 7u);
  for (int i : {0, 1, 2}) {
    EXPECT_EQ(messages[i]["id"], i + 1);
    EXPECT_EQ(messages[i]["error"]["code"], -32603) << messages[i];
    EXPECT_EQ(messages[i]["error"]["message"].get<std::string>().rfind("no CUDA device: ", 0), 0u) << messages[i];
  }
  // A malformed task is the caller's error before it is a missing GPU.
  EXPECT_EQ(messages[3]["error"]["code"], -32602);
  EXPECT_NE(messages[3]["error"]["message"].get<std::string>().find("unknown size name 'X'"), std::string::npos);
  EXPECT_EQ(messages[4]["error"]["code"], -32602);
  EXPECT_EQ(messages[5]["error"]["code"], -32602);
}

TEST_F(HieraWorkerProcess, MalformedInputGetsJsonRpcErrorsAndTheWorkerGoesOn) {
  const std::string garbage = "Content-Length: 5\r\n\r\n{oops" + frame({{"jsonrpc", "2.0"}, {"id", 1}}) +
                              frame({{"jsonrpc", "1.0"}, {"id", 2}, {"method", "hello"}}) +
                              "Content-Length: nope\r\n\r\n";
  auto r = run({request(3, "frobnicate"), request(4, "compile", json::array({1, 2})),
                {{"jsonrpc", "2.0"}, {"method", "hello"}},  // a notification: no answer
                request(5, "shutdown")},
               garbage);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto messages = frames(r.out);
  ASSERT_EQ(messages.size(), 7u) << r.out;
  EXPECT_EQ(messages[0]["error"]["code"], -32700);  // invalid JSON
  EXPECT_TRUE(messages[0]["id"].is_null());
  EXPECT_EQ(messages[1]["error"]["code"], -32600);  // no method, result or error
  EXPECT_EQ(messages[2]["error"]["code"], -32600);  // wrong jsonrpc version
  EXPECT_EQ(messages[2]["id"], 2);
  EXPECT_EQ(messages[3]["error"]["code"], -32700);  // bad Content-Length
  EXPECT_EQ(messages[4]["error"]["code"], -32601);  // unknown method
  EXPECT_EQ(messages[4]["id"], 3);
  EXPECT_EQ(messages[5]["error"]["code"], -32602);  // params not an object
  EXPECT_EQ(messages[6]["id"], 5);
}

TEST_F(HieraWorkerProcess, EndOfInputWithoutShutdownExitsOne) {
  auto r = run({request(1, "compile", {{"source", kSaxpy}})}, "");
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(frames(r.out).size(), 1u);
  EXPECT_NE(r.err.find("without shutdown"), std::string::npos) << r.err;
}

TEST_F(HieraWorkerProcess, PytorchJobsWhoseRunnerCannotStartFailAsRuntime) {
  json task = {{"kind", "pytorch"}, {"reference", {{"source", "x"}}}, {"candidate", {{"source", "y"}}}};
  auto r = run({request(1, "evaluate", {{"task", task}}), request(2, "profile", {{"task", task}, {"which", "candidate"}}),
                request(3, "shutdown")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto messages = frames(r.out);
  ASSERT_EQ(messages.size(), 3u);
  const json& evaluation = messages[0]["result"];
  EXPECT_EQ(evaluation["verdict"], "failed") << messages[0];
  EXPECT_EQ(evaluation["failures"][0]["check"], "runtime");
  EXPECT_NE(evaluation["failures"][0]["message"].get<std::string>().find("Python runner"), std::string::npos);
  EXPECT_EQ(messages[1]["error"]["code"], -32603);
}

TEST_F(HieraWorkerProcess, HelpAndVersionGoToStdout) {
  auto help = run_process({::hiera::testing::worker_bin(), "--help"}, "");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* option : {"--device", "--cache-dir", "--python"}) EXPECT_NE(help.out.find(option), std::string::npos) << option;
  auto version = run_process({::hiera::testing::worker_bin(), "--version"}, "");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("0.1.0"), std::string::npos);
  EXPECT_NE(run_process({::hiera::testing::worker_bin(), "--device", "-1"}, "").exit_code, 0);
}

}  // namespace
#endif  // HIERA_HAVE_WORKER
