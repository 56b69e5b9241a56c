#pragma once
// What a kernel, a forward op or a whole module costs before anything is
// measured: its work (flops, bytes) as analysis found it and, on a target
// GPU's roofline, its speed-of-light time and bound. Editor-neutral: the
// server shows them in lenses, hovers and inlay hints.
#include <cstddef>
#include <optional>
#include <string>

#include "engine/facade/document_analysis.h"
#include "engine/facade/estimates.h"

namespace hiera::engine::facade {

struct CostEstimate {
  double flops = 0;
  double bytes = 0;
  std::string source;            // where the shapes came from: "annotations", "get_inputs"
  std::optional<double> seconds;  // the roofline time; absent without a roofline
  bool memory_bound = false;
  // A module's estimate sums the ops whose work is known: a lower bound when
  // some are not, or when an op runs in a loop (its work is per iteration).
  std::size_t ops_counted = 0, ops_total = 0;
  bool lower_bound = false;
};

std::optional<CostEstimate> work_estimate(const analysis::Work& work, const analysis::Roofline* roofline);
std::optional<CostEstimate> kernel_estimate(const analysis::CudaFunction& kernel,
                                            const analysis::Roofline* roofline);
std::optional<CostEstimate> op_estimate(const analysis::ForwardOp& op, const analysis::Roofline* roofline);
// Memory-bound when the memory-bound ops take most of the summed time.
std::optional<CostEstimate> module_estimate(const analysis::TorchModule& module,
                                            const analysis::Roofline* roofline);

}  // namespace hiera::engine::facade
