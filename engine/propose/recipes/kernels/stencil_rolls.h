#pragma once
// Periodic stencils written with torch.roll of one tensor, e.g. the 2D
// 5-point Laplacian u.roll(1, -1) + u.roll(-1, -1) + u.roll(1, -2) +
// u.roll(-1, -2) - 4 * u: an elementwise group whose tensor operands are rolls
// of one tensor u (torch.roll or u.roll, shifts and dims as ints or tuples,
// dims counted from either end, rolls of rolls), u itself, and other tensors
// of u's shape read at the output point (stencil_operands.h: the field a time
// step advances). roll(u, s, d)[i] = u[(i - s) mod n] along d: each roll is a
// tap at offset -s, read through the direct kernels' circular boundary
// (stencil_kernel.h), the group's arithmetic compiled in as in the slice form
// (stencil_slices.h). 2D when only the last two dimensions move, 3D when the
// last three; the dimensions before them are a batch (s3_stencil2d_direct_l1,
// s3_stencil3d_direct_l1). Rolls along a dimension before the last three, of
// the flattened tensor (no dims), or by more than the grid wraps once are
// skipped with their reason.
#include <set>
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"
#include "engine/propose/recipes/kernels/kernel_rewrites.h"
#include "engine/propose/recipes/replacement.h"

namespace hiera::engine::propose::recipes::kernels {

std::vector<Replacement> find_roll_stencils(const graph::OpGraph& graph, std::set<std::string>& covered,
                                            const KernelRewriteOptions& options, std::vector<SkippedRewrite>& skipped);

}  // namespace hiera::engine::propose::recipes::kernels
