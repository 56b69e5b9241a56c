#pragma once
// A float32 2D convolution computed by a kernel of our own on TF32 tensor
// cores (s3_tf32_implicit_gemm_conv, knowledge/templates/
// conv2d_implicit_gemm_tf32.cu), with what follows it computed in the
// kernel's epilogue, so that the convolution's output never reaches memory:
//   - the elementwise group that takes its whole output (bias, activations,
//     per-channel scales, clamps), or
//   - a reduction over its channels (sum, mean, amax, amin, the values of
//     max / min over dim 1) and the elementwise group after that, or
//   - an optional 2x2 average pool and elementwise group, summed (or
//     averaged) over each image: per-tile sums, then one block per image
//     adds its tiles' in a fixed order (deterministic, no atomics).
// cuDNN writes the whole output and the ops after it read it back; with a
// reduction over channels that output is the largest tensor of the forward.
//
// TF32 where the reference's own convolution runs on TF32: cuDNN under
// PyTorch's default torch.backends.cudnn.allow_tf32, read at each call. With
// it off, the same kernel splits each operand into two TF32 parts and sums
// three products (3xTF32, float32 accuracy). Only for stride 1, dilation 1,
// one group, zero padding, up to 64 output channels (input channels padded
// to a multiple of 8, output channels to 16, with zero weights), and weights
// that fit in shared memory beside two input tiles. Offered as risky (its rounding is not cuDNN's): the proposer
// also offers the sets without it.
#include <set>
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"
#include "engine/propose/recipes/kernels/kernel_rewrites.h"
#include "engine/propose/recipes/replacement.h"

namespace hiera::engine::propose::recipes::kernels {

// The tile every such kernel computes: 8 rows x 32 columns of output
// positions, 16 x 2 positions and every output channel per warp, 256
// threads. Measured against 4 x 64 and 16 x 32 tiles on an H200
// (bench/results/2026-11-30-samples-fusion-tf32-conv-h200/tile-configs.json).
inline constexpr int kConvTileRows = 8;
inline constexpr int kConvTileColumns = 32;
inline constexpr int kConvWarpTiles = 2;
// Dynamic shared memory a block may have on sm_90: 227 KiB, less 1 KiB for
// the kernel's static shared memory (an image sum's per-warp totals).
inline constexpr int kConvSharedLimit = 232448 - 1024;

// One replacement per float32 conv2d not in `covered` whose output goes
// whole into an elementwise group or a reduction over channels; the ones
// tried and left alone land in `skipped` with the reason.
std::vector<Replacement> find_tensor_core_convs(const graph::OpGraph& graph, const std::set<std::string>& covered,
                                                const KernelRewriteOptions& options,
                                                std::vector<SkippedRewrite>& skipped);

}  // namespace hiera::engine::propose::recipes::kernels
