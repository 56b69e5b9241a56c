// The analysis features through the whole server: frames in through a
// MemoryTransport, exact frames out (diagnostics, hovers, lenses, actions,
// resolve, hiera.explainHint), with the source tree's knowledge directory.
#include "server/features/analysis_feature.h"

#include <gtest/gtest.h>

#include <future>

#include "engine/knowledge/knowledge_base.h"
#include "memory_transport.h"
#include "server/lsp_server.h"
#include "build_paths.h"

namespace hiera::server {
namespace {

using nlohmann::json;
using hiera::testing::full_capabilities;
using hiera::testing::notification;
using hiera::testing::request;

const std::string kCuUri = "file:///w/saxpy.cu";
const std::string kPyUri = "file:///w/model.py";

// Two hints: cuda.missing_restrict on `float* x` (line 2), cuda.block_size on the launch's 100 (line 8).
const std::string kCu =
    "// hiera: size N=1048576\n"
    "// hiera: flops=2*N bytes=12*N\n"
    "__global__ void saxpy(int n, float a, float* x, float* y) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n"
    "\n"
    "void run(int n, float a, float* x, float* y) {\n"
    "  saxpy<<<(n + 99) / 100, 100>>>(n, a, x, y);\n"
    "}\n";

// Two hints: torch.host_sync on `print(y)` (line 9), torch.contiguous_copy (line 10).
const std::string kPy =
    "import torch\n"
    "import torch.nn as nn\n"
    "\n"
    "class Model(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "\n"
    "    def forward(self, x):\n"
    "        y = torch.relu(x)\n"
    "        print(y)\n"
    "        return y.contiguous()\n"
    "\n"
    "batch_size = 1024\n"
    "dim = 4096\n"
    "\n"
    "def get_inputs():\n"
    "    return [torch.randn(batch_size, dim)]\n"
    "\n"
    "def get_init_inputs():\n"
    "    return []\n";

const std::string kRecipes = "file://" + ::hiera::testing::source_dir() + "/knowledge/recipes/";

json range(int l0, int c0, int l1, int c1) {
  return {{"start", {{"line", l0}, {"character", c0}}}, {"end", {{"line", l1}, {"character", c1}}}};
}

std::shared_ptr<const engine::knowledge::KnowledgeBase> source_knowledge() {
  static const auto knowledge = std::make_shared<const engine::knowledge::KnowledgeBase>(
      engine::knowledge::load_knowledge(::hiera::testing::source_dir() + "/knowledge"));
  return knowledge;
}

class AnalysisFeatureTest : public ::testing::Test {
 protected:
  hiera::testing::MemoryTransport transport;
  std::shared_ptr<MeasurementStore> measurements = std::make_shared<MeasurementStore>();
  std::unique_ptr<LspServer> server;
  std::future<int> exit_code;
  int next_id = 1;

