// The module emitter: the reference verbatim, then ModelNew(Model) with one
// statement per live node and the replacements in place of what they cover;
// exact text, and a refusal (never broken code) for every inconsistent input.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "build_paths.h"
#include "engine/propose/recipes/module_emitter.h"
#include "graph_fixtures.h"

namespace {

using namespace hiera::engine::propose::recipes;
using hiera::engine::graph::OpGraph;
using hiera::testing::captured_graph;
using hiera::testing::reference_source;

Replacement node_replacement(std::set<std::string> covered, std::string produces, std::vector<std::string> statements,
                             std::string description = "test rewrite") {
  Replacement r;
  r.recipe = "s1_remove_identity_ops";
  r.description = std::move(description);
  r.covered = std::move(covered);
  r.produces = std::move(produces);
  r.statements = std::move(statements);
  return r;
}

// The generated part: everything after the reference.
std::string generated(const EmittedModule& m, const std::string& reference) {
  EXPECT_TRUE(m.ok()) << m.error;
  if (!reference.empty()) {
    EXPECT_EQ(m.source.substr(0, reference.size() - 1), reference.substr(0, reference.size() - 1));
  }
  return m.source.substr(m.source.find(kGeneratedMarker));
}

TEST(ModuleEmitter, WithoutReplacementsReplaysTheGraph) {
  const std::string reference = reference_source("casts");
  const auto m = emit_module(captured_graph("casts"), reference, {});
  EXPECT_EQ(generated(m, reference), std::string(kGeneratedMarker) + R"(
import torch


class ModelNew(Model):
    def forward(self, x):
        tanh = torch.tanh(x)
        contiguous = tanh.contiguous()
        to = contiguous.to(torch.float32)
        double = to.double()
        float_1 = double.float()
        mul = float_1 * 2
        return mul
)");
  // The reference comes first, byte for byte, then two blank lines.
  EXPECT_EQ(m.source.rfind(reference.substr(0, reference.size() - 1), 0), 0u);
  EXPECT_NE(m.source.find("return []\n\n\n" + std::string(kGeneratedMarker)), std::string::npos);
}

TEST(ModuleEmitter, PutsStatementsInPlaceAndDropsDeadNodes) {
  const std::string reference = reference_source("attention");
  const OpGraph g = captured_graph("attention");
  Replacement sdpa = node_replacement({"transpose", "matmul", "mul", "add", "softmax", "matmul_1"}, "matmul_1",
                                      {"matmul_1 = torch.nn.functional.scaled_dot_product_attention(q, k, v, "
                                       "attn_mask=mask, scale=truediv)"});
  sdpa.definitions = {"_HIERA_FLAG = True", "import math as _hiera_math"};
  sdpa.imports = {"import math"};
  const auto m = emit_module(g, reference, {sdpa});
  EXPECT_EQ(generated(m, reference), std::string(kGeneratedMarker) + R"(
import torch
import math


_HIERA_FLAG = True


import math as _hiera_math


class ModelNew(Model):
    def forward(self, q, k, v, mask):
        size = q.size(-1)
        sqrt = math.sqrt(size)
        truediv = 1.0 / sqrt
        matmul_1 = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=truediv)
        return matmul_1
)");
}

TEST(ModuleEmitter, KeepsNodesAReplacementStillReadsAndImportsWhatCodeNames) {
  const std::string reference = reference_source("attention");
  const auto m = emit_module(captured_graph("attention"), reference,
                             {node_replacement({"softmax"}, "softmax", {"softmax = torch.softmax(add, -1)"})});
  const std::string text = generated(m, reference);
  EXPECT_NE(text.find("import torch\nimport math\n"), std::string::npos);  // math.sqrt in a node's code
  EXPECT_NE(text.find("        transpose = k.transpose(-2, -1)\n"), std::string::npos);
  EXPECT_NE(
      text.find("        add = mul + mask\n        softmax = torch.softmax(add, -1)\n        matmul_1 = softmax @ v\n"),
      std::string::npos);
}

