#include "server/features/cost_text.h"

#include <filesystem>

#include "engine/facade/quantity_text.h"
#include "server/features/file_uri.h"

namespace hiera::server {

namespace plan = engine::plan;

namespace {

std::string bound_text(const engine::facade::CostEstimate& e) {
  return e.launch_bound ? "launch-bound" : e.memory_bound ? "memory-bound" : "compute-bound";
}

// What the estimate counts besides flops over bytes, in the hover's words.
std::string estimate_notes(const engine::facade::CostEstimate& e) {
  std::string out;
  if (e.op_by_op_seconds) {
    out += " · with " + plan::count_of(static_cast<long long>(e.fused_ops), "elementwise op", "elementwise ops") +
           " fused into the pass of the op before (" + plan::format_time_ms(*e.op_by_op_seconds * 1e3) + " op by op)";
  }
  if (e.tensor_float32) out += " · float32 convolutions and matmuls at the TF32 tensor-core peak, as torch's flags allow (cuDNN's default)";
  return out;
}

std::string on_gpu(const std::string& gpu) { return gpu.empty() ? "" : " on " + gpu; }

}  // namespace

std::string lens_title(const std::optional<Measurement>& measured, const std::optional<engine::facade::CostEstimate>& estimate,
                       const EstimateTarget& target) {
  const std::string verified =
      measured && measured->verified_speedup ? "verified " + plan::format_speedup(*measured->verified_speedup) + " faster" : "";
  if (measured && measured->median_ms) {
    std::string title = plan::format_time_ms(*measured->median_ms) + on_gpu(measured->gpu);
    if (measured->sol_fraction) title += " · " + plan::format_percent(*measured->sol_fraction) + " of speed of light";
    if (!verified.empty()) title += " · " + verified;
    return title;
  }
  if (!verified.empty()) return verified;
  if (estimate && estimate->seconds) {
    return std::string("est. ") + (estimate->lower_bound ? "≥ " : "") + plan::format_time_ms(*estimate->seconds * 1e3) +
           " on " + target.label + " (" + bound_text(*estimate) + (estimate->op_by_op_seconds ? ", fused" : "") + ")";
  }
  return "not measured yet";
}

std::string estimate_markdown(const engine::facade::CostEstimate& estimate, const EstimateTarget& target) {
  std::string work = plan::format_flops(estimate.flops) + ", " + plan::format_bytes(estimate.bytes);
  if (estimate.ops_total > 0) {
    work += " over " + std::to_string(estimate.ops_counted) + " of " + plan::count_of(static_cast<long long>(estimate.ops_total), "op", "ops");
  }
  if (!estimate.source.empty()) work += " (shapes from " + estimate.source + ")";
  if (!estimate.seconds) {
    return "**Estimate**: " + work + (target.problem.empty() ? "" : "; no roofline time: " + target.problem);
  }
  std::string out = "**Estimate** on " + target.label + ": " + (estimate.lower_bound ? "≥ " : "") +
                    plan::format_time_ms(*estimate.seconds * 1e3);
  if (estimate.launch_bound && estimate.speed_of_light_seconds) {
    // The work alone would take less than the launch it needs.
    out += ", launch-bound (at least " + plan::format_time_ms(engine::kKernelLaunchUs / 1e3) + " a launch; " +
           plan::format_time_ms(*estimate.speed_of_light_seconds * 1e3) + " at speed of light)";
  } else {
    out += " at speed of light, " + bound_text(estimate);
  }
  out += " · " + work + estimate_notes(estimate);
  if (estimate.lower_bound) out += "; ops in loops count once, ops without shapes not at all";
  return out;
}

std::string measured_summary(const Measurement& m) {
  if (!m.median_ms) return "";
  return "median " + plan::format_time_ms(*m.median_ms) + on_gpu(m.gpu);
}

std::string measurement_markdown(const Measurement& m) {
  std::string out;
  if (m.median_ms) {
    out += "**Measured**" + on_gpu(m.gpu) + ": median " + plan::format_time_ms(*m.median_ms);
    if (m.p10_ms && m.p90_ms) {
      out += " (p10–p90 " + plan::format_time_ms(*m.p10_ms) + " – " + plan::format_time_ms(*m.p90_ms) + ")";
    }
    if (m.sol_fraction) out += " · " + plan::format_percent(*m.sol_fraction) + " of speed of light";
    if (!m.bottleneck.empty()) out += " · " + m.bottleneck;
    if (!m.when.empty()) out += " · " + m.when;
    out += "\n";
  }
  if (!m.kernels.empty()) {
    out += "\n| kernel | time per call | share |\n|---|---:|---:|\n";
    for (const auto& k : m.kernels) {
      out += "| `" + k.name + "` | " + plan::format_time_ms(k.ms) + " | " + plan::format_percent(k.fraction) + " |\n";
    }
  }
  if (m.verified_speedup) {
    out += "\n**Optimized**: verified " + plan::format_speedup(*m.verified_speedup) + " faster";
    if (m.optimized_median_ms) out += " (median " + plan::format_time_ms(*m.optimized_median_ms) + ")";
    if (std::filesystem::path(m.report_path).is_absolute()) {
      out += " · report: [" + m.report_path + "](" + file_uri(m.report_path) + ")";
    } else if (!m.report_path.empty()) {
      out += " · report: `" + m.report_path + "`";
    }
    out += "\n";
  }
  return out;
}

}  // namespace hiera::server
