#include "engine/propose/recipes/kernels/node_args.h"

#include <algorithm>

#include "engine/propose/recipes/kernels/unsupported.h"

namespace hiera::engine::propose::recipes::kernels {

const graph::Arg* argument(const graph::Node& node, std::size_t position, std::string_view name) {
  if (const auto it = node.kwargs.find(std::string(name)); it != node.kwargs.end()) return &it->second;
  if (position < node.args.size()) return &node.args[position];
  if (node.normalized) {
    if (const auto it = node.normalized->find(std::string(name)); it != node.normalized->end()) return &it->second;
  }
  return nullptr;
}

namespace {

[[noreturn]] void wrong_kind(const graph::Node& node, std::string_view name, const char* expected) {
  throw Unsupported(node.name + ": argument " + std::string(name) + " is not " + expected);
}

}  // namespace

std::optional<double> number_argument(const graph::Node& node, std::size_t position, std::string_view name) {
  const graph::Arg* arg = argument(node, position, name);
  if (!arg || arg->kind == graph::Arg::Kind::None) return std::nullopt;
  if (arg->kind == graph::Arg::Kind::Bool) return arg->flag ? 1.0 : 0.0;
  if (!arg->is_number()) wrong_kind(node, name, "a number");
  return arg->number;
}

std::optional<bool> bool_argument(const graph::Node& node, std::size_t position, std::string_view name) {
  const graph::Arg* arg = argument(node, position, name);
  if (!arg || arg->kind == graph::Arg::Kind::None) return std::nullopt;
  if (arg->kind == graph::Arg::Kind::Bool) return arg->flag;
  if (arg->is_number() && arg->is_integer) return arg->number != 0.0;
  wrong_kind(node, name, "a bool");
}

std::optional<std::string> string_argument(const graph::Node& node, std::size_t position, std::string_view name) {
  const graph::Arg* arg = argument(node, position, name);
  if (!arg || arg->kind == graph::Arg::Kind::None) return std::nullopt;
  if (arg->kind != graph::Arg::Kind::String) wrong_kind(node, name, "a string");
  return arg->text;
}

std::optional<std::vector<std::int64_t>> dims_argument(const graph::Node& node, std::size_t position,
                                                       std::string_view name) {
  const graph::Arg* arg = argument(node, position, name);
  if (!arg || arg->kind == graph::Arg::Kind::None) return std::nullopt;
  std::vector<std::int64_t> dims;
  auto add = [&](const graph::Arg& item) {
    if (!item.is_number() || !item.is_integer) wrong_kind(node, name, "an int or a list of ints");
    dims.push_back(static_cast<std::int64_t>(item.number));
  };
  if (arg->kind == graph::Arg::Kind::List) {
    for (const auto& item : arg->items) add(item);
  } else {
    add(*arg);
  }
  return dims;
}

std::vector<std::int64_t> per_dim_argument(const graph::Node& node, std::size_t position, const char* name, int dims,
                                  std::int64_t default_value) {
  const auto values = dims_argument(node, position, name);
  if (!values) return std::vector<std::int64_t>(static_cast<std::size_t>(dims), default_value);
  if (values->size() == 1) return std::vector<std::int64_t>(static_cast<std::size_t>(dims), values->front());
  if (values->size() != static_cast<std::size_t>(dims)) throw Unsupported(node.name + ": " + name + " of the wrong length");
  return *values;
}

std::vector<std::int64_t> padding_of_mode(const graph::Node& node, const std::string& mode,
                                          const std::vector<std::int64_t>& kernel_size) {
  std::vector<std::int64_t> padding;
  for (const auto k : kernel_size) {
    if (mode == "valid") padding.push_back(0);
    else if (mode == "same" && k % 2 == 1) padding.push_back(k / 2);
    else throw Unsupported(node.name + ": padding '" + mode + "'");
  }
  return padding;
}

const graph::Submodule* called_module(const graph::OpGraph& graph, const graph::Node& node) {
  if (node.op != "call_module") return nullptr;
  const auto it = graph.submodules.find(node.target);
  return it == graph.submodules.end() ? nullptr : &it->second;
}

std::optional<nlohmann::json> module_attr(const graph::OpGraph& graph, const graph::Node& node, std::string_view key) {
  const graph::Submodule* module = called_module(graph, node);
  if (!module || !module->attrs.is_object()) return std::nullopt;
  const auto it = module->attrs.find(std::string(key));
  if (it == module->attrs.end()) return std::nullopt;
  return *it;
}

std::vector<std::int64_t> conv_per_dim(const graph::OpGraph& graph, const graph::Node& conv, std::size_t position,
                                       const char* name, std::int64_t fallback, const std::vector<std::int64_t>& kernel) {
  const int dims = static_cast<int>(kernel.size());
  std::optional<nlohmann::json> value;
  if (conv.op == "call_module") {
    value = module_attr(graph, conv, name);
  } else if (const auto* text = argument(conv, position, name); text && text->kind == graph::Arg::Kind::String) {
    value = text->text;
  }
  if (value && value->is_string()) return padding_of_mode(conv, value->get<std::string>(), kernel);
  if (conv.op != "call_module") return per_dim_argument(conv, position, name, dims, fallback);
  if (!value) return std::vector<std::int64_t>(kernel.size(), fallback);
  if (value->is_number_integer()) return std::vector<std::int64_t>(kernel.size(), value->get<std::int64_t>());
  if (value->is_array() && value->size() == kernel.size() &&
      std::all_of(value->begin(), value->end(), [](const nlohmann::json& v) { return v.is_number_integer(); })) {
    std::vector<std::int64_t> out;
    for (const auto& v : *value) out.push_back(v.get<std::int64_t>());
    return out;
  }
  throw Unsupported(conv.name + ": " + name + " " + value->dump());
}

std::string target_base(const graph::Node& node) {
  const auto dot = node.target.rfind('.');
  return dot == std::string::npos ? node.target : node.target.substr(dot + 1);
}

bool has_other_arguments(const graph::Node& node, std::size_t known_positions,
                         std::initializer_list<std::string_view> known_names) {
  if (node.args.size() > known_positions) return true;
  return std::any_of(node.kwargs.begin(), node.kwargs.end(), [&](const auto& entry) {
    return std::find(known_names.begin(), known_names.end(), entry.first) == known_names.end();
  });
}

}  // namespace hiera::engine::propose::recipes::kernels
