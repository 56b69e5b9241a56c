#include "server/features/symbol_hover.h"

#include "engine/facade/quantity_text.h"
#include "server/features/analysis_symbols.h"
#include "engine/facade/cost_estimates.h"
#include "server/features/cost_text.h"

namespace hiera::server {

namespace analysis = engine::analysis;
namespace lsp = protocol::lsp;

namespace {

std::string shape_text(const analysis::Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// The estimate and measurement sections of a kernel or module.
std::string cost_sections(const std::optional<engine::facade::CostEstimate>& estimate, const std::string& no_estimate,
                          const std::optional<Measurement>& measured, const std::string& profile_title,
                          const EstimateTarget& target) {
  std::string out = estimate ? estimate_markdown(*estimate, target) : no_estimate;
  out += "\n\n";
  if (measured) {
    out += measurement_markdown(*measured);
  } else {
    out += "Not measured yet: run *" + profile_title + "*.\n";
  }
  return out;
}

std::string kernel_sections(const analysis::CudaFunction& kernel, const std::string& uri,
                            const MeasurementStore& measurements, const EstimateTarget& target) {
  const auto* roofline = target.roofline ? &*target.roofline : nullptr;
  return cost_sections(engine::facade::kernel_estimate(kernel, roofline),
                       "No estimate: the kernel's work is unknown (state it with `// hiera: flops=… bytes=…` and "
                       "`// hiera: size …`).",
                       measurements.get(uri, kernel.name), "Profile kernel " + kernel.name, target);
}

}  // namespace

std::optional<lsp::Hover> symbol_hover(const TextDocument& document, const analysis::Analysis& a, std::size_t offset,
                                       const MeasurementStore& measurements, const EstimateTarget& target,
                                       PositionEncoding encoding) {
  const auto found = hover_target(a, offset);
  if (!found) return std::nullopt;
  const auto* roofline = target.roofline ? &*target.roofline : nullptr;
  const std::string& uri = document.uri();
  std::string text;
  if (found->launch) {
    const auto& launch = *found->launch;
    text = "### launch of `" + launch.kernel + "`" + (launch.caller.empty() ? "" : " in `" + launch.caller + "`") + "\n\n";
    text += "grid `" + launch.grid + "` · block `" + launch.block + "`";
    if (launch.block_threads) text += " (" + std::to_string(*launch.block_threads) + " threads per block)";
    if (launch.shared_bytes != "0") text += " · shared memory `" + launch.shared_bytes + "`";
    if (launch.in_loop) text += " · in a loop";
    text += "\n\n";
    text += found->kernel ? kernel_sections(*found->kernel, uri, measurements, target)
                          : "`" + launch.kernel + "` is not defined in this file.\n";
  } else if (found->kernel) {
    text = "### kernel `" + found->kernel->name + "`\n\n" + kernel_sections(*found->kernel, uri, measurements, target);
  } else if (found->op) {
    const auto& op = *found->op;
    const auto& module = *found->module;
    text = "### `" + op.call + "` (" + op.op + ") in `" + module.name + ".forward`\n\n";
    if (op.shape) text += "result " + shape_text(*op.shape) + (op.dtype.empty() ? "" : " " + op.dtype);
    if (op.in_loop) text += std::string(op.shape ? " · " : "") + "in a loop: the work is per iteration";
    if (op.shape || op.in_loop) text += "\n\n";
    const auto estimate = engine::facade::op_estimate(op, roofline);
    text += estimate ? estimate_markdown(*estimate, target)
                     : "No estimate: the shapes of its inputs are unknown (KernelBench's `get_inputs` gives them).";
    text += "\n";
    if (const auto measured = measurements.get(uri, module.name); measured && measured->median_ms) {
      text += "\n`" + module.name + ".forward` as a whole: " + measured_summary(*measured) + "\n";
    }
  } else {
    const auto& module = *found->module;
    text = "### nn.Module `" + module.name + "`\n\n" +
           engine::plan::count_of(static_cast<long long>(module.layers.size()), "layer", "layers") + " · " +
           engine::plan::count_of(static_cast<long long>(module.ops.size()), "op", "ops") + " in forward\n\n";
    text += cost_sections(engine::facade::module_estimate(module, roofline),
                          "No estimate: the shapes of forward's inputs are unknown (KernelBench's `get_inputs` gives them).",
                          measurements.get(uri, module.name), "Profile " + module.name + ".forward", target);
  }
  return lsp::Hover{{lsp::MarkupKind::Markdown, text},
                    lsp::Range{document.position_of(found->span.begin, encoding), document.position_of(found->span.end, encoding)}};
}

}  // namespace hiera::server
