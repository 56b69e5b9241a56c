#include "engine/facade/cost_estimates.h"

namespace hiera::engine::facade {

std::optional<CostEstimate> work_estimate(const analysis::Work& work, const analysis::Roofline* roofline) {
  CostEstimate out;
  out.flops = work.flops;
  out.bytes = work.bytes;
  out.source = work.source;
  if (roofline) {
    if (const auto time = analysis::roofline_time(work, *roofline)) {
      out.seconds = time->seconds;
      out.memory_bound = time->memory_bound;
    }
  }
  return out;
}

std::optional<CostEstimate> kernel_estimate(const analysis::CudaFunction& kernel, const analysis::Roofline* roofline) {
  if (!kernel.work) return std::nullopt;
  return work_estimate(*kernel.work, roofline);
}

std::optional<CostEstimate> op_estimate(const analysis::ForwardOp& op, const analysis::Roofline* roofline) {
  if (!op.work) return std::nullopt;
  auto out = work_estimate(*op.work, roofline);
  out->lower_bound = op.in_loop;
  return out;
}

std::optional<CostEstimate> module_estimate(const analysis::TorchModule& module, const analysis::Roofline* roofline) {
  CostEstimate out;
  out.ops_total = module.ops.size();
  double memory_seconds = 0, compute_seconds = 0;
  bool timed = roofline != nullptr;
  for (const auto& op : module.ops) {
    if (!op.work) continue;
    ++out.ops_counted;
    out.flops += op.work->flops;
    out.bytes += op.work->bytes;
    out.source = op.work->source;
    out.lower_bound = out.lower_bound || op.in_loop;
    if (!roofline) continue;
    if (const auto time = analysis::roofline_time(*op.work, *roofline)) {
      (time->memory_bound ? memory_seconds : compute_seconds) += time->seconds;
    } else {
      timed = false;
    }
  }
  if (out.ops_counted == 0) return std::nullopt;
  out.lower_bound = out.lower_bound || out.ops_counted < out.ops_total;
  if (timed) {
    out.seconds = memory_seconds + compute_seconds;
    out.memory_bound = memory_seconds >= compute_seconds;
  }
  return out;
}

}  // namespace hiera::engine::facade
