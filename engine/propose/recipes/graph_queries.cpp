#include "engine/propose/recipes/graph_queries.h"

#include <algorithm>
#include <set>
#include <string_view>

namespace hiera::engine::propose::recipes {

using graph::Arg;
using graph::Node;

const Arg* argument(const Node& node, std::size_t position, std::string_view name) {
  if (position < node.args.size()) return &node.args[position];
  return keyword(node, name);
}

const Arg* keyword(const Node& node, std::string_view name) {
  // As written first; `normalized` (every argument by its schema name) for what the call left implicit.
  const std::string key(name);
  const auto it = node.kwargs.find(key);
  if (it != node.kwargs.end()) return &it->second;
  if (node.normalized) {
    const auto n = node.normalized->find(key);
    if (n != node.normalized->end()) return &n->second;
  }
  return nullptr;
}

const Node* argument_node(const graph::OpGraph& graph, const Node& node, std::size_t position, std::string_view name) {
  const Arg* arg = argument(node, position, name);
  return arg ? graph.producer(*arg) : nullptr;
}

std::optional<double> constant(const Arg* arg) {
  if (!arg || arg->kind != Arg::Kind::Number) return std::nullopt;
  return arg->number;
}

bool is_constant(const Arg* arg, double value) {
  const auto c = constant(arg);
  return c && *c == value;
}

std::optional<bool> flag(const Arg* arg) {
  if (!arg || arg->kind != Arg::Kind::Bool) return std::nullopt;
  return arg->flag;
}

std::optional<std::vector<std::int64_t>> int_list(const Arg* arg) {
  if (!arg) return std::nullopt;
  if (arg->kind == Arg::Kind::Number && arg->is_integer)
    return std::vector<std::int64_t>{static_cast<std::int64_t>(arg->number)};
  if (arg->kind != Arg::Kind::List) return std::nullopt;
  std::vector<std::int64_t> out;
  for (const auto& item : arg->items) {
    if (item.kind != Arg::Kind::Number || !item.is_integer) return std::nullopt;
    out.push_back(static_cast<std::int64_t>(item.number));
  }
  return out;
}

bool passes_only(const Node& node, std::size_t positional, const std::vector<std::string_view>& keywords) {
  if (node.args.size() > positional) return false;
  for (const auto& [key, arg] : node.kwargs) {
    if (std::find(keywords.begin(), keywords.end(), key) == keywords.end()) return false;
  }
  return true;
}

bool is_kind(const Node& node, std::string_view kind) { return node.kind == kind; }

bool is_call(const Node& node, std::string_view method, std::string_view function) {
  return (node.op == "call_method" && node.target == method) || (node.op == "call_function" && node.target == function);
}

bool is_dtype_cast(const Node& node) {
  if (node.op != "call_method" && !is_kind(node, "to")) return false;
  static const std::set<std::string> kNoArgCasts = {"float", "half", "double", "bfloat16"};
  if (node.op == "call_method" && kNoArgCasts.count(node.target)) return node.args.size() == 1 && node.kwargs.empty();
  if (node.target != "to" && node.target != "type") return false;
  bool has_dtype = false;
  for (std::size_t i = 1; i < node.args.size(); ++i) {
    if (node.args[i].kind != Arg::Kind::Dtype) return false;
    has_dtype = true;
  }
  for (const auto& [key, arg] : node.kwargs) {
    if (key == "dtype" && arg.kind == Arg::Kind::Dtype)
      has_dtype = true;
    else if (key == "non_blocking" && arg.kind == Arg::Kind::Bool)
      continue;
    else if (key == "copy" && arg.kind == Arg::Kind::Bool && !arg.flag)
      continue;
    else
      return false;  // a device, a memory format, copy=True: more than a cast
  }
  return has_dtype;
}

bool only_user(const Node& value, const Node& user) { return value.users.size() == 1 && value.users[0] == user.name; }

namespace {
bool refers_to(const Arg& arg, const std::string& name) {
  if (arg.kind == Arg::Kind::Node) return arg.node == name;
  if (arg.kind != Arg::Kind::List) return false;
  return std::any_of(arg.items.begin(), arg.items.end(), [&](const Arg& item) { return refers_to(item, name); });
}
}  // namespace

bool is_returned(const graph::OpGraph& graph, const std::string& name) {
  if (graph.nodes.empty() || graph.nodes.back().op != "output") return false;
  const Node& output = graph.nodes.back();
  return std::any_of(output.args.begin(), output.args.end(), [&](const Arg& arg) { return refers_to(arg, name); });
}

bool mutates(const graph::OpGraph& graph, const Node& node) {
  // torch.export names an op with its overload ("torch.ops.aten.copy_.default"): judge the op's own name.
  std::string_view name = node.target;
  if (name.rfind("torch.ops.", 0) == 0) {
    const auto last_dot = name.rfind('.');
    const auto op_dot = last_dot == std::string_view::npos ? last_dot : name.rfind('.', last_dot - 1);
    if (op_dot != std::string_view::npos && op_dot > 9) name = name.substr(op_dot + 1, last_dot - op_dot - 1);
  }
  const bool trailing_underscore = name.size() > 1 && name.back() == '_' && name[name.size() - 2] != '_';
  if ((node.op == "call_method" || node.op == "call_function") && trailing_underscore) return true;
  // x[i] = v, x += v (operator.iadd, or the x.__iadd__(v) the runner writes for it).
  static const std::set<std::string> kInPlaceOperators = {"iadd", "isub",    "imul",    "itruediv", "ifloordiv",
                                                          "imod", "ipow",    "imatmul", "iand",     "ior",
                                                          "ixor", "ilshift", "irshift", "setitem"};
  if (node.op == "call_function" && node.target.rfind("operator.", 0) == 0 &&
      kInPlaceOperators.count(node.target.substr(9))) {
    return true;
  }
  if (node.op == "call_method" && node.target.size() > 4 && node.target.rfind("__", 0) == 0 &&
      kInPlaceOperators.count(node.target.substr(2, node.target.size() - 4))) {
    return true;
  }
  if (node.kwargs.count("out")) return true;
  if (flag(keyword(node, "inplace")).value_or(false)) return true;
  if (const auto* sub = submodule(graph, node)) {
    const auto it = sub->attrs.find("inplace");
    if (it != sub->attrs.end() && it->is_boolean() && it->get<bool>()) return true;
  }
  return false;
}

bool graph_mutates(const graph::OpGraph& graph) {
  return std::any_of(graph.nodes.begin(), graph.nodes.end(), [&](const Node& node) { return mutates(graph, node); });
}

bool is_external(const Node& node) { return node.op == "placeholder" || node.op == "get_attr"; }

bool alias_is_safe(const graph::OpGraph& graph, const Node& source, const Node& result) {
  return !graph_mutates(graph) && !(is_external(source) && is_returned(graph, result.name));
}

std::optional<std::size_t> rank(const Node& node) {
  if (!node.meta) return std::nullopt;
  return node.meta->shape.size();
}

std::string dtype(const Node& node) { return node.meta ? node.meta->dtype : std::string(); }

bool is_floating(std::string_view d) { return d == "float32" || d == "float16" || d == "bfloat16" || d == "float64"; }

bool same_shape(const Node& a, const Node& b) { return a.meta && b.meta && a.meta->shape == b.meta->shape; }

bool contiguous(const graph::TensorMeta& meta) {
  if (meta.stride.size() != meta.shape.size()) return false;
  std::int64_t expected = 1;
  for (std::size_t i = meta.shape.size(); i-- > 0;) {
    if (meta.shape[i] != 1 && meta.stride[i] != expected) return false;
    expected *= meta.shape[i];
  }
  return true;
}

std::optional<std::int64_t> normalize_dim(std::int64_t dim, std::size_t r) {
  const auto n = static_cast<std::int64_t>(r);
  if (dim < -n || dim >= n) return std::nullopt;
  return dim < 0 ? dim + n : dim;
}

const Node* transposed_matrix(const graph::OpGraph& graph, const Node& node) {
  const Node* w = argument_node(graph, node, 0, "input");
  if (!w || rank(*w) != 2u) return nullptr;
  if (is_call(node, "t", "torch.t") && node.args.size() == 1) return w;
  if (node.op == "call_function" && (node.target == "builtins.getattr" || node.target == "getattr") &&
      node.args.size() == 2 && node.args[1].kind == graph::Arg::Kind::String &&
      (node.args[1].text == "T" || node.args[1].text == "mT")) {
    return w;
  }
  if (is_kind(node, "transpose")) {
    const auto d0 = int_list(argument(node, 1, "dim0")), d1 = int_list(argument(node, 2, "dim1"));
    if (!d0 || !d1 || d0->size() != 1 || d1->size() != 1) return nullptr;
    const auto a = normalize_dim((*d0)[0], 2), b = normalize_dim((*d1)[0], 2);
    return a && b && *a != *b ? w : nullptr;
  }
  if (is_kind(node, "permute")) {
    std::vector<std::int64_t> dims;
    if (node.args.size() == 2) {
      const auto list = int_list(&node.args[1]);
      if (list) dims = *list;
    } else {
      for (std::size_t i = 1; i < node.args.size(); ++i) {
        if (const auto c = int_list(&node.args[i]); c && c->size() == 1) dims.push_back((*c)[0]);
      }
    }
    if (dims.size() == 2 && normalize_dim(dims[0], 2) == 1 && normalize_dim(dims[1], 2) == 0) return w;
  }
  return nullptr;
}

const graph::Submodule* submodule(const graph::OpGraph& graph, const Node& node) {
  if (node.op != "call_module") return nullptr;
  const auto it = graph.submodules.find(node.target);
  return it == graph.submodules.end() ? nullptr : &it->second;
}

std::optional<std::int64_t> softmax_dim(const graph::OpGraph& graph, const Node& node) {
  if (const auto* sub = submodule(graph, node)) {
    const auto it = sub->attrs.find("dim");
    if (it == sub->attrs.end() || !it->is_number_integer()) return std::nullopt;  // dim=None: torch's legacy guess
    return it->get<std::int64_t>();
  }
  const auto dims = int_list(argument(node, 1, "dim"));
  if (!dims || dims->size() != 1) return std::nullopt;
  return (*dims)[0];
}

}  // namespace hiera::engine::propose::recipes
