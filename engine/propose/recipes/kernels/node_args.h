#pragma once
// A call node's arguments by schema name, whichever way the source passed
// them: positionally (args, where a method's receiver is position 0),
// by keyword (kwargs), or as torch normalized them.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/graph/op_graph.h"

namespace hiera::engine::propose::recipes::kernels {

// The argument at `position` or named `name`; null when the call omits it.
const graph::Arg* argument(const graph::Node& node, std::size_t position, std::string_view name);

// The argument as a number; nullopt when omitted or None; throws Unsupported
// (node name and argument) when it is something else (a tensor, a string).
std::optional<double> number_argument(const graph::Node& node, std::size_t position, std::string_view name);
std::optional<bool> bool_argument(const graph::Node& node, std::size_t position, std::string_view name);
std::optional<std::string> string_argument(const graph::Node& node, std::size_t position, std::string_view name);
// A dimension list (an int or a list of ints); nullopt when omitted or None.
std::optional<std::vector<std::int64_t>> dims_argument(const graph::Node& node, std::size_t position,
                                                       std::string_view name);

// A per-dimension argument (stride, padding, dilation) of a `dims`-D op: an
// int for every dimension, or a list of `dims`; `default_value` for each when
// omitted. Throws Unsupported for a list of another length.
std::vector<std::int64_t> per_dim_argument(const graph::Node& node, std::size_t position, const char* name, int dims,
                                           std::int64_t default_value);

// A convolution's padding given as a string: 0 per dimension for "valid",
// k / 2 for "same" with an odd kernel size k; Unsupported otherwise.
std::vector<std::int64_t> padding_of_mode(const graph::Node& node, const std::string& mode,
                                          const std::vector<std::int64_t>& kernel_size);

// A convolution's per-dimension setting (stride, padding, dilation) whether
// it is a module's attribute (nn.Conv2d) or a call's argument (F.conv2d): an
// int, a list of one per kernel dimension, or for padding "same" / "valid";
// `fallback` for each when absent. Throws Unsupported for anything else.
std::vector<std::int64_t> conv_per_dim(const graph::OpGraph& graph, const graph::Node& conv, std::size_t position,
                                       const char* name, std::int64_t fallback, const std::vector<std::int64_t>& kernel);

// The submodule a call_module node calls; null for other nodes or an unknown module.
const graph::Submodule* called_module(const graph::OpGraph& graph, const graph::Node& node);
// The module attribute `key`; nullopt when absent.
std::optional<nlohmann::json> module_attr(const graph::OpGraph& graph, const graph::Node& node, std::string_view key);

// The last component of a dotted target: "torch.nn.functional.relu6" -> "relu6".
std::string target_base(const graph::Node& node);

// Every argument beyond `known_names` (by name) and `known_positions` (positional count).
bool has_other_arguments(const graph::Node& node, std::size_t known_positions,
                         std::initializer_list<std::string_view> known_names);

}  // namespace hiera::engine::propose::recipes::kernels
