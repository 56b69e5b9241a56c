// The edits that deliver an optimization: exact text in, exact edits out.
#include "engine/facade/source_splice.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace hiera::engine::facade {
namespace {

std::string applied(std::string text, std::vector<analysis::TextEdit> edits) {
  // Back to front, so earlier offsets stay valid.
  std::sort(edits.begin(), edits.end(),
            [](const analysis::TextEdit& a, const analysis::TextEdit& b) { return a.span.begin > b.span.begin; });
  for (const auto& e : edits) text.replace(e.span.begin, e.span.size(), e.new_text);
  return text;
}

const std::string kCuda =
    "#include <cuda_runtime.h>\n"
    "// hiera: size N=1024\n"
    "__global__ void scale(const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = 2.0f * x[i];\n"
    "}\n"
    "\n"
    "void launch(const float* x, float* y, int n) { scale<<<(n + 255) / 256, 256>>>(x, y, n); }\n";

TEST(KernelReplacement, ReplacesTheDefinitionKeepsTheNameAndAddsMissingHelpersAndIncludes) {
  const std::string delivered =
      "#include <cuda_runtime.h>\n"
      "#include <cuda_fp16.h>\n"
      "__device__ float twice(float v) { return v + v; }\n"
      "__global__ void scale_v2(const float* x, float* y, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = twice(x[i]);\n"
      "}\n";
  const auto edits = kernel_replacement(kCuda, "scale", delivered, "scale_v2", "// NOTE\n");
  ASSERT_EQ(edits.size(), 2u);
  EXPECT_EQ(applied(kCuda, edits),
            "#include <cuda_runtime.h>\n"
            "#include <cuda_fp16.h>\n"
            "// hiera: size N=1024\n"
            "// NOTE\n"
            "__device__ float twice(float v) { return v + v; }\n"
            "\n"
            "__global__ void scale(const float* x, float* y, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (i < n) y[i] = twice(x[i]);\n"
            "}\n"
            "\n"
            "void launch(const float* x, float* y, int n) { scale<<<(n + 255) / 256, 256>>>(x, y, n); }\n");
}

TEST(KernelReplacement, ADifferentSignatureOrAMissingKernelIsAnErrorNotAnEdit) {
  const std::string other = "__global__ void scale(const double* x, float* y, int n) { }\n";
  try {
    kernel_replacement(kCuda, "scale", other, "", "// NOTE\n");
    FAIL() << "no error";
  } catch (const SourceSpliceError& e) {
    EXPECT_STREQ(e.what(), "the delivered kernel's parameters (const double*, float*, int) differ from scale's "
                           "(const float*, float*, int)");
  }
  EXPECT_THROW(kernel_replacement(kCuda, "scale", "__global__ void other(const float* x, float* y, int n) { }\n", "",
                                  "// NOTE\n"),
               SourceSpliceError);
  EXPECT_THROW(kernel_replacement(kCuda, "missing", kCuda, "", "// NOTE\n"), SourceSpliceError);
}

const std::string kPython =
    "import torch\n"
    "import torch.nn as nn\n"
    "\n"
    "\n"
    "class Model(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "\n"
    "    def forward(self, x):\n"
    "        return torch.relu(x) * 2\n"
    "\n"
    "\n"
    "def get_inputs():\n"
    "    return [torch.randn(16, 16)]\n"
    "\n"
    "\n"
    "def get_init_inputs():\n"
    "    return []\n";

TEST(ModuleInsertion, InsertsModelNewAndWhatItNeedsAfterTheOriginalLeavingItIntact) {
  const std::string delivered =
      "import torch\n"
      "import torch.nn as nn\n"
      "import torch.nn.functional as F\n"
      "\n"
      "SCALE = 2\n"
      "\n"
      "\n"
      "class Model(nn.Module):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "\n"
      "    def forward(self, x):\n"
      "        return torch.relu(x) * 2\n"
      "\n"
      "\n"
      "class ModelNew(nn.Module):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "\n"
      "    def forward(self, x):\n"
      "        return F.relu(x) * SCALE\n"
      "\n"
      "\n"
      "def get_inputs():\n"
      "    return [torch.randn(4, 4)]\n";
  const auto edits = module_insertion(kPython, "Model", delivered, "# NOTE\n");
  ASSERT_EQ(edits.size(), 2u);
  EXPECT_EQ(applied(kPython, edits),
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "\n"
            "\n"
            "class Model(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "\n"
            "    def forward(self, x):\n"
            "        return torch.relu(x) * 2\n"
            "\n"
            "\n"
            "# NOTE\n"
            "SCALE = 2\n"
            "\n"
            "\n"
            "class ModelNew(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "\n"
            "    def forward(self, x):\n"
            "        return F.relu(x) * SCALE\n"
            "\n"
            "\n"
            "def get_inputs():\n"
            "    return [torch.randn(16, 16)]\n"
            "\n"
            "\n"
            "def get_init_inputs():\n"
            "    return []\n");
}

TEST(ModuleInsertion, NothingNewOrNoClassIsAnErrorNotAnEdit) {
  EXPECT_THROW(module_insertion(kPython, "Model", kPython, "# NOTE\n"), SourceSpliceError);
  EXPECT_THROW(module_insertion(kPython, "Other", kPython + "class ModelNew(nn.Module):\n    pass\n", "# NOTE\n"),
               SourceSpliceError);
}

}  // namespace
}  // namespace hiera::engine::facade
