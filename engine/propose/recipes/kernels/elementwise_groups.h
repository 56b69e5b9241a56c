#pragma once
// The graph partitioned into maximal groups of elementwise nodes that one
// kernel can compute: every member except the group's root is used only by
// other members, so its value never has to reach memory. Chains and DAGs
// alike (x * sigmoid(x) is one group); a node used outside (or by the output)
// ends its group as the root.
#include <set>
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"

namespace hiera::engine::propose::recipes::kernels {

struct ElementwiseGroup {
  std::string root;               // the member whose value leaves the group
  std::set<std::string> members;  // root included
  int computing_ops = 0;          // members that compute (identity, dropout in eval, same-dtype casts do not)
};

// True when `node` is an elementwise op the expression builder computes
// exactly, with a float (or bool) tensor result.
bool is_fusable_elementwise(const graph::OpGraph& graph, const graph::Node& node);

// Maximal groups over the nodes not in `excluded`, in graph order of their roots.
std::vector<ElementwiseGroup> elementwise_groups(const graph::OpGraph& graph, const std::set<std::string>& excluded);

// The group whose root is `root`, if any.
const ElementwiseGroup* group_with_root(const std::vector<ElementwiseGroup>& groups, const std::string& root);
// The group that has `member`, if any.
const ElementwiseGroup* group_with_member(const std::vector<ElementwiseGroup>& groups, const std::string& member);
// The group that takes the whole of `value` (every user of it a member), if any.
const ElementwiseGroup* group_taking(const std::vector<ElementwiseGroup>& groups, const graph::Node& value);
// Whether `node` is a norm, softmax or reduction, whose kernel (row_fusion.h) takes the ops before it as its
// prologue and reads its input once anyway: a conv's epilogue should not take those ops.
bool is_row_kernel(const graph::Node& node);
// Whether some user of `value` is one.
bool feeds_row_kernel(const graph::OpGraph& graph, const graph::Node& value);
// The elementwise group that takes the whole of a kernel's output `value` and keeps its shape (a batch norm and
// an activation after a conv, u - conv(u)), for the kernel's store. Null when there is none, when it computes
// nothing, when its result is no float tensor, or when its ops are the prologue of a norm, softmax or reduction
// (whose kernel reads the value once anyway).
const ElementwiseGroup* epilogue_group(const graph::OpGraph& graph, const graph::Node& value,
                                       const std::vector<ElementwiseGroup>& groups);

}  // namespace hiera::engine::propose::recipes::kernels
