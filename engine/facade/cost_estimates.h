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
#include "engine/knowledge/gpu_spec.h"

namespace hiera::engine::facade {

struct CostEstimate {
  double flops = 0;
  double bytes = 0;              // a module's: with the fused ops' intermediates left out
  std::string source;            // where the shapes came from: "annotations", "get_inputs"
  // The roofline time, no less than a launch per kernel (or per fused group of
  // a module's ops); absent without a roofline.
  std::optional<double> seconds;
  std::optional<double> speed_of_light_seconds;  // the same without the launch floor
  bool memory_bound = false;
  bool launch_bound = false;     // the launch floor, not the work, sets most of `seconds`
  // A module's elementwise ops that run in their producer's pass (the ones hiera
  // fuses), and the time op by op, one launch each, when that differs.
  std::size_t fused_ops = 0;
  std::optional<double> op_by_op_seconds;
  bool tensor_float32 = false;   // float32 convolutions or matmuls held against the TF32 peak
  // A module's estimate sums the ops whose work is known: a lower bound when
  // some are not, or when an op runs in a loop (its work is per iteration).
  std::size_t ops_counted = 0, ops_total = 0;
  bool lower_bound = false;
};

// A GPU's roofline for the estimates: its datasheet ceilings and a launch floor
// of engine::kKernelLaunchUs.
engine::GpuCeilings estimate_roofline(const knowledge::GpuSpec& gpu);

std::optional<CostEstimate> work_estimate(const analysis::Work& work, const engine::GpuCeilings* roofline);
std::optional<CostEstimate> kernel_estimate(const analysis::CudaFunction& kernel,
                                            const engine::GpuCeilings* roofline);
std::optional<CostEstimate> op_estimate(const analysis::ForwardOp& op, const engine::GpuCeilings* roofline);
// A module: each elementwise op that is the only reader of the op it reads
// joins that op's group (an epilogue or a fused chain), which moves no
// intermediate through memory and launches once. Memory-bound when the
// memory-bound groups take most of the summed time.
std::optional<CostEstimate> module_estimate(const analysis::TorchModule& module,
                                            const engine::GpuCeilings* roofline);

}  // namespace hiera::engine::facade
