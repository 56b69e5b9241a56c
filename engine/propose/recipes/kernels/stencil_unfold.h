#pragma once
// A stencil spelled as im2col: F.unfold(x, k, padding=p) over [B, C, H, W]
// viewed as [B, C, k*k, L], weighted by a fixed tensor over the taps (a buffer
// or constant broadcast as [k*k, 1], or [C, k*k, 1] per channel), summed over
// the taps and viewed back as [B, C, H', W']. That is a depthwise conv with
// those coefficients and zero padding p, so it becomes the stencil kernels of
// stencil_kernel.h: the windows (k*k times the input) never reach memory. The
// kernel reads the coefficients from the tensor on the device, so whatever
// the buffer holds is used. Recipes: s3_stencil2d_vec4_direct (float32 rows
// of 4 floats, coefficients the same for every channel), s3_stencil2d_direct_l1.
#include <set>
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"
#include "engine/propose/recipes/kernels/kernel_rewrites.h"
#include "engine/propose/recipes/replacement.h"

namespace hiera::engine::propose::recipes::kernels {

std::vector<Replacement> find_unfold_stencils(const graph::OpGraph& graph, std::set<std::string>& covered,
                                              const KernelRewriteOptions& options, std::vector<SkippedRewrite>& skipped);

}  // namespace hiera::engine::propose::recipes::kernels
