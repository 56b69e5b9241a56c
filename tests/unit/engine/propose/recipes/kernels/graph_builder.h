#pragma once
// Op graphs for the kernel rewrite tests, built the way the capture job
// describes a traced forward: nodes in execution order with shapes, dtypes
// and contiguous strides, users filled in by build().
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/graph/op_graph.h"

namespace hiera::testing {

using engine::graph::Arg;

inline Arg node_arg(const std::string& name) {
  Arg arg;
  arg.kind = Arg::Kind::Node;
  arg.node = name;
  return arg;
}
inline Arg number_arg(double value, bool integer = false) {
  Arg arg;
  arg.kind = Arg::Kind::Number;
  arg.number = value;
  arg.is_integer = integer;
  return arg;
}
inline Arg int_arg(long long value) { return number_arg(static_cast<double>(value), true); }
inline Arg bool_arg(bool value) {
  Arg arg;
  arg.kind = Arg::Kind::Bool;
  arg.flag = value;
  return arg;
}
inline Arg string_arg(const std::string& text) {
  Arg arg;
  arg.kind = Arg::Kind::String;
  arg.text = text;
  return arg;
}
inline Arg none_arg() { return Arg{}; }
inline Arg list_arg(std::vector<Arg> items) {
  Arg arg;
  arg.kind = Arg::Kind::List;
  arg.items = std::move(items);
  return arg;
}
// slice(start, stop): absent ends as None.
inline Arg slice_arg(std::optional<long long> start, std::optional<long long> stop) {
  Arg arg;
  arg.kind = Arg::Kind::Slice;
  arg.items = {start ? int_arg(*start) : none_arg(), stop ? int_arg(*stop) : none_arg(), none_arg()};
  return arg;
}

class GraphBuilder {
 public:
  GraphBuilder& input(const std::string& name, std::vector<std::int64_t> shape, const std::string& dtype = "float32") {
    engine::graph::Node node = base(name, "placeholder", name, "input", shape, dtype);
    node.code = name;
    graph_.forward_params.push_back(name);
    graph_.nodes.push_back(node);
    return *this;
  }
  // A parameter read by a get_attr node named after its last path component.
  GraphBuilder& parameter(const std::string& node_name, const std::string& path, std::vector<std::int64_t> shape,
                          const std::string& dtype = "float32") {
    graph_.parameters[path] = {shape, dtype, true};
    return attribute(node_name, path, shape, dtype);
  }
  GraphBuilder& buffer(const std::string& node_name, const std::string& path, std::vector<std::int64_t> shape,
                       bool persistent, const std::string& dtype = "float32") {
    graph_.buffers[path] = {shape, dtype, persistent};
    return attribute(node_name, path, shape, dtype);
  }
  // A module's parameters and buffers without get_attr nodes (the module call reads them).
  GraphBuilder& module(const std::string& path, const std::string& type, nlohmann::json attrs,
                       std::map<std::string, std::vector<std::int64_t>> parameters = {},
                       std::map<std::string, std::vector<std::int64_t>> buffers = {}) {
    graph_.submodules[path] = {type, std::move(attrs)};
    for (auto& [name, shape] : parameters) graph_.parameters[path + "." + name] = {shape, "float32", true};
    for (auto& [name, shape] : buffers) graph_.buffers[path + "." + name] = {shape, "float32", true};
    return *this;
  }
  GraphBuilder& call(const std::string& name, const std::string& op, const std::string& target, const std::string& kind,
                     std::vector<Arg> args, std::map<std::string, Arg> kwargs, std::vector<std::int64_t> shape,
                     const std::string& dtype = "float32", const std::string& code = "") {
    engine::graph::Node node = base(name, op, target, kind, shape, dtype);
    node.args = std::move(args);
    node.kwargs = std::move(kwargs);
    node.code = code.empty() ? kind + "(...)" : code;
    graph_.nodes.push_back(node);
    return *this;
  }
  GraphBuilder& training(bool value) {
    graph_.training = value;
    return *this;
  }
  engine::graph::OpGraph build(const std::vector<std::string>& outputs) {
    engine::graph::Node output;
    output.name = "output";
    output.op = "output";
    output.target = "output";
    output.kind = "output";
    std::vector<Arg> items;
    for (const auto& name : outputs) items.push_back(node_arg(name));
    output.args = {outputs.size() == 1 ? items.front() : list_arg(items)};
    graph_.nodes.push_back(output);
    graph_.method = "fx";
    for (auto& node : graph_.nodes) node.users.clear();
    for (const auto& node : graph_.nodes) {
      add_users(node.name, node.args);
      add_users(node.name, node.kwargs);
    }
    return graph_;
  }

 private:
  static engine::graph::Node base(const std::string& name, const std::string& op, const std::string& target,
                                  const std::string& kind, const std::vector<std::int64_t>& shape,
                                  const std::string& dtype) {
    engine::graph::Node node;
    node.name = name;
    node.op = op;
    node.target = target;
    node.kind = kind;
    if (!shape.empty() || dtype != "none") {
      engine::graph::TensorMeta meta;
      meta.shape = shape;
      meta.stride.assign(shape.size(), 1);
      for (std::size_t i = shape.size(); i-- > 1;) meta.stride[i - 1] = meta.stride[i] * shape[i];
      meta.dtype = dtype;
      node.meta = meta;
    }
    return node;
  }
  GraphBuilder& attribute(const std::string& node_name, const std::string& path, std::vector<std::int64_t> shape,
                          const std::string& dtype) {
    engine::graph::Node node = base(node_name, "get_attr", path, "attr", shape, dtype);
    node.code = "self." + path;
    graph_.nodes.push_back(node);
    return *this;
  }
  void add_users(const std::string& user, const std::vector<Arg>& args) {
    for (const auto& arg : args) {
      if (arg.kind == Arg::Kind::Node) add_user(arg.node, user);
      add_users(user, arg.items);
    }
  }
  void add_users(const std::string& user, const std::map<std::string, Arg>& kwargs) {
    for (const auto& [key, arg] : kwargs) add_users(user, std::vector<Arg>{arg});
  }
  void add_user(const std::string& producer, const std::string& user) {
    for (auto& node : graph_.nodes) {
      if (node.name != producer) continue;
      if (std::find(node.users.begin(), node.users.end(), user) == node.users.end()) node.users.push_back(user);
    }
  }

  engine::graph::OpGraph graph_;
};

}  // namespace hiera::testing