  void start(json options = nullptr, json capabilities = full_capabilities()) {
    ServerOptions server_options;
    server_options.client_request_timeout = std::chrono::milliseconds(2000);
    server = std::make_unique<LspServer>(transport, server_options);
    server->add_feature(std::make_unique<AnalysisFeature>(source_knowledge(), measurements));
    exit_code = std::async(std::launch::async, [this] { return server->run(); });
    capabilities["workspace"].erase("configuration");  // settings come from initializationOptions only
    json params = {{"processId", nullptr}, {"capabilities", std::move(capabilities)}};
    if (!options.is_null()) params["initializationOptions"] = options;
    call("initialize", params);
    transport.push_message(notification("initialized"));
  }
  json call(const std::string& method, json params) {
    const int id = next_id++;
    transport.push_message(request(id, method, std::move(params)));
    auto response = transport.wait_for_response(id);
    if (!response) ADD_FAILURE() << "no response to " << method;
    return response.value_or(json());
  }
  // Opens a document and returns the diagnostics published for it.
  json open(const std::string& uri, const std::string& language, const std::string& text, int version = 1) {
    transport.push_message(notification("textDocument/didOpen",
                                        {{"textDocument", {{"uri", uri}, {"languageId", language}, {"version", version}, {"text", text}}}}));
    return diagnostics_for(uri);
  }
  json change(const std::string& uri, int version, json range_, const std::string& text) {
    transport.push_message(notification("textDocument/didChange",
                                        {{"textDocument", {{"uri", uri}, {"version", version}}},
                                         {"contentChanges", {{{"range", range_}, {"text", text}}}}}));
    return diagnostics_for(uri);
  }
  json diagnostics_for(const std::string& uri) {
    auto published = transport.wait_for([&](const json& m) {
      return m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri;
    });
    if (!published) ADD_FAILURE() << "no diagnostics for " << uri;
    return published ? (*published)["params"] : json();
  }
  json hover(const std::string& uri, int line, int character) {
    return call("textDocument/hover", {{"textDocument", {{"uri", uri}}}, {"position", {{"line", line}, {"character", character}}}});
  }
  std::string hover_text(const std::string& uri, int line, int character) {
    return hover(uri, line, character)["result"]["contents"].value("value", "");
  }
  json actions(const std::string& uri, json at, json only = nullptr) {
    json context = {{"diagnostics", json::array()}};
    if (!only.is_null()) context["only"] = only;
    return call("textDocument/codeAction", {{"textDocument", {{"uri", uri}}}, {"range", at}, {"context", context}})["result"];
  }
  static std::vector<std::string> titles(const json& list) {
    std::vector<std::string> out;
    for (const auto& a : list) out.push_back(a["title"]);
    return out;
  }
  static json with_title(const json& list, const std::string& title) {
    for (const auto& a : list) {
      if (a["title"] == title) return a;
    }
    ADD_FAILURE() << "no action " << title;
    return json();
  }
  void TearDown() override {
    if (exit_code.valid()) {
      transport.end_input();
      exit_code.get();
    }
  }
};

TEST_F(AnalysisFeatureTest, CudaHintsArePublishedWithExactRangesCodesAndSeverities) {
  start();
  const json published = open(kCuUri, "cuda-cpp", kCu);
  EXPECT_EQ(published["version"], 1);
  ASSERT_EQ(published["diagnostics"].size(), 2u);
  const json& restrict_hint = published["diagnostics"][0];
  EXPECT_EQ(restrict_hint["range"], range(2, 38, 2, 46));
  EXPECT_EQ(restrict_hint["severity"], 3);
  EXPECT_EQ(restrict_hint["code"], "cuda.missing_restrict");
  EXPECT_EQ(restrict_hint["source"], "hiera");
  EXPECT_EQ(restrict_hint["message"], "'x' is only read in 'saxpy': declare it const and __restrict__");
  EXPECT_EQ(restrict_hint["data"], (json{{"rule", "cuda.missing_restrict"}}));
  EXPECT_EQ(restrict_hint["codeDescription"]["href"], kRecipes + "s3_vectorized_16byte_access.json");
  const json& block = published["diagnostics"][1];
  EXPECT_EQ(block["code"], "cuda.block_size");
  EXPECT_EQ(block["severity"], 2);
  EXPECT_EQ(block["range"], range(8, 26, 8, 29));
  EXPECT_EQ(block["message"], "block of 100 threads is not a multiple of 32: its last warp runs 4 of 32 lanes");
  EXPECT_EQ(block["codeDescription"]["href"], kRecipes + "s3_grid_stride_sm_count_grid.json");
}

TEST_F(AnalysisFeatureTest, PythonHintsArePublishedWithExactRangesCodesAndSeverities) {
  start();
  const json published = open(kPyUri, "python", kPy);
  ASSERT_EQ(published["diagnostics"].size(), 2u);
  EXPECT_EQ(published["diagnostics"][0],
            (json{{"range", range(9, 8, 9, 16)},
                  {"severity", 2},
                  {"code", "torch.host_sync"},
                  {"source", "hiera"},
                  {"message", "print of a tensor in forward copies it to the host and waits for the GPU"},
                  {"data", {{"rule", "torch.host_sync"}}},
                  {"codeDescription", {{"href", kRecipes + "s1_remove_host_sync.json"}}}}));
  EXPECT_EQ(published["diagnostics"][1]["range"], range(10, 15, 10, 29));
  EXPECT_EQ(published["diagnostics"][1]["code"], "torch.contiguous_copy");
  EXPECT_EQ(published["diagnostics"][1]["severity"], 3);
}

TEST_F(AnalysisFeatureTest, OtherLanguagesGetNoDiagnosticsAndNoHover) {
  start();
  EXPECT_EQ(open("file:///w/notes.txt", "plaintext", "__global__ void k(float* x) { x[0] = 1; }\n")["diagnostics"], json::array());
  EXPECT_EQ(hover("file:///w/notes.txt", 0, 17)["result"], nullptr);
}

TEST_F(AnalysisFeatureTest, DisabledRulesAreDropped) {
  start({{"hints", {{"disabled", {"cuda.block_size"}}}}});
  const json published = open(kCuUri, "cuda-cpp", kCu);
  ASSERT_EQ(published["diagnostics"].size(), 1u);
  EXPECT_EQ(published["diagnostics"][0]["code"], "cuda.missing_restrict");
  // A disabled rule offers no actions either: on the launch, only the launched kernel's.
  EXPECT_EQ(titles(actions(kCuUri, range(8, 2, 8, 2))),
            (std::vector<std::string>{"Optimize kernel saxpy", "Profile kernel saxpy", "Show task spec for saxpy", "Add launch contract"}));
}

TEST_F(AnalysisFeatureTest, SeverityOverridesReplaceTheRuleDefault) {
  start({{"hints", {{"severity", {{"cuda.missing_restrict", "error"}, {"cuda.block_size", "hint"}}}}}});
  const json published = open(kCuUri, "cuda-cpp", kCu);
  ASSERT_EQ(published["diagnostics"].size(), 2u);
  EXPECT_EQ(published["diagnostics"][0]["severity"], 1);
  EXPECT_EQ(published["diagnostics"][1]["severity"], 4);
}

TEST_F(AnalysisFeatureTest, HintsDisabledPublishNothing) {
  start({{"hints", {{"enabled", false}}}});
  EXPECT_EQ(open(kCuUri, "cuda-cpp", kCu)["diagnostics"], json::array());
  EXPECT_EQ(open(kPyUri, "python", kPy)["diagnostics"], json::array());
}

TEST_F(AnalysisFeatureTest, ChangedSettingsRepublishTheOpenDocumentsDiagnostics) {
  start();
  ASSERT_EQ(open(kCuUri, "cuda-cpp", kCu)["diagnostics"].size(), 2u);
  transport.push_message(notification("workspace/didChangeConfiguration",
                                      {{"settings", {{"hiera", {{"hints", {{"disabled", {"cuda.block_size"}}}}}}}}}));
  const json after = diagnostics_for(kCuUri);
  ASSERT_EQ(after["diagnostics"].size(), 1u);
  EXPECT_EQ(after["diagnostics"][0]["code"], "cuda.missing_restrict");
  transport.push_message(notification("workspace/didChangeConfiguration",
                                      {{"settings", {{"hiera", {{"hints", {{"enabled", false}}}}}}}}));
  EXPECT_EQ(diagnostics_for(kCuUri)["diagnostics"], json::array());
}

TEST_F(AnalysisFeatureTest, BadSettingsAreLoggedOnceAndTheRestStillApplies) {
  start({{"hints", {{"enabled", "yes"}, {"severity", {{"cuda.block_size", "loud"}, {"cuda.missing_restrict", "hint"}}}}}});
  const json published = open(kCuUri, "cuda-cpp", kCu);
  ASSERT_EQ(published["diagnostics"].size(), 2u);
  EXPECT_EQ(published["diagnostics"][0]["severity"], 4);  // the good entry applies
  EXPECT_EQ(published["diagnostics"][1]["severity"], 2);  // the bad one leaves the default
  std::vector<std::string> logged, shown;
  for (const auto& m : transport.drain()) {
    if (m.value("method", "") == "window/logMessage") logged.push_back(m["params"]["message"]);
    if (m.value("method", "") == "window/showMessage") {
      EXPECT_EQ(m["params"]["type"], 2);  // Warning
      shown.push_back(m["params"]["message"]);
    }
  }
  const std::vector<std::string> expected = {
      "hiera: settings: hints.enabled must be true or false, got \"yes\" (ignored)",
      "hiera: settings: hints.severity.cuda.block_size: \"loud\" is not one of \"error\", \"warning\", "
      "\"information\", \"hint\" (ignored)"};
  EXPECT_EQ(logged, expected);
  EXPECT_EQ(shown, expected);  // the user sees each, not only the log
  change(kCuUri, 2, range(9, 1, 9, 1), "\n");  // republished: not said again
  for (const auto& m : transport.drain()) {
    EXPECT_NE(m.value("method", ""), "window/logMessage");
    EXPECT_NE(m.value("method", ""), "window/showMessage");
  }
}

TEST_F(AnalysisFeatureTest, AnUnknownGpuIsShownOnceWithTheAcceptedNames) {
  start({{"gpu", "tpu9"}});
  open(kCuUri, "cuda-cpp", kCu);
  call("textDocument/codeLens", {{"textDocument", {{"uri", kCuUri}}}});
  call("textDocument/codeLens", {{"textDocument", {{"uri", kCuUri}}}});
  std::vector<json> shown;
  for (const auto& m : transport.drain()) {
    if (m.value("method", "") == "window/showMessage") shown.push_back(m["params"]);
  }
  ASSERT_EQ(shown.size(), 1u);
  EXPECT_EQ(shown[0]["type"], 2);
  EXPECT_EQ(shown[0]["message"],
            "hiera: settings: gpu: unknown GPU \"tpu9\"; accepted: a knowledge GPU id (a100_sxm_80gb, h100_pcie, h100_sxm, "
            "h200, l40s, rtx_4090) or a name such as \"H200\" or \"NVIDIA A100-SXM4-80GB\", in any case (ignored)");
}

TEST_F(AnalysisFeatureTest, TheGpuSettingTakesTheUsualNames) {
  start({{"gpu", "NVIDIA A100-SXM4-80GB"}});
  open(kCuUri, "cuda-cpp", kCu);
  const json lenses = call("textDocument/codeLens", {{"textDocument", {{"uri", kCuUri}}}})["result"];
  ASSERT_EQ(lenses.size(), 1u);
  EXPECT_NE(lenses[0]["command"]["title"].get<std::string>().find(" on A100 SXM4 (memory-bound)"), std::string::npos)
      << lenses.dump();
  for (const auto& m : transport.drain()) EXPECT_NE(m.value("method", ""), "window/showMessage") << m.dump();
}

TEST_F(AnalysisFeatureTest, DiagnosticsFollowEditsIncrementally) {
  start();
  open(kCuUri, "cuda-cpp", kCu);
  // Two lines inserted above the kernel move its hint down; making x const __restrict__ removes it.
  json published = change(kCuUri, 2, range(0, 0, 0, 0), "#include <cstdio>\n\n");
  ASSERT_EQ(published["diagnostics"].size(), 2u);
  EXPECT_EQ(published["version"], 2);
  EXPECT_EQ(published["diagnostics"][0]["range"], range(4, 38, 4, 46));
  published = change(kCuUri, 3, range(4, 38, 4, 46), "const float* __restrict__ x");
  ASSERT_EQ(published["diagnostics"].size(), 1u);
  EXPECT_EQ(published["diagnostics"][0]["code"], "cuda.block_size");
}

TEST_F(AnalysisFeatureTest, KernelHoverShowsTheEstimateAndThatItIsNotMeasured) {
  start();
  open(kCuUri, "cuda-cpp", kCu);
  const json reply = hover(kCuUri, 2, 18);
  EXPECT_EQ(reply["result"]["range"], range(2, 16, 2, 21));
  EXPECT_EQ(reply["result"]["contents"]["kind"], "markdown");
  EXPECT_EQ(reply["result"]["contents"]["value"],
            "### kernel `saxpy`\n\n"
            "**Estimate** on H200: 3.00 µs, launch-bound (at least 3.00 µs a launch; 2.62 µs at speed of light) · 2.1 MFLOP, 12.6 MB (shapes from annotations)\n\n"
            "Not measured yet: run *Profile kernel saxpy*.\n");
}

TEST_F(AnalysisFeatureTest, KernelHoverShowsTheMeasurementAndTheVerifiedSpeedup) {
  start();
  open(kCuUri, "cuda-cpp", kCu);
  Measurement m;
  m.uri = kCuUri;
  m.symbol = "saxpy";
  m.gpu = "NVIDIA H200";
  m.when = "2025-01-02T03:04:05Z";
  m.median_ms = 0.00312;
  m.p10_ms = 0.003;
  m.p90_ms = 0.0035;
  m.sol_fraction = 0.84;
  m.bottleneck = "memory-bound";
  m.kernels = {{"saxpy", 0.00312, 1.0}};
  measurements->put(m);
  const std::string estimate =
      "### kernel `saxpy`\n\n"
      "**Estimate** on H200: 3.00 µs, launch-bound (at least 3.00 µs a launch; 2.62 µs at speed of light) · 2.1 MFLOP, 12.6 MB (shapes from annotations)\n\n";
  const std::string measured =
      "**Measured** on NVIDIA H200: median 3.12 µs (p10–p90 3.00 µs – 3.50 µs) · 84% of speed of light · memory-bound · "
      "2025-01-02T03:04:05Z\n\n"
      "| kernel | time per call | share |\n|---|---:|---:|\n| `saxpy` | 3.12 µs | 100% |\n";
  EXPECT_EQ(hover_text(kCuUri, 2, 16), estimate + measured);

  m.verified_speedup = 1.8;
  m.optimized_median_ms = 0.00173;
  m.report_path = "/tmp/hiera runs/report.md";
  measurements->put(m);
  EXPECT_EQ(hover_text(kCuUri, 2, 16),
            estimate + measured +
                "\n**Optimized**: verified 1.80× faster (median 1.73 µs) · report: "
                "[/tmp/hiera runs/report.md](file:///tmp/hiera%20runs/report.md)\n");
}

TEST_F(AnalysisFeatureTest, LaunchHoverShowsTheConfigurationAndTheKernelsCost) {
  start();
  open(kCuUri, "cuda-cpp", kCu);
  const json reply = hover(kCuUri, 8, 20);
  EXPECT_EQ(reply["result"]["range"], range(8, 2, 8, 44));
  EXPECT_EQ(reply["result"]["contents"]["value"],
            "### launch of `saxpy` in `run`\n\n"
            "grid `(n + 99) / 100` · block `100` (100 threads per block)\n\n"
            "**Estimate** on H200: 3.00 µs, launch-bound (at least 3.00 µs a launch; 2.62 µs at speed of light) · 2.1 MFLOP, 12.6 MB (shapes from annotations)\n\n"
            "Not measured yet: run *Profile kernel saxpy*.\n");
  Measurement m;
  m.uri = kCuUri;
  m.symbol = "saxpy";
  m.median_ms = 0.004;
  measurements->put(m);
  EXPECT_EQ(hover_text(kCuUri, 8, 20).substr(hover_text(kCuUri, 8, 20).find("**Measured**")), "**Measured**: median 4.00 µs\n");
  // A launch of a kernel the file does not define.
  open("file:///w/other.cu", "cuda", "void run(float* x) { fill<<<1, 32>>>(x); }\n");
  EXPECT_EQ(hover_text("file:///w/other.cu", 0, 22),
            "### launch of `fill` in `run`\n\ngrid `1` · block `32` (32 threads per block)\n\n`fill` is not defined in this file.\n");
}

TEST_F(AnalysisFeatureTest, OpHoverShowsItsShapeEstimateAndTheModulesMeasurement) {
  start();
  open(kPyUri, "python", kPy);
  const json reply = hover(kPyUri, 8, 14);
  EXPECT_EQ(reply["result"]["range"], range(8, 12, 8, 25));
  const std::string op =
      "### `torch.relu` (relu) in `Model.forward`\n\n"
      "result [1024, 4096] float32\n\n"
      "**Estimate** on H200: 6.99 µs at speed of light, memory-bound · 4.2 MFLOP, 33.6 MB (shapes from get_inputs)\n";
  EXPECT_EQ(reply["result"]["contents"]["value"], op);
  Measurement m;
  m.uri = kPyUri;
  m.symbol = "Model";
  m.gpu = "NVIDIA H200";
  m.median_ms = 0.0251;
  measurements->put(m);
  EXPECT_EQ(hover_text(kPyUri, 8, 14), op + "\n`Model.forward` as a whole: median 25.1 µs on NVIDIA H200\n");
}

TEST_F(AnalysisFeatureTest, ModuleHoverSumsItsOps) {
  start();
  open(kPyUri, "python", kPy);
  const json reply = hover(kPyUri, 3, 8);
  EXPECT_EQ(reply["result"]["range"], range(3, 6, 3, 11));
  EXPECT_EQ(reply["result"]["contents"]["value"],
            "### nn.Module `Model`\n\n"
            "0 layers · 2 ops in forward\n\n"
            "**Estimate** on H200: 14.0 µs at speed of light, memory-bound · 4.2 MFLOP, 67.1 MB over 2 of 2 ops (shapes from "
            "get_inputs)\n\n"
            "Not measured yet: run *Profile Model.forward*.\n");
  Measurement m;
  m.uri = kPyUri;
  m.symbol = "Model";
  m.gpu = "NVIDIA H200";
  m.median_ms = 0.0251;
  m.kernels = {{"vectorized_elementwise_kernel", 0.0125, 0.5}, {"copy_kernel", 0.0126, 0.5}};
  m.verified_speedup = 2.0;
  m.report_path = "/r/model.md";
  measurements->put(m);
  const std::string text = hover_text(kPyUri, 3, 8);
  EXPECT_EQ(text.substr(text.find("**Measured**")),
            "**Measured** on NVIDIA H200: median 25.1 µs\n\n"
            "| kernel | time per call | share |\n|---|---:|---:|\n"
            "| `vectorized_elementwise_kernel` | 12.5 µs | 50% |\n| `copy_kernel` | 12.6 µs | 50% |\n\n"
            "**Optimized**: verified 2.00× faster · report: [/r/model.md](file:///r/model.md)\n");
}

TEST_F(AnalysisFeatureTest, HoverElsewhereIsNull) {
  start();
  open(kCuUri, "cuda-cpp", kCu);
  open(kPyUri, "python", kPy);
  EXPECT_EQ(hover(kCuUri, 3, 6)["result"], nullptr);   // inside the kernel body
  EXPECT_EQ(hover(kCuUri, 0, 3)["result"], nullptr);   // a comment
  EXPECT_EQ(hover(kCuUri, 7, 6)["result"], nullptr);   // the host function's name
  EXPECT_EQ(hover(kPyUri, 12, 2)["result"], nullptr);  // a module-level constant
  EXPECT_EQ(hover(kPyUri, 7, 9)["result"], nullptr);   // `def forward`
}

TEST_F(AnalysisFeatureTest, TheGpuSettingPicksTheRooflineAndAnUnknownOneIsSaid) {
  start({{"gpu", "h100_pcie"}});
  open(kCuUri, "cuda-cpp", kCu);
  const json lenses = call("textDocument/codeLens", {{"textDocument", {{"uri", kCuUri}}}})["result"];
  ASSERT_EQ(lenses.size(), 1u);
  EXPECT_EQ(lenses[0]["command"]["title"].get<std::string>().rfind("est. ", 0), 0u);
  EXPECT_NE(lenses[0]["command"]["title"].get<std::string>().find(" on H100 PCIe (memory-bound)"), std::string::npos);
  transport.push_message(notification("workspace/didChangeConfiguration", {{"settings", {{"hiera", {{"gpu", "b999"}}}}}}));
  EXPECT_EQ(hover_text(kCuUri, 2, 16),
            "### kernel `saxpy`\n\n"
            "**Estimate**: 2.1 MFLOP, 12.6 MB (shapes from annotations); no roofline time: settings: gpu: unknown GPU \"b999\"; "
            "accepted: a knowledge GPU id (a100_sxm_80gb, h100_pcie, h100_sxm, h200, l40s, rtx_4090) or a name such as \"H200\" "
            "or \"NVIDIA A100-SXM4-80GB\", in any case\n\n"
            "Not measured yet: run *Profile kernel saxpy*.\n");
}

TEST_F(AnalysisFeatureTest, LensesShowEstimatesMeasurementsAndOptimizations) {
  start();
  open(kCuUri, "cuda-cpp", kCu, 4);
  open(kPyUri, "python", kPy, 7);
  auto lenses = [&](const std::string& uri) { return call("textDocument/codeLens", {{"textDocument", {{"uri", uri}}}})["result"]; };
  EXPECT_EQ(lenses(kCuUri),
            json::array({{{"range", range(2, 16, 2, 21)},
                          {"command",
                           {{"title", "est. 3.00 µs on H200 (launch-bound)"},
                            {"command", "hiera.profileSymbol"},
                            {"arguments", {{{"uri", kCuUri}, {"version", 4}, {"symbol", "saxpy"}, {"kind", "kernel"}}}}}}}}));
  EXPECT_EQ(lenses(kPyUri),
            json::array({{{"range", range(3, 6, 3, 11)},
                          {"command",
                           {{"title", "est. 14.0 µs on H200 (memory-bound)"},
                            {"command", "hiera.profileSymbol"},
                            {"arguments", {{{"uri", kPyUri}, {"version", 7}, {"symbol", "Model"}, {"kind", "module"}}}}}}}}));
  Measurement m;
  m.uri = kCuUri;
  m.symbol = "saxpy";
  m.gpu = "NVIDIA H200";
  m.median_ms = 1.234;
  m.sol_fraction = 0.41;
  measurements->put(m);
  EXPECT_EQ(lenses(kCuUri)[0]["command"]["title"], "1.23 ms on NVIDIA H200 · 41% of speed of light");
  m.verified_speedup = 1.8;
  measurements->put(m);
  EXPECT_EQ(lenses(kCuUri)[0]["command"]["title"], "1.23 ms on NVIDIA H200 · 41% of speed of light · verified 1.80× faster");
  Measurement optimized_only;
  optimized_only.uri = kPyUri;
  optimized_only.symbol = "Model";
  optimized_only.verified_speedup = 2.5;
  measurements->put(optimized_only);
  EXPECT_EQ(lenses(kPyUri)[0]["command"]["title"], "verified 2.50× faster");
}

TEST_F(AnalysisFeatureTest, AKernelWithoutKnownWorkIsNotMeasuredYet) {
  start();
  open("file:///w/plain.cu", "cuda", "__global__ void fill(float* out) { out[threadIdx.x] = 1.0f; }\n");
  const json lenses = call("textDocument/codeLens", {{"textDocument", {{"uri", "file:///w/plain.cu"}}}})["result"];
  ASSERT_EQ(lenses.size(), 1u);
  EXPECT_EQ(lenses[0]["command"]["title"], "not measured yet");
  EXPECT_EQ(hover_text("file:///w/plain.cu", 0, 17),
            "### kernel `fill`\n\n"
            "No estimate: the kernel's work is unknown (state it with `// hiera: flops=… bytes=…` and `// hiera: size …`).\n\n"
            "Not measured yet: run *Profile kernel fill*.\n");
}

TEST_F(AnalysisFeatureTest, ActionsInAKernelListOptimizeProfileAndSpecResolvedToCommands) {
  start();
  open(kCuUri, "cuda-cpp", kCu, 3);
  const json listed = actions(kCuUri, range(3, 4, 3, 4));
  EXPECT_EQ(titles(listed), (std::vector<std::string>{"Optimize kernel saxpy", "Profile kernel saxpy", "Show task spec for saxpy", "Add launch contract"}));
  // Listing is cheap: no command yet, only data.
  for (const auto& a : listed) EXPECT_FALSE(a.contains("command")) << a.dump();
  EXPECT_EQ(listed[0]["kind"], "refactor.rewrite");
  EXPECT_EQ(listed[1]["kind"], "source");
  const json argument = {{"uri", kCuUri}, {"version", 3}, {"symbol", "saxpy"}, {"kind", "kernel"}};
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"Optimize kernel saxpy", "hiera.optimizeSymbol"}, {"Profile kernel saxpy", "hiera.profileSymbol"}, {"Show task spec for saxpy", "hiera.showSpec"}};
  for (const auto& [title, command] : expected) {
    const json resolved = call("codeAction/resolve", with_title(listed, title))["result"];
    EXPECT_EQ(resolved["command"], (json{{"title", title}, {"command", command}, {"arguments", {argument}}})) << title;
  }
  // On the launch, the kernel it launches; on its block size, that hint's explanation too (no mechanical fix).
  EXPECT_EQ(titles(actions(kCuUri, range(8, 4, 8, 4), json{"refactor"})), std::vector<std::string>{"Optimize kernel saxpy"});
  EXPECT_EQ(titles(actions(kCuUri, range(8, 27, 8, 27))),
            (std::vector<std::string>{"Explain hint cuda.block_size", "Optimize kernel saxpy", "Profile kernel saxpy",
                                      "Show task spec for saxpy", "Add launch contract"}));
}

