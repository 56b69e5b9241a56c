#pragma once
// Elementwise fusion (s3_elementwise_fusion): each maximal group of
// elementwise nodes (elementwise_groups.h) with enough arithmetic becomes one
// kernel that reads every leaf once and writes the group's root once. Two
// kernels are generated from one element function: the 16-byte vectorised
// one (knowledge/templates/elementwise_vectorized.cu), launched when every
// full-size operand and the output are 16-byte aligned, and the scalar
// grid-stride one (elementwise_fusion.cu) otherwise.
#include <set>
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"
#include "engine/propose/recipes/kernels/elementwise_groups.h"
#include "engine/propose/recipes/kernels/kernel_rewrites.h"
#include "engine/propose/recipes/replacement.h"

namespace hiera::engine::propose::recipes::kernels {

// Below this many elements a kernel is 64-bit-indexed never; from 2^30 on it
// is, leaving room for run-time shapes up to twice the captured one.
constexpr long long kIndex64From = 1LL << 30;

// How a group's output and full-size operands lie in memory.
struct MemoryLayout {
  std::string format;               // a torch memory format ("torch.channels_last"); empty: contiguous
  std::vector<std::size_t> order;   // ProgramOptions::memory_order
  std::string kernel_suffix;        // keeps its kernels' names apart from the contiguous ones: "_nhwc"
};

// A per-channel bias the kernel adds to a leaf node's value: a convolution
// run without its bias, which then costs no pass over its output of its own
// (eager adds it in a separate kernel after cuDNN's).
struct LeafBias {
  std::string node;                 // the leaf node: "conv"
  std::string python;               // the bias tensor: "self.conv.bias"
  std::string dtype;
  std::vector<std::int64_t> shape;  // as it broadcasts against the node: [C, 1, 1]
};

// The replacement for one group; throws Unsupported (the reason) when the
// group cannot be one kernel. With a layout, the kernel reads and writes the
// group's index space in that memory order: full-size operands are converted
// to it (.contiguous(memory_format=...), free when they already are), and the
// output is allocated in it.
// With a bias, its node's value is read as node + bias (rounded as eager rounds it).
// With float_intermediates, half/bfloat16 intermediates stay in float and only
// what is stored is rounded (ProgramOptions::round_intermediates off): the
// kernel is named fused_<root>_f32 and the replacement is risky; Unsupported
// when no intermediate would differ (the variant would be the same kernel).
Replacement fuse_elementwise_group(const graph::OpGraph& graph, const ElementwiseGroup& group,
                                   const KernelRewriteOptions& options, const MemoryLayout& layout = {},
                                   const LeafBias* bias = nullptr, bool float_intermediates = false);

// Every group not touching `covered` with at least options.min_elementwise_ops
// computing ops; the others that were tried land in `skipped`. A half or
// bfloat16 chain comes as two variants: float intermediates first (risky, as
// torch.compile computes it), then eager's rounding after every op.
std::vector<Replacement> find_elementwise_fusions(const graph::OpGraph& graph, const std::set<std::string>& covered,
                                                  const KernelRewriteOptions& options,
                                                  std::vector<SkippedRewrite>& skipped);

}  // namespace hiera::engine::propose::recipes::kernels
