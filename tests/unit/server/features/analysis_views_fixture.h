#pragma once
// A whole server with the AnalysisFeature for the views' tests (outline,
// inlay hints, definition, workspace symbols): frames in through a
// MemoryTransport, exact results out, with the source tree's knowledge.
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>

#include "engine/knowledge/knowledge_base.h"
#include "memory_transport.h"
#include "server/features/analysis_feature.h"
#include "server/lsp_server.h"
#include "build_paths.h"

namespace hiera::server::views_test {

using nlohmann::json;

inline const std::string kCuUri = "file:///w/kernels.cu";
inline const std::string kPyUri = "file:///w/block.py";

// A device function, an annotated kernel, a kernel without work, and a host
// function (after a comment that names it) launching them three ways.
inline const std::string kCu =
    "__device__ float twice(float v) { return 2 * v; }\n"                      // 0
    "\n"                                                                        // 1
    "// hiera: size N=1048576\n"                                                // 2
    "// hiera: flops=2*N bytes=12*N\n"                                          // 3
    "__global__ void saxpy(int n, float a, float* x, float* y) {\n"            // 4
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"                        // 5
    "  if (i < n) y[i] = a * twice(x[i]) + y[i];\n"                             // 6
    "}\n"                                                                       // 7
    "\n"                                                                        // 8
    "__global__ void fill(float* y, float v) { y[threadIdx.x] = v; }\n"         // 9
    "\n"                                                                        // 10
    "// run(n) launches both kernels\n"                                         // 11
    "void run(int n, float a, float* x, float* y) {\n"                          // 12
    "  dim3 block(16, 16);\n"                                                   // 13
    "  saxpy<<<(n + 255) / 256, block>>>(n, a, x, y);\n"                        // 14
    "  for (int k = 0; k < 4; ++k) fill<<<1, 32, 4096>>>(y, 0.f);\n"            // 15
    "  void* args[] = {&n, &a, &x, &y};\n"                                      // 16
    "  cudaLaunchKernel((void*)saxpy, dim3(4096), dim3(256), args, 0, 0);\n"    // 17
    "}\n";                                                                      // 18

// A KernelBench module whose forward has one op per line.
inline const std::string kPy =
    "import torch\n"                              // 0
    "import torch.nn as nn\n"                     // 1
    "\n"                                          // 2
    "\n"                                          // 3
    "class Block(nn.Module):\n"                   // 4
    "    def __init__(self):\n"                   // 5
    "        super().__init__()\n"                // 6
    "        self.fc = nn.Linear(1024, 1024)\n"   // 7
    "\n"                                          // 8
    "    def forward(self, x):\n"                 // 9
    "        y = self.fc(x)\n"                    // 10
    "        y = torch.relu(y)\n"                 // 11
    "        return y + x\n"                      // 12
    "\n"                                          // 13
    "\n"                                          // 14
    "def get_inputs():\n"                         // 15
    "    return [torch.randn(64, 1024)]\n"        // 16
    "\n"                                          // 17
    "\n"                                          // 18
    "def get_init_inputs():\n"                    // 19
    "    return []\n";                            // 20

inline json range(int l0, int c0, int l1, int c1) {
  return {{"start", {{"line", l0}, {"character", c0}}}, {"end", {{"line", l1}, {"character", c1}}}};
}

inline json position(int line, int character) { return {{"line", line}, {"character", character}}; }

inline std::shared_ptr<const engine::knowledge::KnowledgeBase> source_knowledge() {
  static const auto knowledge = std::make_shared<const engine::knowledge::KnowledgeBase>(
      engine::knowledge::load_knowledge(::hiera::testing::source_dir() + "/knowledge"));
  return knowledge;
}

class AnalysisViewsTest : public ::testing::Test {
 protected:
  hiera::testing::MemoryTransport transport;
  std::shared_ptr<MeasurementStore> measurements = std::make_shared<MeasurementStore>();
  std::unique_ptr<LspServer> server;
  std::future<int> exit_code;
  int next_id = 1;

  // `with_analysis` false: the server without any analysis feature.
  void start(json options = nullptr, bool with_analysis = true, ServerOptions server_options = {}) {
    server_options.client_request_timeout = std::chrono::milliseconds(2000);
    server = std::make_unique<LspServer>(transport, server_options);
    if (with_analysis) server->add_feature(std::make_unique<AnalysisFeature>(source_knowledge(), measurements));
    exit_code = std::async(std::launch::async, [this] { return server->run(); });
    json capabilities = hiera::testing::full_capabilities();
    capabilities["workspace"].erase("configuration");
    json params = {{"processId", nullptr}, {"capabilities", std::move(capabilities)}};
    if (!options.is_null()) params["initializationOptions"] = options;
    initialize_reply = call("initialize", params);
    transport.push_message(hiera::testing::notification("initialized"));
  }
  json call(const std::string& method, json params) {
    const int id = next_id++;
    transport.push_message(hiera::testing::request(id, method, std::move(params)));
    auto response = transport.wait_for_response(id);
    if (!response) ADD_FAILURE() << "no response to " << method;
    return response.value_or(json());
  }
  // Opens a document and waits for its diagnostics (its analysis is built then).
  void open(const std::string& uri, const std::string& language, const std::string& text, int version = 1) {
    transport.push_message(hiera::testing::notification(
        "textDocument/didOpen", {{"textDocument", {{"uri", uri}, {"languageId", language}, {"version", version}, {"text", text}}}}));
    wait_for_diagnostics(uri, version);
  }
  void wait_for_diagnostics(const std::string& uri, int version) {
    auto published = transport.wait_for([&](const json& m) {
      return m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri &&
             m["params"].value("version", -1) == version;
    });
    if (!published) ADD_FAILURE() << "no diagnostics for " << uri << " version " << version;
  }
  json document_symbols(const std::string& uri) {
    return call("textDocument/documentSymbol", {{"textDocument", {{"uri", uri}}}});
  }
  json inlay_hints(const std::string& uri, json in) {
    return call("textDocument/inlayHint", {{"textDocument", {{"uri", uri}}}, {"range", std::move(in)}});
  }
  json definition(const std::string& uri, int line, int character) {
    return call("textDocument/definition", {{"textDocument", {{"uri", uri}}}, {"position", position(line, character)}});
  }
  json workspace_symbols(const std::string& query) { return call("workspace/symbol", {{"query", query}}); }
  void TearDown() override {
    if (exit_code.valid()) {
      transport.end_input();
      exit_code.get();
    }
  }

  json initialize_reply;
};

}  // namespace hiera::server::views_test
