// s2_split_tf32_gemm: float32 matrix products (nn.Linear, F.linear, matmul or @, mm, bmm, addmm, einsum) as one
// TF32 GEMM over operands split in two TF32 parts each (3xTF32, hiera_runner.split_tf32): float32's accuracy
// on the tensor cores. Not where the contract allows TF32 itself (s2_tf32_matmul is three times cheaper there).
#include <algorithm>
#include <cctype>
#include <optional>

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/python_text.h"
#include "engine/propose/recipes/rewrites/rewrites.h"

namespace hiera::engine::propose::recipes::rewrites {

namespace {

constexpr const char* kRecipe = "s2_split_tf32_gemm";
constexpr const char* kImport = "from hiera_runner import split_tf32 as _split_tf32";
// Below these the split's extra pass and the tripled operand reads cost more than the tensor cores save: a
// product with a side under 128 is bound by its operands' bytes, not by float32's FLOP rate.
constexpr std::int64_t kMinSide = 128;
constexpr double kMinMultiplyAdds = 1 << 27;

std::int64_t numel(const std::vector<std::int64_t>& shape, std::size_t drop_last) {
  std::int64_t n = 1;
  for (std::size_t i = 0; i + drop_last < shape.size(); ++i) n *= shape[i];
  return n;
}

// Whether an (M x K) @ (K x N) product, `batch` times, is large enough on every side.
bool worth_splitting(std::int64_t batch, std::int64_t m, std::int64_t k, std::int64_t n) {
  return m >= kMinSide && k >= kMinSide && n >= kMinSide &&
         static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n) >= kMinMultiplyAdds;
}

bool float32_tensor(const graph::Node* node) { return node && node->meta && dtype(*node) == "float32"; }

// nn.Linear or F.linear: its `statement`, when the product is float32 and large enough.
bool linear_statement(const graph::OpGraph& graph, const graph::Node& node, std::string& statement) {
  const graph::Node* x = argument_node(graph, node, 0, "input");
  if (!float32_tensor(x) || x->meta->shape.empty()) return false;
  std::string weight, bias = "None";
  std::int64_t n = 0;
  if (const auto* sub = submodule(graph, node)) {
    weight = python_attribute_path(node.target + ".weight");
    const auto has_bias = sub->attrs.find("bias");
    if (has_bias == sub->attrs.end() || !has_bias->is_boolean()) return false;
    if (has_bias->get<bool>()) bias = python_attribute_path(node.target + ".bias");
    if (!node.meta || node.meta->shape.empty()) return false;
    n = node.meta->shape.back();
  } else {
    const graph::Node* w = argument_node(graph, node, 1, "weight");
    if (!float32_tensor(w) || rank(*w) != 2u || !passes_only(node, 3, {"bias"})) return false;
    weight = w->name;
    n = w->meta->shape[0];
    if (const graph::Arg* b = argument(node, 2, "bias"); b && b->kind != graph::Arg::Kind::None) {
      const graph::Node* bias_node = argument_node(graph, node, 2, "bias");
      if (!float32_tensor(bias_node)) return false;
      bias = bias_node->name;
    }
  }
  const std::int64_t k = x->meta->shape.back();
  if (!worth_splitting(1, numel(x->meta->shape, 1), k, n)) return false;
  statement = "_split_tf32.linear(" + x->name + ", " + weight + ", " + bias + ")";
  return true;
}

// `a` @ `b` (two or more dims each) as split_tf32's call: linear(a, W, bias) where b is a 2D W's transpose
// (W.t(), W.T: the weight W is split once), else matmul(a, b) (a bias then added after it).
struct Product {
  const graph::Node *a = nullptr, *b = nullptr, *weight = nullptr;  // weight: b's W when b = W.t()
  std::string call(const std::string& bias) const {
    if (weight) return "_split_tf32.linear(" + a->name + ", " + weight->name + ", " + (bias.empty() ? "None" : bias) + ")";
    const std::string product = "_split_tf32.matmul(" + a->name + ", " + b->name + ")";
    return bias.empty() ? product : "torch.add(" + product + ", " + bias + ")";
  }
};

// The product when it is float32 and large enough.
std::optional<Product> product(const graph::OpGraph& graph, const graph::Node& node, const graph::Node* a,
                               const graph::Node* b) {
  if (!float32_tensor(a) || !float32_tensor(b)) return std::nullopt;
  const auto& as = a->meta->shape;
  const auto& bs = b->meta->shape;
  if (as.size() < 2 || bs.size() < 2 || as.back() != bs[bs.size() - 2]) return std::nullopt;
  const std::int64_t batch = node.meta && node.meta->shape.size() >= 2 ? numel(node.meta->shape, 2) : 1;
  if (!worth_splitting(batch, as[as.size() - 2], as.back(), bs.back())) return std::nullopt;
  Product p{a, b, transposed_matrix(graph, *b)};
  if (p.weight && !float32_tensor(p.weight)) p.weight = nullptr;
  return p;
}

// torch.einsum of two operands that is a matrix product: "bsd,df->bsf" (a's last index summed with a 2D b's
// first, the output a's others and b's last) or "bij,bjk->bik" (the same batch indices on both): a @ b.
bool einsum_is_product(std::string equation) {
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  const auto comma = equation.find(','), arrow = equation.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || comma > arrow) return false;
  const std::string a = equation.substr(0, comma), b = equation.substr(comma + 1, arrow - comma - 1),
                    out = equation.substr(arrow + 2);
  if (a.size() < 2 || b.size() < 2 || equation.find("...") != std::string::npos) return false;
  for (const std::string* term : {&a, &b, &out})
    for (std::size_t i = 0; i < term->size(); ++i)
      if (!std::islower(static_cast<unsigned char>((*term)[i])) || term->find((*term)[i], i + 1) != std::string::npos) return false;
  const char k = a.back(), n = b.back();
  const std::string a_rest = a.substr(0, a.size() - 1), b_batch = b.substr(0, b.size() - 2);
  if (b[b.size() - 2] != k || a_rest.find(n) != std::string::npos || out != a_rest + n) return false;
  // b's leading indices are a's batch indices, in order, right before a's row index (broadcast like matmul).
  return b_batch.empty() || (a_rest.size() >= b_batch.size() + 1 &&
                             a_rest.substr(a_rest.size() - 1 - b_batch.size(), b_batch.size()) == b_batch);
}

