// The PyTorch hint rules on small modules: what each flags and what it
// leaves alone.
#include "engine/analysis/torch_hints.h"

#include <gtest/gtest.h>

#include "engine/analysis/python_lexer.h"
#include "engine/analysis/torch_scanner.h"

namespace hiera::engine::analysis {
namespace {

struct Found {
  std::string rule;
  std::string at;
  bool operator==(const Found&) const = default;
};

void PrintTo(const Found& f, std::ostream* os) { *os << f.rule << " @ '" << f.at << "'"; }

// A module M with the given __init__ and forward bodies, and its hints.
struct Module {
  std::string source;
  std::vector<Hint> hints;
  Module(const std::string& forward_body, const std::string& init_body)
      : source("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
               "class M(nn.Module):\n    def __init__(self):\n" + init_body + "    def forward(self, x, y):\n" + forward_body) {
    const PythonSyntax syntax = parse_python(source, lex_python(source).tokens);
    const TorchScan scan = scan_torch(source, syntax);
    hints = torch_hints(source, scan.modules.at(0), scan.traces.at(0));
  }
};

const std::string kPlainInit = "        super().__init__()\n";

std::vector<Hint> hints_of(const std::string& forward_body, const std::string& init_body = kPlainInit) {
  return Module(forward_body, init_body).hints;
}

std::vector<Found> found(const std::string& forward_body, const std::string& init_body = kPlainInit) {
  const Module m(forward_body, init_body);
  std::vector<Found> out;
  for (const auto& h : m.hints) out.push_back({h.rule, m.source.substr(h.span.begin, h.span.size())});
  return out;
}

const std::string kConvInit = "        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3)\n        self.fc = nn.Linear(8, 8)\n";

TEST(TorchHintsTest, ElementwiseChainAfterConvOrLinear) {
  EXPECT_EQ(found("        z = self.conv(x)\n        z = F.relu(z) * 2\n        return z\n", kConvInit),
            (std::vector<Found>{{"torch.fusable_elementwise_chain", "self.conv(x)\n        z = F.relu(z) * 2"}}));
  EXPECT_EQ(found("        return F.relu(self.fc(x)) + y\n", kConvInit),
            (std::vector<Found>{{"torch.fusable_elementwise_chain", "F.relu(self.fc(x)) + y"}}));
  // One elementwise op after a GEMM is an epilogue, not a chain; three on their own are a chain.
  EXPECT_EQ(found("        return F.relu(self.fc(x)), y.exp().sigmoid().tanh()\n", kConvInit),
            (std::vector<Found>{{"torch.gemm_epilogue", "F.relu(self.fc(x))"},
                                {"torch.fusable_elementwise_chain", "y.exp().sigmoid().tanh()"}}));
}

TEST(TorchHintsTest, StandaloneElementwiseChainsInSeveralSpellings) {
  // Statements, methods with in-place forms, and a hand-written tanh GELU (a DAG, not a line).
  EXPECT_EQ(found("        z = x * y\n        z = z + 1.0\n        return torch.sigmoid(z)\n"),
            (std::vector<Found>{{"torch.fusable_elementwise_chain", "x * y\n        z = z + 1.0\n        return torch.sigmoid(z)"}}));
  EXPECT_EQ(found("        return x.mul(2).add_(1).clamp_(min=0)\n"),
            (std::vector<Found>{{"torch.fusable_elementwise_chain", "x.mul(2).add_(1).clamp_(min=0)"}}));
  const auto gelu = hints_of("        return 0.5 * x * (1.0 + torch.tanh(0.79788 * (x + 0.044715 * torch.pow(x, 3))))\n");
  ASSERT_EQ(gelu.size(), 1u);
  EXPECT_EQ(gelu[0].message, "8 elementwise ops in a row (mul, pow, mul, add, mul, tanh, ...): each reads and writes the "
                             "whole tensor; one fused kernel does them in one pass");
  // Two ops are not a chain; a loop's one op per iteration is one op; dropouts (free in eval) do not count.
  EXPECT_EQ(found("        return torch.relu(x) * 2\n"), std::vector<Found>{});
  // Siblings are not a chain: each reads the same op (a match's branches, fan-out).
  EXPECT_EQ(found("        a = x * 2\n        return a.relu(), a.tanh(), a + 1\n"), std::vector<Found>{});
  EXPECT_EQ(found("        for k in range(4):\n            x = x + k\n        return x\n"), std::vector<Found>{});
  EXPECT_EQ(found("        return F.dropout(F.dropout(x, 0.1, self.training), 0.1, self.training).relu()\n"), std::vector<Found>{});
  // The ops of a hand-written softmax are that rule's, not a chain's.
  EXPECT_EQ(found("        e = torch.exp(x - x.amax(-1, keepdim=True))\n        return e / e.sum(-1, keepdim=True)\n"),
            (std::vector<Found>{{"torch.handwritten_softmax",
                                 "torch.exp(x - x.amax(-1, keepdim=True))\n        return e / e.sum(-1, keepdim=True)"}}));
}

TEST(TorchHintsTest, GemmEpiloguesActivationsAndResiduals) {
  const std::string init = "        super().__init__()\n        self.up = nn.Linear(8, 32)\n        self.down = nn.Linear(32, 8)\n"
                           "        self.w = nn.Parameter(torch.randn(8, 8))\n";
  EXPECT_EQ(found("        h = F.gelu(self.up(x))\n        return x + self.down(h)\n", init),
            (std::vector<Found>{{"torch.gemm_epilogue", "F.gelu(self.up(x))"}, {"torch.gemm_epilogue", "x + self.down(h)"}}));
  EXPECT_EQ(found("        return torch.relu(x @ self.w)\n", init), (std::vector<Found>{{"torch.gemm_epilogue", "torch.relu(x @ self.w)"}}));
  const auto hints = hints_of("        return nn.functional.gelu(torch.mm(x, self.w))\n", init);
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_EQ(hints[0].message, "mm followed by gelu: cuBLASLt applies the bias and gelu in the GEMM's epilogue, so the "
                              "activation makes no pass of its own");
  EXPECT_EQ(hints[0].recipe, "s2_cublaslt_epilogue_bias_act");
  // A scalar add, an activation cuBLASLt has no epilogue for, or a product used twice: no hint.
  EXPECT_EQ(found("        return self.up(x) + 1.0\n", init), std::vector<Found>{});
  EXPECT_EQ(found("        return torch.sigmoid(self.up(x))\n", init), std::vector<Found>{});
  EXPECT_EQ(found("        h = self.up(x)\n        return F.relu(h), h.sum()\n", init), std::vector<Found>{});
}

TEST(TorchHintsTest, BatchNormAfterConvFoldsInEvalMode) {
  const std::string init = "        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3, bias=False)\n"
                           "        self.bn = nn.BatchNorm2d(8)\n        self.fc = nn.Linear(8, 8)\n        self.bn1 = nn.BatchNorm1d(8)\n";
  EXPECT_EQ(found("        return self.bn(self.conv(x))\n", init),
            (std::vector<Found>{{"torch.foldable_batch_norm", "self.bn(self.conv(x))"}}));
  EXPECT_EQ(found("        z = self.fc(x)\n        return self.bn1(z)\n", init),
            (std::vector<Found>{{"torch.foldable_batch_norm", "self.fc(x)\n        return self.bn1(z)"}}));
  EXPECT_EQ(found("        return F.batch_norm(self.conv(x), y, y, training=False)\n", init),
            (std::vector<Found>{{"torch.foldable_batch_norm", "F.batch_norm(self.conv(x), y, y, training=False)"}}));
  // Training statistics change every call: nothing folds. A conv read twice keeps its output.
  EXPECT_EQ(found("        return F.batch_norm(self.conv(x), y, y, training=True)\n", init), std::vector<Found>{});
  EXPECT_EQ(found("        z = self.conv(x)\n        return self.bn(z), z.mean()\n", init), std::vector<Found>{});
  const std::string sequential = "        super().__init__()\n        self.block = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8))\n";
  EXPECT_EQ(found("        return self.block(x)\n", sequential),
            (std::vector<Found>{{"torch.foldable_batch_norm", "self.block(x)"}}));
}

TEST(TorchHintsTest, MatmulByADiagonalIsAScale) {
  const std::string init = "        super().__init__()\n        self.d = nn.Parameter(torch.ones(16))\n";
  const auto right = hints_of("        return x @ torch.diag(self.d)\n", init);
  ASSERT_EQ(right.size(), 1u);
  EXPECT_EQ(right[0].rule, "torch.diagonal_matmul");
  EXPECT_EQ(right[0].message, "... @ torch.diag(self.d) builds a 16 x 16 matrix and runs a GEMM with it: '... * self.d' "
                              "scales the columns in one elementwise pass");
  EXPECT_EQ(found("        return torch.matmul(torch.diag(y), x)\n"),
            (std::vector<Found>{{"torch.diagonal_matmul", "torch.matmul(torch.diag(y), x)"}}));
  EXPECT_EQ(hints_of("        return torch.matmul(torch.diag(y), x)\n")[0].message,
            "torch.diag(y) @ ... builds an n x n matrix and runs a GEMM with it: 'y[:, None] * ...' scales the rows in one "
            "elementwise pass");
  EXPECT_EQ(found("        return x.matmul(torch.diag(y))\n"), (std::vector<Found>{{"torch.diagonal_matmul", "x.matmul(torch.diag(y))"}}));
  EXPECT_NE(hints_of("        return x.matmul(torch.diag(y))\n")[0].message.find("scales the columns"), std::string::npos);
  // An off-diagonal, or the diagonal of a matrix (a vector): not a scale.
  EXPECT_EQ(found("        return x @ torch.diag(y, 1)\n"), std::vector<Found>{});
  const std::string matrix = "        super().__init__()\n        self.m = nn.Parameter(torch.ones(16, 16))\n";
  EXPECT_EQ(found("        return x @ torch.diag(self.m)\n", matrix), std::vector<Found>{});
}

TEST(TorchHintsTest, DropoutFlags) {
  const std::string init = "        super().__init__()\n        self.off = nn.Dropout(p=0.0)\n        self.on = nn.Dropout(0.1)\n";
  const auto hints = hints_of("        x = F.dropout(x, 0.1)\n        x = F.dropout(x, p=0.2, training=self.training)\n"
                              "        x = F.dropout(x, 0.3, False)\n        x = self.off(x)\n        return self.on(x)\n",
                              init);
  ASSERT_EQ(hints.size(), 3u);
  EXPECT_EQ(hints[0].rule, "torch.dropout_mode");
  EXPECT_EQ(hints[0].severity, Severity::Warning);
  EXPECT_EQ(hints[0].message, "'F.dropout' defaults to training=True: it keeps dropping after model.eval(); pass "
                              "training=self.training (or use nn.Dropout)");
  EXPECT_EQ(hints[1].severity, Severity::Information);
  EXPECT_EQ(hints[1].message, "'F.dropout' with training=False returns its input unchanged: remove the call");
  EXPECT_EQ(hints[2].message, "'self.off' with p=0 returns its input unchanged: remove the call");
  // A dropout inside a Sequential: the container stays, the dropout goes.
  const std::string sequential = "        super().__init__()\n        self.mlp = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.0))\n";
  const auto contained = hints_of("        return self.mlp(x)\n", sequential);
  ASSERT_EQ(contained.size(), 1u);
  EXPECT_EQ(contained[0].message, "a dropout with p=0 returns its input unchanged inside 'self.mlp': remove it from the container");
  // torch.dropout has no default to fall into; a training flag that is not literal is the module's business.
  EXPECT_EQ(found("        return torch.dropout(x, 0.1, self.training)\n"), std::vector<Found>{});
}

TEST(TorchHintsTest, CausalMasksInHandWrittenAttention) {
  const std::string buffer = "        super().__init__()\n        self.register_buffer(\"bias\", torch.tril(torch.ones(64, 64)).view(1, 1, 64, 64))\n";
  const auto nanogpt = hints_of("        att = (x @ y.transpose(-2, -1)) * 0.125\n"
                                "        att = att.masked_fill(self.bias[:, :, :16, :16] == 0, float(\"-inf\"))\n"
                                "        return F.softmax(att, dim=-1) @ y\n",
                                buffer);
  ASSERT_EQ(nanogpt.size(), 1u);
  EXPECT_EQ(nanogpt[0].rule, "torch.handwritten_attention");
  EXPECT_EQ(nanogpt[0].message, "attention written as softmax(q @ k^T) @ v: F.scaled_dot_product_attention never "
                                "materializes the score matrix; its triangular mask is is_causal=True, so no mask is "
                                "read and the masked blocks are skipped");
  const auto triu = hints_of("        s = torch.matmul(x, y.transpose(-1, -2))\n"
                             "        mask = torch.triu(torch.ones(16, 16, dtype=torch.bool), diagonal=1)\n"
                             "        return torch.matmul(s.masked_fill(mask, float(\"-inf\")).softmax(dim=-1), y)\n");
  ASSERT_EQ(triu.size(), 1u);
  EXPECT_NE(triu[0].message.find("is_causal=True"), std::string::npos);
  // A mask the module is given says nothing about its shape.
  const auto given = hints_of("        s = (x @ x.transpose(-1, -2)).masked_fill(y, float(\"-inf\"))\n        return s.softmax(-1) @ x\n");
  ASSERT_EQ(given.size(), 1u);
  EXPECT_EQ(given[0].message.find("is_causal"), std::string::npos);
}

TEST(TorchHintsTest, HandWrittenSoftmaxAttentionAndLayerNorm) {
  EXPECT_EQ(found("        e = x.exp()\n        return e / e.sum(-1, keepdim=True)\n"),
            (std::vector<Found>{{"torch.handwritten_softmax", "x.exp()\n        return e / e.sum(-1, keepdim=True)"}}));
  EXPECT_EQ(found("        return torch.softmax(x @ y.transpose(-1, -2) * 0.125, -1) @ y\n"),
            (std::vector<Found>{{"torch.handwritten_attention", "torch.softmax(x @ y.transpose(-1, -2) * 0.125, -1) @ y"}}));
  EXPECT_EQ(found("        m = x.mean(-1, keepdim=True)\n        return (x - m) * torch.rsqrt(x.var(-1, keepdim=True) + 1e-5)\n"),
            (std::vector<Found>{{"torch.handwritten_layer_norm",
                                 "x.mean(-1, keepdim=True)\n        return (x - m) * torch.rsqrt(x.var(-1, keepdim=True) + 1e-5)"}}));
  // The fused operators are not flagged.
  EXPECT_EQ(found("        return F.layer_norm(torch.softmax(x, -1), (8,))\n"), std::vector<Found>{});
  // A division by a sum that is not of an exp is no softmax.
  EXPECT_EQ(found("        return x / x.sum(-1, keepdim=True)\n"), std::vector<Found>{});
}

TEST(TorchHintsTest, HostSyncsAndThePrintFix) {
  const std::string body = "        print(x)  # debug\n        v = x.max().item()\n        return y.cpu()\n";
  EXPECT_EQ(found(body), (std::vector<Found>{{"torch.host_sync", "print(x)"}, {"torch.host_sync", "x.max().item()"},
                                             {"torch.host_sync", "y.cpu()"}}));
  const auto hints = hints_of(body);
  ASSERT_EQ(hints[0].fix.size(), 1u);
  EXPECT_EQ(hints[0].fix[0].new_text, "");
  EXPECT_EQ(hints[0].fix[0].span.size(), std::string("        print(x)  # debug\n").size());  // the whole line goes
  EXPECT_TRUE(hints[1].fix.empty());  // .item() has no mechanical fix
  // print inside an expression cannot be deleted as a line.
  const auto inline_print = hints_of("        z = print(x) or x\n        return z\n");
  ASSERT_EQ(inline_print.size(), 1u);
  EXPECT_TRUE(inline_print[0].fix.empty());
}

TEST(TorchHintsTest, PythonLoopsOverTensorsNotOverConstants) {
  EXPECT_EQ(found("        for b in range(x.shape[0]):\n            y[b] = x[b] @ y[b]\n        for k in range(3):\n            x = x + k\n        return y\n"),
            (std::vector<Found>{{"torch.python_loop", "for b in range(x.shape[0]):"}}));
  const auto hints = hints_of("        return torch.stack([r.relu() for r in x])\n");
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_EQ(hints[0].message, "Python loop over a tensor in forward launches its body's kernels once per iteration");
}

TEST(TorchHintsTest, ContiguousCopies) {
  EXPECT_EQ(found("        a = x.transpose(1, 2).contiguous()\n        return a.view(-1)\n"),
            (std::vector<Found>{{"torch.contiguous_copy", "x.transpose(1, 2).contiguous()"}}));
  const auto hints = hints_of("        a = x.transpose(1, 2).contiguous()\n        return a\n");
  EXPECT_EQ(hints.at(0).message, "'.contiguous()' after .transpose() copies the whole tensor on every call");
}


// Hints of a whole file (its get_inputs gives the shapes), as "rule @ text".
std::vector<Found> found_in_file(const std::string& source) {
  const PythonSyntax syntax = parse_python(source, lex_python(source).tokens);
  const TorchScan scan = scan_torch(source, syntax);
  std::vector<Found> out;
  for (const auto& h : torch_hints(source, scan.modules.at(0), scan.traces.at(0)))
    out.push_back({h.rule, source.substr(h.span.begin, h.span.size())});
  return out;
}

std::string mlp_file(const std::string& rows, const std::string& extra = "") {
  return "import torch\nimport torch.nn as nn\n" + extra +
         "class Model(nn.Module):\n"
         "    def __init__(self):\n"
         "        super().__init__()\n"
         "        self.fc = nn.Linear(2048, 4096)\n"
         "        self.w = nn.Parameter(torch.randn(4096, 64))\n"
         "    def forward(self, x):\n"
         "        h = self.fc(x)\n"
         "        return h, h @ self.w\n"
         "def get_inputs():\n"
         "    return [torch.randn(" + rows + ", 2048)]\n"
         "def get_init_inputs():\n"
         "    return []\n";
}

TEST(TorchHintsTest, LargeFloat32ProductsOnTheCudaCores) {
  // 8192 x 2048 x 4096 in float32: 3xTF32 applies. The product with 64 columns is bound by its bytes: no hint.
  EXPECT_EQ(found_in_file(mlp_file("8192")), (std::vector<Found>{{"torch.float32_gemm", "self.fc(x)"}}));
  const std::string source = mlp_file("8192");
  const PythonSyntax syntax = parse_python(source, lex_python(source).tokens);
  const TorchScan scan = scan_torch(source, syntax);
  const auto hints = torch_hints(source, scan.modules.at(0), scan.traces.at(0));
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_EQ(hints[0].message, "float32 linear of 8192 rows, K 2048, N 4096 on the CUDA cores: as 3xTF32 it keeps "
                              "float32's accuracy on the tensor cores");
  EXPECT_EQ(hints[0].recipe, "s2_split_tf32_gemm");
  // 64 rows: too few. With TF32 turned on in the file the product already runs on the tensor cores.
  EXPECT_TRUE(found_in_file(mlp_file("64")).empty());
  EXPECT_TRUE(found_in_file(mlp_file("8192", "torch.backends.cuda.matmul.allow_tf32 = True\n")).empty());
}

}  // namespace
}  // namespace hiera::engine::analysis
