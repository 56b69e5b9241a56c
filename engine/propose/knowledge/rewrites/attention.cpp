// s1_scaled_dot_product_attention: softmax(q @ k^T * scale [+ mask]) @ v as
// F.scaled_dot_product_attention. SDPA's own default scale is 1/sqrt(E), so
// the reference's scale is always passed, which needs torch 2.1+: on an older
// torch the import-time flag picks the reference's own expression instead.
#include <optional>

#include "engine/propose/knowledge/graph_queries.h"
#include "engine/propose/knowledge/python_text.h"
#include "engine/propose/knowledge/rewrites/rewrites.h"

namespace hiera::engine::propose::knowledge_proposer::rewrites {

namespace {

constexpr const char* kRecipe = "s1_scaled_dot_product_attention";
constexpr const char* kSdpaHasScale =
    "# F.scaled_dot_product_attention takes scale= from torch 2.1 on; older versions keep the reference's math.\n"
    "_HIERA_SDPA_HAS_SCALE = tuple(int(part) for part in torch.__version__.split(\".\")[:2]) >= (2, 1)";

bool is_product(const graph::Node& node) {
  return (is_kind(node, "matmul") || is_kind(node, "bmm")) && node.args.size() == 2 && node.kwargs.empty();
}

// k when `node` is k with its last two dims swapped, else null.
const graph::Node* last_two_swapped(const graph::OpGraph& graph, const graph::Node& node) {
  const graph::Node* k = argument_node(graph, node, 0, "input");
  if (!k || !k->meta || k->meta->shape.size() < 2) return nullptr;
  const std::size_t r = k->meta->shape.size();
  std::vector<std::int64_t> dims;
  if (r == 2 && is_call(node, "t", "torch.t")) return k;
  if (node.op == "call_function" && node.target == "getattr" && node.args.size() == 2 &&
      node.args[1].kind == graph::Arg::Kind::String) {
    return node.args[1].text == "mT" || (r == 2 && node.args[1].text == "T") ? k : nullptr;
  }
  if (is_kind(node, "transpose")) {
    for (std::size_t i = 1; i <= 2; ++i) {
      const auto d = int_list(argument(node, i, i == 1 ? "dim0" : "dim1"));
      if (!d || d->size() != 1) return nullptr;
      const auto n = normalize_dim((*d)[0], r);
      if (!n) return nullptr;
      dims.push_back(*n);
    }
    const auto lo = std::min(dims[0], dims[1]), hi = std::max(dims[0], dims[1]);
    return lo == static_cast<std::int64_t>(r) - 2 && hi == static_cast<std::int64_t>(r) - 1 ? k : nullptr;
  }
  return nullptr;
}

}  // namespace

std::vector<Replacement> find_attention(const graph::OpGraph& graph, const RewriteOptions&) {
  std::vector<Replacement> out;
  for (const auto& o : graph.nodes) {
    if (!is_product(o) || !o.meta) continue;
    const graph::Node* p = graph.producer(o.args[0]);
    const graph::Node* v = graph.producer(o.args[1]);
    if (!p || !v || !is_kind(*p, "softmax") || !only_user(*p, o) || !p->meta) continue;
    const graph::Arg* dtype_arg = keyword(*p, "dtype");
    if (dtype_arg && dtype_arg->kind != graph::Arg::Kind::None) continue;
    const auto dim = softmax_dim(graph, *p);
    const std::size_t rank_p = p->meta->shape.size();
    if (!dim || normalize_dim(*dim, rank_p) != static_cast<std::int64_t>(rank_p) - 1) continue;
    std::set<std::string> covered{o.name, p->name};
    const graph::Node* s = argument_node(graph, *p, 0, "input");
    const graph::Node* mask = nullptr;
    if (s && is_kind(*s, "add") && s->args.size() == 2 && passes_only(*s, 2, {}) && only_user(*s, *p)) {
      const graph::Node* a = graph.producer(s->args[0]);
      const graph::Node* b = graph.producer(s->args[1]);
      // The scores are the operand that comes from a product; the other is an additive mask.
      const auto from_product = [&](const graph::Node* n) {
        return n && (is_product(*n) || ((is_kind(*n, "mul") || is_kind(*n, "div")) && n->args.size() == 2));
      };
      // A mask that broadcast the scores to a larger shape would change SDPA's output shape.
      if (a && b && from_product(a) != from_product(b) && same_shape(*s, from_product(a) ? *a : *b)) {
        mask = from_product(a) ? b : a;
        covered.insert(s->name);
        s = from_product(a) ? a : b;
      }
    }
    // The scale: a constant, or a Python number computed in forward (1.0 / math.sqrt(q.size(-1))).
    std::string scale = "1.0";
    if (s && (is_kind(*s, "mul") || is_kind(*s, "div")) && s->args.size() == 2 && s->kwargs.empty()) {
      const bool div = is_kind(*s, "div");
      const auto scalar = [&](const graph::Arg& a) -> std::optional<std::string> {
        if (const auto c = constant(&a)) return div ? python_float(1.0 / *c) : python_float(*c);
        const graph::Node* n = graph.producer(a);
        if (n && !n->meta && n->tuple_meta.empty()) return div ? "1.0 / " + n->name : n->name;
        return std::nullopt;
      };
      const graph::Node* left = graph.producer(s->args[0]);
      const graph::Node* right = graph.producer(s->args[1]);
      if (left && left->meta && scalar(s->args[1])) {
        scale = *scalar(s->args[1]);
        covered.insert(s->name);
        s = left;
      } else if (!div && right && right->meta && scalar(s->args[0])) {
        scale = *scalar(s->args[0]);
        covered.insert(s->name);
        s = right;
      }
    }
    if (!s || !is_product(*s) || !s->meta) continue;
    covered.insert(s->name);
    const graph::Node* q = graph.producer(s->args[0]);
    const graph::Node* kt = graph.producer(s->args[1]);
    const graph::Node* k = kt ? last_two_swapped(graph, *kt) : nullptr;
    if (!q || !k || !q->meta || !v->meta) continue;
    const std::size_t rank_q = q->meta->shape.size();
    if (rank_q < 3 || rank_q > 4 || k->meta->shape.size() != rank_q || v->meta->shape.size() != rank_q) continue;
    const std::string dt = dtype(*q);
    if (!is_floating(dt) || dtype(*k) != dt || dtype(*v) != dt || (mask && dtype(*mask) != dt)) continue;
    // Every intermediate (scores, scaled, masked, probabilities) is used only inside the pattern.
    bool private_chain = true;
    for (const auto& name : covered) {
      const graph::Node& n = *graph.find(name);
      private_chain = private_chain && !mutates(graph, n);
      if (name == o.name) continue;
      for (const auto& user : n.users) private_chain = private_chain && covered.count(user) > 0;
    }
    if (!private_chain) continue;
    std::set<std::string> inline_nodes = covered;
    inline_nodes.insert(kt->name);
    if (only_user(*kt, *s)) covered.insert(kt->name);
    const std::string fallback = inline_expression(graph, o.name, inline_nodes);
    std::string call = "torch.nn.functional.scaled_dot_product_attention(" + q->name + ", " + k->name + ", " + v->name;
    if (mask) call += ", attn_mask=" + mask->name;
    call += ", scale=" + scale + ")";
    Replacement r =
        make_replacement(kRecipe, knowledge::Space::S1,
                         "softmax('" + q->name + "' @ '" + k->name + "'^T * " + scale + (mask ? " + mask" : "") +
                             ") @ '" + v->name + "' as F.scaled_dot_product_attention",
                         covered, o.name, {o.name + " = " + call + " if _HIERA_SDPA_HAS_SCALE else " + fallback});
    r.definitions.push_back(kSdpaHasScale);
    r.risky = true;  // another algorithm (flash / memory-efficient / math with q and k pre-scaled)
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace hiera::engine::propose::knowledge_proposer::rewrites
