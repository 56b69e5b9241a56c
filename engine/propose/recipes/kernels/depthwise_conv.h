#pragma once
// Depthwise convolutions with learned weights: a conv2d or conv1d with one
// input and one output channel per group (nn.Conv2d(C, C, k, groups=C), a
// Conformer's or Mamba's nn.Conv1d(C, C, k, groups=C), or F.conv2d / F.conv1d
// with a parameter or a computed tensor as its weight) becomes one kernel
// (knowledge/templates/depthwise_conv2d.cu, recipe s3_depthwise_conv2d): a
// shared-memory tile with halo per block, each thread 4 x OUT_Y outputs with
// the channel's coefficients in registers (a conv1d: planes one row high,
// blocks of up to 128 threads along the row). Any stride, zero padding or the
// module's replicate / reflect / circular padding mode; float32, float16 and
// bfloat16, accumulated in float. cuDNN (and torch.compile, which calls it)
// runs these as a poor GEMM; the replacement is marked `library_gap` so that a
// model compiled by torch.compile can keep it (recipe_proposer.h).
// Fixed coefficients (a buffer) are the stencil kernels' (stencil_conv.h),
// which run first and cover their nodes; this one does not take its node
// into `covered`, so the channels_last conv + epilogue rewrite of the same
// conv stays a variant.
#include <set>
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"
#include "engine/propose/recipes/kernels/kernel_rewrites.h"
#include "engine/propose/recipes/replacement.h"

namespace hiera::engine::propose::recipes::kernels {

std::vector<Replacement> find_depthwise_convs(const graph::OpGraph& graph, const std::set<std::string>& covered,
                                              const KernelRewriteOptions& options, std::vector<SkippedRewrite>& skipped);

// The input tile's static shared memory at most (48 KiB without opting in).
inline constexpr int kDepthwiseMaxSharedBytes = 40 * 1024;

// The block shape for an output plane of oy_n x ox_n: 4 outputs in x and
// `out_y` rows a thread, at most 256 threads, shrunk until the input tile of
// that stride and kernel fits `max_shared_bytes` of float.
struct DepthwiseBlock {
  int threads_x = 1, threads_y = 1, out_y = 1;
  bool operator==(const DepthwiseBlock&) const = default;
};
DepthwiseBlock depthwise_block(std::int64_t oy_n, std::int64_t ox_n, int k_y, int k_x, int stride_y, int stride_x,
                               int max_shared_bytes = kDepthwiseMaxSharedBytes);

}  // namespace hiera::engine::propose::recipes::kernels
