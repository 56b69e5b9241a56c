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
  // One elementwise op is not a chain; a chain after a non-GEMM op is not this rule's.
  EXPECT_EQ(found("        return F.relu(self.fc(x)), y.exp().sigmoid().tanh()\n", kConvInit), std::vector<Found>{});
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

}  // namespace
}  // namespace hiera::engine::analysis
