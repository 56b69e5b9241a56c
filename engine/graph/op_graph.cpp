#include "engine/graph/op_graph.h"

#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

namespace hiera::engine::graph {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  throw std::runtime_error(path + ": " + message);
}

std::string type_name(const json& value) {
  if (value.is_null()) return "null";
  if (value.is_boolean()) return "a boolean";
  if (value.is_number_integer()) return "an integer";
  if (value.is_number()) return "a number";
  if (value.is_string()) return "a string";
  if (value.is_array()) return "an array";
  return "an object";
}

[[noreturn]] void expected(const std::string& path, const std::string& what, const json& got) {
  fail(path, "expected " + what + ", got " + type_name(got));
}

std::string child(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
std::string index(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

const json* field(const json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string string_field(const json& object, const std::string& path, const char* key, bool required,
                         bool nullable = false) {
  const json* value = field(object, key);
  if (!value || (nullable && value->is_null())) {
    if (required && !nullable) fail(child(path, key), "missing");
    return {};
  }
  if (!value->is_string()) expected(child(path, key), nullable ? "a string or null" : "a string", *value);
  return value->get<std::string>();
}

double number_field(const json& object, const std::string& path, const char* key) {
  const json* value = field(object, key);
  if (!value || value->is_null()) return 0.0;
  if (!value->is_number()) expected(child(path, key), "a number", *value);
  return value->get<double>();
}

std::vector<std::int64_t> integer_list(const json& value, const std::string& path) {
  if (!value.is_array()) expected(path, "an array of integers", value);
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_number_integer()) expected(index(path, i), "an integer", value[i]);
    out.push_back(value[i].get<std::int64_t>());
  }
  return out;
}

std::vector<std::string> string_list(const json& value, const std::string& path) {
  if (!value.is_array()) expected(path, "an array of strings", value);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string()) expected(index(path, i), "a string", value[i]);
    out.push_back(value[i].get<std::string>());
  }
  return out;
}

Arg parse_arg(const json& value, const std::string& path) {
  Arg arg;
  if (value.is_null()) return arg;  // Kind::None
  if (value.is_boolean()) {
    arg.kind = Arg::Kind::Bool;
    arg.flag = value.get<bool>();
    return arg;
  }
  if (value.is_number()) {
    arg.kind = Arg::Kind::Number;
    arg.number = value.get<double>();
    arg.is_integer = value.is_number_integer();
    return arg;
  }
  static const char* const kForms =
      "an argument (a number, a boolean, null, or an object with one of node, str, list, slice, dtype, ellipsis, "
      "float, other)";
  if (!value.is_object() || value.size() != 1) expected(path, kForms, value);
  // The one member, read through an iterator that outlives it (a binding to
  // *items().begin() would refer into a destroyed temporary).
  const auto member = value.begin();
  const std::string key = member.key();
  const nlohmann::json& inner = member.value();
  const std::string inner_path = child(path, key);
  if (key == "node" || key == "str" || key == "dtype" || key == "other") {
    if (!inner.is_string()) expected(inner_path, "a string", inner);
    arg.kind = key == "node"    ? Arg::Kind::Node
               : key == "str"   ? Arg::Kind::String
               : key == "dtype" ? Arg::Kind::Dtype
                                : Arg::Kind::Other;
    (key == "node" ? arg.node : arg.text) = inner.get<std::string>();
    if (key == "node" && arg.node.empty()) fail(inner_path, "expected a node name, got an empty string");
  } else if (key == "list" || key == "slice") {
    if (!inner.is_array()) expected(inner_path, "an array", inner);
    if (key == "slice" && inner.size() != 3) {
      fail(inner_path, "expected [start, stop, step], got " + std::to_string(inner.size()) + " items");
    }
    arg.kind = key == "list" ? Arg::Kind::List : Arg::Kind::Slice;
    for (std::size_t i = 0; i < inner.size(); ++i) arg.items.push_back(parse_arg(inner[i], index(inner_path, i)));
  } else if (key == "ellipsis") {
    arg.kind = Arg::Kind::Ellipsis;
  } else if (key == "float") {
    if (!inner.is_string()) expected(inner_path, "\"inf\", \"-inf\" or \"nan\"", inner);
    const auto text = inner.get<std::string>();
    arg.kind = Arg::Kind::Number;
    if (text == "inf")
      arg.number = std::numeric_limits<double>::infinity();
    else if (text == "-inf")
      arg.number = -std::numeric_limits<double>::infinity();
    else if (text == "nan")
      arg.number = std::numeric_limits<double>::quiet_NaN();
    else
      fail(inner_path, "expected \"inf\", \"-inf\" or \"nan\", got \"" + text + "\"");
  } else {
    fail(path,
         "unknown argument form '" + key + "' (expected one of node, str, list, slice, dtype, ellipsis, float, other)");
  }
  return arg;
}