TEST_F(AnalysisFeatureTest, ActionsInAModuleNameItsForward) {
  start();
  open(kPyUri, "python", kPy);
  const json listed = actions(kPyUri, range(8, 0, 8, 0));
  EXPECT_EQ(titles(listed), (std::vector<std::string>{"Optimize Model.forward", "Profile Model.forward", "Show task spec for Model"}));
  const json resolved = call("codeAction/resolve", listed[1])["result"];
  EXPECT_EQ(resolved["command"]["arguments"], (json{{{"uri", kPyUri}, {"version", 1}, {"symbol", "Model"}, {"kind", "module"}}}));
  EXPECT_EQ(titles(actions(kPyUri, range(13, 0, 13, 0))), std::vector<std::string>{});  // outside any module
}

TEST_F(AnalysisFeatureTest, AHintUnderTheCursorOffersItsQuickFixAndItsExplanation) {
  start();
  open(kCuUri, "cuda-cpp", kCu, 5);
  const json listed = actions(kCuUri, range(2, 40, 2, 40));
  EXPECT_EQ(titles(listed), (std::vector<std::string>{"Declare `float* x` const __restrict__", "Explain hint cuda.missing_restrict",
                                                      "Optimize kernel saxpy", "Profile kernel saxpy", "Show task spec for saxpy", "Add launch contract"}));
  const json& fix = listed[0];
  EXPECT_EQ(fix["kind"], "quickfix");
  EXPECT_EQ(fix["isPreferred"], true);
  ASSERT_EQ(fix["diagnostics"].size(), 1u);
  EXPECT_EQ(fix["diagnostics"][0]["code"], "cuda.missing_restrict");
  EXPECT_EQ(fix["diagnostics"][0]["range"], range(2, 38, 2, 46));
  EXPECT_FALSE(fix.contains("edit"));
  const json resolved = call("codeAction/resolve", fix)["result"];
  EXPECT_EQ(resolved["edit"],
            (json{{"documentChanges",
                   {{{"textDocument", {{"uri", kCuUri}, {"version", 5}}},
                     {"edits", {{{"range", range(2, 38, 2, 38)}, {"newText", "const "}},
                                {{"range", range(2, 44, 2, 44)}, {"newText", " __restrict__"}}}}}}}}));
  const json explain = call("codeAction/resolve", listed[1])["result"];
  EXPECT_EQ(explain["command"], (json{{"title", "Explain hint cuda.missing_restrict"},
                                      {"command", "hiera.explainHint"},
                                      {"arguments", {{{"rule", "cuda.missing_restrict"}, {"uri", kCuUri}, {"version", 5}, {"hint", 0}}}}}));
  // `only` filters by kind prefix.
  EXPECT_EQ(titles(actions(kCuUri, range(2, 40, 2, 40), json{"quickfix"})),
            (std::vector<std::string>{"Declare `float* x` const __restrict__", "Explain hint cuda.missing_restrict"}));
}

