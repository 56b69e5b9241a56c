#pragma once
// Python source text as the knowledge proposer reads and writes it: literals
// for graph arguments, and the names an expression or statement reads, found
// with a small tokenizer (strings, attributes and keyword-argument names are
// not names it reads). The emitter uses it for liveness; rewrites use it to
// inline a chain of node expressions into one fallback expression.
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/graph/op_graph.h"

namespace hiera::engine::propose::recipes {

// A Python literal that reads back as exactly this double: "0.125", "2.0",
// "1e-05", float("inf"), float("nan").
std::string python_float(double value);
// A Python string literal (double quotes, escaped).
std::string python_string(std::string_view text);
// `text` plus an integer, as Python: "s + 2", "s - 1" or "s".
std::string python_plus(const std::string& text, std::int64_t value);
// An argument as Python source: node names as they are, numbers, True/False/None,
// "text", (a, b) for lists, slice(a, b, c), torch.float32 for dtypes, ... for Ellipsis.
std::string python_arg(const graph::Arg& arg);
// The expression for a submodule or parameter path: "self.conv", "self.layers[0].weight"
// style attribute access where every part is an identifier, else self.get_submodule("...").
std::string python_attribute_path(std::string_view path);

// Names the text reads, in order of first appearance, each once: identifiers
// outside string literals that are not attributes (after '.'), keyword-argument
// names (`dim=`) or assignment targets (`y = ...`), nor Python keywords.
std::vector<std::string> read_names(std::string_view text);
// Names a statement assigns at its start (`a = ...`, `a, b = ...`).
std::vector<std::string> assigned_names(std::string_view statement);
// The text with each name it reads (as read_names finds them) that is a key of
// `replacements` replaced by the mapped text.
std::string substitute_names(std::string_view text, const std::map<std::string, std::string>& replacements);

// One expression computing `node` from the nodes outside `inline_nodes`: the
// node's code with every name of a node in `inline_nodes` replaced by that
// node's own (inlined, parenthesised) code. For a fallback that must repeat
// the reference's computation in a single expression.
std::string inline_expression(const graph::OpGraph& graph, const std::string& node,
                              const std::set<std::string>& inline_nodes);

}  // namespace hiera::engine::propose::recipes
