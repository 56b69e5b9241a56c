#pragma once
// One kernel for an op that works on contiguous segments of its input (a row
// reduction, softmax, a norm) together with the elementwise group that
// computes its input (the prologue, evaluated by the kernel's input function
// at each element) and the one that consumes its output (the epilogue, in
// the output function): the prologue's and the op's results never reach
// memory. Segment = a row of the last dimensions, a GroupNorm group, an
// InstanceNorm plane; or, for reductions and softmax over a dimension that is
// not the last, the strided column (o, :, j) of an [outer, reduced, inner]
// view (the templates' _strided entry points, one thread per column). Shared
// by row_reduction, row_softmax and norm_fusion.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"
#include "engine/propose/recipes/kernels/elementwise_groups.h"
#include "engine/propose/recipes/kernels/elementwise_program.h"
#include "engine/propose/recipes/kernels/kernel_rewrites.h"
#include "engine/propose/recipes/replacement.h"

namespace hiera::engine::propose::recipes::kernels {

// What a row-in-registers kernel (knowledge/templates/row_registers.cu)
// computes from a row before its outputs: the values are its `stats`.
enum class RegisterStats { None = 0, Softmax = 1, Norm = 2, Reduction = 3 };

struct SegmentedOp {
  const graph::Node* node = nullptr;  // the reduction, softmax or norm
  std::string result;                 // the node that holds its value when not `node` (max(x, dim)[0]); else empty
  std::string input;                  // the node it reads
  std::string recipe;
  std::string template_name;          // row_reduce.cu, row_logsumexp.cu, welford_layernorm.cu
  std::string description;            // "softmax over the last dimension"
  bool per_element = false;           // the output has the input's shape (softmax, norms)
  // Segments and their length: captured, and in Python over the input's run-time shape (a torch.Size variable).
  // Strided: rows = outer, cols = the reduced extent, inner > 1 the elements after it.
  std::int64_t rows = 0, cols = 0, inner = 1;
  std::function<std::string(const std::string& shape)> rows_python, cols_python, inner_python;
  // Per row: the output's run-time shape from the input's.
  std::function<std::string(const std::string& shape)> output_shape_python;
  // The op's value in the output function, from the names the template gives
  // it (acc; x, row_max, row_sum; x, mean, rstd); it may load affine leaves.
  ElementwiseProgram::Custom value;
  std::map<std::string, std::string, std::less<>> template_values;  // identity, combine, per_element, eps, ...
  // The statistics row_registers.cu computes for this op; None: no row-in-registers variant.
  RegisterStats register_stats = RegisterStats::None;
  // A norm over groups of channels (group norm; instance norm: groups of
  // one): channels per group from the input's shape. Such a norm, and a
  // layer norm, with segments too long for one block each also gets the
  // split-statistics kernels (welford_split.cu, recipe s3_split_welford_norm);
  // with this set, they also read a convolution's channels_last output.
  std::function<std::string(const std::string& shape)> per_group_python;
};

// Threads per segment (32: one warp, several segments per block) and
// segments per block, for segments of about `cols` elements.
struct SegmentConfig {
  int segment_threads = 32;
  int rows_per_block = 8;
};
SegmentConfig segment_config(std::int64_t cols);
// The same for row_logsumexp.cu (logsumexp, softmax, log_softmax), whose
// threads load 8 elements at a time: long rows get about 32 elements a
// thread, 128 to 512 threads, and blocks of 512 threads hold several rows, so
// an SM keeps several rows' loads in flight (one 1024-thread block per row of
// 8192 left the H200 at 24% of its DRAM bound).
SegmentConfig online_softmax_config(std::int64_t cols);

// Values a thread keeps in registers: up to 32 when a warp holds a row, 16 when a block does.
inline constexpr std::int64_t kMaxWarpRowValues = 32;
inline constexpr std::int64_t kMaxBlockRowValues = 16;

// Threads per row and rows per block for a row of `cols` held in registers
// (row_registers.cu), or nothing when the row is too long for that.
std::optional<SegmentConfig> registers_config(std::int64_t cols);

// Norm segments from this length on are split across blocks (welford_split.cu)
// rather than given one block each: the one-block kernel's second sweep no
// longer hits the cache, and few long segments leave SMs idle.
inline constexpr std::int64_t kSplitSegmentFrom = 16384;

// The replacement: the op with its prologue and epilogue when they can join
// (falling back to fewer of them when one cannot), never touching `covered`;
// variants of it, preferred first:
//  - when the op reads a convolution's output alone: the convolution in
//    channels_last (channels_last_epilogue.h) and the op over that memory
//    (a reduction over the channels as contiguous rows of C; a group or
//    instance norm through the split-statistics kernels);
//  - the row held in registers (recipe s3_row_in_registers) when
//    op.register_stats names its statistics, the rows are contiguous and
//    short enough;
//  - for norm segments of kSplitSegmentFrom or more, the split-statistics kernels;
//  - the streaming kernel of op.template_name.
// Throws Unsupported when not even the op alone can be a kernel.
std::vector<Replacement> fuse_segmented_op(const graph::OpGraph& graph, const std::vector<ElementwiseGroup>& groups,
                              const std::set<std::string>& covered, const SegmentedOp& op,
                              const KernelRewriteOptions& options);

// Dimension arguments as non-negative indices of a rank-`rank` tensor, sorted.
std::vector<std::int64_t> normalized_dims(std::vector<std::int64_t> dims, std::size_t rank);

// The product of shape[from:to].
std::int64_t product(const std::vector<std::int64_t>& shape, std::size_t from, std::size_t to);

}  // namespace hiera::engine::propose::recipes::kernels
