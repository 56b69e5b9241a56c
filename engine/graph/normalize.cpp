#include "engine/graph/normalize.h"

#include <cctype>
#include <map>
#include <optional>
#include <set>

namespace hiera::engine::graph {

namespace {

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The argument at `position`, else by name (kwargs, then the schema-normalised map).
const Arg* find_arg(const Node& node, std::size_t position, const std::string& name) {
  if (position < node.args.size()) return &node.args[position];
  if (const auto it = node.kwargs.find(name); it != node.kwargs.end()) return &it->second;
  if (node.normalized) {
    if (const auto it = node.normalized->find(name); it != node.normalized->end()) return &it->second;
  }
  return nullptr;
}

// The node whose value `node` returns unchanged, with why, or nullopt.
struct Identity {
  std::string source;
  std::string why;
};

std::optional<Identity> dropout_identity(const OpGraph& graph, const Node& node) {
  const Arg* input = find_arg(node, 0, "input");
  if (!input || !input->is_node()) return std::nullopt;
  double p = 0.5;
  bool training = true;
  if (node.op == "call_module") {
    const auto sub = graph.submodules.find(node.target);
    if (sub == graph.submodules.end()) return std::nullopt;
    const auto it = sub->second.attrs.find("p");
    if (it == sub->second.attrs.end() || !it->is_number()) return std::nullopt;
    p = it->get<double>();
    training = graph.training;
  } else {
    if (const Arg* a = find_arg(node, 1, "p")) {
      if (!a->is_number()) return std::nullopt;
      p = a->number;
    }
    // F.dropout's `training` defaults to True whatever the module's mode; torch.dropout calls it `train`.
    if (const Arg* a = find_arg(node, 2, node.target == "torch.dropout" ? "train" : "training")) {
      if (a->kind != Arg::Kind::Bool) return std::nullopt;
      training = a->flag;
    }
  }
  if (p != 0.0 && training) return std::nullopt;
  return Identity{input->node, p == 0.0 ? "dropout with p=0" : "dropout in eval mode"};
}

std::optional<Identity> identity_of(const OpGraph& graph, const Node& node) {
  if (node.kind == "dropout") return dropout_identity(graph, node);
  if (node.kind == "identity" && node.op == "call_module" && !node.args.empty() && node.args[0].is_node()) {
    return Identity{node.args[0].node, "nn.Identity"};
  }
  return std::nullopt;
}

void rename_arg(Arg& arg, const std::string& from, const std::string& to) {
  if (arg.kind == Arg::Kind::Node && arg.node == from) arg.node = to;
  for (auto& item : arg.items) rename_arg(item, from, to);
}

void rename_reads(Node& node, const std::string& from, const std::string& to) {
  for (auto& a : node.args) rename_arg(a, from, to);
  for (auto& [key, a] : node.kwargs) rename_arg(a, from, to);
  if (node.normalized) {
    for (auto& [key, a] : *node.normalized) rename_arg(a, from, to);
  }
  node.code = rename_in_code(node.code, from, to);
}

void collect(const Arg& arg, std::vector<std::string>& out) {
  if (arg.is_node()) out.push_back(arg.node);
  for (const auto& item : arg.items) collect(item, out);
}

// Users in execution order of the consumers, each named once.
void recompute_users(std::vector<Node>& nodes) {
  std::map<std::string, Node*> by_name;
  for (auto& n : nodes) {
    n.users.clear();
    by_name[n.name] = &n;
  }
  for (const auto& consumer : nodes) {
    std::vector<std::string> read;
    for (const auto& a : consumer.args) collect(a, read);
    for (const auto& [key, a] : consumer.kwargs) collect(a, read);
    for (const auto& name : read) {
      const auto it = by_name.find(name);
      if (it == by_name.end()) continue;
      auto& users = it->second->users;
      if (users.empty() || users.back() != consumer.name) users.push_back(consumer.name);
    }
  }
}

// Phase 1: identities go, their users read the value they returned.
void remove_identities(Normalized& out) {
  auto& nodes = out.graph.nodes;
  for (std::size_t i = 0; i < nodes.size();) {
    const auto identity = identity_of(out.graph, nodes[i]);
    if (!identity) {
      ++i;
      continue;
    }
    const std::string name = nodes[i].name;
    out.removed.push_back(name + " (" + identity->why + ")");
    for (std::size_t j = i + 1; j < nodes.size(); ++j) rename_reads(nodes[j], name, identity->source);
    nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

// An einsum that is a batched matrix product, as the operands' roles: the
// equation's batch letters P then "id,jd->ij" (a @ b^T) or "ij,jd->id" (a @ b).
struct EinsumProduct {
  std::string a, b;
  bool transpose_b = false;
};

std::optional<EinsumProduct> einsum_product(const OpGraph& graph, const Node& node) {
  if (node.op != "call_function" || node.target != "torch.einsum" || node.args.size() != 3 || !node.kwargs.empty())
    return std::nullopt;
  if (node.args[0].kind != Arg::Kind::String || !node.args[1].is_node() || !node.args[2].is_node()) return std::nullopt;
  std::string eq;
  for (const char c : node.args[0].text) {
    if (c != ' ') eq += c;
  }
  const auto arrow = eq.find("->"), comma = eq.find(',');
  if (arrow == std::string::npos || comma == std::string::npos || comma > arrow) return std::nullopt;
  const std::string x = eq.substr(0, comma), y = eq.substr(comma + 1, arrow - comma - 1), out = eq.substr(arrow + 2);
  if (x.size() < 2 || x.size() != y.size() || x.size() != out.size()) return std::nullopt;
  const std::size_t batch = x.size() - 2;
  const std::string prefix = x.substr(0, batch);
  if (y.substr(0, batch) != prefix || out.substr(0, batch) != prefix) return std::nullopt;
  std::set<char> letters(x.begin(), x.end());
  letters.insert(y.begin(), y.end());
  for (const char c : eq.substr(0, arrow)) {
    if (c != ',' && !std::isalpha(static_cast<unsigned char>(c))) return std::nullopt;
  }
  if (letters.size() != batch + 3 || std::set<char>(prefix.begin(), prefix.end()).size() != batch) return std::nullopt;
  const char i = x[batch], second = x[batch + 1], y0 = y[batch], y1 = y[batch + 1], o0 = out[batch], o1 = out[batch + 1];
  const Node* b = graph.find(node.args[2].node);
  if (!b || !b->meta || b->meta->shape.size() != x.size()) return std::nullopt;
  if (second == y1 && o0 == i && o1 == y0) return EinsumProduct{node.args[1].node, node.args[2].node, true};    // id,jd->ij
  if (second == y0 && o0 == i && o1 == y1) return EinsumProduct{node.args[1].node, node.args[2].node, false};   // ij,jd->id
  return std::nullopt;
}

std::string unused_name(const OpGraph& graph, const std::string& base) {
  std::string name = base;
  for (int n = 1; graph.find(name); ++n) name = base + "_" + std::to_string(n);
  return name;
}

Arg node_ref(const std::string& name) {
  Arg a;
  a.kind = Arg::Kind::Node;
  a.node = name;
  return a;
}

// Phase 2: batched-matmul einsums become torch.matmul (with b.transpose(-2, -1)
// where the equation contracts both operands' last letter), the form every
// product recipe matches.
void canonical_einsum_products(Normalized& out) {
  auto& nodes = out.graph.nodes;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto product = einsum_product(out.graph, nodes[i]);
    if (!product) continue;
    std::string b = product->b;
    if (product->transpose_b) {
      const Node& source = *out.graph.find(product->b);
      Node t;
      t.name = unused_name(out.graph, nodes[i].name + "_" + product->b + "_t");
      t.op = "call_method";
      t.target = "transpose";
      t.kind = "transpose";
      t.args = {node_ref(product->b), Arg{}, Arg{}};
      for (std::size_t d = 1; d <= 2; ++d) {
        t.args[d].kind = Arg::Kind::Number;
        t.args[d].is_integer = true;
        t.args[d].number = d == 1 ? -2.0 : -1.0;
      }
      t.meta = source.meta;
      const std::size_t r = t.meta->shape.size();
      std::swap(t.meta->shape[r - 1], t.meta->shape[r - 2]);
      if (t.meta->stride.size() == r) std::swap(t.meta->stride[r - 1], t.meta->stride[r - 2]);
      t.code = product->b + ".transpose(-2, -1)";
      b = t.name;
      nodes.insert(nodes.begin() + static_cast<std::ptrdiff_t>(i), std::move(t));
      ++i;
    }
    Node& n = nodes[i];
    n.kind = "matmul";
    n.target = "torch.matmul";
    n.args = {node_ref(product->a), node_ref(b)};
    n.normalized = std::map<std::string, Arg>{{"input", n.args[0]}, {"other", n.args[1]}};
    n.code = "torch.matmul(" + product->a + ", " + b + ")";
    out.rewritten.push_back(n.name + " (einsum as torch.matmul)");
  }
}

}  // namespace

std::string rename_in_code(const std::string& code, const std::string& from, const std::string& to) {
  std::string out;
  std::size_t i = 0;
  while (i < code.size()) {
    const char c = code[i];
    if (c == '\'' || c == '"') {  // a string literal, copied as it is
      std::size_t j = i + 1;
      while (j < code.size() && code[j] != c) j += code[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, code.size());
      out.append(code, i, j - i);
      i = j;
      continue;
    }
    if (!identifier_char(c) || std::isdigit(static_cast<unsigned char>(c))) {
      // A number's digits and exponent (1e5) are copied with it: never a name.
      std::size_t j = i + 1;
      if (std::isdigit(static_cast<unsigned char>(c))) {
        while (j < code.size() && identifier_char(code[j])) ++j;
      }
      out.append(code, i, j - i);
      i = j;
      continue;
    }
    std::size_t j = i;
    while (j < code.size() && identifier_char(code[j])) ++j;
    const std::string word = code.substr(i, j - i);
    std::size_t before = i;
    while (before > 0 && code[before - 1] == ' ') --before;
    const bool attribute = before > 0 && code[before - 1] == '.';
    std::size_t after = j;
    while (after < code.size() && code[after] == ' ') ++after;
    const bool keyword = after < code.size() && code[after] == '=' && (after + 1 >= code.size() || code[after + 1] != '=');
    out += word == from && !attribute && !keyword ? to : word;
    i = j;
  }
  return out;
}

Normalized normalize(const OpGraph& graph) {
  Normalized out{graph, {}, {}};
  if (!graph.captured()) return out;
  remove_identities(out);
  canonical_einsum_products(out);
  recompute_users(out.graph.nodes);
  return out;
}

}  // namespace hiera::engine::graph