TEST_F(AnalysisFeatureTest, AQuickFixForAClientWithoutDocumentChangesUsesChanges) {
  json capabilities = full_capabilities();
  capabilities["workspace"]["workspaceEdit"].erase("documentChanges");
  start(nullptr, capabilities);
  open(kPyUri, "python", kPy);
  const json listed = actions(kPyUri, range(9, 10, 9, 10));
  ASSERT_EQ(titles(listed), (std::vector<std::string>{"Remove the print statement", "Explain hint torch.host_sync",
                                                       "Optimize Model.forward", "Profile Model.forward", "Show task spec for Model"}));
  const json resolved = call("codeAction/resolve", listed[0])["result"];
  EXPECT_EQ(resolved["edit"], (json{{"changes", {{kPyUri, {{{"range", range(9, 0, 10, 0)}, {"newText", ""}}}}}}}));
}

TEST_F(AnalysisFeatureTest, ResolveAgainstAChangedDocumentIsContentModified) {
  start();
  open(kCuUri, "cuda-cpp", kCu);
  const json listed = actions(kCuUri, range(2, 40, 2, 40));
  ASSERT_GE(listed.size(), 3u);
  change(kCuUri, 2, range(9, 1, 9, 1), "\n");
  for (const auto& action : listed) {
    const json reply = call("codeAction/resolve", action);
    EXPECT_EQ(reply["error"]["code"], -32801) << action["title"];
    EXPECT_EQ(reply["error"]["message"], "codeAction/resolve: the document changed since this was offered (version 1, now 2)");
  }
}

