// s1_fused_torch_primitives (activations): hand-written SiLU, GELU (erf and
// tanh forms) and softplus as the single torch operator that computes them.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/rewrites/rewrites.h"

namespace hiera::engine::propose::recipes::rewrites {

namespace {

constexpr const char* kRecipe = "s1_fused_torch_primitives";

// A product of tensors and constants written with * and / by constants:
// 0.5 * x * (1 + e), x * 0.5 * y, (x * y) / 2.
struct Product {
  double constant = 1.0;
  std::vector<const graph::Node*> factors;
  std::set<std::string> nodes;  // the mul/div nodes that make it up
};

bool close(double a, double b) { return std::abs(a - b) <= 1e-6 * std::abs(b); }

// Flattens the mul/div tree rooted at `node`; inner mul/div nodes join only when `node`'s tree is their one user.
void flatten(const graph::OpGraph& graph, const graph::Node& node, Product& product) {
  product.nodes.insert(node.name);
  const bool div = is_kind(node, "div");
  for (std::size_t i = 0; i < 2; ++i) {
    const graph::Arg& arg = node.args[i];
    if (const auto c = constant(&arg)) {
      product.constant *= (div && i == 1) ? 1.0 / *c : *c;
      continue;
    }
    const graph::Node* n = graph.producer(arg);
    if (n && i == 0 && (is_kind(*n, "mul") || is_kind(*n, "div")) && n->args.size() == 2 && n->kwargs.empty() &&
        only_user(*n, node) && !mutates(graph, *n)) {
      flatten(graph, *n, product);
    } else if (n && i == 1 && !div && is_kind(*n, "mul") && n->args.size() == 2 && n->kwargs.empty() &&
               only_user(*n, node) && !mutates(graph, *n)) {
      flatten(graph, *n, product);
    } else {
      product.factors.push_back(n);  // null for a non-constant, non-node operand: never matches
    }
  }
}

std::optional<Product> product_of(const graph::OpGraph& graph, const graph::Node* node) {
  if (!node || !(is_kind(*node, "mul") || is_kind(*node, "div")) || node->args.size() != 2 || !node->kwargs.empty()) {
    return std::nullopt;
  }
  if (is_kind(*node, "div") && !constant(&node->args[1])) return std::nullopt;
  Product p;
  flatten(graph, *node, p);
  for (const auto* f : p.factors) {
    if (!f) return std::nullopt;
  }
  return p;
}

// 1 + inner or inner + 1, with inner = f(x) a single-use node of the given kind: inner, else null.
const graph::Node* one_plus(const graph::OpGraph& graph, const graph::Node* add, bool (*is_inner)(const graph::Node&)) {
  if (!add || !is_kind(*add, "add") || add->args.size() != 2 || !passes_only(*add, 2, {})) return nullptr;
  for (std::size_t i = 0; i < 2; ++i) {
    const graph::Node* n = graph.producer(add->args[i]);
    if (n && is_constant(&add->args[1 - i], 1.0) && is_inner(*n) && only_user(*n, *add)) return n;
  }
  return nullptr;
}

bool is_erf(const graph::Node& n) {
  return is_call(n, "erf", "torch.erf") || is_call(n, "erf", "torch.special.erf") || is_kind(n, "erf");
}
bool is_tanh(const graph::Node& n) { return is_kind(n, "tanh"); }
bool is_exp(const graph::Node& n) { return is_kind(n, "exp"); }

// x * c for one factor x: x, else null.
const graph::Node* scaled_single(const std::optional<Product>& p, double c) {
  if (!p || p->factors.size() != 1 || !close(p->constant, c)) return nullptr;
  return p->factors[0];
}

// x ** 3 as pow(x, 3) or x * x * x (inside a product): true when the factors are that cube.
bool is_cube_of(const graph::OpGraph& graph, const Product& p, const graph::Node* x, std::set<std::string>& nodes) {
  if (p.factors.size() == 3 && p.factors[0] == x && p.factors[1] == x && p.factors[2] == x) return true;
  if (p.factors.size() != 1 || !is_kind(*p.factors[0], "pow")) return false;
  const graph::Node& pw = *p.factors[0];
  if (pw.args.size() != 2 || graph.producer(pw.args[0]) != x || !is_constant(&pw.args[1], 3.0)) return false;
  if (pw.users.size() != 1) return false;
  nodes.insert(pw.name);
  return true;
}

struct Match {
  const graph::Node* x;
  std::set<std::string> covered;
  std::string statement;  // the value, without "name = "
  std::string what;
  bool risky = false;
};

// 0.5 * x * (1 + erf(x / sqrt(2)))  and  0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
std::optional<Match> gelu(const graph::OpGraph& graph, const graph::Node& root) {
  const auto outer = product_of(graph, &root);
  if (!outer || outer->factors.size() != 2 || !close(outer->constant, 0.5)) return std::nullopt;
  for (std::size_t i = 0; i < 2; ++i) {
    const graph::Node* x = outer->factors[i];
    const graph::Node* add = outer->factors[1 - i];
    if (add->users.size() != 1) continue;
    Match m{x, outer->nodes, {}, {}};
    m.covered.insert(add->name);
    if (const graph::Node* e = one_plus(graph, add, is_erf)) {
      const graph::Node* z = graph.producer(e->args.empty() ? graph::Arg{} : e->args[0]);
      const auto inner = product_of(graph, z);
      if (!inner || scaled_single(inner, 1.0 / std::sqrt(2.0)) != x || z->users.size() != 1) continue;
      m.covered.insert(e->name);
      m.covered.insert(inner->nodes.begin(), inner->nodes.end());
      m.statement = "torch.nn.functional.gelu(" + x->name + ")";
      m.what = "hand-written erf GELU of '" + x->name + "' as F.gelu";
      return m;
    }
    if (const graph::Node* t = one_plus(graph, add, is_tanh)) {
      const graph::Node* z = graph.producer(t->args.empty() ? graph::Arg{} : t->args[0]);
      const auto scaled = product_of(graph, z);
      const graph::Node* sum = scaled_single(scaled, std::sqrt(2.0 / std::numbers::pi));
      if (!sum || z->users.size() != 1 || !is_kind(*sum, "add") || sum->args.size() != 2 || sum->users.size() != 1 ||
          !passes_only(*sum, 2, {})) {
        continue;
      }
      bool matched = false;
      std::set<std::string> cube_nodes;
      for (std::size_t j = 0; j < 2 && !matched; ++j) {
        if (graph.producer(sum->args[j]) != x) continue;
        const graph::Node* c = graph.producer(sum->args[1 - j]);
        const auto cubic = product_of(graph, c);
        if (!cubic || c->users.size() != 1 || !close(cubic->constant, 0.044715)) continue;
        if (!is_cube_of(graph, *cubic, x, cube_nodes)) continue;
        m.covered.insert(cubic->nodes.begin(), cubic->nodes.end());
        matched = true;
      }
      if (!matched) continue;
      m.covered.insert(cube_nodes.begin(), cube_nodes.end());
      m.covered.insert({t->name, sum->name});
      m.covered.insert(scaled->nodes.begin(), scaled->nodes.end());
      m.statement = "torch.nn.functional.gelu(" + x->name + ", approximate=\"tanh\")";
      m.what = "hand-written tanh GELU of '" + x->name + "' as F.gelu(approximate=\"tanh\")";
      return m;
    }
  }
  return std::nullopt;
}

// x * sigmoid(x)
std::optional<Match> silu(const graph::OpGraph& graph, const graph::Node& root) {
  if (!is_kind(root, "mul") || root.args.size() != 2 || !root.kwargs.empty()) return std::nullopt;
  for (std::size_t i = 0; i < 2; ++i) {
    const graph::Node* x = graph.producer(root.args[i]);
    const graph::Node* s = graph.producer(root.args[1 - i]);
    if (x && s && is_kind(*s, "sigmoid") && only_user(*s, root) && argument_node(graph, *s, 0, "input") == x) {
      return Match{x,
                   {s->name, root.name},
                   "torch.nn.functional.silu(" + x->name + ")",
                   "x * sigmoid(x) of '" + x->name + "' as F.silu"};
    }
  }
  return std::nullopt;
}

// log(1 + exp(x)) or log1p(exp(x))
std::optional<Match> softplus(const graph::OpGraph& graph, const graph::Node& root) {
  const bool log1p = is_call(root, "log1p", "torch.log1p");
  if ((!is_kind(root, "log") && !log1p) || root.args.size() != 1 || !root.kwargs.empty()) return std::nullopt;
  const graph::Node* inner = graph.producer(root.args[0]);
  if (!inner || !only_user(*inner, root)) return std::nullopt;
  const graph::Node* e = log1p ? (is_exp(*inner) ? inner : nullptr) : one_plus(graph, inner, is_exp);
  if (!e) return std::nullopt;
  const graph::Node* x = argument_node(graph, *e, 0, "input");
  if (!x || e->args.size() != 1) return std::nullopt;
  Match m{x,
          {root.name, inner->name, e->name},
          "torch.nn.functional.softplus(" + x->name + ")",
          "log(1 + exp(x)) of '" + x->name + "' as F.softplus"};
  m.risky = true;  // the reference overflows to inf for x > 88 (float32) where softplus returns x
  return m;
}

}  // namespace

std::vector<Replacement> find_fused_activations(const graph::OpGraph& graph, const RewriteOptions&) {
  std::vector<Replacement> out;
  std::set<std::string> taken;
  // Outermost first (reverse execution order): a GELU's product is matched at its root, not at an inner mul.
  for (auto it = graph.nodes.rbegin(); it != graph.nodes.rend(); ++it) {
    const graph::Node& root = *it;
    if (taken.count(root.name) || mutates(graph, root)) continue;
    std::optional<Match> m = gelu(graph, root);
    if (!m) m = silu(graph, root);
    if (!m) m = softplus(graph, root);
    if (!m || !m->x->meta || !root.meta || dtype(*m->x) != dtype(root) || !is_floating(dtype(root))) continue;
    bool free = true;
    for (const auto& name : m->covered) free = free && !taken.count(name) && !mutates(graph, *graph.find(name));
    if (!free) continue;
    taken.insert(m->covered.begin(), m->covered.end());
    Replacement r = make_replacement(kRecipe, knowledge::Space::S1, m->what, m->covered, root.name,
                                     {root.name + " = " + m->statement});
    r.risky = m->risky;
    out.push_back(std::move(r));
  }
  // Back in execution order, so the proposer and the tests see them as the graph runs.
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace hiera::engine::propose::recipes::rewrites
