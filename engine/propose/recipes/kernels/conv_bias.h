#pragma once
// A convolution module called without its bias, so that the kernel after it
// adds the bias in the pass it makes anyway: eager (and cuDNN under it) adds
// the bias in a kernel of its own, one more read and write of the whole
// output (torch.compile does the same as this). Only for an nn.Conv*d /
// ConvTranspose*d module with a bias and zero padding, called on its input
// alone: torch.nn.functional.conv*d pads with zeros.
#include <optional>
#include <string>

#include "engine/graph/op_graph.h"
#include "engine/propose/recipes/kernels/elementwise_fusion.h"
#include "engine/propose/recipes/kernels/elementwise_program.h"

namespace hiera::engine::propose::recipes::kernels {

struct UnbiasedConvolution {
  std::string call;  // "torch.nn.functional.conv2d(<input>, self.conv.weight, None, self.conv.stride, ...)"
  LeafBias bias;     // the module's bias, [C, 1, 1] against the conv's output
};

// The module expression of a call `self.conv(x)` of one positional node
// argument ("self.conv"); nothing for other calls.
std::optional<std::string> module_expression(const graph::Node& conv);

// The value of `bias.node` in a program that computes it: its load plus the
// bias's (the program rounds the sum to the node's dtype, as eager's add).
ElementwiseProgram::Custom plus_bias(const LeafBias& bias);

// The call without the bias, reading the input as `input_python` (the input
// node's name, or a converted form of it); nothing when `conv` is not such a module call.
std::optional<UnbiasedConvolution> without_bias(const graph::OpGraph& graph, const graph::Node& conv,
                                                const std::string& input_python);

}  // namespace hiera::engine::propose::recipes::kernels
