#pragma once
// Shapes and work of PyTorch ops: given the abstract values of an op's
// arguments (python_value.h), its result (shape and dtype when the inputs'
// are known) and its work per call. Work counts, per element of the result
// unless said otherwise: 1 flop for elementwise ops and reductions (per input
// element), 5 for softmax and norms, 2*K per multiply-accumulate dot product
// (matmul, linear, convolution), and nothing for views; bytes are each tensor
// input read once plus the result written once (weights included), in the
// tensors' dtypes. A copy (contiguous, cat, casts) moves its bytes with no flops.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/analysis/python_value.h"
#include "engine/analysis/torch_ops.h"
#include "engine/analysis/work.h"

namespace hiera::engine::analysis {

struct OpCall {
  std::vector<PyValue> args;  // positional; for a method call the tensor comes first
  std::vector<std::pair<std::string, PyValue>> kwargs;
  // Positional `index`, else the keyword `name`; null when neither is given.
  const PyValue* arg(std::size_t index, std::string_view name) const;
  const PyValue* keyword(std::string_view name) const;
};

struct OpOutcome {
  PyValue result;
  std::optional<Work> work;  // absent when a shape it needs is unknown
};

OpOutcome apply_op(const OpInfo& op, const OpCall& call);

// An nn layer as its constructor was called, children for Sequential / ModuleList.
struct LayerSpec {
  std::string type;  // "Conv2d"
  OpCall constructor;
  std::vector<LayerSpec> children;
};

// The layer applied to `call` (its forward arguments).
OpOutcome apply_layer(const LayerSpec& layer, const OpCall& call);

}  // namespace hiera::engine::analysis
