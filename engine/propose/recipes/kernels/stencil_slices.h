#pragma once
// Stencils written with shifted slices of one tensor, e.g. the 3D 7-point
// Laplacian x[2:,1:-1,1:-1] + x[:-2,1:-1,1:-1] + ... - 6 * x[1:-1,1:-1,1:-1]:
// an elementwise group whose tensor operands are basic slices (step 1) of the
// same tensor, all of one shape, and other tensors of that shape read at the
// output point (stencil_operands.h: a time step's field, which rules out the
// vec4 kernels). Each slice becomes a tap at its start
// offsets, and the group's arithmetic, coefficients included, is compiled into
// the kernel as constants (stencil_kernel.h): s3_stencil3d_7pt_register_z /
// s3_stencil3d_27pt in 3D, s3_stencil2d_shared_tile in 2D (and 1D). Slices
// that differ in a dimension before the last three are skipped with their
// reason; slices with a step or a start counted from the end are no taps
// (the group stays an ordinary elementwise one).
#include <set>
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"
#include "engine/propose/recipes/kernels/kernel_rewrites.h"
#include "engine/propose/recipes/replacement.h"

namespace hiera::engine::propose::recipes::kernels {

std::vector<Replacement> find_slice_stencils(const graph::OpGraph& graph, std::set<std::string>& covered,
                                             const KernelRewriteOptions& options, std::vector<SkippedRewrite>& skipped);

}  // namespace hiera::engine::propose::recipes::kernels