std::map<std::string, Arg> parse_arg_map(const json& value, const std::string& path) {
  if (!value.is_object()) expected(path, "an object", value);
  std::map<std::string, Arg> out;
  for (const auto& [key, inner] : value.items()) out.emplace(key, parse_arg(inner, child(path, key)));
  return out;
}

TensorMeta parse_meta(const json& value, const std::string& path) {
  if (!value.is_object()) expected(path, "an object", value);
  TensorMeta meta;
  const json* shape = field(value, "shape");
  if (!shape) fail(child(path, "shape"), "missing");
  meta.shape = integer_list(*shape, child(path, "shape"));
  if (const json* stride = field(value, "stride"); stride && !stride->is_null()) {
    meta.stride = integer_list(*stride, child(path, "stride"));
    if (meta.stride.size() != meta.shape.size()) {
      fail(child(path, "stride"), "has " + std::to_string(meta.stride.size()) + " entries for a shape of " +
                                      std::to_string(meta.shape.size()) + " dimensions");
    }
  }
  meta.dtype = string_field(value, path, "dtype", true);
  return meta;
}

TensorInfo parse_tensor_info(const json& value, const std::string& path) {
  if (!value.is_object()) expected(path, "an object", value);
  TensorInfo info;
  const json* shape = field(value, "shape");
  if (!shape) fail(child(path, "shape"), "missing");
  info.shape = integer_list(*shape, child(path, "shape"));
  info.dtype = string_field(value, path, "dtype", true);
  if (const json* persistent = field(value, "persistent"); persistent && !persistent->is_null()) {
    if (!persistent->is_boolean()) expected(child(path, "persistent"), "a boolean", *persistent);
    info.persistent = persistent->get<bool>();
  }
  return info;
}

// Non-finite values come as the strings "inf", "-inf", "nan".
double fact_number(const json& value, const std::string& path) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    const auto text = value.get<std::string>();
    if (text == "inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
    if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  expected(path, "a number or \"inf\", \"-inf\", \"nan\"", value);
}

ValueFacts parse_facts(const json& value, const std::string& path) {
  if (!value.is_object()) expected(path, "an object", value);
  ValueFacts facts;
  if (const json* values = field(value, "values"); values && !values->is_null()) {
    if (!values->is_array()) expected(child(path, "values"), "an array", *values);
    facts.values.emplace();
    for (std::size_t i = 0; i < values->size(); ++i) {
      facts.values->push_back(fact_number((*values)[i], index(child(path, "values"), i)));
    }
  }
  facts.mask = string_field(value, path, "mask", false, true);
  return facts;
}

json facts_to_json(const ValueFacts& facts) {
  json out = json::object();
  if (facts.values) {
    json values = json::array();
    for (const double v : *facts.values) {
      if (std::isnan(v)) values.push_back("nan");
      else if (std::isinf(v)) values.push_back(v > 0 ? "inf" : "-inf");
      else values.push_back(v);
    }
    out["values"] = values;
  }
  if (!facts.mask.empty()) out["mask"] = facts.mask;
  return out;
}

void collect_nodes(const Arg& arg, std::vector<std::string>& out) {
  if (arg.kind == Arg::Kind::Node) out.push_back(arg.node);
  for (const auto& item : arg.items) collect_nodes(item, out);
}

// Every node an argument refers to must come earlier in execution order.
void check_references(const Arg& arg, const std::string& path, const std::set<std::string>& defined) {
  if (arg.kind == Arg::Kind::Node && !defined.count(arg.node)) {
    fail(path, "refers to node '" + arg.node + "', which is not defined before this node");
  }
  const char* const form = arg.kind == Arg::Kind::Slice ? "slice" : "list";
  for (std::size_t i = 0; i < arg.items.size(); ++i) {
    check_references(arg.items[i], index(child(path, form), i), defined);
  }
}

