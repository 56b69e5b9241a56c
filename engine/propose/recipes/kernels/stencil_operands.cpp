#include "engine/propose/recipes/kernels/stencil_operands.h"

#include <algorithm>

#include "engine/propose/recipes/kernels/elementwise_expression.h"
#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/unsupported.h"

namespace hiera::engine::propose::recipes::kernels {

std::vector<std::string> stencil_group_leaves(const graph::OpGraph& graph, const ElementwiseGroup& group) {
  std::vector<std::string> leaves;
  for (const auto& node : graph.nodes) {
    if (!group.members.count(node.name)) continue;
    const auto formula = elementwise_formula(node, graph);
    for (const auto& operand : formula->operands) {
      if (operand.kind == FormulaOperand::Kind::ModuleTensor) leaves.push_back(operand.python);
      if (operand.kind != FormulaOperand::Kind::Node || group.members.count(operand.node)) continue;
      if (std::find(leaves.begin(), leaves.end(), operand.node) == leaves.end()) leaves.push_back(operand.node);
    }
  }
  return leaves;
}

StencilFields::StencilFields(const graph::OpGraph& graph, const graph::Node& root, const std::vector<std::string>& leaves) {
  for (const auto& leaf : leaves) {
    const graph::Node* node = graph.find(leaf);
    if (!node || !node->meta) throw Unsupported(root.name + ": the stencil also reads " + leaf);
    // Read at the output point only: a broadcast operand would need the index math the taps do not have.
    if (!root.meta || node->meta->shape != root.meta->shape)
      throw Unsupported(root.name + ": the stencil also reads " + leaf + ", which is not of the output's shape");
    if (!is_float_dtype(node->meta->dtype))
      throw Unsupported(root.name + ": the stencil also reads " + node->meta->dtype + " " + leaf);
    nodes_.push_back(node);
  }
}

void StencilFields::bind(StencilKernel& kernel, ElementwiseProgram& program) const {
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    const std::string pointer = "field" + std::to_string(k);
    kernel.extra_dtypes.push_back(nodes_[k]->meta->dtype);
    kernel.extra_params += ", const " + kernel_dtype(nodes_[k]->meta->dtype)->cuda_type + "* __restrict__ " + pointer;
    program.bind(nodes_[k]->name, stencil_point_accessor(kernel.geometry.dims, kernel.variant, pointer));
  }
}

std::string StencilFields::arguments() const {
  std::string out;
  for (const graph::Node* node : nodes_) out += ", " + node->name + ".contiguous()";
  return out;
}

std::string StencilFields::checks(const std::string& shape) const {
  std::string out;
  for (const graph::Node* node : nodes_)
    out += (out.empty() ? "" : " and ") + node->name + ".dtype == " + kernel_dtype(node->meta->dtype)->torch_name +
           " and " + node->name + ".shape == " + shape;
  return out;
}

std::string StencilFields::expected() const {
  std::string out;
  for (const graph::Node* node : nodes_)
    out += (out.empty() ? "" : ", ") + node->meta->dtype + " " + node->name + " of the output's shape";
  return out;
}

std::string StencilFields::described() const {
  if (nodes_.empty()) return "";
  std::string names;
  for (std::size_t k = 0; k < nodes_.size(); ++k) names += (k == 0 ? "" : " and ") + nodes_[k]->name;
  return ", reading " + names + " at each output point";
}

}  // namespace hiera::engine::propose::recipes::kernels
