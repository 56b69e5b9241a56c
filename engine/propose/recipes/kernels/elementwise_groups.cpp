#include "engine/propose/recipes/kernels/elementwise_groups.h"

#include <algorithm>
#include <map>
#include <optional>

#include "engine/propose/recipes/kernels/elementwise_expression.h"
#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/unsupported.h"

namespace hiera::engine::propose::recipes::kernels {

namespace {

// Identity-like formulas move no arithmetic: a group of only those is no kernel.
bool computes(const ElementwiseFormula& formula) { return formula.pattern != "$0"; }

}  // namespace

bool is_fusable_elementwise(const graph::OpGraph& graph, const graph::Node& node) {
  if (!node.meta || !kernel_dtype(node.meta->dtype)) return false;
  try {
    return elementwise_formula(node, graph).has_value();
  } catch (const Unsupported&) {
    return false;
  }
}

std::vector<ElementwiseGroup> elementwise_groups(const graph::OpGraph& graph, const std::set<std::string>& excluded) {
  std::map<std::string, std::size_t> group_of;
  std::vector<ElementwiseGroup> groups;  // in reverse graph order of roots while building
  for (auto it = graph.nodes.rbegin(); it != graph.nodes.rend(); ++it) {
    const graph::Node& node = *it;
    if (excluded.count(node.name) || !is_fusable_elementwise(graph, node)) continue;
    // Internal when every user is in one and the same group.
    std::optional<std::size_t> shared;
    bool internal = !node.users.empty();
    for (const auto& user : node.users) {
      const auto found = group_of.find(user);
      if (found == group_of.end() || (shared && *shared != found->second)) {
        internal = false;
        break;
      }
      shared = found->second;
    }
    std::size_t index;
    if (internal) {
      index = *shared;
    } else {
      index = groups.size();
      groups.push_back({node.name, {}, 0});
    }
    group_of[node.name] = index;
    groups[index].members.insert(node.name);
    if (computes(*elementwise_formula(node, graph))) ++groups[index].computing_ops;
  }
  return {groups.rbegin(), groups.rend()};
}

const ElementwiseGroup* group_with_root(const std::vector<ElementwiseGroup>& groups, const std::string& root) {
  for (const auto& group : groups)
    if (group.root == root) return &group;
  return nullptr;
}

const ElementwiseGroup* group_with_member(const std::vector<ElementwiseGroup>& groups, const std::string& member) {
  for (const auto& group : groups)
    if (group.members.count(member)) return &group;
  return nullptr;
}

const ElementwiseGroup* group_taking(const std::vector<ElementwiseGroup>& groups, const graph::Node& value) {
  if (value.users.empty()) return nullptr;
  const ElementwiseGroup* group = group_with_member(groups, value.users.front());
  if (!group) return nullptr;
  for (const auto& user : value.users)
    if (!group->members.count(user)) return nullptr;
  return group;
}

bool is_row_kernel(const graph::Node& node) {
  static const std::set<std::string> kRowKernels = {"group_norm", "layer_norm", "instance_norm", "batch_norm", "softmax",
                                                    "log_softmax", "sum", "mean", "amax", "amin", "max", "min", "logsumexp"};
  return kRowKernels.count(node.kind) > 0;
}

bool feeds_row_kernel(const graph::OpGraph& graph, const graph::Node& value) {
  return std::any_of(value.users.begin(), value.users.end(), [&](const std::string& name) {
    const graph::Node* user = graph.find(name);
    return user && is_row_kernel(*user);
  });
}

const ElementwiseGroup* epilogue_group(const graph::OpGraph& graph, const graph::Node& value,
                                       const std::vector<ElementwiseGroup>& groups) {
  const ElementwiseGroup* group = group_taking(groups, value);
  if (!group || group->computing_ops == 0 || !value.meta) return nullptr;
  const graph::Node* root = graph.find(group->root);
  if (!root || !root->meta || root->meta->shape != value.meta->shape || !is_float_dtype(root->meta->dtype)) return nullptr;
  return feeds_row_kernel(graph, *root) ? nullptr : group;
}

}  // namespace hiera::engine::propose::recipes::kernels
