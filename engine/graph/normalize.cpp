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
  Normalized out{graph, {}};
  if (!graph.captured()) return out;
  remove_identities(out);
  recompute_users(out.graph.nodes);
  return out;
}

}  // namespace hiera::engine::graph
