#pragma once
// softmax and log_softmax (s3_fused_row_softmax) over the last dimension
// (a warp or block per row) or another one (a thread per strided column),
// fused with the elementwise ops before and after them (row_fusion.h):
// softmax(x * scale + mask) * y is one kernel, from
// knowledge/templates/row_logsumexp.cu with a per-element second sweep,
// max-subtracted as torch: exp(x - max) * (1 / sum), x - max - log(sum).
// Rows short enough for registers come first as a row_registers.cu variant.
#include <set>
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"
#include "engine/propose/recipes/kernels/kernel_rewrites.h"
#include "engine/propose/recipes/replacement.h"

namespace hiera::engine::propose::recipes::kernels {

std::vector<Replacement> find_row_softmax(const graph::OpGraph& graph, std::set<std::string>& covered,
                                          const KernelRewriteOptions& options, std::vector<SkippedRewrite>& skipped);

}  // namespace hiera::engine::propose::recipes::kernels
