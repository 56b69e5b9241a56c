#include "engine/facade/cost_estimates.h"

#include <algorithm>
#include <vector>

#include "engine/analysis/torch_ops.h"
#include "engine/common/dtype_bytes.h"

namespace hiera::engine::facade {

namespace {

double output_bytes(const analysis::ForwardOp& op) {
  if (!op.shape) return 0;
  double n = 1;
  for (const auto d : *op.shape) n *= static_cast<double>(d);
  return n * dtype_bytes(op.dtype);
}

// A group of a module's ops that runs as one pass: its summed compute at each
// op's peak, and its bytes less the intermediates its fused ops kept on chip.
struct Group {
  double compute_seconds = 0, bytes = 0;
  bool any_work = false, timed = true;
};

}  // namespace

engine::GpuCeilings estimate_roofline(const knowledge::GpuSpec& gpu) {
  return engine::GpuCeilings{gpu.memory_bandwidth_gbs, gpu.peak_tflops, engine::kKernelLaunchUs, gpu.id};
}

std::optional<CostEstimate> work_estimate(const analysis::Work& work, const engine::GpuCeilings* roofline) {
  CostEstimate out;
  out.flops = work.flops;
  out.bytes = work.bytes;
  out.source = work.source;
  if (roofline) {
    if (const auto time = analysis::roofline_time(work, *roofline)) {
      out.seconds = time->seconds;
      out.speed_of_light_seconds = time->speed_of_light_seconds;
      out.memory_bound = time->memory_bound;
      out.launch_bound = time->launch_bound;
      out.tensor_float32 = time->peak_dtype == "tf32";
    }
  }
  return out;
}

std::optional<CostEstimate> kernel_estimate(const analysis::CudaFunction& kernel, const engine::GpuCeilings* roofline) {
  if (!kernel.work) return std::nullopt;
  return work_estimate(*kernel.work, roofline);
}

std::optional<CostEstimate> op_estimate(const analysis::ForwardOp& op, const engine::GpuCeilings* roofline) {
  if (!op.work) return std::nullopt;
  auto out = work_estimate(*op.work, roofline);
  out->lower_bound = op.in_loop;
  return out;
}

std::optional<CostEstimate> module_estimate(const analysis::TorchModule& module, const engine::GpuCeilings* roofline) {
  CostEstimate out;
  out.ops_total = module.ops.size();
  const std::size_t n = module.ops.size();
  std::vector<int> readers(n, 0);
  for (const auto& op : module.ops) {
    for (const int i : op.inputs) ++readers[static_cast<std::size_t>(i)];
  }
  // Phase 1: each op's group; an op joins the group of the one op it alone reads.
  std::vector<std::size_t> group_of(n);
  std::vector<Group> groups(n);
  double op_by_op = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const auto& op = module.ops[j];
    group_of[j] = j;
    if (!op.work) continue;
    ++out.ops_counted;
    out.flops += op.work->flops;
    out.source = op.work->source;
    out.lower_bound = out.lower_bound || op.in_loop;
    if (analysis::is_elementwise_op(op.op) && !op.in_loop) {
      for (const int input : op.inputs) {
        const auto& producer = module.ops[static_cast<std::size_t>(input)];
        if (readers[static_cast<std::size_t>(input)] != 1 || !producer.work || producer.work->bytes <= 0 || producer.in_loop) continue;
        const double kept = output_bytes(producer);
        if (kept <= 0) continue;
        group_of[j] = group_of[static_cast<std::size_t>(input)];
        groups[group_of[j]].bytes -= 2 * kept;  // written by the producer, read back by this op: neither happens
        ++out.fused_ops;
        break;
      }
    }
    Group& g = groups[group_of[j]];
    g.bytes += op.work->bytes;
    g.any_work = g.any_work || op.work->flops > 0 || op.work->bytes > 0;
    if (!roofline) continue;
    if (const auto t = analysis::roofline_time(*op.work, *roofline)) {
      g.compute_seconds += t->compute_seconds;
      op_by_op += t->seconds;
      out.tensor_float32 = out.tensor_float32 || (t->peak_dtype == "tf32" && op.work->flops > 0);
    } else {
      g.timed = false;
    }
  }
  if (out.ops_counted == 0) return std::nullopt;
  out.lower_bound = out.lower_bound || out.ops_counted < out.ops_total;
  // Phase 2: each group is one pass, no less than one launch.
  double memory_seconds = 0, compute_seconds = 0, launch_seconds = 0, speed_of_light = 0;
  bool timed = roofline != nullptr && roofline->bandwidth_gbs > 0;
  for (std::size_t j = 0; j < n; ++j) {
    if (group_of[j] != j || !module.ops[j].work) continue;
    const Group& g = groups[j];
    const double bytes = std::max(g.bytes, 0.0);
    out.bytes += bytes;
    if (!roofline) continue;
    timed = timed && g.timed;
    const double memory = bytes / (roofline->bandwidth_gbs * 1e9);
    const double floor = g.any_work ? roofline->launch_overhead_us * 1e-6 : 0.0;
    const double pass = std::max(memory, g.compute_seconds);
    speed_of_light += pass;
    if (floor > pass) launch_seconds += floor;
    else (memory >= g.compute_seconds ? memory_seconds : compute_seconds) += pass;
  }
  if (timed) {
    out.seconds = memory_seconds + compute_seconds + launch_seconds;
    out.speed_of_light_seconds = speed_of_light;
    out.memory_bound = memory_seconds >= compute_seconds;
    out.launch_bound = launch_seconds > memory_seconds && launch_seconds > compute_seconds;
    if (out.fused_ops > 0) out.op_by_op_seconds = op_by_op;
  }
  return out;
}

}  // namespace hiera::engine::facade