TEST_F(AnalysisFeatureTest, ResolveOfForgedDataIsInvalidParams) {
  start();
  open(kCuUri, "cuda-cpp", kCu);
  json action = actions(kCuUri, range(2, 40, 2, 40))[0];
  action["data"]["payload"]["hint"] = 7;
  EXPECT_EQ(call("codeAction/resolve", action)["error"]["message"], "codeAction/resolve: no hint cuda.missing_restrict at index 7");
  action["data"]["payload"]["action"] = "format";
  EXPECT_EQ(call("codeAction/resolve", action)["error"]["message"], "codeAction/resolve: unknown action 'format'");
  action["data"]["payload"] = {{"uri", kCuUri}};
  const json reply = call("codeAction/resolve", action);
  EXPECT_EQ(reply["error"]["code"], -32602);
  EXPECT_EQ(reply["error"]["message"], "codeAction/resolve: not an analysis action");
}

TEST_F(AnalysisFeatureTest, ExplainHintAnswersMarkdownAndShowsTheOneLineForm) {
  start();
  open(kCuUri, "cuda-cpp", kCu);
  const json reply = call("workspace/executeCommand",
                          {{"command", "hiera.explainHint"},
                           {"arguments", {{{"rule", "cuda.missing_restrict"}, {"uri", kCuUri}, {"version", 1}, {"hint", 0}}}}});
  EXPECT_EQ(reply["result"]["title"], "Hint cuda.missing_restrict");
  const std::string markdown = reply["result"]["markdown"];
  EXPECT_EQ(markdown.rfind("### cuda.missing_restrict (information)\n\n"
                           "**'x' is only read in 'saxpy': declare it const and __restrict__**\n\n",
                           0),
            0u)
      << markdown;
  EXPECT_NE(markdown.find("\n#### Recipe: 16-byte vectorised loads and stores (float4) for memory-bound kernels\n\n"
                          "`s3_vectorized_16byte_access` · space S3 · expected 1.10×–1.60×\n\nLoad and store four float32"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("\nPitfalls:\n\n- Every pointer must be 16-byte aligned"), std::string::npos) << markdown;
  const auto shown = transport.wait_for([](const json& m) { return m.value("method", "") == "window/showMessage"; });
  ASSERT_TRUE(shown);
  EXPECT_EQ((*shown)["params"],
            (json{{"type", 3}, {"message", "hiera cuda.missing_restrict: 'x' is only read in 'saxpy': declare it const and __restrict__"}}));
}

TEST_F(AnalysisFeatureTest, ExplainHintOfARuleAloneAndItsErrors) {
  start();
  open(kCuUri, "cuda-cpp", kCu);
  auto explain = [&](json argument) {
    return call("workspace/executeCommand", {{"command", "hiera.explainHint"}, {"arguments", json::array({argument})}});
  };
  const json alone = explain({{"rule", "cuda.double_in_loop"}});
  EXPECT_EQ(alone["result"]["title"], "Hint cuda.double_in_loop");
  EXPECT_EQ(alone["result"]["markdown"].get<std::string>().find("#### Recipe"), std::string::npos);  // the rule has none
  EXPECT_EQ(explain({{"rule", "cuda.nonsense"}})["error"]["message"], "hiera.explainHint: unknown rule 'cuda.nonsense'");
  EXPECT_EQ(explain({{"uri", kCuUri}})["error"]["message"], "hiera.explainHint: rule is required");
  EXPECT_EQ(explain({{"rule", "cuda.block_size"}, {"uri", kCuUri}, {"version", 1}, {"hint", 0}})["error"]["message"],
            "hiera.explainHint: no hint cuda.block_size at index 0");
  EXPECT_EQ(explain({{"rule", "cuda.block_size"}, {"uri", kCuUri}, {"version", 9}, {"hint", 1}})["error"]["code"], -32801);
  EXPECT_EQ(explain({{"rule", "cuda.block_size"}, {"uri", "file:///w/closed.cu"}})["error"]["message"],
            "hiera.explainHint: document not open: file:///w/closed.cu");
  EXPECT_EQ(call("workspace/executeCommand", {{"command", "hiera.explainHint"}, {"arguments", {"cuda.block_size"}}})["error"]["code"], -32602);
}

// A non-ASCII comment before the kernel on its line: 😀 is 2 UTF-16 units and 4 UTF-8 bytes, é 1 and 2.
const std::string kWide = "/* é😀 */ __global__ void k(float* x, float* y) { y[0] = x[0]; }\n";

TEST_F(AnalysisFeatureTest, PositionsAreUtf16ByDefault) {
  start();
  const json published = open("file:///w/wide.cu", "cuda-cpp", kWide);
  ASSERT_EQ(published["diagnostics"].size(), 1u);
  EXPECT_EQ(published["diagnostics"][0]["range"], range(0, 28, 0, 36));  // float* x
  EXPECT_EQ(hover("file:///w/wide.cu", 0, 26)["result"]["range"], range(0, 26, 0, 27));
  const json listed = actions("file:///w/wide.cu", range(0, 30, 0, 30));
  const json resolved = call("codeAction/resolve", listed[0])["result"];
  EXPECT_EQ(resolved["edit"]["documentChanges"][0]["edits"][1]["range"], range(0, 34, 0, 34));
}

TEST_F(AnalysisFeatureTest, PositionsAreUtf8WhenNegotiated) {
  json capabilities = full_capabilities();
  capabilities["general"]["positionEncodings"] = {"utf-8"};
  start(nullptr, capabilities);
  const json published = open("file:///w/wide.cu", "cuda-cpp", kWide);
  ASSERT_EQ(published["diagnostics"].size(), 1u);
  EXPECT_EQ(published["diagnostics"][0]["range"], range(0, 31, 0, 39));
  EXPECT_EQ(hover("file:///w/wide.cu", 0, 29)["result"]["range"], range(0, 29, 0, 30));
  EXPECT_EQ(call("textDocument/codeLens", {{"textDocument", {{"uri", "file:///w/wide.cu"}}}})["result"][0]["range"], range(0, 29, 0, 30));
  const json listed = actions("file:///w/wide.cu", range(0, 33, 0, 33));
  const json resolved = call("codeAction/resolve", listed[0])["result"];
  EXPECT_EQ(resolved["edit"]["documentChanges"][0]["edits"][1]["range"], range(0, 37, 0, 37));
}

TEST_F(AnalysisFeatureTest, HalfTypedSourceNeverBreaksTheServer) {
  start();
  open(kCuUri, "cuda-cpp", "");
  // Type the CUDA file one piece at a time, asking for everything after each edit.
  int version = 1;
  std::size_t line = 0, character = 0;
  for (std::size_t at = 0; at < kCu.size(); at += 7) {
    const std::string piece = kCu.substr(at, 7);
    change(kCuUri, ++version, range(static_cast<int>(line), static_cast<int>(character), static_cast<int>(line), static_cast<int>(character)), piece);
    for (char c : piece) {
      if (c == '\n') {
        ++line;
        character = 0;
      } else {
        ++character;
      }
    }
    EXPECT_TRUE(hover(kCuUri, static_cast<int>(line), 0).contains("result"));
    EXPECT_TRUE(call("textDocument/codeLens", {{"textDocument", {{"uri", kCuUri}}}}).contains("result"));
    EXPECT_TRUE(actions(kCuUri, range(static_cast<int>(line), 0, static_cast<int>(line), 0)).is_array());
  }
  // Broken Python: an unclosed call, a forward with no body, stray indentation.
  const json published =
      open(kPyUri, "python", "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x\n  ]]]\nclass N(torch.nn.Module):\n    def forward(self, x):\n");
  EXPECT_TRUE(published["diagnostics"].is_array());
  EXPECT_TRUE(hover(kPyUri, 3, 20).contains("result"));
  EXPECT_EQ(titles(actions(kPyUri, range(6, 4, 6, 4))),
            (std::vector<std::string>{"Optimize N.forward", "Profile N.forward", "Show task spec for N"}));
}

}  // namespace
}  // namespace hiera::server
