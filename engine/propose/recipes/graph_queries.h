#pragma once
// What the rewrites ask of the op graph: an argument by position or schema
// name whatever the spelling (torch.sum(x, 1), x.sum(dim=1)), constants, users,
// shapes and dtypes, and whether the graph writes anything in place. One place
// for these questions so every rewrite answers them alike.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/graph/op_graph.h"

namespace hiera::engine::propose::recipes {

// The argument at `position` of node.args (for methods the tensor itself is
// position 0, as for the torch.* function), else by schema name from kwargs
// or normalized; null when the call does not pass it.
const graph::Arg* argument(const graph::Node& node, std::size_t position, std::string_view name);
// A keyword argument (kwargs, then normalized), or null.
const graph::Arg* keyword(const graph::Node& node, std::string_view name);
// The node an argument refers to, or null (absent, a constant, unknown name).
const graph::Node* argument_node(const graph::OpGraph& graph, const graph::Node& node, std::size_t position,
                                 std::string_view name);
// A numeric constant (int or float), else nullopt.
std::optional<double> constant(const graph::Arg* arg);
bool is_constant(const graph::Arg* arg, double value);
// A boolean constant, else nullopt.
std::optional<bool> flag(const graph::Arg* arg);
// An int or a list of ints (dims, shapes), else nullopt.
std::optional<std::vector<std::int64_t>> int_list(const graph::Arg* arg);
// The positional and keyword arguments a node passes, beyond the ones a rewrite understands.
bool passes_only(const graph::Node& node, std::size_t positional, const std::vector<std::string_view>& keywords);

// op/kind tests: the canonical kind, or (for ops outside the runner's
// vocabulary, such as clone or erf) the target as torch function or method.
bool is_kind(const graph::Node& node, std::string_view kind);
bool is_call(const graph::Node& node, std::string_view method, std::string_view function);
// A node that only changes the dtype (x.to(torch.float16), x.half(), x.type(torch.float32)): no device,
// memory format or copy=True.
bool is_dtype_cast(const graph::Node& node);
// The node is the only consumer of `value`.
bool only_user(const graph::Node& value, const graph::Node& user);
// The value is returned by forward (directly or inside a returned tuple/list).
bool is_returned(const graph::OpGraph& graph, const std::string& name);
// The node writes a tensor in place (x.add_(...), inplace=True, nn.ReLU(inplace=True), setitem, out=).
bool mutates(const graph::OpGraph& graph, const graph::Node& node);
bool graph_mutates(const graph::OpGraph& graph);
// A module input or a parameter/buffer: storage the module does not own for the call.
bool is_external(const graph::Node& node);
// Whether `result` may become the very tensor `source` (a view or the same
// object) where the reference made a new one: nothing in the graph writes in
// place, and a module input or parameter does not come back as the output.
bool alias_is_safe(const graph::OpGraph& graph, const graph::Node& source, const graph::Node& result);

// Shapes and dtypes from the capture (nullopt/empty when the node has no tensor meta).
std::optional<std::size_t> rank(const graph::Node& node);
std::string dtype(const graph::Node& node);
bool is_floating(std::string_view dtype);
bool same_shape(const graph::Node& a, const graph::Node& b);
bool contiguous(const graph::TensorMeta& meta);
// A dim as written (negative counts from the end) -> 0..rank-1, or nullopt when out of range.
std::optional<std::int64_t> normalize_dim(std::int64_t dim, std::size_t rank);

// W when `node` is W's transpose for a 2D W (W.t(), W.T, W.mT, W.transpose(0, 1), W.permute(1, 0)), else null.
const graph::Node* transposed_matrix(const graph::OpGraph& graph, const graph::Node& node);
// The submodule a call_module node calls, or null.
const graph::Submodule* submodule(const graph::OpGraph& graph, const graph::Node& node);
// The dim of a softmax / log_softmax: the call's argument, or nn.Softmax(dim=...)'s attribute.
std::optional<std::int64_t> softmax_dim(const graph::OpGraph& graph, const graph::Node& node);

}  // namespace hiera::engine::propose::recipes