Node parse_node(const json& value, const std::string& path, const std::set<std::string>& defined) {
  if (!value.is_object()) expected(path, "an object", value);
  Node node;
  node.name = string_field(value, path, "name", true);
  if (node.name.empty()) fail(child(path, "name"), "expected a node name, got an empty string");
  node.op = string_field(value, path, "op", true);
  static const std::set<std::string> kOps = {"placeholder", "call_function", "call_method",
                                             "call_module", "get_attr",      "output"};
  if (!kOps.count(node.op)) {
    fail(child(path, "op"),
         "unknown op '" + node.op +
             "' (expected placeholder, call_function, call_method, call_module, get_attr or output)");
  }
  node.target = string_field(value, path, "target", false);
  node.kind = string_field(value, path, "kind", false);
  if (node.kind.empty()) node.kind = "unknown";
  if (const json* args = field(value, "args"); args && !args->is_null()) {
    if (!args->is_array()) expected(child(path, "args"), "an array", *args);
    for (std::size_t i = 0; i < args->size(); ++i) {
      node.args.push_back(parse_arg((*args)[i], index(child(path, "args"), i)));
      check_references(node.args.back(), index(child(path, "args"), i), defined);
    }
  }
  if (const json* kwargs = field(value, "kwargs"); kwargs && !kwargs->is_null()) {
    node.kwargs = parse_arg_map(*kwargs, child(path, "kwargs"));
    for (const auto& [key, arg] : node.kwargs) check_references(arg, child(child(path, "kwargs"), key), defined);
  }
  if (const json* normalized = field(value, "normalized"); normalized && !normalized->is_null()) {
    node.normalized = parse_arg_map(*normalized, child(path, "normalized"));
    for (const auto& [key, arg] : *node.normalized) {
      check_references(arg, child(child(path, "normalized"), key), defined);
    }
  }
  if (const json* meta = field(value, "meta"); meta && !meta->is_null())
    node.meta = parse_meta(*meta, child(path, "meta"));
  if (const json* tuple_meta = field(value, "tuple_meta"); tuple_meta && !tuple_meta->is_null()) {
    if (!tuple_meta->is_array()) expected(child(path, "tuple_meta"), "an array", *tuple_meta);
    for (std::size_t i = 0; i < tuple_meta->size(); ++i) {
      const std::string item_path = index(child(path, "tuple_meta"), i);
      // A tuple may mix tensors and other values: a null stands for a non-tensor item.
      node.tuple_meta.push_back((*tuple_meta)[i].is_null() ? TensorMeta{} : parse_meta((*tuple_meta)[i], item_path));
    }
  }
  node.flops = number_field(value, path, "flops");
  node.bytes = number_field(value, path, "bytes");
  if (const json* time = field(value, "time_ms"); time && !time->is_null()) {
    if (!time->is_number() || time->get<double>() < 0.0) expected(child(path, "time_ms"), "a number of milliseconds, 0 or more", *time);
    node.time_ms = time->get<double>();
  }
  node.code = string_field(value, path, "code", false);
  if (const json* users = field(value, "users"); users && !users->is_null()) {
    node.users = string_list(*users, child(path, "users"));
  }
  if (const json* facts = field(value, "facts"); facts && !facts->is_null()) {
    node.facts = parse_facts(*facts, child(path, "facts"));
  }
  return node;
}

// Users in execution order of the consumers, each named once.
void compute_users(std::vector<Node>& nodes) {
  std::map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < nodes.size(); ++i) position[nodes[i].name] = i;
  for (auto& node : nodes) node.users.clear();
  for (const auto& consumer : nodes) {
    std::vector<std::string> used;
    for (const auto& arg : consumer.args) collect_nodes(arg, used);
    for (const auto& [key, arg] : consumer.kwargs) collect_nodes(arg, used);
    for (const auto& name : used) {
      auto& users = nodes[position.at(name)].users;
      if (users.empty() || users.back() != consumer.name) {
        bool seen = false;
        for (const auto& u : users) seen = seen || u == consumer.name;
        if (!seen) users.push_back(consumer.name);
      }
    }
  }
}

