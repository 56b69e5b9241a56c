#pragma once
// S3 of the knowledge proposer: the groups of ops in the reference's op graph
// that one custom CUDA kernel should compute, each as a Replacement whose
// statements launch a kernel generated from a knowledge/templates file.
//
// What is matched, in this order (a node belongs to at most one rewrite):
//   1. stencils: elementwise combinations of shifted slices of one tensor
//      (the 7-point Laplacian x[2:,1:-1,1:-1] + ... - 6 * x[1:-1,1:-1,1:-1]),
//      coefficients compiled in (s3_stencil3d_7pt_register_z,
//      s3_stencil3d_27pt, s3_stencil2d_shared_tile), other fields of the
//      output's shape read at the output point; torch.roll combinations, on
//      the direct kernels' circular boundary (stencil_rolls.h); and
//      single-channel or depthwise conv2d / conv3d with stride 1 whose weight
//      is a buffer or constant, an F.pad before it (zeros, replicate,
//      reflect, circular) folded into the kernel: the coefficients the
//      capture read compiled in (only their nonzero taps), checked against
//      the buffer, else read on the device (stencil_conv.h); depthwise conv2d
//      with learned weights (nn.Conv2d(C, C, k, groups=C), F.conv2d of a
//      parameter), any stride and padding mode, as one register-blocked
//      kernel marked library_gap (s3_depthwise_conv2d, depthwise_conv.h; a
//      variant: it covers nothing, so the channels_last epilogue of the same
//      conv is offered too);
//   2. norms: layer, group and instance norm with the elementwise ops before
//      and after them (s3_welford_layer_norm, s3_welford_group_norm; segments
//      of 16384 values or more also with their statistics split across blocks,
//      s3_split_welford_norm);
//   3. softmax and log_softmax, and reductions (sum, mean, amax, amin, the
//      values of max / min, logsumexp) over adjacent dimensions, with the
//      elementwise ops before and after them (s3_fused_row_softmax,
//      s3_fused_logsumexp, s3_warp_shuffle_row_reduction); a reduction whose
//      one use spreads it back over its row (RMSNorm) joins that use in one
//      row-in-registers kernel (s3_row_in_registers);
//   4. the remaining elementwise chains and DAGs, batch norm with running
//      statistics included (s3_elementwise_fusion).
// Variants of one group (the same `produces`) may overlap, the preferred one
// first; the proposer's sets never take two together (replacement_sets.h):
// the 3D stencils' direct-read and shared-ring kernels; softmax and norms over
// contiguous rows short enough for registers (s3_row_in_registers, before
// their streaming kernel); and a 2D/3D
// convolution whose whole output goes into an elementwise group of step 4,
// run in channels_last with that group as one kernel on the NHWC tensor
// (s3_channels_last_conv_epilogue, channels_last_epilogue.h), before the
// group's contiguous kernel; likewise a 2D/3D convolution whose whole output
// goes into a group or instance norm or a reduction over its channels, run in
// channels_last with that op reading the NHWC tensor
// (s3_channels_last_conv_reduction, row_fusion.h), before the op's contiguous
// kernels; and before all of these, a float32 conv2d whose output goes
// whole into an elementwise group or a reduction over its channels, computed
// by our own TF32 implicit-GEMM kernel with those ops in its epilogue
// (s3_tf32_implicit_gemm_conv, tensor_core_conv.h). Other rewrites never overlap. A convolution
// module whose whole output one of these kernels reads runs without its bias,
// which the kernel adds (conv_bias.h): eager's separate bias pass is gone. Every kernel is a filled
// knowledge/templates file; what each needs is in its Replacement (the
// launch statements use the emitter's _kernel, _grid and nvrtc_runtime).
// Left to torch, with a reason in `skipped`: batch norm in training mode (its
// statistics span the batch), reductions over non-adjacent dimensions or
// whose indices are read, ops the expression builder cannot reproduce
// exactly (an active dropout, a rounding division), dtypes other than
// float32 / float16 / bfloat16.
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"
#include "engine/knowledge/knowledge_base.h"
#include "engine/propose/recipes/replacement.h"

namespace hiera::engine::propose::recipes::kernels {

struct KernelRewriteOptions {
  // Streaming multiprocessors of the target GPU: sizes the stencils' z chunks
  // so that the grid fills the device (launch grids of grid-stride kernels
  // come from the device at run time through `_grid`).
  int sm_count = 132;
  // Reduced precisions the emitted statements may name ("fp16", "bf16"): a
  // torch.float16 in a call is a downcast to the static checks unless allowed.
  // Kernels compute in float and store in the graph's own dtypes; an output
  // whose dtype no input carries needs its precision listed here.
  std::vector<std::string> allowed_precisions;
  // The code templates (knowledge/templates). Required.
  const knowledge::KnowledgeBase* knowledge = nullptr;
  // Elementwise groups with fewer computing ops than this are left to torch
  // (one op alone gains nothing from its own kernel).
  int min_elementwise_ops = 2;
};

// A group that looked like a kernel candidate but was left alone, and why.
struct SkippedRewrite {
  std::string node;    // the group's output node (or the op that stopped it)
  std::string reason;  // one sentence
};

struct KernelRewriteResult {
  // In graph order of `produces`; variants of one group adjacent, preferred first.
  std::vector<Replacement> replacements;
  std::vector<SkippedRewrite> skipped;
};

// Every kernel rewrite of `graph`, with the reasons for the groups left alone.
// Throws std::invalid_argument when options.knowledge is null or lacks a
// template the rewrites need.
KernelRewriteResult analyze_kernel_rewrites(const graph::OpGraph& graph, const KernelRewriteOptions& options);

// analyze_kernel_rewrites(...).replacements.
std::vector<Replacement> find_kernel_rewrites(const graph::OpGraph& graph, const KernelRewriteOptions& options);

}  // namespace hiera::engine::propose::recipes::kernels
