// s2_cublaslt_epilogue_bias_act: linear (or addmm) + ReLU / tanh-GELU on 2D
// inputs as one torch._addmm_activation, which puts bias and activation in the
// cuBLASLt epilogue. A private operator: an import-time flag falls back to the
// reference's expression where torch lacks it. Its GELU is the tanh
// approximation only on CUDA (the CPU kernel computes the erf form), so the
// GELU variant also asks for CUDA tensors.
#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/python_text.h"
#include "engine/propose/recipes/rewrites/rewrites.h"

namespace hiera::engine::propose::recipes::rewrites {

namespace {

constexpr const char* kRecipe = "s2_cublaslt_epilogue_bias_act";
constexpr const char* kHasAddmmActivation =
    "# torch._addmm_activation (cuBLASLt bias + activation epilogue) is private: use it only where it exists.\n"
    "_HIERA_HAS_ADDMM_ACTIVATION = hasattr(torch, \"_addmm_activation\")";

// The activation: "relu", "gelu_tanh", or "" for anything else.
std::string activation(const graph::OpGraph& graph, const graph::Node& node) {
  if (mutates(graph, node)) return "";
  if (is_kind(node, "relu")) return "relu";
  if (!is_kind(node, "gelu")) return "";
  if (const auto* sub = submodule(graph, node)) {
    const auto it = sub->attrs.find("approximate");
    return it != sub->attrs.end() && it->is_string() && it->get<std::string>() == "tanh" ? "gelu_tanh" : "";
  }
  const graph::Arg* approximate = argument(node, 1, "approximate");
  return approximate && approximate->kind == graph::Arg::Kind::String && approximate->text == "tanh" ? "gelu_tanh" : "";
}

struct Gemm {
  const graph::Node* x = nullptr;
  std::string bias, mat2;  // Python expressions: the bias vector and the [K, N] matrix
};

std::optional<Gemm> biased_gemm(const graph::OpGraph& graph, const graph::Node& node) {
  Gemm g;
  if (is_kind(node, "linear")) {
    g.x = argument_node(graph, node, 0, "input");
    if (const auto* sub = submodule(graph, node)) {
      const auto has_bias = sub->attrs.find("bias");
      if (has_bias == sub->attrs.end() || !has_bias->is_boolean() || !has_bias->get<bool>()) return std::nullopt;
      g.bias = python_attribute_path(node.target + ".bias");
      g.mat2 = python_attribute_path(node.target + ".weight") + ".t()";
    } else {
      const graph::Node* w = argument_node(graph, node, 1, "weight");
      const graph::Node* b = argument_node(graph, node, 2, "bias");
      if (!w || !b || rank(*b) != 1u) return std::nullopt;
      g.bias = b->name;
      g.mat2 = w->name + ".t()";
    }
  } else if (is_kind(node, "addmm") && passes_only(node, 3, {})) {
    // torch.addmm(b, x, W) with the default beta = alpha = 1.
    const graph::Node* b = argument_node(graph, node, 0, "input");
    g.x = argument_node(graph, node, 1, "mat1");
    const graph::Node* w = argument_node(graph, node, 2, "mat2");
    if (!b || !w || rank(*b) != 1u) return std::nullopt;
    g.bias = b->name;
    g.mat2 = w->name;
  } else {
    return std::nullopt;
  }
  if (!g.x || rank(*g.x) != 2u) return std::nullopt;
  return g;
}

}  // namespace

std::vector<Replacement> find_cublaslt_epilogues(const graph::OpGraph& graph, const RewriteOptions&) {
  std::vector<Replacement> out;
  for (const auto& act : graph.nodes) {
    const std::string kind = activation(graph, act);
    if (kind.empty()) continue;
    const graph::Node* gemm = argument_node(graph, act, 0, "input");
    if (!gemm || !only_user(*gemm, act) || mutates(graph, *gemm)) continue;
    const auto g = biased_gemm(graph, *gemm);
    const std::string dt = dtype(act);
    if (!g || (dt != "float32" && dt != "float16" && dt != "bfloat16") || dtype(*g->x) != dt) continue;
    const bool gelu = kind == "gelu_tanh";
    const std::string fast =
        "torch._addmm_activation(" + g->bias + ", " + g->x->name + ", " + g->mat2 + (gelu ? ", use_gelu=True)" : ")");
    const std::string condition =
        gelu ? "_HIERA_HAS_ADDMM_ACTIVATION and " + g->x->name + ".is_cuda" : "_HIERA_HAS_ADDMM_ACTIVATION";
    Replacement r = make_replacement(
        kRecipe, knowledge::Space::S2,
        std::string(gelu ? "tanh-GELU" : "ReLU") + " of '" + gemm->name +
            "' in the cuBLASLt epilogue (torch._addmm_activation)",
        {gemm->name, act.name}, act.name,
        {act.name + " = " + fast + " if " + condition + " else " + inline_expression(graph, act.name, {gemm->name})});
    r.definitions.push_back(kHasAddmmActivation);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::rewrites
