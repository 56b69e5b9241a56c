#include "engine/propose/knowledge/kernels/channels_last_epilogue.h"

#include "engine/propose/knowledge/graph_queries.h"
#include "engine/propose/knowledge/kernels/elementwise_groups.h"
#include "engine/propose/knowledge/kernels/unsupported.h"
#include "engine/propose/knowledge/python_text.h"

namespace hiera::engine::propose::knowledge_proposer::kernels {

namespace {

constexpr const char* kRecipe = "s3_channels_last_conv_epilogue";

// Convolutions cuDNN runs in NHWC (NDHWC), by their rank.
std::optional<std::size_t> convolution_rank(const graph::Node& node) {
  if (node.kind == "conv2d" || node.kind == "conv_transpose2d") return 4;
  if (node.kind == "conv3d" || node.kind == "conv_transpose3d") return 5;
  return std::nullopt;
}

// Ops that give the same values whatever their input's memory format (and keep it):
// the output may stay channels_last when only these (or forward's return) read it.
bool layout_agnostic(const graph::Node& node) {
  static const std::set<std::string> kKinds = {
      "conv2d",      "conv3d",   "relu",       "leaky_relu", "gelu",       "sigmoid", "tanh",    "silu",
      "mish",        "hardswish", "hardsigmoid", "hardtanh",  "elu",        "selu",    "softplus", "clamp",
      "add",         "sub",      "mul",        "div",        "neg",        "abs",     "exp",     "batch_norm",
      "max_pool2d",  "avg_pool2d", "max_pool3d", "avg_pool3d", "dropout",   "identity", "output"};
  return kKinds.count(node.kind) > 0;
}

Replacement compose(const graph::OpGraph& graph, const graph::Node& conv, const graph::Node& input,
                    const ElementwiseGroup& group, const KernelRewriteOptions& options) {
  const MemoryLayout layout = channels_last_layout(*rank(conv));
  Replacement r = fuse_elementwise_group(graph, group, options, layout);
  const std::string converted = input.name + ".contiguous(memory_format=" + layout.format + ")";
  r.statements.insert(r.statements.begin(),
                      conv.name + " = " + substitute_names(conv.code, {{input.name, converted}}));
  const graph::Node* root = graph.find(group.root);
  bool keeps = true;
  for (const auto& user : root->users) {
    const graph::Node* n = graph.find(user);
    keeps = keeps && n && layout_agnostic(*n);
  }
  if (!keeps) r.statements.push_back(group.root + " = " + group.root + ".contiguous()");
  r.recipe = kRecipe;
  r.covered.insert(conv.name);
  r.description = "'" + conv.name + "' in " + layout.format.substr(6) + ", then " + r.description +
                  (keeps ? "" : ", made contiguous after");
  return r;
}

}  // namespace

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

}  // namespace hiera::engine::propose::knowledge_proposer::kernels
