#include "engine/propose/recipes/kernels/conv_bias.h"

namespace hiera::engine::propose::recipes::kernels {

std::optional<std::string> module_expression(const graph::Node& conv) {
  if (conv.op != "call_module" || conv.args.size() != 1 || !conv.args[0].is_node() || !conv.kwargs.empty())
    return std::nullopt;
  const std::string call = "(" + conv.args[0].node + ")";
  if (conv.code.size() <= call.size() || conv.code.compare(conv.code.size() - call.size(), call.size(), call) != 0)
    return std::nullopt;
  return conv.code.substr(0, conv.code.size() - call.size());
}

ElementwiseProgram::Custom plus_bias(const LeafBias& bias) {
  return [bias](ElementwiseProgram& program, const graph::Node& node) {
    // Two statements: the loads number the kernel's parameters (a0, a1), so
    // their order must not be left to the compiler's order of evaluation.
    const std::string bias_value = program.load(bias.python, bias.dtype, bias.shape, false);
    return program.load(node.name, node.meta->dtype, node.meta->shape, true) + " + " + bias_value;
  };
}

std::optional<UnbiasedConvolution> without_bias(const graph::OpGraph& graph, const graph::Node& conv,
                                                const std::string& input_python) {
  const bool forward = conv.kind == "conv2d" || conv.kind == "conv3d";
  const bool transposed = conv.kind == "conv_transpose2d" || conv.kind == "conv_transpose3d";
  const auto module = module_expression(conv);
  const auto sub = graph.submodules.find(conv.target);
  const auto bias = graph.parameters.find(conv.target + ".bias");
  if (!(forward || transposed) || !module || !conv.meta || conv.meta->shape.size() < 3 ||
      sub == graph.submodules.end() || bias == graph.parameters.end() || bias->second.shape.size() != 1 ||
      bias->second.shape[0] != conv.meta->shape[1] ||
      sub->second.attrs.value("padding_mode", std::string("zeros")) != "zeros")
    return std::nullopt;
  const std::string& m = *module;
  UnbiasedConvolution out;
  out.call = "torch.nn.functional." + conv.kind + "(" + input_python + ", " + m + ".weight, None, " + m +
             ".stride, " + m + ".padding, " +
             (forward ? m + ".dilation, " + m + ".groups)"
                      : m + ".output_padding, " + m + ".groups, " + m + ".dilation)");
  out.bias = {conv.name, m + ".bias", bias->second.dtype, std::vector<std::int64_t>(conv.meta->shape.size() - 1, 1)};
  out.bias.shape[0] = bias->second.shape[0];
  return out;
}

}  // namespace hiera::engine::propose::recipes::kernels
