#include "engine/propose/recipes/kernels/kernel_rewrites.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "engine/propose/recipes/kernels/channels_last_epilogue.h"
#include "engine/propose/recipes/kernels/depthwise_conv.h"
#include "engine/propose/recipes/kernels/elementwise_fusion.h"
#include "engine/propose/recipes/kernels/norm_fusion.h"
#include "engine/propose/recipes/kernels/row_reduction.h"
#include "engine/propose/recipes/kernels/row_softmax.h"
#include "engine/propose/recipes/kernels/stencil_conv.h"
#include "engine/propose/recipes/kernels/stencil_rolls.h"
#include "engine/propose/recipes/kernels/stencil_slices.h"
#include "engine/propose/recipes/kernels/stencil_unfold.h"
#include "engine/propose/recipes/kernels/tensor_core_conv.h"

namespace hiera::engine::propose::recipes::kernels {

KernelRewriteResult analyze_kernel_rewrites(const graph::OpGraph& graph, const KernelRewriteOptions& options) {
  if (!options.knowledge) throw std::invalid_argument("find_kernel_rewrites needs options.knowledge for its templates");
  KernelRewriteResult result;
  if (!graph.captured()) return result;
  std::set<std::string> covered;
  auto take = [&](std::vector<Replacement> found) {
    for (auto& replacement : found) result.replacements.push_back(std::move(replacement));
  };
  // Most specific first: a stencil's slices and arithmetic, then the ops that
  // anchor a prologue and an epilogue, then whatever elementwise work is left.
  take(kernels::find_slice_stencils(graph, covered, options, result.skipped));
  take(kernels::find_roll_stencils(graph, covered, options, result.skipped));
  take(kernels::find_conv_stencils(graph, covered, options, result.skipped));
  take(kernels::find_unfold_stencils(graph, covered, options, result.skipped));
  // Learned depthwise convs: a variant beside the channels_last epilogue of the same conv (it covers nothing here).
  take(kernels::find_depthwise_convs(graph, covered, options, result.skipped));
  // Variants of the norm, reduction and elementwise rewrites below (the same
  // nodes with their convolution, on tensor cores): first, so that the stable sort keeps them ahead.
  take(kernels::find_tensor_core_convs(graph, covered, options, result.skipped));
  take(kernels::find_norm_fusions(graph, covered, options, result.skipped));
  take(kernels::find_row_softmax(graph, covered, options, result.skipped));
  take(kernels::find_row_reductions(graph, covered, options, result.skipped));
  // Variants of the elementwise groups below (the same groups, with their
  // convolution): first, so that the stable sort keeps them ahead.
  take(kernels::find_channels_last_epilogues(graph, covered, options, result.skipped));
  take(kernels::find_elementwise_fusions(graph, covered, options, result.skipped));

  std::map<std::string, std::size_t> order;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) order[graph.nodes[i].name] = i;
  std::stable_sort(result.replacements.begin(), result.replacements.end(),
                   [&](const Replacement& a, const Replacement& b) { return order[a.produces] < order[b.produces]; });
  return result;
}

std::vector<Replacement> find_kernel_rewrites(const graph::OpGraph& graph, const KernelRewriteOptions& options) {
  return analyze_kernel_rewrites(graph, options).replacements;
}

}  // namespace hiera::engine::propose::recipes::kernels
