// textDocument/documentSymbol through the whole server: the exact outline of
// a CUDA file (kernels, device functions, a host function with its launches)
// and of a PyTorch module (forward and its ops), costs in `detail`.
#include "server/features/document_symbols.h"

#include "analysis_views_fixture.h"

namespace hiera::server::views_test {
namespace {

json symbol(const std::string& name, json detail, int kind, json whole, json name_range, json children = json::array()) {
  json out = {{"name", name}, {"kind", kind}, {"range", std::move(whole)}, {"selectionRange", std::move(name_range)}};
  if (!detail.is_null()) out["detail"] = std::move(detail);
  if (!children.empty()) out["children"] = std::move(children);
  return out;
}

constexpr int kClass = 5, kMethod = 6, kFunction = 12, kEvent = 24, kOperator = 25;

const std::string kSaxpyCost = "est. 3.00 µs on H200 (launch-bound)";

json cuda_outline(const json& saxpy_detail) {
  return json::array({
      symbol("twice", "__device__", kFunction, range(0, 0, 0, 49), range(0, 17, 0, 22)),
      symbol("saxpy", saxpy_detail, kFunction, range(4, 0, 7, 1), range(4, 16, 4, 21)),
      symbol("fill", nullptr, kFunction, range(9, 0, 9, 63), range(9, 16, 9, 20)),
      symbol("run", "3 launches", kFunction, range(12, 0, 18, 1), range(12, 5, 12, 8),
             json::array({
                 symbol("saxpy<<<(n + 255) / 256, block>>>", saxpy_detail, kEvent, range(14, 2, 14, 47), range(14, 2, 14, 7)),
                 symbol("fill<<<1, 32, 4096>>>", "in a loop", kEvent, range(15, 30, 15, 59), range(15, 30, 15, 34)),
                 symbol("cudaLaunchKernel(saxpy, dim3(4096), dim3(256))", saxpy_detail, kEvent, range(17, 2, 17, 67),
                        range(17, 26, 17, 31)),
             })),
  });
}

TEST_F(AnalysisViewsTest, DocumentSymbolIsAdvertisedOnlyWithTheAnalysis) {
  start();
  const json& caps = initialize_reply["result"]["capabilities"];
  EXPECT_EQ(caps["documentSymbolProvider"], true);
  EXPECT_EQ(caps["definitionProvider"], true);
  EXPECT_EQ(caps["workspaceSymbolProvider"], true);
  EXPECT_EQ(caps["inlayHintProvider"], (json{{"resolveProvider", false}}));
}

TEST_F(AnalysisViewsTest, DocumentSymbolWithoutTheAnalysisFeatureIsAnEmptyListNotAnError) {
  start(nullptr, /*with_analysis=*/false);
  const json& caps = initialize_reply["result"]["capabilities"];
  EXPECT_FALSE(caps.contains("documentSymbolProvider"));
  EXPECT_FALSE(caps.contains("inlayHintProvider"));
  transport.push_message(hiera::testing::notification(
      "textDocument/didOpen", {{"textDocument", {{"uri", kCuUri}, {"languageId", "cuda"}, {"version", 1}, {"text", kCu}}}}));
  EXPECT_EQ(document_symbols(kCuUri)["result"], json::array());
  EXPECT_EQ(workspace_symbols("")["result"], json::array());
}

TEST_F(AnalysisViewsTest, DocumentSymbolOutlinesKernelsDeviceFunctionsAndLaunchesUnderTheirHostFunction) {
  start();
  open(kCuUri, "cuda", kCu);
  EXPECT_EQ(document_symbols(kCuUri)["result"], cuda_outline(kSaxpyCost));
}

TEST_F(AnalysisViewsTest, DocumentSymbolDetailIsTheMeasurementOnceProfiled) {
  start();
  Measurement measured;
  measured.uri = kCuUri;
  measured.symbol = "saxpy";
  measured.gpu = "NVIDIA H200";
  measured.median_ms = 0.00123;
  measurements->put(measured);
  open(kCuUri, "cuda", kCu);
  EXPECT_EQ(document_symbols(kCuUri)["result"], cuda_outline("1.23 µs on NVIDIA H200"));
}

TEST_F(AnalysisViewsTest, DocumentSymbolOutlinesAModuleWithForwardAndItsOps) {
  start();
  open(kPyUri, "python", kPy);
  const json expected = json::array({
      symbol("Block", "est. 3.00 µs on H200 (launch-bound, fused)", kClass, range(4, 0, 12, 20), range(4, 6, 4, 11),
             json::array({
                 symbol("forward", "3 ops", kMethod, range(9, 4, 12, 20), range(9, 8, 9, 15),
                        json::array({
                            symbol("self.fc", "linear · est. 3.00 µs on H200 (launch-bound)", kOperator, range(10, 12, 10, 22),
                                   range(10, 12, 10, 22)),
                            symbol("torch.relu", "relu · est. 3.00 µs on H200 (launch-bound)", kOperator, range(11, 12, 11, 25),
                                   range(11, 12, 11, 25)),
                            symbol("+", "add · est. 3.00 µs on H200 (launch-bound)", kOperator, range(12, 15, 12, 20),
                                   range(12, 15, 12, 20)),
                        })),
             })),
  });
  EXPECT_EQ(document_symbols(kPyUri)["result"], expected);
}

TEST_F(AnalysisViewsTest, DocumentSymbolWithoutAGpuRooflineHasNoCosts) {
  start({{"gpu", "no-such-gpu"}});
  open(kPyUri, "python", kPy);
  const json result = document_symbols(kPyUri)["result"];
  ASSERT_EQ(result.size(), 1u);
  EXPECT_FALSE(result[0].contains("detail"));
  EXPECT_EQ(result[0]["children"][0]["children"][0]["detail"], "linear");
}

TEST_F(AnalysisViewsTest, DocumentSymbolOfAnotherLanguageIsEmpty) {
  start();
  transport.push_message(hiera::testing::notification(
      "textDocument/didOpen",
      {{"textDocument", {{"uri", "file:///w/notes.txt"}, {"languageId", "plaintext"}, {"version", 1}, {"text", "saxpy<<<1, 1>>>()\n"}}}}));
  EXPECT_EQ(document_symbols("file:///w/notes.txt")["result"], json::array());
}

TEST_F(AnalysisViewsTest, DocumentSymbolDuringEditsAnswersFromALastAnalysisNeverAnError) {
  ServerOptions options;
  options.analysis_debounce = std::chrono::milliseconds(10000);  // the edits' builds wait; the requests do not
  options.hover_wait = std::chrono::milliseconds(0);
  start(nullptr, true, options);
  open(kCuUri, "cuda", kCu);
  for (int version = 2; version <= 6; ++version) {
    transport.push_message(hiera::testing::notification(
        "textDocument/didChange", {{"textDocument", {{"uri", kCuUri}, {"version", version}}},
                                   {"contentChanges", {{{"range", range(1, 0, 1, 0)}, {"text", "\n"}}}}}));
    const json reply = document_symbols(kCuUri);
    ASSERT_FALSE(reply.contains("error")) << reply.dump();
    ASSERT_EQ(reply["result"].size(), 4u);  // version 1's outline or a newer one: the same four symbols
    EXPECT_EQ(reply["result"][1]["name"], "saxpy");
    EXPECT_FALSE(inlay_hints(kCuUri, range(0, 0, 99, 0)).contains("error"));
    EXPECT_FALSE(definition(kCuUri, 14, 3).contains("error"));
  }
}

// Without the server's loop: what the feature answers before any build, and
// from the last build once the document moved on.
TEST_F(AnalysisViewsTest, DocumentSymbolBeforeAnyAnalysisIsEmptyThenTheLatestAnalysisAnswers) {
  start();
  AnalysisFeature feature(source_knowledge(), measurements);
  const FeatureContext context{PositionEncoding::Utf16, server->capabilities(), server->settings(), server->documents(),
                               server->jobs(), *server, {}};
  const TextDocument first(kCuUri, "cuda", 1, kCu);
  EXPECT_TRUE(feature.document_symbols(first, context).empty());
  EXPECT_TRUE(feature.inlay_hints(first, {{0, 0}, {99, 0}}, context).empty());
  EXPECT_TRUE(feature.definition(first, {14, 3}, context).empty());
  feature.diagnostics(first, context);  // what a build does: analyses version 1
  const TextDocument second(kCuUri, "cuda", 2, "// a new first line\n" + kCu);
  const auto symbols = feature.document_symbols(second, context);  // not analysed: version 1's outline
  ASSERT_EQ(symbols.size(), 4u);
  EXPECT_EQ(symbols[1].name, "saxpy");
  EXPECT_EQ(symbols[1].selectionRange, (protocol::lsp::Range{{4, 16}, {4, 21}}));
}

}  // namespace
}  // namespace hiera::server::views_test
