#pragma once
// Layer norm (s3_welford_layer_norm), group norm and instance norm
// (s3_welford_group_norm), with and without affine, fused with the
// elementwise ops before and after them (row_fusion.h). All three normalise
// contiguous segments of a contiguous tensor (a row of the trailing dims, a
// (sample, group) run, a (sample, channel) plane), so one Welford kernel,
// knowledge/templates/welford_layernorm.cu, serves them (segments short
// enough for registers get a row_registers.cu variant first); the affine weight
// and bias are epilogue operands (per column for layer norm, per channel
// for the others). Batch norm with running statistics is elementwise
// (elementwise_fusion.h); in training mode it needs statistics across the
// batch and is left to torch, as is instance norm with running statistics.
#include <set>
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"
#include "engine/propose/recipes/kernels/kernel_rewrites.h"
#include "engine/propose/recipes/replacement.h"

namespace hiera::engine::propose::recipes::kernels {

std::vector<Replacement> find_norm_fusions(const graph::OpGraph& graph, std::set<std::string>& covered,
                                           const KernelRewriteOptions& options, std::vector<SkippedRewrite>& skipped);

}  // namespace hiera::engine::propose::recipes::kernels
