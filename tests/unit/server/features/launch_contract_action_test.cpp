// "Add launch contract" and the annotation diagnostics through a whole server
// (frames in, exact results out): listed on an unannotated kernel, resolved to
// a versioned insertion, gone once applied; `?` values left to fill are
// errors at each `?`; malformed annotations are Error diagnostics in the words
// `hiera optimize` uses, at their tokens.
#include <gtest/gtest.h>

#include "analysis_views_fixture.h"

namespace hiera::server::views_test {
namespace {

const std::string kUri = "file:///w/scale.cu";
const std::string kUnannotated =
    "__global__ void scale(const float* x, float* y, float a, int n) {\n"  // 0
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"                   // 1
    "  if (i < n) y[i] = a * x[i];\n"                                      // 2
    "}\n"                                                                  // 3
    "void run(const float* x, float* y, int n) {\n"                        // 4
    "  scale<<<(n + 255) / 256, 256>>>(x, y, 3.0f, n);\n"                  // 5
    "}\n";

const std::string kContract =
    "// Launch contract inferred by hiera from the launch in run: hiera verifies candidates against it.\n"
    "// hiera chose N=1048576 (the file gives no value): set the values the kernel runs at.\n"
    "// hiera: size N=1048576\n"
    "// hiera: arg x input float32[N]\n"
    "// hiera: arg y output float32[N]\n"
    "// hiera: arg a scalar float32 = 3.0\n"
    "// hiera: arg n scalar int32 = N\n"
    "// hiera: launch grid=(N+255)/256 block=256\n";

class LaunchContractActionTest : public AnalysisViewsTest {
 protected:
  json actions(const std::string& uri, json at) {
    return call("textDocument/codeAction",
                {{"textDocument", {{"uri", uri}}}, {"range", std::move(at)}, {"context", {{"diagnostics", json::array()}}}})["result"];
  }
  json diagnostics_of(const std::string& uri, int version) {
    auto published = transport.wait_for([&](const json& m) {
      return m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri &&
             m["params"].value("version", -1) == version;
    });
    // Only the annotations' (the kernels' hints are other tests' business).
    json out = json::array();
    if (published) {
      for (const auto& d : (*published)["params"]["diagnostics"]) {
        if (d["code"] == "hiera.annotation") out.push_back(d);
      }
    }
    return out;
  }
  static json titled(const json& list, const std::string& prefix) {
    for (const auto& a : list) {
      if (a["title"].get<std::string>().rfind(prefix, 0) == 0) return a;
    }
    return nullptr;
  }
  void change(const std::string& uri, int version, const std::string& text) {
    transport.push_message(hiera::testing::notification(
        "textDocument/didChange",
        {{"textDocument", {{"uri", uri}, {"version", version}}}, {"contentChanges", {{{"text", text}}}}}));
  }
};

TEST_F(LaunchContractActionTest, ListedOnTheKernelAndTheLaunchResolvedToAVersionedInsertion) {
  start();
  transport.push_message(hiera::testing::notification(
      "textDocument/didOpen", {{"textDocument", {{"uri", kUri}, {"languageId", "cuda"}, {"version", 4}, {"text", kUnannotated}}}}));
  EXPECT_EQ(diagnostics_of(kUri, 4), json::array());  // nothing written, nothing malformed
  for (const json& at : {range(0, 18, 0, 18), range(5, 4, 5, 4)}) {
    const json action = titled(actions(kUri, at), "Add launch contract");
    ASSERT_FALSE(action.is_null()) << at.dump();
    EXPECT_EQ(action["title"], "Add launch contract");
    EXPECT_EQ(action["kind"], "source");
    EXPECT_FALSE(action.contains("edit"));  // listing is cheap
  }
  const json listed = titled(actions(kUri, range(0, 18, 0, 18)), "Add launch contract");
  const json resolved = call("codeAction/resolve", listed)["result"];
  EXPECT_EQ(resolved["edit"], (json{{"documentChanges",
                                     {{{"textDocument", {{"uri", kUri}, {"version", 4}}},
                                       {"edits", {{{"range", range(0, 0, 0, 0)}, {"newText", kContract}}}}}}}}));
  // Applied: the contract is complete (no diagnostics) and the action is not offered again.
  change(kUri, 5, kContract + kUnannotated);
  EXPECT_EQ(diagnostics_of(kUri, 5), json::array());
  EXPECT_TRUE(titled(actions(kUri, range(8, 18, 8, 18)), "Add launch contract").is_null());
  // Resolving the action listed for version 4 now: the document changed.
  EXPECT_EQ(call("codeAction/resolve", listed)["error"]["code"], -32801);
}

TEST_F(LaunchContractActionTest, ValuesToFillInAreSaidInTheTitleAndAreErrorsOnceInserted) {
  start();
  const std::string text = "__global__ void relu(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] = x[i] > 0 ? x[i] : 0; }\n";
  transport.push_message(hiera::testing::notification(
      "textDocument/didOpen", {{"textDocument", {{"uri", kUri}, {"languageId", "cuda"}, {"version", 1}, {"text", text}}}}));
  diagnostics_of(kUri, 1);
  const json listed = titled(actions(kUri, range(0, 17, 0, 17)), "Add launch contract");
  ASSERT_FALSE(listed.is_null());
  EXPECT_EQ(listed["title"], "Add launch contract (fill in the values marked ?)");
  const std::string inserted =
      call("codeAction/resolve", listed)["result"]["edit"]["documentChanges"][0]["edits"][0]["newText"].get<std::string>();
  EXPECT_EQ(inserted,
            "// Launch contract inferred by hiera from relu's parameters (no launch of it in this file).\n"
            "// hiera chose N=1048576 (the file gives no value): set the values the kernel runs at.\n"
            "// Fill in each '?' (the launch grid, the launch block).\n"
            "// hiera: size N=1048576\n"
            "// hiera: arg x inout float32[N]\n"
            "// hiera: arg n scalar int32 = N\n"
            "// hiera: launch grid=? block=?\n");
  change(kUri, 2, inserted + text);
  const json diagnostics = diagnostics_of(kUri, 2);
  ASSERT_EQ(diagnostics.size(), 2u) << diagnostics.dump();
  // The grid's '?' (the launch line stops at its first error), and so no launch geometry.
  EXPECT_EQ(diagnostics[0]["range"], range(6, 22, 6, 23));
  EXPECT_EQ(diagnostics[1]["range"], range(3, 0, 3, 24));
  EXPECT_EQ(diagnostics[1]["message"], "launch contract: no launch geometry: '// hiera: launch grid=(N+255)/256 block=256'");
  for (const auto& d : diagnostics) {
    EXPECT_EQ(d["severity"], 1);
    EXPECT_EQ(d["code"], "hiera.annotation");
    EXPECT_EQ(d["source"], "hiera");
    EXPECT_EQ(d["data"], (json{{"kernel", "relu"}}));
  }
}

TEST_F(LaunchContractActionTest, MalformedAnnotationsAreErrorsAtTheirTokensEvenWithHintsOff) {
  start({{"hints", {{"enabled", false}}}});
  const std::string text =
      "// hiera: size N=1024; atol=abc\n"
      "// hiera: arg x in float32[N]\n"
      "__global__ void k(float* x) { x[threadIdx.x] = 0; }\n";
  transport.push_message(hiera::testing::notification(
      "textDocument/didOpen", {{"textDocument", {{"uri", kUri}, {"languageId", "cuda"}, {"version", 1}, {"text", text}}}}));
  const json diagnostics = diagnostics_of(kUri, 1);
  json summary = json::array();
  for (const auto& d : diagnostics) summary.push_back({d["range"], d["message"]});
  EXPECT_EQ(summary, (json{
                         {range(0, 28, 0, 31), "atol must be a non-negative number, got 'abc'"},
                         {range(1, 16, 1, 18), "unknown role 'in' (input, output, inout, scalar)"},
                         {range(0, 0, 0, 31), "launch contract: no arguments: annotate each kernel parameter, in order, e.g. "
                                              "'// hiera: arg x input float32[N]'"},
                         {range(0, 0, 0, 31), "launch contract: no launch geometry: '// hiera: launch grid=(N+255)/256 block=256'"},
                     }));
  // A contract begun: the action is not offered.
  EXPECT_TRUE(titled(actions(kUri, range(2, 17, 2, 17)), "Add launch contract").is_null());
}

}  // namespace
}  // namespace hiera::server::views_test
