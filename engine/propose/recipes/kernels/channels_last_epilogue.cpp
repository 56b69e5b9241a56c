#include "engine/propose/recipes/kernels/channels_last_epilogue.h"

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/kernels/conv_bias.h"
#include "engine/propose/recipes/kernels/elementwise_groups.h"
#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/kernel_template.h"
#include "engine/propose/recipes/kernels/unsupported.h"
#include "engine/propose/recipes/python_text.h"

namespace hiera::engine::propose::recipes::kernels {

namespace {

constexpr const char* kRecipe = "s3_channels_last_conv_epilogue";

// Module-level: the input's conversion. torch's copy kernel moves NCHW to NHWC
// at about a third of the copy bandwidth (measured on the H200); a tiled
// transpose of each [C, H*W] matrix moves it at the copy's.
constexpr const char* kToChannelsLast = R"(def _hiera_channels_last(x, kernel, memory_format):
    """x.contiguous(memory_format=memory_format); a contiguous x is transposed
    [N, C, spatial] -> [N, spatial, C] by `kernel` (32 x 32 shared-memory tiles)."""
    if (not x.is_contiguous() or x.is_contiguous(memory_format=memory_format) or x.numel() == 0
            or x.shape[0] > 65535 or x.numel() // x.shape[0] >= 2**31):
        return x.contiguous(memory_format=memory_format)
    out = torch.empty_like(x, memory_format=memory_format)
    channels = x.shape[1]
    spatial = x.numel() // (x.shape[0] * channels)  # sizes, not x[0, 0]: a view costs microseconds a call
    _kernel(kernel)(((spatial + 31) // 32, (channels + 31) // 32, x.shape[0]), (32, 8), x, out, channels, spatial)
    return out)";

Replacement compose(const graph::OpGraph& graph, const graph::Node& conv, const graph::Node& input,
                    const ElementwiseGroup& group, const KernelRewriteOptions& options) {
  const ChannelsLastInput converted = channels_last_input(graph, conv, options);
  const MemoryLayout& layout = converted.layout;
  const auto unbiased = without_bias(graph, conv, converted.python);
  Replacement r = fuse_elementwise_group(graph, group, options, layout, unbiased ? &unbiased->bias : nullptr);
  r.statements.insert(r.statements.begin(), conv.name + " = " +
                                                (unbiased ? unbiased->call
                                                          : substitute_names(conv.code, {{input.name, converted.python}})));
  r.definitions.push_back(converted.definition);
  r.kernels.push_back(converted.transpose);
  const bool keeps = users_layout_agnostic(graph, *graph.find(group.root));
  if (!keeps) r.statements.push_back(group.root + " = " + group.root + ".contiguous()");
  r.recipe = kRecipe;
  r.covered.insert(conv.name);
  r.description = "'" + conv.name + "' in " + layout.format.substr(6) + (unbiased ? " without its bias" : "") +
                  ", then " + (unbiased ? "bias + " : "") + r.description +
                  (keeps ? "" : ", made contiguous after");
  return r;
}

}  // namespace

std::optional<std::size_t> convolution_rank(const graph::Node& node) {
  if (node.kind == "conv2d" || node.kind == "conv_transpose2d") return 4;
  if (node.kind == "conv3d" || node.kind == "conv_transpose3d") return 5;
  return std::nullopt;
}

bool users_layout_agnostic(const graph::OpGraph& graph, const graph::Node& node) {
  static const std::set<std::string> kKinds = {
      "conv2d",      "conv3d",   "relu",       "leaky_relu", "gelu",       "sigmoid", "tanh",    "silu",
      "mish",        "hardswish", "hardsigmoid", "hardtanh",  "elu",        "selu",    "softplus", "clamp",
      "add",         "sub",      "mul",        "div",        "neg",        "abs",     "exp",     "batch_norm",
      "max_pool2d",  "avg_pool2d", "max_pool3d", "avg_pool3d", "dropout",   "identity", "output"};
  for (const auto& name : node.users) {
    const graph::Node* user = graph.find(name);
    if (!user || !kKinds.count(user->kind)) return false;
  }
  return true;
}

ChannelsLastInput channels_last_input(const graph::OpGraph& graph, const graph::Node& conv,
                                      const KernelRewriteOptions& options) {
  const auto wanted = convolution_rank(conv);
  const graph::Node* input = argument_node(graph, conv, 0, "input");
  if (!wanted || !input || rank(conv) != wanted || rank(*input) != wanted)
    throw Unsupported(conv.name + " is not a 2D or 3D convolution of a 4D or 5D tensor");
  const KernelDtype* type = kernel_dtype(dtype(*input));
  if (!type || type->dtype == "bool") throw Unsupported("the convolution's input is " + dtype(*input));
  ChannelsLastInput out;
  out.layout = channels_last_layout(*wanted);
  const std::string transpose = "to_channels_last_" + type->dtype;
  out.python = "_hiera_channels_last(" + input->name + ", \"" + transpose + "\", " + out.layout.format + ")";
  out.transpose = {transpose,
                   fill_kernel_template(*options.knowledge, "transpose_tiled.cu",
                                        {{"kernel_name", transpose},
                                         {"scalar_t", type->cuda_type},
                                         {"includes", includes_for({type->dtype})}}),
                   {}};
  out.definition = kToChannelsLast;
  return out;
}

MemoryLayout channels_last_layout(std::size_t rank) {
  if (rank == 4) return {"torch.channels_last", {0, 2, 3, 1}, "_nhwc"};
  if (rank == 5) return {"torch.channels_last_3d", {0, 2, 3, 4, 1}, "_ndhwc"};
  throw Unsupported("channels_last needs a 4D or 5D tensor, not " + std::to_string(rank) + "D");
}

std::vector<Replacement> find_channels_last_epilogues(const graph::OpGraph& graph, const std::set<std::string>& covered,
                                                      const KernelRewriteOptions& options,
                                                      std::vector<SkippedRewrite>& skipped) {
  std::vector<Replacement> out;
  const std::vector<ElementwiseGroup> groups = elementwise_groups(graph, covered);
  for (const auto& conv : graph.nodes) {
    const auto wanted = convolution_rank(conv);
    if (!wanted || covered.count(conv.name) || rank(conv) != wanted || !is_floating(dtype(conv))) continue;
    const graph::Node* input = argument_node(graph, conv, 0, "input");
    if (!input || rank(*input) != wanted || conv.users.empty() || mutates(graph, conv)) continue;
    const ElementwiseGroup* group = group_with_member(groups, conv.users.front());
    bool one_group = group != nullptr;
    for (const auto& user : conv.users) one_group = one_group && group->members.count(user) > 0;
    if (!one_group || group->computing_ops == 0) continue;  // nothing to fuse, or the value leaves for elsewhere
    const graph::Node* root = graph.find(group->root);
    if (!root || !root->meta || root->meta->shape != conv.meta->shape) {
      skipped.push_back({group->root, "the epilogue of '" + conv.name + "' changes its shape (a broadcast)"});
      continue;
    }
    try {
      out.push_back(compose(graph, conv, *input, *group, options));
    } catch (const Unsupported& e) {
      skipped.push_back({group->root, std::string("channels_last epilogue of '") + conv.name + "': " + e.what()});
    }
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::kernels
