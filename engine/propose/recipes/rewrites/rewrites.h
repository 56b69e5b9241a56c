#pragma once
// The knowledge proposer's S1 (PyTorch operator) and S2 (CUDA library through
// torch) rewrites: each finds the places in a captured op graph where one
// recipe applies and returns them as Replacements naming that recipe. Every
// rewrite is exact under the reference's dtypes (same values up to float
// reassociation) or marks itself `risky`; one file per rewrite.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/graph/op_graph.h"
#include "engine/knowledge/recipe.h"
#include "engine/propose/recipes/replacement.h"

namespace hiera::engine::propose::recipes::rewrites {

struct RewriteOptions {
  // numerics.allow of the contract ("tf32", "bf16", ...): what may change precision.
  std::vector<std::string> allowed_precisions;
};

using RewriteFunction = std::vector<Replacement> (*)(const graph::OpGraph&, const RewriteOptions&);

// --- S1: PyTorch operators ---------------------------------------------------
// Dropout with p = 0 or in eval mode, nn.Identity, x * 1, x + 0, x - 0, x / 1,
// view/reshape to the shape the tensor has, clone whose result is only read.
std::vector<Replacement> find_identity_ops(const graph::OpGraph&, const RewriteOptions&);
// .contiguous() on a contiguous tensor, casts to the dtype a tensor has,
// widening round trips (half -> float -> half).
std::vector<Replacement> find_redundant_casts(const graph::OpGraph&, const RewriteOptions&);
// sum/mean/amax/amin/prod/logsumexp over dimensions of size 1 -> a view.
std::vector<Replacement> find_singleton_reductions(const graph::OpGraph&, const RewriteOptions&);
// x.sum(a).sum(b) -> one sum over both dims (mean, amax, amin likewise).
std::vector<Replacement> find_reduction_chains(const graph::OpGraph&, const RewriteOptions&);
// x @ torch.diag(d) -> x * d, torch.diag(d) @ x -> d[:, None] * x, and
// products over an inner dimension of size 1 -> a broadcast multiply.
std::vector<Replacement> find_structured_matmuls(const graph::OpGraph&, const RewriteOptions&);
// x @ W.T + b -> F.linear(x, W, b); x @ W + b -> torch.addmm(b, x, W).
std::vector<Replacement> find_linear_bias(const graph::OpGraph&, const RewriteOptions&);
// softmax(q @ k^T * scale [+ mask]) @ v -> F.scaled_dot_product_attention.
std::vector<Replacement> find_attention(const graph::OpGraph&, const RewriteOptions&);
// x * sigmoid(x) -> F.silu, hand-written (tanh-)GELU -> F.gelu, log(1 + exp(x)) -> F.softplus.
std::vector<Replacement> find_fused_activations(const graph::OpGraph&, const RewriteOptions&);
// log(softmax(x)) -> log_softmax, log(sum(exp(x))) -> logsumexp.
std::vector<Replacement> find_fused_softmax_logsumexp(const graph::OpGraph&, const RewriteOptions&);
// A chain of 2D convolutions run in channels_last memory format.
std::vector<Replacement> find_channels_last(const graph::OpGraph&, const RewriteOptions&);

// --- S2: CUDA libraries through torch ---------------------------------------
// linear/addmm + ReLU or tanh-GELU -> torch._addmm_activation (cuBLASLt epilogue).
std::vector<Replacement> find_cublaslt_epilogues(const graph::OpGraph&, const RewriteOptions&);
// matmuls on consecutive slices of the same tensors stacked -> one bmm/baddbmm.
std::vector<Replacement> find_strided_batched_gemms(const graph::OpGraph&, const RewriteOptions&);
// Convolutions -> torch.backends.cudnn.benchmark for the call.
std::vector<Replacement> find_cudnn_benchmark(const graph::OpGraph&, const RewriteOptions&);
// float32 GEMMs/convolutions on TF32 tensor cores for the call, when tf32 is allowed.
std::vector<Replacement> find_tf32(const graph::OpGraph&, const RewriteOptions&);
// float32 GEMMs (linear, matmul, mm, bmm, addmm, product einsums) of 128 or more a side as 3xTF32
// (hiera_runner.split_tf32), when tf32 is not allowed: float32's accuracy on the tensor cores.
std::vector<Replacement> find_split_tf32(const graph::OpGraph&, const RewriteOptions&);
// A launch-bound forward (or one with no captured graph) in a CUDA graph.
std::vector<Replacement> find_cuda_graph(const graph::OpGraph&, const RewriteOptions&);

struct Rewrite {
  const char* name;        // "identity_ops"
  knowledge::Space space;  // the space it belongs to
  RewriteFunction find;
};
// Every S1 and S2 rewrite, in the order the proposer prefers them when they compete for nodes.
const std::vector<Rewrite>& catalog();

// A node-covering replacement (shared by the rewrites).
Replacement make_replacement(std::string recipe, knowledge::Space space, std::string description,
                             std::set<std::string> covered, std::string produces, std::vector<std::string> statements);

}  // namespace hiera::engine::propose::recipes::rewrites
