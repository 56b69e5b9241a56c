#pragma once
// What an elementwise group that computes a stencil reads from outside: its
// leaves (the taps' tensors, shifted slices or rolls of one input, and the
// input itself), and among them the point fields: tensors of the output's
// shape read at the output point, as a time step adds the field it advances
// or multiplies by a coefficient field (u + dt * k * laplacian(u)). Each
// field becomes an extra pointer parameter of the stencil kernel (field0,
// field1, ..., read through stencil_point_accessor), passed contiguous by the
// launch, whose assertion checks its dtype and shape.
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"
#include "engine/propose/recipes/kernels/elementwise_groups.h"
#include "engine/propose/recipes/kernels/elementwise_program.h"
#include "engine/propose/recipes/kernels/stencil_kernel.h"

namespace hiera::engine::propose::recipes::kernels {

// The group's tensor operands from outside (nodes by name, module tensors by
// their Python), in first-use order.
std::vector<std::string> stencil_group_leaves(const graph::OpGraph& graph, const ElementwiseGroup& group);

class StencilFields {
 public:
  StencilFields() = default;
  // `leaves` are the group's operands that are no taps: each must be a float
  // tensor node of `root`'s shape, else Unsupported (naming it).
  StencilFields(const graph::OpGraph& graph, const graph::Node& root, const std::vector<std::string>& leaves);

  bool empty() const { return nodes_.empty(); }
  // Adds the fields' parameters to `kernel` and binds each field in `program` to its accessor.
  void bind(StencilKernel& kernel, ElementwiseProgram& program) const;
  // The launch's extra arguments: ", v.contiguous()" per field.
  std::string arguments() const;
  // The assertion's conditions: "v.dtype == torch.float32 and v.shape == <shape>" per field, joined by " and ".
  std::string checks(const std::string& shape) const;
  // Its message's words: "float32 v of the output's shape" per field, joined by ", ".
  std::string expected() const;
  // The description's clause: ", reading v at each output point" (names joined with " and ").
  std::string described() const;

 private:
  std::vector<const graph::Node*> nodes_;
};

}  // namespace hiera::engine::propose::recipes::kernels
