#include "engine/analysis/hint_rules.h"

#include <stdexcept>

namespace hiera::engine::analysis {

const char* to_string(Severity severity) {
  switch (severity) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Information: return "information";
    case Severity::Hint: return "hint";
  }
  return "hint";
}

const std::vector<HintRule>& hint_rules() {
  static const std::vector<HintRule> rules = {
      {"cuda.uncoalesced_access", Severity::Warning, "s3_shared_memory_transpose",
       "The 32 threads of a warp differ in threadIdx.x. When threadIdx.x is not the unit-stride term of a global "
       "index, the warp's accesses fall in up to 32 different 32-byte sectors instead of a few contiguous ones, so "
       "most of every transfer is wasted. Make threadIdx.x index the fastest-varying dimension, or stage the data "
       "through a shared-memory tile and read it back transposed."},
      {"cuda.missing_restrict", Severity::Information, "s3_vectorized_16byte_access",
       "A pointer the kernel only reads can be declared `const T* __restrict__`. That promises the compiler no "
       "other pointer writes the same memory, so it may keep values in registers, reorder loads and use the "
       "read-only data path (LDG.CONSTANT); without it every store forces reloads. Only correct when the buffer "
       "really does not alias an output."},
      {"cuda.shared_bank_conflict", Severity::Warning, "s3_shared_memory_transpose",
       "Shared memory has 32 banks of 4 bytes. A 2-D tile whose rows are a multiple of 32 words puts a column in "
       "one bank, so a warp walking down a column (threadIdx.x choosing the row) serializes into 32 transactions; "
       "a stride of 2 words halves throughput, 32 words makes it 32 times slower. Padding each row by one element "
       "spreads a column across all banks."},
      {"cuda.atomic_in_loop", Severity::Warning, "s3_warp_shuffle_row_reduction",
       "An atomic in a loop makes every iteration of every thread contend for the same addresses; the updates "
       "serialize in the memory system. Accumulate in a register inside the loop, reduce across the warp with "
       "__shfl_down_sync (and across the block in shared memory), then issue one atomic per warp or block."},
      {"cuda.block_size", Severity::Warning, "s3_grid_stride_sm_count_grid",
       "Warps are 32 threads: a block size that is not a multiple of 32 leaves the last warp partly idle on every "
       "block, and a block of more than 1024 threads cannot be launched at all (cudaErrorInvalidConfiguration). "
       "128 to 512 threads, a multiple of 32, suits most kernels."},
      {"cuda.missing_bounds_check", Severity::Warning, "s3_grid_stride_sm_count_grid",
       "The grid is rounded up to whole blocks, so the last block usually has threads past the end of the data. A "
       "global index used without comparing it to the size reads and writes out of bounds whenever the size is "
       "not a multiple of the block size. Guard it (`if (i < n)`) or use a grid-stride loop."},
      {"cuda.grid_overrun", Severity::Warning, "s3_grid_stride_sm_count_grid",
       "A grid computed as (n + a) / b blocks rounds n up, so its last block has threads past n (a whole block "
       "more when a >= b, as (n + b) / b does when n is a multiple of b). That is safe only when the kernel "
       "compares its index with n; a kernel that does not reads and writes past the end of its buffers, which "
       "corrupts memory or fails with an illegal address. Check the index in the kernel, and round with "
       "(n + b - 1) / b."},
      {"cuda.double_in_loop", Severity::Warning, "",
       "Double-precision arithmetic runs at a fraction of the float rate on most GPUs (1/64 on GeForce and L40S, "
       "1/2 on H100/H200), and an unsuffixed literal such as 0.5 is a double that promotes the whole expression. "
       "Inside a loop that cost is paid on every iteration. Use float literals (0.5f) and float variables unless "
       "the algorithm needs double."},
      {"cuda.launch_in_loop", Severity::Information, "s3_fuse_small_kernels",
       "Each launch costs a few microseconds of fixed overhead. A loop that launches the same kernel on different "
       "slices (its loop variable in the arguments) can usually be one launch over a grid that covers every "
       "iteration, with the loop index taken from blockIdx.y or folded into the global index."},
      {"torch.fusable_elementwise_chain", Severity::Information, "s3_elementwise_fusion",
       "Every elementwise op reads and writes the whole tensor again. A chain of them, after a convolution or "
       "linear layer or on its own (a hand-written GELU, a scale-shift-activation), is memory-bound traffic that "
       "one fused epilogue or kernel (a library epilogue such as cuBLASLt's, torch.compile, or one custom "
       "kernel) does in a single pass."},
      {"torch.gemm_epilogue", Severity::Information, "s2_cublaslt_epilogue_bias_act",
       "A linear layer or matmul whose result goes straight into a ReLU or GELU, or into an add of another "
       "tensor (a residual or a bias), writes the product and reads it back for one more elementwise pass. "
       "cuBLASLt's epilogues (bias, ReLU, GELU, and D = A·B + C for the add) apply it while the tile is still in "
       "registers."},
      {"torch.float32_gemm", Severity::Information, "s2_split_tf32_gemm",
       "PyTorch leaves TF32 off for matrix products (torch.backends.cuda.matmul), so a float32 linear layer or "
       "matmul runs on the CUDA cores (about 51 TFLOP/s on an H100), and torch.compile calls the same float32 "
       "GEMM. Splitting each operand into two TF32 parts and multiplying them in one TF32 GEMM over three times K "
       "(3xTF32) keeps float32's accuracy on the tensor cores, in about half the time for a large product. Where "
       "the tolerance allows TF32's errors (about 1e-3), TF32 alone is cheaper still."},
      {"torch.foldable_batch_norm", Severity::Information, "s1_fold_batchnorm_into_conv",
       "In eval mode BatchNorm is y = (x - mean) / sqrt(var + eps) * gamma + beta with fixed statistics: a "
       "per-channel scale and shift. After a convolution or linear layer it folds into that layer's weight and "
       "bias (torch.nn.utils.fusion.fuse_conv_bn_eval), saving a kernel and a full pass over the activation. "
       "In training mode the statistics change every call and it does not fold."},
      {"torch.diagonal_matmul", Severity::Warning, "",
       "a @ torch.diag(d) materializes an n x n matrix that is zero off its diagonal and spends 2·m·n² flops on "
       "it. It only scales the columns of a: a * d (broadcast over the last dimension) gives the same result in "
       "one elementwise pass; torch.diag(d) @ b is d[:, None] * b."},
      {"torch.dropout_mode", Severity::Warning, "s1_remove_identity_ops",
       "F.dropout's `training` argument defaults to True, unlike nn.Dropout, which follows model.eval(): a "
       "functional dropout without training=self.training keeps zeroing activations at inference and costs a "
       "random mask per call. Dropout with p=0 or training=False returns its input unchanged and can go."},
      {"torch.handwritten_softmax", Severity::Information, "s1_fused_softmax_logsumexp",
       "exp(x) divided by its sum reads the tensor several times and overflows for large inputs unless the max is "
       "subtracted first. torch.softmax (or log_softmax / logsumexp) is one fused, numerically stable kernel."},
      {"torch.handwritten_attention", Severity::Information, "s1_scaled_dot_product_attention",
       "softmax(Q K^T / sqrt(d)) V written out materializes the full score matrix in memory. "
       "F.scaled_dot_product_attention picks a flash or memory-efficient kernel that never writes it, typically "
       "several times faster and with far less memory."},
      {"torch.handwritten_layer_norm", Severity::Information, "s1_fused_norm_ops",
       "A layer norm built from mean, var (or std) and sqrt reads the input three or four times and launches a "
       "kernel per step. F.layer_norm / nn.LayerNorm (or group_norm, rms_norm) does it in one fused pass with a "
       "stable variance."},
      {"torch.host_sync", Severity::Warning, "s1_remove_host_sync",
       ".item(), .cpu(), .tolist(), .numpy(), printing a tensor and torch.cuda.synchronize() wait for the GPU to "
       "finish everything queued so far. In forward this drains the queue on every call and exposes the latency "
       "of every launch that follows. Keep values on the device, or move the read out of forward."},
      {"torch.python_loop", Severity::Warning, "s1_batched_matmul_for_loop",
       "A Python loop over the batch or the elements of a tensor launches the loop body's kernels once per "
       "iteration, each on a tiny slice: launch overhead dominates and the GPU idles. Express the body over the "
       "whole tensor (broadcasting, batched matmul, torch.vmap) so it runs as a few large kernels."},
      {"torch.contiguous_copy", Severity::Information, "s1_avoid_contiguous_copies",
       ".contiguous() (after .permute() or .transpose(), or on its own) copies the whole tensor when it is not "
       "already contiguous: a full read and write of memory on every call. Most operators accept strided views; "
       "drop the copy, or choose the layout once (channels_last) instead of permuting in forward."},
  };
  return rules;
}

const HintRule& hint_rule(std::string_view id) {
  for (const auto& rule : hint_rules()) {
    if (rule.id == id) return rule;
  }
  throw std::logic_error("unknown hint rule '" + std::string(id) + "'");
}

Hint make_hint(std::string_view rule_id, Span span, std::string message, std::vector<TextEdit> fix) {
  const HintRule& rule = hint_rule(rule_id);
  return {std::string(rule.id), rule.severity, span, std::move(message), std::string(rule.explanation),
          std::string(rule.recipe), std::move(fix)};
}

}  // namespace hiera::engine::analysis
