#pragma once
// A convolution in channels_last with its elementwise epilogue fused into one
// kernel that works on the channels_last tensor directly
// (s3_channels_last_conv_epilogue): the convolution's input is converted once
// (a tiled transpose kernel, transpose_tiled.cu, for a contiguous NCHW input),
// cuDNN then runs its NHWC tensor-core kernels (TF32 for float32, as eager
// does under cudnn.allow_tf32) without the module's bias (conv_bias.h), and
// the epilogue kernel adds the bias and reads and writes NHWC memory, a
// per-channel operand at i % C. The output stays channels_last where only
// forward's return or layout-agnostic ops read it (the worker compares
// values and shapes, not strides: the contract's interface.layout), else it
// is made contiguous for the code after it.
//
// These are alternatives to the contiguous epilogue kernels of
// elementwise_fusion.h: they cover the same group plus the convolution, and
// the proposer offers the set with them first.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"
#include "engine/propose/recipes/kernels/elementwise_fusion.h"
#include "engine/propose/recipes/kernels/kernel_rewrites.h"
#include "engine/propose/recipes/replacement.h"

namespace hiera::engine::propose::recipes::kernels {

// channels_last for a rank-4 tensor (memory order N, H, W, C),
// channels_last_3d for rank 5 (N, D, H, W, C); throws Unsupported otherwise.
MemoryLayout channels_last_layout(std::size_t rank);

// The rank of the tensors of a convolution cuDNN runs in NHWC (NDHWC): 4 or 5; nothing for other nodes.
std::optional<std::size_t> convolution_rank(const graph::Node& node);

// Whether `node`'s result may stay channels_last: every user of it gives the
// same values whatever its input's memory format (and keeps it), or is forward's return.
bool users_layout_agnostic(const graph::OpGraph& graph, const graph::Node& node);

// A convolution's input converted for it to run in channels_last: the Python
// expression, and the transpose kernel and module-level helper it calls.
struct ChannelsLastInput {
  MemoryLayout layout;
  std::string python;       // _hiera_channels_last(x, "to_channels_last_float32", torch.channels_last)
  KernelSource transpose;   // transpose_tiled.cu
  std::string definition;   // def _hiera_channels_last(...)
};
// Throws Unsupported when `conv` is not such a convolution of a floating tensor.
ChannelsLastInput channels_last_input(const graph::OpGraph& graph, const graph::Node& conv,
                                      const KernelRewriteOptions& options);

// One replacement per 2D/3D (transposed) convolution not in `covered` whose
// every user is in one elementwise group (elementwise_groups.h over the nodes
// not in `covered`) with the convolution's shape; the ones tried and left
// alone land in `skipped`.
std::vector<Replacement> find_channels_last_epilogues(const graph::OpGraph& graph, const std::set<std::string>& covered,
                                                      const KernelRewriteOptions& options,
                                                      std::vector<SkippedRewrite>& skipped);

}  // namespace hiera::engine::propose::recipes::kernels
