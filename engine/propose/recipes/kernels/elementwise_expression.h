#pragma once
// The expression builder: one elementwise node of the op graph as a CUDA float
// expression with exactly PyTorch's CUDA formula (opmath: half and bfloat16
// are computed in float), e.g. gelu = x * 0.5f * (1.0f + erff(x * M_SQRT1_2)),
// softplus with its threshold, hardswish with std::min/std::max's NaN
// behaviour, division by a Python scalar as a multiplication by its float
// reciprocal (as torch's div_true_kernel does).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"

namespace hiera::engine::propose::recipes::kernels {

// One input of a formula.
struct FormulaOperand {
  enum class Kind { Node, Number, ModuleTensor };
  Kind kind = Kind::Number;
  std::string node;     // Node: the producing node's name
  double number = 0.0;  // Number: the Python scalar (already converted as torch would, e.g. a reciprocal)
  std::string python;   // ModuleTensor: the Python expression of a tensor that is no node ("self.bn.running_mean")
  std::string dtype;    // ModuleTensor: its dtype
  // How the operand lines up against the node's output when that is not its
  // own shape: a per-channel vector [C] of a batch norm over [N, C, H, W] is
  // seen as [C, 1, 1]. Empty: the operand's own shape.
  std::vector<std::int64_t> broadcast_shape;
};

struct ElementwiseFormula {
  std::vector<FormulaOperand> operands;
  // The value as a CUDA expression in which $0, $1, ... stand for the operands'
  // values (plain names or literals, so repeating one costs nothing).
  std::string pattern;
  std::vector<std::string> helpers;  // device functions the pattern calls (see device_helpers)
  std::vector<std::string> dtypes;   // dtypes whose headers the pattern needs (a cast to float16 rounds through __half)
  bool boolean = false;              // a comparison: the value is a bool
  // The op writes into its first operand (relu_, add_, inplace=True): only
  // safe to fuse when that operand is internal to the group.
  bool in_place = false;
};

// The formula of `node`; nullopt when its kind is not an elementwise op.
// Throws Unsupported for an elementwise node the builder cannot express
// exactly: dropout that is active, a rounding division, a module whose
// attributes the capture did not record, a tensor where a number is needed.
std::optional<ElementwiseFormula> elementwise_formula(const graph::Node& node, const graph::OpGraph& graph);

// pattern with each $k replaced by values[k].
std::string expand_formula(const ElementwiseFormula& formula, const std::vector<std::string>& values);

// The CUDA definitions of the named helpers (and of those they call), each
// once, in a fixed order; unknown names throw std::invalid_argument.
std::string device_helpers(const std::vector<std::string>& names);

// The Python expression of the module a call_module node calls:
// "self.bn", or self.get_submodule('layers.0.bn') for a path that is no attribute chain.
std::string module_python(const std::string& target);

}  // namespace hiera::engine::propose::recipes::kernels
