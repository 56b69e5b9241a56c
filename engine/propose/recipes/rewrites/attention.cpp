// s1_scaled_dot_product_attention: softmax(q @ k^T * scale [+ mask]) @ v as
// F.scaled_dot_product_attention, through casts that keep the scores' dtype or take the softmax in
// float32 for half-precision scores. A mask the capture knew to be causal
// (node facts: triu/tril built in forward or registered as a buffer, bool for
// masked_fill with -inf or a large negative, torch.where over a kept-positions
// mask, or additive) becomes is_causal=True; any other additive mask, or the bias of scores
// computed by one baddbmm (ALiBi), is attn_mask. SDPA's own default scale is 1/sqrt(E), so
// the reference's scale is always passed, which needs torch 2.1+: on an older
// torch the import-time flag picks the reference's own expression instead.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/python_text.h"
#include "engine/propose/recipes/rewrites/rewrites.h"

namespace hiera::engine::propose::recipes::rewrites {

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
  if (is_kind(node, "permute")) {  // k.permute(0, 1, 3, 2): the identity but for the last two dims
    std::vector<std::int64_t> order;
    if (node.args.size() == 2 && node.args[1].kind == graph::Arg::Kind::List) {
      const auto list = int_list(&node.args[1]);
      if (!list) return nullptr;
      order = *list;
    } else {
      for (std::size_t i = 1; i < node.args.size(); ++i) {
        const auto c = constant(&node.args[i]);
        if (!c) return nullptr;
        order.push_back(static_cast<std::int64_t>(*c));
      }
    }
    if (order.size() != r) return nullptr;
    for (std::size_t i = 0; i < r; ++i) {
      const auto n = normalize_dim(order[i], r);
      const std::size_t want = i + 2 < r ? i : (i + 2 == r ? r - 1 : r - 2);
      if (!n || *n != static_cast<std::int64_t>(want)) return nullptr;
    }
    return k;
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

// The scores' last two dims are square and the mask's are the same: a causal
// mask of those facts is SDPA's is_causal (top-left aligned, L == S).
bool causal_fits(const graph::Node& scores, const graph::Node& mask) {
  if (!scores.meta || !mask.meta || scores.meta->shape.size() < 2 || mask.meta->shape.size() < 2) return false;
  const auto& s = scores.meta->shape;
  const auto& m = mask.meta->shape;
  return s[s.size() - 1] == s[s.size() - 2] && m[m.size() - 1] == s[s.size() - 1] && m[m.size() - 2] == s[s.size() - 2];
}

// scores.masked_fill(mask, -inf) with a causal bool mask: the scores, else null.
const graph::Node* causal_masked_fill(const graph::OpGraph& graph, const graph::Node& node) {
  if (!is_call(node, "masked_fill", "torch.masked_fill") || !passes_only(node, 3, {})) return nullptr;
  const graph::Node* scores = argument_node(graph, node, 0, "input");
  const graph::Node* mask = argument_node(graph, node, 1, "mask");
  const auto fill = constant(argument(node, 2, "value"));
  if (!scores || !mask || !fill || *fill > -1.0e4 || mask->facts.mask != "causal_masked") return nullptr;
  if (!causal_fits(*scores, *mask) || !same_shape(*scores, node) || !only_user(*scores, node)) return nullptr;
  return scores;
}

// `from` and the nodes that compute it for the pattern alone: each one's users are all in `pattern` or in the
// set (a value read elsewhere stays); placeholders stay, as do values from before that feed something else.
std::set<std::string> private_producers(const graph::OpGraph& graph, const graph::Node& from,
                                        const std::set<std::string>& pattern) {
  std::set<std::string> out;
  const auto private_to = [&](const graph::Node& n) {
    if (n.op == "placeholder" || n.op == "output" || mutates(graph, n)) return false;
    for (const auto& user : n.users) {
      if (!pattern.count(user) && !out.count(user)) return false;
    }
    return true;
  };
  if (!private_to(from)) return out;
  out.insert(from.name);
  std::vector<const graph::Node*> todo{&from};
  while (!todo.empty()) {
    const graph::Node* n = todo.back();
    todo.pop_back();
    std::vector<const graph::Node*> reads;
    std::vector<const graph::Arg*> args;
    for (const auto& a : n->args) args.push_back(&a);
    for (const auto& [key, a] : n->kwargs) args.push_back(&a);
    while (!args.empty()) {  // torch.full((T, T), ...): the sizes inside a tuple too
      const graph::Arg* a = args.back();
      args.pop_back();
      reads.push_back(graph.producer(*a));
      for (const auto& item : a->items) args.push_back(&item);
    }
    for (const graph::Node* r : reads) {
      if (!r || out.count(r->name) || pattern.count(r->name) || !private_to(*r)) continue;
      out.insert(r->name);
      todo.push_back(r);
    }
  }
  return out;
}

// torch.where(kept, scores, -inf) with a causal kept-positions mask: the
// scores, else null. The fill may be a number or a one-element constant,
// computed from the scores' dtype (then its nodes join `chain`).
const graph::Node* causal_where(const graph::OpGraph& graph, const graph::Node& node, std::set<std::string>& chain) {
  if (!is_kind(node, "where") || node.args.size() != 3 || !node.kwargs.empty()) return nullptr;
  const graph::Node* mask = graph.producer(node.args[0]);
  const graph::Node* scores = graph.producer(node.args[1]);
  std::optional<double> fill = constant(&node.args[2]);
  const graph::Node* f = graph.producer(node.args[2]);
  if (f && f->facts.values && f->facts.values->size() == 1) fill = f->facts.values->front();
  if (!scores || !mask || !fill || *fill > -1.0e4 || mask->facts.mask != "causal_kept") return nullptr;
  std::set<std::string> fill_nodes;
  if (f && only_user(*f, node) && (f->op == "call_function" || f->op == "call_method"))
    // torch.tensor(torch.finfo(scores.dtype).min, ...) reads the scores' dtype and device, not their values: the
    // nodes computing the fill go with the pattern, the scores stay. Computed in forward; a kept constant stays.
    fill_nodes = private_producers(graph, *f, {node.name, scores->name});
  if (!causal_fits(*scores, *mask) || !same_shape(*scores, node)) return nullptr;
  for (const auto& user : scores->users) {
    if (user != node.name && !fill_nodes.count(user)) return nullptr;
  }
  chain.insert(fill_nodes.begin(), fill_nodes.end());
  return scores;
}

// `node` when it only changes its input's dtype, keeping shape and strides (is_dtype_cast, x.to(q.dtype),
// x.type_as(q)): the value it casts, else null.
const graph::Node* cast_of(const graph::OpGraph& graph, const graph::Node& node) {
  if (!node.meta || node.args.empty()) return nullptr;
  const auto dtype_of_a_tensor = [&](const graph::Arg& a) {  // x.dtype
    const graph::Node* n = graph.producer(a);
    return n && n->op == "call_function" && n->target == "getattr" && n->args.size() == 2 &&
           n->args[1].kind == graph::Arg::Kind::String && n->args[1].text == "dtype";
  };
  const bool to_a_tensors_dtype = node.op == "call_method" && node.target == "to" && node.args.size() == 2 &&
                                  node.kwargs.empty() && dtype_of_a_tensor(node.args[1]);
  const bool type_as = node.op == "call_method" && node.target == "type_as" && node.args.size() == 2 &&
                       node.kwargs.empty() && node.args[1].is_node();
  if (!is_dtype_cast(node) && !to_a_tensors_dtype && !type_as) return nullptr;
  const graph::Node* input = graph.producer(node.args[0]);
  if (!input || !input->meta || input->meta->shape != node.meta->shape || input->meta->stride != node.meta->stride)
    return nullptr;
  return input;
}

// The casts around the softmax that SDPA makes: none at all (a cast to the dtype the value already has
// returns it), or the softmax taken in float32 between a cast from half precision and one back to it,
// which SDPA's kernels do themselves (they accumulate the softmax in float32).
bool casts_fold(const graph::Node* before, const graph::Node& softmax, const graph::Node* after,
                const graph::Node& scores) {
  const std::string own = dtype(scores);
  const std::string inner = dtype(softmax);
  const std::string out = after ? dtype(*after) : inner;
  if (out != own) return false;
  if (inner == own) return true;
  return before && inner == "float32" && (own == "float16" || own == "bfloat16");
}

// Scores computed by one baddbmm: bias + alpha * (q @ k^T), beta 1 (ALiBi and
// relative-position biases): the bias is an additive mask, alpha the scale.
struct BaddbmmScores {
  const graph::Node* bias = nullptr;
  const graph::Arg* q = nullptr;
  const graph::Arg* k_t = nullptr;
  std::string scale;
};

std::optional<BaddbmmScores> baddbmm_scores(const graph::OpGraph& graph, const graph::Node& s) {
  if (!is_kind(s, "baddbmm") || !passes_only(s, 3, {"beta", "alpha"})) return std::nullopt;
  const graph::Arg* beta = keyword(s, "beta");
  if (beta && !is_constant(beta, 1.0)) return std::nullopt;
  BaddbmmScores out;
  out.bias = argument_node(graph, s, 0, "input");
  out.q = argument(s, 1, "batch1");
  out.k_t = argument(s, 2, "batch2");
  // A bias that broadcasts (a shared (S, S) table) would make SDPA broadcast it too; only the scores' own shape here.
  if (!out.bias || !out.q || !out.k_t || !out.bias->meta || !same_shape(s, *out.bias)) return std::nullopt;
  const graph::Arg* alpha = keyword(s, "alpha");
  if (!alpha) {
    out.scale = "1.0";
  } else if (const auto c = constant(alpha)) {
    out.scale = python_float(*c);
  } else {
    return std::nullopt;
  }
  return out;
}

}  // namespace

std::vector<Replacement> find_attention(const graph::OpGraph& graph, const RewriteOptions&) {
  std::vector<Replacement> out;
  for (const auto& o : graph.nodes) {
    if (!is_product(o) || !o.meta) continue;
    const graph::Node* p = graph.producer(o.args[0]);
    const graph::Node* v = graph.producer(o.args[1]);
    const graph::Node* after = nullptr;  // a cast of the probabilities (.type_as(q), .to(q.dtype))
    if (const graph::Node* cast = p && only_user(*p, o) ? cast_of(graph, *p) : nullptr) {
      after = p;
      p = cast;
    }
    if (!p || !v || !is_kind(*p, "softmax") || !only_user(*p, after ? *after : o) || !p->meta) continue;
    const graph::Arg* dtype_arg = keyword(*p, "dtype");
    if (dtype_arg && dtype_arg->kind != graph::Arg::Kind::None) continue;
    const auto dim = softmax_dim(graph, *p);
    const std::size_t rank_p = p->meta->shape.size();
    if (!dim || normalize_dim(*dim, rank_p) != static_cast<std::int64_t>(rank_p) - 1) continue;
    std::set<std::string> covered{o.name, p->name};
    const graph::Node* s = argument_node(graph, *p, 0, "input");
    const graph::Node* before = nullptr;  // a cast of the scores (.float())
    if (const graph::Node* cast = s && only_user(*s, *p) ? cast_of(graph, *s) : nullptr) {
      before = s;
      s = cast;
    }
    if (!s || !s->meta || !casts_fold(before, *p, after, *s)) continue;
    for (const graph::Node* cast : {before, after}) {
      if (cast) covered.insert(cast->name);
    }
    const graph::Node& reads_scores = before ? *before : *p;  // the scores' one user
    const graph::Node* mask = nullptr;
    const graph::Node* causal_mask = nullptr;  // the causal mask is_causal replaces
    bool causal = false;
    const graph::Node* causal_scores = causal_masked_fill(graph, *s);
    std::set<std::string> fill_nodes;
    if (causal_scores) {
      causal_mask = argument_node(graph, *s, 1, "mask");
    } else if ((causal_scores = causal_where(graph, *s, fill_nodes))) {
      causal_mask = graph.producer(s->args[0]);
    }
    if (const graph::Node* scores = causal_scores; scores && only_user(*s, reads_scores)) {
      covered.insert(s->name);
      covered.insert(fill_nodes.begin(), fill_nodes.end());
      s = scores;
      causal = true;
    } else if (is_kind(*s, "add") && s->args.size() == 2 && passes_only(*s, 2, {}) && only_user(*s, reads_scores)) {
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
        if (mask->facts.mask == "causal_additive" && causal_fits(*s, *mask)) {
          causal = true;
          causal_mask = mask;
          mask = nullptr;
        }
      }
    }
    // The scale: a constant, or a Python number computed in forward (1.0 / math.sqrt(q.size(-1))).
    std::string scale = "1.0";
    const auto baddbmm = s && !mask && !causal ? baddbmm_scores(graph, *s) : std::nullopt;
    if (baddbmm) {
      mask = baddbmm->bias;
      scale = baddbmm->scale;
    } else if (s && (is_kind(*s, "mul") || is_kind(*s, "div")) && s->args.size() == 2 && s->kwargs.empty()) {
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
    if (!s || !s->meta || (!baddbmm && !is_product(*s))) continue;
    covered.insert(s->name);
    // q @ k^T: the product's operands, or baddbmm's batch1 and batch2.
    const graph::Node* q = graph.producer(baddbmm ? *baddbmm->q : s->args[0]);
    const graph::Node* kt = graph.producer(baddbmm ? *baddbmm->k_t : s->args[1]);
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
    // A causal mask built in forward for this pattern alone is not built any more: SDPA's is_causal replaces it
    // (the fallback for an older torch builds it inline).
    const std::set<std::string> mask_nodes = causal_mask ? private_producers(graph, *causal_mask, covered) : std::set<std::string>{};
    covered.insert(mask_nodes.begin(), mask_nodes.end());
    std::set<std::string> inline_nodes = covered;
    inline_nodes.insert(kt->name);
    if (only_user(*kt, *s)) covered.insert(kt->name);
    const std::string fallback = inline_expression(graph, o.name, inline_nodes);
    std::string call = "torch.nn.functional.scaled_dot_product_attention(" + q->name + ", " + k->name + ", " + v->name;
    if (mask) call += ", attn_mask=" + mask->name;
    if (causal) call += ", is_causal=True";
    call += ", scale=" + scale + ")";
    Replacement r =
        make_replacement(kRecipe, knowledge::Space::S1,
                         "softmax('" + q->name + "' @ '" + k->name + "'^T * " + scale + (mask ? " + mask" : "") + (causal ? ", causal" : "") +
                             ") @ '" + v->name + "' as F.scaled_dot_product_attention",
                         covered, o.name, {o.name + " = " + call + " if _HIERA_SDPA_HAS_SCALE else " + fallback});
    r.definitions.push_back(kSdpaHasScale);
    r.risky = true;  // another algorithm (flash / memory-efficient / math with q and k pre-scaled)
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::rewrites