json meta_to_json(const TensorMeta& meta) {
  return json{{"shape", meta.shape}, {"stride", meta.stride}, {"dtype", meta.dtype}};
}

json arg_to_json(const Arg& arg) {
  switch (arg.kind) {
    case Arg::Kind::Node: return json{{"node", arg.node}};
    case Arg::Kind::Number:
      if (std::isnan(arg.number)) return json{{"float", "nan"}};
      if (std::isinf(arg.number)) return json{{"float", arg.number > 0 ? "inf" : "-inf"}};
      if (arg.is_integer) return json(static_cast<std::int64_t>(arg.number));
      return json(arg.number);
    case Arg::Kind::Bool: return json(arg.flag);
    case Arg::Kind::String: return json{{"str", arg.text}};
    case Arg::Kind::None: return nullptr;
    case Arg::Kind::List:
    case Arg::Kind::Slice: {
      json items = json::array();
      for (const auto& item : arg.items) items.push_back(arg_to_json(item));
      return json{{arg.kind == Arg::Kind::List ? "list" : "slice", items}};
    }
    case Arg::Kind::Dtype: return json{{"dtype", arg.text}};
    case Arg::Kind::Ellipsis: return json{{"ellipsis", true}};
    case Arg::Kind::Other: return json{{"other", arg.text}};
  }
  return nullptr;
}

json arg_map_to_json(const std::map<std::string, Arg>& args) {
  json out = json::object();
  for (const auto& [key, arg] : args) out[key] = arg_to_json(arg);
  return out;
}

}  // namespace

std::int64_t TensorMeta::elements() const {
  std::int64_t n = 1;
  for (const auto d : shape) n *= d;
  return n;
}

const Node* OpGraph::find(const std::string& name) const {
  for (const auto& node : nodes) {
    if (node.name == name) return &node;
  }
  return nullptr;
}

const Node* OpGraph::producer(const Arg& arg) const { return arg.is_node() ? find(arg.node) : nullptr; }

OpGraph parse_op_graph(const json& capture) {
  // Accept the job's whole result ({"graph": Graph}) as well as the graph itself.
  std::string path;
  const json* root = &capture;
  if (capture.is_object() && capture.contains("graph") && !capture.contains("nodes")) {
    root = &capture["graph"];
    path = "graph";
    if (root->is_null()) {
      OpGraph none;
      none.fallback = "the capture returned no graph (a CUDA task)";
      return none;
    }
  }
  if (!root->is_object()) expected(path.empty() ? "graph" : path, "an object", *root);
  const json& g = *root;

  OpGraph graph;
  graph.method = string_field(g, path, "method", false, true);
  graph.fallback = string_field(g, path, "fallback", false, true);
  if (const json* class_name = field(g, "class_name"); class_name && !class_name->is_null()) {
    graph.class_name = string_field(g, path, "class_name", true);
  }
  if (const json* params = field(g, "forward_params"); params && !params->is_null()) {
    graph.forward_params = string_list(*params, child(path, "forward_params"));
  }
  if (const json* training = field(g, "training"); training && !training->is_null()) {
    if (!training->is_boolean()) expected(child(path, "training"), "a boolean", *training);
    graph.training = training->get<bool>();
  }
  if (const json* submodules = field(g, "submodules"); submodules && !submodules->is_null()) {
    if (!submodules->is_object()) expected(child(path, "submodules"), "an object", *submodules);
    for (const auto& [name, value] : submodules->items()) {
      const std::string sub_path = child(child(path, "submodules"), name);
      if (!value.is_object()) expected(sub_path, "an object", value);
      Submodule sub;
      sub.type = string_field(value, sub_path, "type", true);
      if (const json* attrs = field(value, "attrs"); attrs && !attrs->is_null()) {
        if (!attrs->is_object()) expected(child(sub_path, "attrs"), "an object", *attrs);
        sub.attrs = *attrs;
      }
      graph.submodules.emplace(name, std::move(sub));
    }
  }
  for (const char* key : {"parameters", "buffers"}) {
    const json* tensors = field(g, key);
    if (!tensors || tensors->is_null()) continue;
    if (!tensors->is_object()) expected(child(path, key), "an object", *tensors);
    auto& target = std::string(key) == "parameters" ? graph.parameters : graph.buffers;
    for (const auto& [name, value] : tensors->items()) {
      target.emplace(name, parse_tensor_info(value, child(child(path, key), name)));
    }
  }
  bool users_given = true;
  if (const json* nodes = field(g, "nodes"); nodes && !nodes->is_null()) {
    if (!nodes->is_array()) expected(child(path, "nodes"), "an array", *nodes);
    std::set<std::string> defined;
    for (std::size_t i = 0; i < nodes->size(); ++i) {
      const std::string node_path = index(child(path, "nodes"), i);
      graph.nodes.push_back(parse_node((*nodes)[i], node_path, defined));
      const Node& node = graph.nodes.back();
      if (!defined.insert(node.name).second) fail(child(node_path, "name"), "duplicate node name '" + node.name + "'");
      if (node.op == "output" && i + 1 != nodes->size()) {
        fail(child(node_path, "op"), "the output node must be the last node");
      }
      users_given = users_given && (*nodes)[i].contains("users") && !(*nodes)[i]["users"].is_null();
    }
    if (!graph.nodes.empty() && graph.nodes.back().op != "output") {
      fail(index(child(path, "nodes"), graph.nodes.size() - 1), "the last node must be the output node");
    }
  }
  if (users_given) {
    for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
      for (std::size_t u = 0; u < graph.nodes[i].users.size(); ++u) {
        if (!graph.find(graph.nodes[i].users[u])) {
          fail(index(child(index(child(path, "nodes"), i), "users"), u),
               "unknown node '" + graph.nodes[i].users[u] + "'");
        }
      }
    }
  } else {
    compute_users(graph.nodes);
  }
  graph.total_flops = number_field(g, path, "total_flops");
  graph.total_bytes = number_field(g, path, "total_bytes");
  return graph;
}

