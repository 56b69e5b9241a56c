// The JSON form: LSP ranges in UTF-16 units, every finding's fields, and
// roofline times when a GPU is given.
#include "engine/analysis/analysis_json.h"

#include <gtest/gtest.h>

namespace hiera::engine::analysis {
namespace {

using nlohmann::json;

json range(int l1, int c1, int l2, int c2) {
  return {{"start", {{"line", l1}, {"character", c1}}}, {"end", {{"line", l2}, {"character", c2}}}};
}

TEST(AnalysisJsonTest, CudaFindingsAndHintWithAFix) {
  // The comment holds a character outside the BMP: 2 UTF-16 units before `float`.
  const std::string text = "/*😀*/__global__ void k(float* x, float* y) { y[0] = x[0]; }\n";
  const json j = to_json(analyze(text, Language::Cuda), text);
  EXPECT_EQ(j["language"], "cuda");
  EXPECT_EQ(j["position_encoding"], "utf-16");
  EXPECT_EQ(j["gpu"], nullptr);
  ASSERT_EQ(j["kernels"].size(), 1u);
  const json& k = j["kernels"][0];
  EXPECT_EQ(k["name"], "k");
  EXPECT_EQ(k["kind"], "kernel");
  EXPECT_EQ(k["range"], range(0, 6, 0, 60));
  EXPECT_EQ(k["name_range"], range(0, 22, 0, 23));
  EXPECT_EQ(k["parameters"][0], (json{{"name", "x"}, {"type", "float*"}, {"range", range(0, 24, 0, 32)},
                                      {"pointer", true}, {"const", false}, {"restrict", false}}));
  EXPECT_EQ(k["work"], nullptr);
  ASSERT_EQ(j["hints"].size(), 1u);
  const json& h = j["hints"][0];
  EXPECT_EQ(h["rule"], "cuda.missing_restrict");
  EXPECT_EQ(h["severity"], "information");
  EXPECT_EQ(h["recipe"], "s3_vectorized_16byte_access");
  EXPECT_EQ(h["fix"], (json{{{"range", range(0, 24, 0, 24)}, {"new_text", "const "}},
                           {{"range", range(0, 30, 0, 30)}, {"new_text", " __restrict__"}}}));
  EXPECT_EQ(j["modules"], json::array());
  EXPECT_EQ(j["kernelbench"], nullptr);
  EXPECT_EQ(j["problems"], json::array());
}

TEST(AnalysisJsonTest, RooflineTimesForKnownWork) {
  const std::string text =
      "import torch\nimport torch.nn as nn\n"
      "class Model(nn.Module):\n"
      "    def forward(self, x):\n"
      "        return torch.relu(x).view(-1)\n"
      "def get_inputs():\n"
      "    return [torch.randn(1000, 1000), (2, 3)]\n";
  const GpuCeilings gpu{1000.0, {{"float32", 10.0}}, 0.0, "test"};
  const json j = to_json(analyze(text, Language::Python), text, &gpu);
  EXPECT_EQ(j["gpu"], "test");
  const json& relu = j["modules"][0]["ops"][0];
  EXPECT_EQ(relu["shape"], (json{1000, 1000}));
  EXPECT_EQ(relu["work"]["flops"], 1000000);
  EXPECT_EQ(relu["work"]["bytes"], 8000000);
  // 8 MB at 1000 GB/s = 8 µs; 1 MFLOP at 10 TFLOP/s = 0.1 µs.
  EXPECT_DOUBLE_EQ(relu["work"]["time_us"].get<double>(), 8.0);
  EXPECT_EQ(relu["work"]["bound"], "memory");
  const json& view = j["modules"][0]["ops"][1];
  EXPECT_EQ(view["work"]["bytes"], 0);
  EXPECT_EQ(j["modules"][0]["work"]["bytes"], 8000000);
  EXPECT_DOUBLE_EQ(j["modules"][0]["work"]["time_us"].get<double>(), 8.0);
  const json& inputs = j["kernelbench"]["inputs"];
  EXPECT_EQ(inputs[1]["value"], (json{2, 3}));
  EXPECT_EQ(inputs[1]["shape"], nullptr);
  EXPECT_EQ(j["kernelbench"]["get_init_inputs"], nullptr);
}

TEST(AnalysisJsonTest, ProblemsWithRanges) {
  const std::string text = "x = 'open\n";
  const json j = to_json(analyze(text, Language::Python), text);
  EXPECT_EQ(j["problems"], (json{{{"range", range(0, 4, 0, 9)}, {"message", "unterminated string literal"}}}));
}

}  // namespace
}  // namespace hiera::engine::analysis
