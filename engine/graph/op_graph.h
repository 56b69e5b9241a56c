#pragma once
// The reference forward as the PyTorch runner captured it (the `capture` job,
// engine/eval/JOB_PROTOCOL.md): nodes in execution order with their shapes,
// dtypes, strides, flops and minimum bytes, plus the submodules, parameters
// and buffers they use. Plain data: the knowledge proposer matches patterns on
// it and the planner reads its costs; nothing here runs torch.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace hiera::engine::graph {

// One argument of a node as written in the source, recursively.
struct Arg {
  enum class Kind { Node, Number, Bool, String, None, List, Slice, Dtype, Ellipsis, Other };
  Kind kind = Kind::None;
  std::string node;                // Kind::Node: the producing node's name
  double number = 0.0;             // Kind::Number
  bool is_integer = false;         // Kind::Number: written as an int
  bool flag = false;               // Kind::Bool
  std::string text;                // Kind::String / Dtype ("float32") / Other (repr)
  std::vector<Arg> items;          // Kind::List (also tuples); Kind::Slice: exactly 3 (start, stop, step; None when absent)

  bool is_node() const { return kind == Kind::Node; }
  bool is_number() const { return kind == Kind::Number; }
};

struct TensorMeta {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> stride;
  std::string dtype;               // "float32", "float16", "bfloat16", "int64", ...
  std::int64_t elements() const;   // product of shape (1 for a scalar)
};

// What the capture knew of a value that depends on no input's values, only on
// buffers, constants and sizes (engine/worker/python/hiera_runner/graph_facts.py).
struct ValueFacts {
  std::optional<std::vector<double>> values;  // flattened, for small tensors (bools as 0/1)
  std::string mask;  // "causal_masked" (True above the diagonal), "causal_kept", "causal_additive" or ""

  bool empty() const { return !values && mask.empty(); }
};

struct Node {
  std::string name;                // unique, a valid Python identifier
  std::string op;                  // placeholder | call_function | call_method | call_module | get_attr | output
  std::string target;              // "torch.relu", "operator.add", "sum", "conv", "weight", ...
  std::string kind;                // canonical op: "relu", "add", "conv2d", "linear", "softmax", ... ("unknown" when none fits)
  std::vector<Arg> args;
  std::map<std::string, Arg> kwargs;
  std::optional<std::map<std::string, Arg>> normalized;  // every argument by its schema name, when torch could normalize it
  std::optional<TensorMeta> meta;  // absent for non-tensor results
  std::vector<TensorMeta> tuple_meta;  // for tuple results (e.g. torch.max with dim)
  double flops = 0.0;
  double bytes = 0.0;              // minimum bytes moved: inputs read once + output written once
  std::optional<double> time_ms;   // measured in the reference's forward, a call (the capture's profile); unset: not measured
  std::string code;                // the node as a Python expression over other node names, e.g. "self.conv(x)"
  std::vector<std::string> users;  // names of nodes that consume this one
  ValueFacts facts;
};

struct Submodule {
  std::string type;                // "Conv2d", "Linear", "BatchNorm2d", ...
  nlohmann::json attrs = nlohmann::json::object();  // in_features, kernel_size, stride, padding, eps, ...
};

struct TensorInfo {
  std::vector<std::int64_t> shape;
  std::string dtype;
  bool persistent = true;          // buffers: part of state_dict
};

struct OpGraph {
  std::string method;              // "fx" or "export"; empty when capture fell back to the whole module
  std::string fallback;            // why there is no graph (data-dependent control flow, ...)
  std::string class_name = "Model";
  std::vector<std::string> forward_params;
  bool training = false;           // the module's mode when the runner evaluates it
  std::map<std::string, Submodule> submodules;    // by qualified name ("layers.0.conv")
  std::map<std::string, TensorInfo> parameters;   // by state_dict name
  std::map<std::string, TensorInfo> buffers;
  std::vector<Node> nodes;         // execution order; the last is the output node
  double total_flops = 0.0, total_bytes = 0.0;

  bool captured() const { return !nodes.empty(); }
  const Node* find(const std::string& name) const;
  const Node* producer(const Arg& arg) const;     // the node an Arg::Node refers to, else null
};

// Parses the capture job's result. Throws std::runtime_error naming the first
// malformed field (path and reason); unknown fields are ignored.
OpGraph parse_op_graph(const nlohmann::json& capture);
nlohmann::json to_json(const OpGraph& graph);   // the inverse, for run logs and tests

}  // namespace hiera::engine::graph