json to_json(const OpGraph& graph) {
  json out;
  out["method"] = graph.method.empty() ? json(nullptr) : json(graph.method);
  out["fallback"] = graph.fallback.empty() ? json(nullptr) : json(graph.fallback);
  out["class_name"] = graph.class_name;
  out["forward_params"] = graph.forward_params;
  out["training"] = graph.training;
  json submodules = json::object();
  for (const auto& [name, sub] : graph.submodules) submodules[name] = json{{"type", sub.type}, {"attrs", sub.attrs}};
  out["submodules"] = submodules;
  for (const auto* key : {"parameters", "buffers"}) {
    const auto& source = std::string(key) == "parameters" ? graph.parameters : graph.buffers;
    json tensors = json::object();
    for (const auto& [name, info] : source) {
      tensors[name] = json{{"shape", info.shape}, {"dtype", info.dtype}, {"persistent", info.persistent}};
    }
    out[key] = tensors;
  }
  json nodes = json::array();
  for (const auto& node : graph.nodes) {
    json n;
    n["name"] = node.name;
    n["op"] = node.op;
    n["target"] = node.target;
    n["kind"] = node.kind;
    json args = json::array();
    for (const auto& arg : node.args) args.push_back(arg_to_json(arg));
    n["args"] = args;
    n["kwargs"] = arg_map_to_json(node.kwargs);
    n["normalized"] = node.normalized ? arg_map_to_json(*node.normalized) : json(nullptr);
    n["meta"] = node.meta ? meta_to_json(*node.meta) : json(nullptr);
    if (!node.tuple_meta.empty()) {
      json metas = json::array();
      for (const auto& meta : node.tuple_meta) metas.push_back(meta.dtype.empty() ? json(nullptr) : meta_to_json(meta));
      n["tuple_meta"] = metas;
    }
    n["flops"] = node.flops;
    n["bytes"] = node.bytes;
    if (node.time_ms) n["time_ms"] = *node.time_ms;
    n["code"] = node.code;
    n["users"] = node.users;
    if (!node.facts.empty()) n["facts"] = facts_to_json(node.facts);
    nodes.push_back(n);
  }
  out["nodes"] = nodes;
  out["total_flops"] = graph.total_flops;
  out["total_bytes"] = graph.total_bytes;
  return out;
}

}  // namespace hiera::engine::graph
