// Modules, layers, forward ops with data flow and shapes, and KernelBench
// inputs, read from Python source.
#include "engine/analysis/torch_scanner.h"

#include <gtest/gtest.h>

#include "engine/analysis/python_lexer.h"

namespace hiera::engine::analysis {
namespace {

struct Scanned {
  std::string source;
  PythonSyntax syntax;
  TorchScan scan;
  explicit Scanned(std::string text, const SizeMap& sizes = {})
      : source(std::move(text)), syntax(parse_python(source, lex_python(source).tokens)), scan(scan_torch(source, syntax, sizes)) {}
  std::string text(Span s) const { return source.substr(s.begin, s.end - s.begin); }
  const TorchModule& module(std::string_view name) const {
    for (const auto& m : scan.modules) {
      if (m.name == name) return m;
    }
    throw std::runtime_error("no module " + std::string(name));
  }
  std::vector<std::string> ops(std::string_view name) const {
    std::vector<std::string> out;
    for (const auto& o : module(name).ops) out.push_back(o.op);
    return out;
  }
};

const std::string kMlp =
    "import torch\n"
    "from torch import nn\n"
    "import torch.nn.functional as Fn\n"
    "\n"
    "class Model(nn.Module):\n"
    "    def __init__(self, d_in, d_out, dropout=0.1):\n"
    "        super().__init__()\n"
    "        self.fc = nn.Linear(d_in, d_out)\n"
    "        self.act = nn.Sequential(nn.ReLU(), nn.Dropout(dropout))\n"
    "        self.register_buffer('mask', torch.ones(d_out))\n"
    "        self.scale = nn.Parameter(torch.ones(1, d_out))\n"
    "\n"
    "    def forward(self, x, y):\n"
    "        h = self.act(self.fc(x))\n"
    "        h = Fn.gelu(h * self.scale)\n"
    "        return (h @ y.t()).softmax(-1)\n"
    "\n"
    "batch = 32\n"
    "d_in, d_out = 64, 128\n"
    "def get_inputs():\n"
    "    x = torch.randn(batch, d_in, dtype=torch.float16)\n"
    "    return [x, torch.rand(16, d_out).half()]\n"
    "def get_init_inputs():\n"
    "    return [d_in, d_out]\n";

TEST(TorchScannerTest, LayersFromInit) {
  const Scanned s(kMlp);
  const TorchModule& m = s.module("Model");
  EXPECT_EQ(m.bases, (std::vector<std::string>{"nn.Module"}));
  EXPECT_EQ(m.init_parameters, (std::vector<std::string>{"d_in", "d_out", "dropout"}));
  EXPECT_EQ(m.forward_parameters, (std::vector<std::string>{"x", "y"}));
  ASSERT_EQ(m.layers.size(), 4u);
  EXPECT_EQ(m.layers[0], (TorchLayer{"fc", "Linear", "d_in, d_out", m.layers[0].span}));
  EXPECT_EQ(s.text(m.layers[0].span), "self.fc = nn.Linear(d_in, d_out)");
  EXPECT_EQ(m.layers[1].type, "Sequential");
  // A registered buffer is an attribute forward can read, as `self.mask = ...` would be.
  EXPECT_EQ(m.layers[2], (TorchLayer{"mask", "buffer", "'mask', torch.ones(d_out)", m.layers[2].span}));
  EXPECT_EQ(s.text(m.layers[2].span), "self.register_buffer('mask', torch.ones(d_out))");
  EXPECT_EQ(m.layers[3].type, "Parameter");
}

TEST(TorchScannerTest, ForwardOpsInExecutionOrderWithDataFlowAndShapes) {
  const Scanned s(kMlp);
  const TorchModule& m = s.module("Model");
  EXPECT_EQ(s.ops("Model"), (std::vector<std::string>{"linear", "relu", "dropout", "mul", "gelu", "t", "matmul", "softmax"}));
  const auto& ops = m.ops;
  EXPECT_EQ(s.text(ops[0].span), "self.fc(x)");
  EXPECT_EQ(ops[0].call, "self.fc");
  EXPECT_EQ(ops[1].call, "self.act");  // a Sequential's children run at its call
  EXPECT_EQ(ops[1].inputs, (std::vector<int>{0}));
  EXPECT_EQ(ops[4].call, "Fn.gelu");
  EXPECT_EQ(ops[6].inputs, (std::vector<int>{4, 5}));
  EXPECT_EQ(s.text(ops[7].span), "(h @ y.t()).softmax(-1)");
  // float16 inputs: linear 32x64 by 64x128.
  EXPECT_EQ(ops[0].shape, (Shape{32, 128}));
  EXPECT_EQ(ops[0].dtype, "float16");
  ASSERT_TRUE(ops[0].work);
  EXPECT_DOUBLE_EQ(ops[0].work->flops, 2.0 * 32 * 128 * 64 + 32 * 128);
  EXPECT_DOUBLE_EQ(ops[0].work->bytes, (32 * 64 + 128 * 64 + 128 + 32 * 128) * 2.0);
  EXPECT_EQ(ops[0].work->source, "get_inputs");
  EXPECT_EQ(ops[6].shape, (Shape{32, 16}));
  EXPECT_EQ(ops[7].shape, (Shape{32, 16}));
}

TEST(TorchScannerTest, KernelBenchInputsEvaluate) {
  const Scanned s(kMlp);
  ASSERT_TRUE(s.scan.kernelbench);
  const KernelBenchEntry& kb = *s.scan.kernelbench;
  EXPECT_EQ(kb.model, "Model");
  ASSERT_EQ(kb.inputs.size(), 2u);
  EXPECT_EQ(kb.inputs[0].expression, "x");
  EXPECT_EQ(kb.inputs[0].shape, (Shape{32, 64}));
  EXPECT_EQ(kb.inputs[0].dtype, "float16");
  EXPECT_EQ(kb.inputs[1].shape, (Shape{16, 128}));
  EXPECT_EQ(kb.inputs[1].dtype, "float16");  // .half()
  ASSERT_EQ(kb.init_inputs.size(), 2u);
  EXPECT_EQ(kb.init_inputs[1].value, 128);
}

TEST(TorchScannerTest, AnnotatedSizesReplaceModuleConstants) {
  const Scanned s(kMlp, SizeMap{{"batch", 7}});
  EXPECT_EQ(s.scan.kernelbench->inputs[0].shape, (Shape{7, 64}));
  EXPECT_EQ(s.module("Model").ops[0].shape, (Shape{7, 128}));
}

TEST(TorchScannerTest, ModulesWithoutKernelBenchHaveOpsButNoShapes) {
  const Scanned s(
      "import torch.nn as nn\n"
      "class Block(nn.Module):\n"
      "    def forward(self, x):\n"
      "        return x.relu().sum(dim=1)\n"
      "class Wrapper(Block):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        self.inner = Block()\n"
      "    def forward(self, x):\n"
      "        return self.inner(x) + 1\n"
      "class NotAModule:\n"
      "    def forward(self, x):\n"
      "        return x.relu()\n");
  ASSERT_EQ(s.scan.modules.size(), 2u);
  EXPECT_EQ(s.ops("Block"), (std::vector<std::string>{"relu", "sum"}));
  EXPECT_FALSE(s.module("Block").ops[0].shape);
  EXPECT_FALSE(s.module("Block").ops[0].work);
  EXPECT_EQ(s.ops("Wrapper"), (std::vector<std::string>{"module", "add"}));
  EXPECT_EQ(s.module("Wrapper").layers.at(0).type, "Block");
  EXPECT_FALSE(s.scan.kernelbench);
}

TEST(TorchScannerTest, InheritedForwardRunsWithTheModelsInputs) {
  const Scanned s(
      "import torch\nimport torch.nn as nn\n"
      "class Base(nn.Module):\n"
      "    def forward(self, x):\n"
      "        return torch.tanh(x)\n"
      "class Model(Base):\n"
      "    pass\n"
      "def get_inputs():\n"
      "    return [torch.randn(3, 5)]\n");
  EXPECT_FALSE(s.module("Base").ops.at(0).shape);
  EXPECT_EQ(s.module("Model").ops.at(0).shape, (Shape{3, 5}));
  EXPECT_EQ(s.text(s.module("Model").ops.at(0).span), "torch.tanh(x)");
}

TEST(TorchScannerTest, SyncsAndLoopsAreTraced) {
  const Scanned s(
      "import torch\nimport torch.nn as nn\n"
      "class M(nn.Module):\n"
      "    def forward(self, x):\n"
      "        print('shape', x.shape)\n"
      "        print(x)\n"
      "        n = int(x.sum())\n"
      "        for i in range(len(x)):\n"
      "            x = x + i\n"
      "        for j in range(4):\n"
      "            x = x * 2\n"
      "        return [r @ r for r in x.unbind(0)]\n");
  const ForwardTrace& trace = s.scan.traces.at(0);
  ASSERT_EQ(trace.syncs.size(), 2u);  // printing a shape is not a sync
  EXPECT_EQ(trace.syncs[0].what, "print");
  EXPECT_EQ(s.text(*trace.syncs[0].statement), "print(x)");
  EXPECT_EQ(trace.syncs[1].what, "int");
  EXPECT_FALSE(trace.syncs[1].statement);
  ASSERT_EQ(trace.loops.size(), 3u);
  EXPECT_TRUE(trace.loops[0].over_tensor);
  EXPECT_FALSE(trace.loops[1].over_tensor);
  EXPECT_TRUE(trace.loops[2].over_tensor);
  EXPECT_TRUE(trace.loops[2].body_has_matmul);
  EXPECT_EQ(s.text(trace.loops[0].span), "for i in range(len(x)):");
}

TEST(TorchScannerTest, Float32ConvolutionsAndMatmulsFollowTheFilesTf32Flags) {
  EXPECT_TRUE(float32_precision("").tf32_convolutions);  // cuDNN's default
  EXPECT_FALSE(float32_precision("").tf32_matmuls);
  EXPECT_FALSE(float32_precision("torch.backends.cudnn.allow_tf32 = False\n").tf32_convolutions);
  EXPECT_TRUE(float32_precision("torch.backends.cuda.matmul.allow_tf32=True\n").tf32_matmuls);
  EXPECT_TRUE(float32_precision("torch.set_float32_matmul_precision('high')\n").tf32_matmuls);
  EXPECT_FALSE(float32_precision("torch.set_float32_matmul_precision(\"medium\")\ntorch.set_float32_matmul_precision(\"highest\")\n").tf32_matmuls);
  EXPECT_FALSE(float32_precision("if torch.backends.cuda.matmul.allow_tf32 == True: pass\n").tf32_matmuls);  // a test, not a setting

  const std::string model =
      "import torch\nimport torch.nn as nn\n"
      "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
      "        self.conv = nn.Conv2d(3, 8, 3)\n        self.fc = nn.Linear(8, 8)\n"
      "    def forward(self, x, y):\n        return self.conv(x), self.fc(y), x.half().relu()\n"
      "def get_inputs():\n    return [torch.randn(2, 3, 16, 16), torch.randn(4, 8)]\n";
  auto dtypes = [](const Scanned& s) {
    std::vector<std::string> out;
    for (const auto& o : s.module("Model").ops) out.push_back(o.op + ":" + (o.work ? o.work->dtype : "-"));
    return out;
  };
  EXPECT_EQ(dtypes(Scanned(model)), (std::vector<std::string>{"conv2d:tf32", "linear:float32", "half:float16", "relu:float16"}));
  EXPECT_EQ(dtypes(Scanned(model + "torch.backends.cudnn.allow_tf32 = False\ntorch.backends.cuda.matmul.allow_tf32 = True\n")),
            (std::vector<std::string>{"conv2d:float32", "linear:tf32", "half:float16", "relu:float16"}));
}

TEST(TorchScannerTest, BuffersAndListsOfInputsHaveShapes) {
  const Scanned s(
      "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
      "class Model(nn.Module):\n    def __init__(self, c):\n        super().__init__()\n"
      "        self.register_buffer(\"weight\", torch.randn(c, 1, 3, 3))\n"
      "    def forward(self, xs, y):\n        return torch.cat(xs, dim=1), F.conv2d(y, self.weight, padding=1, groups=16)\n"
      "def get_inputs():\n    return [[torch.randn(8, 16, 4, 4) for _ in range(3)], torch.randn(8, 16, 4, 4)]\n"
      "def get_init_inputs():\n    return [16]\n");
  ASSERT_TRUE(s.scan.kernelbench);
  const auto& listed = s.scan.kernelbench->inputs.at(0);
  ASSERT_EQ(listed.tensors.size(), 3u);
  EXPECT_EQ(listed.tensors[2].shape, (Shape{8, 16, 4, 4}));
  const auto& ops = s.module("Model").ops;
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].shape, (Shape{8, 48, 4, 4}));
  EXPECT_EQ(ops[1].shape, (Shape{8, 16, 4, 4}));
  EXPECT_TRUE(ops[1].work);
  // A comprehension over what the analysis cannot count stays a list of unknown length.
  const Scanned unknown(
      "import torch\nimport torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, xs):\n        return torch.cat(xs)\n"
      "n = int('3')\ndef get_inputs():\n    return [[torch.randn(4) for _ in range(n)]]\n");
  EXPECT_TRUE(unknown.scan.kernelbench->inputs.at(0).tensors.empty());
  EXPECT_FALSE(unknown.module("Model").ops.at(0).shape);
}

}  // namespace
}  // namespace hiera::engine::analysis
