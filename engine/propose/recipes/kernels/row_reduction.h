#pragma once
// Reductions (s3_warp_shuffle_row_reduction: sum, mean, amax, amin and the
// values of max / min over a dim; s3_fused_logsumexp: logsumexp) over
// adjacent dimensions, fused with the elementwise ops before and after them
// (row_fusion.h), from knowledge/templates/row_reduce.cu and row_logsumexp.cu:
// over the trailing dimensions one warp or block per row, over inner ones
// one thread per strided column. Reductions over dimensions that are not
// adjacent, with a dtype argument, whose indices are read, or with too little
// parallelism to fill the GPU are skipped with their reason.
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/graph/op_graph.h"
#include "engine/propose/recipes/kernels/kernel_rewrites.h"
#include "engine/propose/recipes/replacement.h"

namespace hiera::engine::propose::recipes::kernels {

// How a reduction of `kind` (sum, mean, amax, max, amin, min) combines
// values: its identity, the combination of a and b (NaN wins, as in torch's
// max and min), and its result from the accumulator `acc` of `count` values
// (a C expression). Nothing for other kinds.
struct ReductionFormula {
  std::string identity;
  std::string combine;
  std::string value;
};
std::optional<ReductionFormula> reduction_formula(std::string_view kind, const std::string& count);

// max(x, dim) and min(x, dim) give (values, indices): the node that takes the
// values, when nothing reads the indices; null otherwise.
const graph::Node* reduction_values(const graph::OpGraph& graph, const graph::Node& node);

std::vector<Replacement> find_row_reductions(const graph::OpGraph& graph, std::set<std::string>& covered,
                                             const KernelRewriteOptions& options, std::vector<SkippedRewrite>& skipped);

}  // namespace hiera::engine::propose::recipes::kernels