TEST(ModuleEmitter, EmitsKernelHelpersOnlyWithKernels) {
  const std::string reference = reference_source("casts");
  Replacement k = node_replacement(
      {"tanh"}, "tanh",
      {"tanh = torch.empty_like(x)", "_kernel(\"hiera_tanh\")((_grid(x.numel(), 256),), (256,), tanh, x, x.numel())"});
  k.kernels = {{"hiera_tanh",
                "extern \"C\" __global__ void hiera_tanh(float* y, const float* x, int n) {}",
                {"--use_fast_math"}}};
  const std::string text = generated(emit_module(captured_graph("casts"), reference, {k}), reference);
  EXPECT_NE(text.find("import torch\nfrom hiera_runner import nvrtc_runtime\n"), std::string::npos);
  // One constant per source and a literal rt.compile call per kernel: what the delivered form resolves.
  EXPECT_NE(text.find(R"(_KERNEL_SOURCE_hiera_tanh = r"""
extern "C" __global__ void hiera_tanh(float* y, const float* x, int n) {}
"""
_KERNEL_COMPILERS = {
    "hiera_tanh": lambda: nvrtc_runtime.compile(_KERNEL_SOURCE_hiera_tanh, "hiera_tanh", options=["--use_fast_math"]),
}
_KERNELS = {}
_SM_COUNT = {}


def _kernel(name):
    """The kernel `name`, compiled with NVRTC on first use on each device and cached."""
    key = (name, torch.cuda.current_device())
    if key not in _KERNELS:
        _KERNELS[key] = _KERNEL_COMPILERS[name]()
    return _KERNELS[key]


def _grid(n, block, blocks_per_sm=4):
)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    return max(1, min((n + block - 1) // block, _SM_COUNT[device] * blocks_per_sm))\n"),
            std::string::npos);
  EXPECT_NE(text.find("        tanh = torch.empty_like(x)\n        _kernel(\"hiera_tanh\")"), std::string::npos);

  const std::string plain = generated(emit_module(captured_graph("casts"), reference, {}), reference);
  EXPECT_EQ(plain.find("nvrtc_runtime"), std::string::npos);
  EXPECT_EQ(plain.find("_KERNEL_SOURCES"), std::string::npos);
}

// Golden files under tests/fixtures/propose/recipes/; HIERA_UPDATE_FIXTURES=1 rewrites them from the current output.
void expect_golden(const std::string& actual, const std::string& name) {
  const auto path = std::filesystem::path(::hiera::testing::source_dir()) / "tests" / "fixtures" / "propose" / "recipes" /
                    (name + ".py.golden");
  if (std::getenv("HIERA_UPDATE_FIXTURES")) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << actual;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing " << path << " (HIERA_UPDATE_FIXTURES=1 writes it)";
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(actual, text.str()) << name << " differs from " << path << " (HIERA_UPDATE_FIXTURES=1 rewrites it)";
}

TEST(ModuleEmitter, OpaqueKernelRegionsAreFunctionsUnderHieraEager) {
  const std::string reference = reference_source("casts");
  // A kernel region that reads x and a temporary of its own; an S1 rewrite without kernels stays inline.
  Replacement k = node_replacement(
      {"tanh"}, "tanh",
      {"_tanh_x = x.contiguous()", "tanh = torch.empty_like(_tanh_x)",
       "_kernel(\"hiera_tanh\")((_grid(_tanh_x.numel(), 256),), (256,), tanh, _tanh_x, _tanh_x.numel())"});
  k.kernels = {{"hiera_tanh", "extern \"C\" __global__ void hiera_tanh(float* y, const float* x, int n) {}", {}}};
  const Replacement inline_rewrite = node_replacement({"contiguous", "to", "double", "float_1"}, "float_1",
                                                      {"float_1 = tanh"});
  EmitOptions options;
  options.opaque_kernel_regions = true;
  const std::string text = generated(emit_module(captured_graph("casts"), reference, {k, inline_rewrite}, options), reference);
  expect_golden(text, "opaque_kernel_regions");
  EXPECT_NE(text.find(std::string(hiera::engine::propose::kEagerRegionDecorator) + "\ndef _hiera_region_tanh(self, x):\n"), std::string::npos);
  EXPECT_NE(text.find("        tanh = _hiera_region_tanh(self, x)\n        float_1 = tanh\n"), std::string::npos);
  // Without the option the same replacements are inline, with no helper.
  const std::string plain = generated(emit_module(captured_graph("casts"), reference, {k, inline_rewrite}), reference);
  EXPECT_EQ(plain.find("_hiera_eager"), std::string::npos);
  EXPECT_NE(plain.find("        _tanh_x = x.contiguous()\n"), std::string::npos);
}

TEST(ModuleEmitter, WrapsForwardForSettingsAndCudaGraphs) {
  const std::string reference = reference_source("conv_stack");
  Replacement bench;
  bench.recipe = "s2_cudnn_benchmark_algorithm";
  bench.settings = {{"torch.backends.cudnn.benchmark", "True"}};
  Replacement tf32;
  tf32.recipe = "s2_tf32_matmul";
  tf32.settings = {{"torch.backends.cuda.matmul.allow_tf32", "True"}, {"torch.backends.cudnn.benchmark", "True"}};
  Replacement graph;
  graph.recipe = "s2_cuda_graph_capture";
  graph.cuda_graph = true;
  const std::string text =
      generated(emit_module(captured_graph("conv_stack"), reference, {bench, tf32, graph}), reference);
  EXPECT_NE(text.find("\n\n\ndef _hiera_cuda_graph_call(module, compute, inputs):\n"), std::string::npos);
  EXPECT_NE(text.find(R"(
class ModelNew(Model):
    def forward(self, x):
        _hiera_saved = (torch.backends.cudnn.benchmark, torch.backends.cuda.matmul.allow_tf32)
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            return _hiera_cuda_graph_call(self, self._hiera_forward, (x,))
        finally:
            torch.backends.cudnn.benchmark = _hiera_saved[0]
            torch.backends.cuda.matmul.allow_tf32 = _hiera_saved[1]

    def _hiera_forward(self, x):
        conv1 = self.conv1(x)
        relu = torch.relu(conv1)
)"),
            std::string::npos)
      << text;

  const std::string only_settings = generated(emit_module(captured_graph("conv_stack"), reference, {bench}), reference);
  EXPECT_EQ(only_settings.find("_hiera_cuda_graph_call"), std::string::npos);
  EXPECT_NE(only_settings.find("            return self._hiera_forward(x)\n"), std::string::npos);
}

TEST(ModuleEmitter, WithoutAGraphWrapsTheReferenceForward) {
  const std::string reference = reference_source("data_dependent");
  Replacement graph;
  graph.recipe = "s2_cuda_graph_capture";
  graph.cuda_graph = true;
  const std::string text = generated(emit_module(captured_graph("data_dependent"), reference, {graph}), reference);
  EXPECT_NE(text.find(R"(
class ModelNew(Model):
    def forward(self, x):
        return _hiera_cuda_graph_call(self, self._hiera_forward, (x,))

    def _hiera_forward(self, x):
        return super().forward(x)
)"),
            std::string::npos)
      << text;
}

TEST(ModuleEmitter, KeepsPlaceholderDefaultsAndRenames) {
  OpGraph g = captured_graph("casts");
  g.nodes[0].name = "x_1";  // fx renames a placeholder that clashes with another name
  g.nodes[0].args = {hiera::engine::graph::Arg{}};
  g.nodes[1].args[0].node = "x_1";
  g.nodes[1].code = "torch.tanh(x_1)";
  const std::string text = generated(emit_module(g, "", {}), "");
  EXPECT_NE(text.find("    def forward(self, x=None):\n        x_1 = x\n        tanh = torch.tanh(x_1)\n"),
            std::string::npos)
      << text;
}

TEST(ModuleEmitter, IsDeterministic) {
  const std::string reference = reference_source("identity_ops");
  const std::vector<Replacement> rs = {node_replacement({"mul"}, "mul", {"mul = fc"}),
                                       node_replacement({"view"}, "view", {"view = add"})};
  const auto a = emit_module(captured_graph("identity_ops"), reference, rs);
  const auto b = emit_module(captured_graph("identity_ops"), reference, rs);
  ASSERT_TRUE(a.ok()) << a.error;
  EXPECT_EQ(a.source, b.source);
}

// --- refusals ---------------------------------------------------------------

std::string refusal(const std::string& fixture, const std::vector<Replacement>& rs) {
  const auto m = emit_module(captured_graph(fixture), reference_source(fixture), rs);
  EXPECT_TRUE(m.source.empty());
  return m.error;
}

TEST(ModuleEmitter, RefusesOverlappingReplacements) {
  EXPECT_EQ(refusal("identity_ops", {node_replacement({"mul", "drop"}, "drop", {"drop = fc"}, "first"),
                                     node_replacement({"mul"}, "mul", {"mul = fc"}, "second")}),
            "replacements overlap: node 'mul' is covered by 'first' (s1_remove_identity_ops) and 'second' "
            "(s1_remove_identity_ops)");
}

TEST(ModuleEmitter, RefusesWhenACoveredValueIsStillUsed) {
  // relu still reads 'ident', which the replacement covers but does not produce.
  EXPECT_EQ(refusal("identity_ops", {node_replacement({"clone", "ident"}, "clone", {"clone = truediv"}, "r")}),
            "node 'relu' still reads 'ident', which 'r' (s1_remove_identity_ops) covers without producing it");
  // The returned value itself.
  EXPECT_EQ(refusal("identity_ops", {node_replacement({"ident", "relu"}, "ident", {"ident = clone"}, "r")}),
            "the output still reads 'relu', which 'r' (s1_remove_identity_ops) covers without producing it");
  // A replacement reading another's covered, unproduced node.
  EXPECT_EQ(refusal("identity_ops", {node_replacement({"mul", "drop"}, "drop", {"drop = fc"}, "a"),
                                     node_replacement({"add"}, "add", {"add = mul"}, "b")}),
            "replacement 'b' (s1_remove_identity_ops) still reads 'mul', which 'a' (s1_remove_identity_ops) covers "
            "without producing it");
  // Its own covered node that its statements never assign, or its result before assigning it.
  EXPECT_EQ(refusal("identity_ops", {node_replacement({"mul", "drop"}, "drop", {"drop = mul"}, "a")}),
            "replacement 'a' (s1_remove_identity_ops) reads 'mul', which it covers, before assigning it");
  EXPECT_EQ(refusal("identity_ops", {node_replacement({"mul"}, "mul", {"mul = mul * 2"}, "a")}),
            "replacement 'a' (s1_remove_identity_ops) reads 'mul', which it covers, before assigning it");
  // Temporaries it assigns itself are fine.
  EXPECT_TRUE(emit_module(captured_graph("identity_ops"), "",
                          {node_replacement({"mul", "drop"}, "drop", {"mul = fc", "drop = mul"}, "a")})
                  .ok());
}

TEST(ModuleEmitter, RefusesMalformedReplacements) {
  EXPECT_EQ(refusal("identity_ops", {node_replacement({"mul"}, "drop", {"drop = fc"}, "r")}),
            "replacement 'r' (s1_remove_identity_ops) produces 'drop', which it does not cover");
  EXPECT_EQ(refusal("identity_ops", {node_replacement({"mul"}, "mul", {"y = fc"}, "r")}),
            "replacement 'r' (s1_remove_identity_ops) never assigns 'mul'");
  EXPECT_EQ(refusal("identity_ops", {node_replacement({"mul"}, "mul", {}, "r")}),
            "replacement 'r' (s1_remove_identity_ops) has no statements");
  EXPECT_EQ(refusal("identity_ops", {node_replacement({"mul"}, "mul", {"if True:\n    mul = fc"}, "r")}),
            "replacement 'r' (s1_remove_identity_ops) has a statement that is not one unindented line: "
            "\"if True:\n    mul = fc\"");
  EXPECT_EQ(refusal("identity_ops", {node_replacement({"ghost"}, "ghost", {"ghost = x"}, "r")}),
            "replacement 'r' (s1_remove_identity_ops) covers 'ghost', which is not a node of the graph");
  EXPECT_EQ(refusal("identity_ops", {node_replacement({"x"}, "x", {"x = x * 1"}, "r")}),
            "replacement 'r' (s1_remove_identity_ops) covers the placeholder node 'x'");
  EXPECT_EQ(refusal("identity_ops", {node_replacement({"mul"}, "mul", {"mul = relu"}, "r")}),
            "replacement 'r' (s1_remove_identity_ops) reads 'relu', which is computed after 'mul'");
  Replacement whole;
  whole.description = "w";
  whole.recipe = "s2_x";
  whole.statements = {"y = 1"};
  EXPECT_EQ(refusal("identity_ops", {whole}), "replacement 'w' (s2_x) has statements but covers no node");
  EXPECT_EQ(refusal("data_dependent", {node_replacement({"relu"}, "relu", {"relu = x"}, "r")}),
            "replacement 'r' (s1_remove_identity_ops) covers nodes, but no graph was captured (" +
                captured_graph("data_dependent").fallback + ")");
  EXPECT_EQ(refusal("data_dependent", {}).rfind("no graph was captured (forward has data-dependent control flow", 0),
            0u);
}

TEST(ModuleEmitter, RefusesConflictingSettingsKernelsAndGraphs) {
  Replacement on, off;
  on.description = "on";
  on.settings = {{"torch.backends.cudnn.benchmark", "True"}};
  off.description = "off";
  off.settings = {{"torch.backends.cudnn.benchmark", "False"}};
  EXPECT_EQ(refusal("conv_stack", {on, off}), "replacements set torch.backends.cudnn.benchmark to both True and False");

  Replacement a = node_replacement({"mul"}, "mul", {"mul = fc"}, "a");
  Replacement b = node_replacement({"view"}, "view", {"view = add"}, "b");
  a.kernels = {{"k", "extern \"C\" __global__ void k() {}", {}}};
  b.kernels = {{"k", "extern \"C\" __global__ void k() { return; }", {}}};
  EXPECT_EQ(refusal("identity_ops", {a, b}), "two different kernels are named k");
  b.kernels = {{"q", "const char* s = \"\"\"\";", {}}};
  EXPECT_EQ(refusal("identity_ops", {a, b}),
            "kernel q of 'b' (s1_remove_identity_ops) contains three double quotes in a row");

  OpGraph g = captured_graph("casts");
  g.nodes[0].target = "**kwargs";
  Replacement graph;
  graph.description = "g";
  graph.recipe = "s2_cuda_graph_capture";
  graph.cuda_graph = true;
  EXPECT_EQ(emit_module(g, "", {graph}).error,
            "replacement 'g' (s2_cuda_graph_capture) captures forward in a CUDA graph, which needs positional "
            "inputs, but forward takes **kwargs");
}

}  // namespace