// matmul / @ / mm / bmm, addmm without beta or alpha, and einsum that is a product.
bool product_statement(const graph::OpGraph& graph, const graph::Node& node, std::string& statement) {
  std::optional<Product> p;
  std::string bias;
  if ((is_kind(node, "matmul") || is_kind(node, "bmm")) && node.args.size() == 2 && node.kwargs.empty()) {
    p = product(graph, node, graph.producer(node.args[0]), graph.producer(node.args[1]));
  } else if (is_kind(node, "addmm") && node.args.size() == 3 && node.kwargs.empty()) {
    // torch.addmm(bias, x, W.t()): a vector bias as F.linear's; any other input added after the product.
    const graph::Node* input = graph.producer(node.args[0]);
    if (!float32_tensor(input)) return false;
    p = product(graph, node, graph.producer(node.args[1]), graph.producer(node.args[2]));
    if (p && p->weight && rank(*input) != 1u) p->weight = nullptr;
    bias = input->name;
  } else if (node.op == "call_function" && node.target == "torch.einsum" && node.args.size() == 3 && node.kwargs.empty() &&
             node.args[0].kind == graph::Arg::Kind::String && einsum_is_product(node.args[0].text)) {
    p = product(graph, node, graph.producer(node.args[1]), graph.producer(node.args[2]));
  }
  if (!p) return false;
  statement = p->call(bias);
  return true;
}

}  // namespace

std::vector<Replacement> find_split_tf32(const graph::OpGraph& graph, const RewriteOptions& options) {
  const auto& allow = options.allowed_precisions;
  if (std::find(allow.begin(), allow.end(), "tf32") != allow.end()) return {};
  std::vector<Replacement> out;
  for (const auto& node : graph.nodes) {
    if (!node.meta || dtype(node) != "float32" || mutates(graph, node)) continue;
    std::string statement;
    const bool linear = is_kind(node, "linear");
    if (linear ? !linear_statement(graph, node, statement) : !product_statement(graph, node, statement)) continue;
    Replacement r = make_replacement(kRecipe, knowledge::Space::S2,
                                     std::string(linear ? "linear" : "matrix product") + " '" + node.name +
                                         "' in float32 as one 3xTF32 GEMM (operands split in two TF32 parts, K tripled)",
                                     {node.name}, node.name, {node.name + " = " + statement});
    r.imports.push_back(kImport);
    // torch.compile hands the product to the same float32 cuBLAS GEMM: a compiled model keeps this rewrite (the
    // proposer's compiled composition, inductor fusing around it; split_tf32 is out of its graphs).
    r.library_gap = true;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::rewrites
