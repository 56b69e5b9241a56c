#pragma once
// What analysis finds in PyTorch source: nn.Module classes with the layers
// their __init__ builds and the ops their forward calls (each with its range
// and, when shapes are known, its output shape and work), and KernelBench's
// get_inputs / get_init_inputs.
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/source_span.h"
#include "engine/analysis/work.h"

namespace hiera::engine::analysis {

struct TorchLayer {
  std::string name;       // the attribute: "conv" for self.conv
  std::string type;       // "Conv2d", "Linear", "Parameter", "buffer", or a module class of the file
  std::string arguments;  // the constructor's arguments as written
  Span span;              // the assignment
  bool operator==(const TorchLayer&) const = default;
};

// A call's argument as rules read it: flags such as dropout's `training`.
struct OpArgument {
  std::string keyword;           // "" when positional
  std::optional<double> number;  // its value when a number or a bool (True = 1)
  bool operator==(const OpArgument&) const = default;
};

struct ForwardOp {
  std::string op;          // canonical: "conv2d", "relu", "add", "matmul", "softmax", "contiguous", ...
  std::string call;        // as written: "self.conv", "torch.relu", "F.gelu", ".permute", "+"
  Span span;
  std::vector<int> inputs; // indices of the ops (in this list) whose results it uses
  bool in_loop = false;    // inside a Python loop or comprehension of forward
  std::optional<Shape> shape;  // its result's shape, when known
  std::string dtype;       // its result's dtype, when known
  std::optional<Work> work;
  // The call's arguments (a method's tensor first); for a layer, its constructor's.
  std::vector<OpArgument> arguments;
  bool operator==(const ForwardOp&) const = default;
};

struct TorchModule {
  std::string name;
  Span span;
  Span name_span;
  std::vector<std::string> bases;          // as written: "nn.Module"
  std::vector<TorchLayer> layers;
  std::optional<Span> init;                // the __init__ definition
  std::vector<std::string> init_parameters;
  std::optional<Span> forward;
  std::vector<std::string> forward_parameters;
  std::vector<ForwardOp> ops;              // in execution order
  bool operator==(const TorchModule&) const = default;
};

struct ModelInput {
  std::string expression;      // as written: "torch.randn(batch_size, dim)"
  Span span;
  std::optional<Shape> shape;  // a tensor's, when its sizes evaluate
  std::string dtype;           // a tensor's
  std::optional<double> value; // a number's
  std::optional<std::vector<double>> values;  // a tuple or list of numbers' (a shape argument)
  // A list or tuple of tensors' (a comprehension's, [torch.randn(...) for _ in range(n)]): each one's shape and dtype.
  std::vector<ModelInput> tensors;
  bool operator==(const ModelInput&) const = default;
};

// KernelBench's module-level functions, when present.
struct KernelBenchEntry {
  std::optional<Span> get_inputs, get_init_inputs;
  std::vector<ModelInput> inputs, init_inputs;
  std::string model;           // the module they feed ("Model" when there is one)
  bool operator==(const KernelBenchEntry&) const = default;
};

}  // namespace hiera::engine::analysis
