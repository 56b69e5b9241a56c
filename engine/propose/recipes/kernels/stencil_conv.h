#pragma once
// Convolution stencils: conv2d / conv3d with stride 1, no dilation and one
// input and one output channel per group (a single-channel conv, or a
// depthwise one with groups = channels) whose weight is a buffer (persistent
// or not) or a constant, i.e. fixed coefficients the constructor sets
// (F.conv3d(x, self.laplacian, padding=1)); an F.pad that only the conv reads
// folds in: zeros as padding, replicate / reflect / circular as the direct
// kernel's boundary mode (stencil_kernel.h, StencilBoundary). cuDNN is poor at one channel; this is a
// stencil (stencil_kernel.h). The capture carries shapes, not values, so the
// kernel is general: it reads the coefficients of its channel from the
// weight tensor on the device into registers once per block (a 3x3x3 stencil
// keeps 27 of them), skips the taps whose coefficient is zero (a
// block-uniform test), reads the padding as zeros outside the input, and
// keeps the neighbours in shared memory and registers as the slice form
// does. (A zero coefficient times an infinite input is NaN in torch, skipped here.)
// A conv with several outputs per group (a Sobel x / y pair per field) whose
// outputs only one elementwise group reads, as channel-strided slices
// conv[:, m::M], becomes one kernel that keeps the M sums in registers and
// writes the group's result. Recipes: s3_stencil3d_27pt (3D), s3_stencil2d_shared_tile (2D).
// Convolutions with learned weights (parameters) are left to cuDNN.
#include <set>
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"
#include "engine/propose/recipes/kernels/kernel_rewrites.h"
#include "engine/propose/recipes/replacement.h"

namespace hiera::engine::propose::recipes::kernels {

std::vector<Replacement> find_conv_stencils(const graph::OpGraph& graph, std::set<std::string>& covered,
                                            const KernelRewriteOptions& options, std::vector<SkippedRewrite>& skipped);

}  // namespace hiera::engine::propose::recipes::kernels
