// s2_strided_batched_gemm: a Python loop of matmuls over a[i] (and b[i]) that
// the trace unrolled, stacked along dim 0, as one bmm/baddbmm on the slice
// views a[s:s + n]: cuBLAS's strided batched GEMM on the existing memory.
#include <algorithm>
#include <optional>

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/rewrites/rewrites.h"

namespace hiera::engine::propose::recipes::rewrites {

namespace {

constexpr const char* kRecipe = "s2_strided_batched_gemm";

bool is_matmul(const graph::Node& node) {
  return (is_kind(node, "matmul") || is_call(node, "mm", "torch.mm")) && node.args.size() == 2 && node.kwargs.empty();
}

// base[i] for an integer i: (base, i).
std::optional<std::pair<const graph::Node*, std::int64_t>> indexed(const graph::OpGraph& graph, const graph::Node* n) {
  if (!n || !is_kind(*n, "getitem") || n->args.size() != 2) return std::nullopt;
  const graph::Node* base = graph.producer(n->args[0]);
  const graph::Arg& i = n->args[1];
  if (!base || !base->meta || i.kind != graph::Arg::Kind::Number || !i.is_integer || i.number < 0) return std::nullopt;
  return std::make_pair(base, static_cast<std::int64_t>(i.number));
}

// One operand across the loop: every iteration's slice base[s + i], or the same tensor each time.
struct Operand {
  const graph::Node* base = nullptr;
  std::int64_t start = -1;  // -1: shared (not sliced)
};

std::optional<Operand> operand(const graph::OpGraph& graph, const std::vector<const graph::Node*>& values) {
  Operand o;
  if (std::all_of(values.begin(), values.end(), [&](const graph::Node* v) { return v == values[0]; })) {
    o.base = values[0];
    return o;
  }
  const auto first = indexed(graph, values[0]);
  if (!first) return std::nullopt;
  o.base = first->first;
  o.start = first->second;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto slot = indexed(graph, values[i]);
    if (!slot || slot->first != o.base || slot->second != o.start + static_cast<std::int64_t>(i)) return std::nullopt;
  }
  return o;
}

std::string batched(const Operand& o, std::size_t n, const std::string& expand) {
  if (o.start < 0) return o.base->name + expand;
  return o.base->name + "[" + std::to_string(o.start) + ":" + std::to_string(o.start + static_cast<std::int64_t>(n)) +
         "]";
}

}  // namespace

std::vector<Replacement> find_strided_batched_gemms(const graph::OpGraph& graph, const RewriteOptions&) {
  std::vector<Replacement> out;
  for (const auto& stack : graph.nodes) {
    if (!is_kind(stack, "stack") || stack.args.empty() || stack.args[0].kind != graph::Arg::Kind::List) continue;
    if (const graph::Arg* dim = argument(stack, 1, "dim"); dim && !is_constant(dim, 0.0)) continue;
    const auto& items = stack.args[0].items;
    const std::size_t n = items.size();
    if (n < 2) continue;
    std::vector<const graph::Node*> as, bs, biases;
    std::set<std::string> covered{stack.name};
    bool ok = true;
    for (const auto& item : items) {
      const graph::Node* value = graph.producer(item);
      if (!value || !only_user(*value, stack)) {
        ok = false;
        break;
      }
      const graph::Node* product = value;
      if (is_kind(*value, "add") && value->args.size() == 2 && passes_only(*value, 2, {})) {
        product = graph.producer(value->args[0]);
        biases.push_back(graph.producer(value->args[1]));
        if (!product || !is_matmul(*product) || !only_user(*product, *value) || !biases.back() ||
            !same_shape(*product, *value) || dtype(*biases.back()) != dtype(*product)) {
          ok = false;
          break;
        }
        covered.insert(value->name);
      }
      if (!is_matmul(*product) || rank(*product) != 2u) {
        ok = false;
        break;
      }
      covered.insert(product->name);
      as.push_back(graph.producer(product->args[0]));
      bs.push_back(graph.producer(product->args[1]));
      if (!as.back() || !bs.back() || rank(*as.back()) != 2u || rank(*bs.back()) != 2u) {
        ok = false;
        break;
      }
    }
    if (!ok || (!biases.empty() && biases.size() != n)) continue;
    const auto a = operand(graph, as), b = operand(graph, bs);
    if (!a || !b || a->start < 0 || dtype(*as[0]) != dtype(*bs[0])) continue;  // at least the left operand is sliced
    const std::string lhs = batched(*a, n, "");
    std::string statement, what;
    if (biases.empty()) {
      statement = "torch.bmm(" + lhs + ", " + batched(*b, n, ".expand(" + std::to_string(n) + ", -1, -1)") + ")";
      what = std::to_string(n) + " matmuls on slices of '" + a->base->name + "' as one torch.bmm";
    } else {
      const auto c = operand(graph, biases);
      if (!c || rank(*biases[0]) > 2u) continue;
      // A sliced vector bias c[i] of shape [N] needs a row dim to broadcast over [n, M, N].
      std::string input = batched(*c, n, "");
      if (c->start >= 0 && rank(*biases[0]) == 1u) input += ".unsqueeze(1)";
      statement = "torch.baddbmm(" + input + ", " + lhs + ", " +
                  batched(*b, n, ".expand(" + std::to_string(n) + ", -1, -1)") + ")";
      what = std::to_string(n) + " matmuls + bias on slices of '" + a->base->name + "' as one torch.baddbmm";
    }
    out.push_back(
        make_replacement(kRecipe, knowledge::Space::S2, what, covered, stack.name, {stack.name + " = " + statement}));
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::rewrites
