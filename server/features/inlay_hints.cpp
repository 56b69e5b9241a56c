#include "server/features/inlay_hints.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>

#include "engine/facade/quantity_text.h"
#include "engine/facade/cost_estimates.h"
#include "server/features/launch_occupancy.h"

namespace hiera::server {

namespace analysis = engine::analysis;
namespace lsp = protocol::lsp;
namespace plan = engine::plan;

namespace {

bool before(const lsp::Position& a, const lsp::Position& b) {
  return a.line < b.line || (a.line == b.line && a.character < b.character);
}

std::string bound_text(bool memory_bound, bool launch_bound = false) {
  return launch_bound ? "launch-bound" : memory_bound ? "memory-bound" : "compute-bound";
}

class Hints {
 public:
  Hints(const TextDocument& document, const lsp::Range& range, PositionEncoding encoding)
      : document_(document), range_(range), encoding_(encoding) {}

  // The end of the line holding `offset`, before its line break.
  lsp::Position line_end(std::size_t offset) const {
    const auto line = document_.position_of(offset, encoding_).line;
    const auto text = document_.line(static_cast<std::size_t>(line));
    const auto start = document_.offset_of({line, 0}, encoding_);
    return document_.position_of(start + text.size(), encoding_);
  }

  void add(const lsp::Position& at, std::string label, std::string tooltip) {
    if (before(at, range_.start) || before(range_.end, at)) return;
    out_.push_back({at, std::move(label), lsp::InlayHintKind::Type, std::move(tooltip), true, false});
  }

  std::vector<lsp::InlayHint> take() {
    std::stable_sort(out_.begin(), out_.end(), [](const auto& l, const auto& r) { return before(l.position, r.position); });
    return std::move(out_);
  }

 private:
  const TextDocument& document_;
  const lsp::Range& range_;
  PositionEncoding encoding_;
  std::vector<lsp::InlayHint> out_;
};

// A constant byte count: digits only ("0", "4096").
std::optional<std::int64_t> constant_bytes(const std::string& expression) {
  if (expression.empty() || expression.size() > 12 ||
      !std::all_of(expression.begin(), expression.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    return std::nullopt;
  }
  return std::stoll(expression);
}

void launch_hints(Hints& hints, const analysis::Analysis& a, const engine::knowledge::GpuSpec* gpu, const EstimateTarget& target) {
  for (const auto& launch : a.launches) {
    if (!launch.block_threads) continue;
    const auto threads = *launch.block_threads;
    std::string label = std::to_string(threads) + " threads/block";
    std::string tooltip = "The block (" + launch.block + ") has " + std::to_string(threads) + " threads";
    const auto shared = constant_bytes(launch.shared_bytes);
    if (threads > 1024) {
      label += " · over the limit of 1024";
      tooltip += "; CUDA refuses blocks of more than 1024 threads";
    } else if (const auto occupancy = gpu && shared ? launch_occupancy(*gpu, threads, *shared) : std::nullopt) {
      label += " · occupancy ≤ " + plan::format_percent(occupancy->fraction);
      tooltip += ". Estimated occupancy on " + target.label + ": at most " + std::to_string(occupancy->blocks_per_sm) +
                 " blocks of " + plan::count_of(occupancy->warps_per_block, "warp", "warps") + " per SM (" +
                 std::to_string(occupancy->blocks_per_sm * occupancy->warps_per_block) + " of " +
                 std::to_string(occupancy->max_warps_per_sm) + " warps), limited by " + occupancy->limited_by +
                 "; registers are not counted";
    }
    hints.add(hints.line_end(launch.span.end), std::move(label), std::move(tooltip));
  }
}

void forward_hints(Hints& hints, const analysis::Analysis& a, const MeasurementStore& measurements, const EstimateTarget& target,
                   const TextDocument& document) {
  const auto* roofline = target.roofline ? &*target.roofline : nullptr;
  for (const auto& m : a.modules) {
    if (!m.forward) continue;
    // The def line: the module as a whole.
    const auto measured = measurements.get(document.uri(), m.name);
    if (measured && measured->median_ms) {
      hints.add(hints.line_end(m.forward->begin), "measured " + plan::format_time_ms(*measured->median_ms),
                m.name + ".forward as profiled: median " + plan::format_time_ms(*measured->median_ms) +
                    (measured->gpu.empty() ? "" : " on " + measured->gpu));
    } else if (const auto estimate = engine::facade::module_estimate(m, roofline); estimate && estimate->seconds) {
      hints.add(hints.line_end(m.forward->begin),
                std::string("≈ ") + (estimate->lower_bound ? "≥ " : "") + plan::format_time_ms(*estimate->seconds * 1e3),
                m.name + ".forward estimated on " + target.label + " (speed of light, at least one launch a pass), " +
                    bound_text(estimate->memory_bound, estimate->launch_bound) + ": " +
                    std::to_string(estimate->ops_counted) + " of " +
                    plan::count_of(static_cast<long long>(estimate->ops_total), "op", "ops") +
                    (estimate->op_by_op_seconds
                         ? ", " + plan::count_of(static_cast<long long>(estimate->fused_ops), "elementwise op", "elementwise ops") +
                               " fused into the pass of the op before (" +
                               plan::format_time_ms(*estimate->op_by_op_seconds * 1e3) + " op by op)"
                         : std::string()));
    }
    // Each line with ops: the sum of their estimates, by the line the op ends on.
    struct Line {
      double seconds = 0;
      bool lower_bound = false;
      double memory_seconds = 0, launch_seconds = 0;
      std::vector<std::string> ops;
      std::size_t end = 0;
    };
    std::map<std::int64_t, Line> lines;
    for (const auto& op : m.ops) {
      const auto estimate = engine::facade::op_estimate(op, roofline);
      const auto end = hints.line_end(op.span.end);
      auto& line = lines[end.line];
      line.end = op.span.end;
      if (!estimate || !estimate->seconds) {
        line.lower_bound = true;
        line.ops.push_back(op.op + " (no estimate)");
        continue;
      }
      line.seconds += *estimate->seconds;
      if (estimate->launch_bound) line.launch_seconds += *estimate->seconds;
      else if (estimate->memory_bound) line.memory_seconds += *estimate->seconds;
      line.lower_bound = line.lower_bound || estimate->lower_bound;
      line.ops.push_back(op.op + " " + plan::format_time_ms(*estimate->seconds * 1e3));
    }
    for (const auto& [number, line] : lines) {
      if (line.seconds <= 0) continue;
      // Op by op, as eager PyTorch runs them: each op's speed of light, no less than one launch.
      const double compute_seconds = line.seconds - line.memory_seconds - line.launch_seconds;
      std::string tooltip = "Estimate on " + target.label + " op by op (speed of light, at least one launch each), " +
                            bound_text(line.memory_seconds >= compute_seconds,
                                       line.launch_seconds > line.memory_seconds && line.launch_seconds > compute_seconds) + ": ";
      for (std::size_t i = 0; i < line.ops.size(); ++i) tooltip += (i ? " + " : "") + line.ops[i];
      if (line.lower_bound) tooltip += " (a lower bound: ops in loops count once, ops without shapes not at all)";
      hints.add(hints.line_end(line.end),
                std::string("≈ ") + (line.lower_bound ? "≥ " : "") + plan::format_time_ms(line.seconds * 1e3), std::move(tooltip));
    }
  }
}

}  // namespace

std::vector<lsp::InlayHint> inlay_hints(const TextDocument& document, const analysis::Analysis& a, const lsp::Range& range,
                                        const MeasurementStore& measurements, const EstimateTarget& target,
                                        const engine::knowledge::GpuSpec* gpu, PositionEncoding encoding) {
  Hints hints(document, range, encoding);
  if (a.language == analysis::Language::Cuda) {
    launch_hints(hints, a, gpu, target);
  } else {
    forward_hints(hints, a, measurements, target, document);
  }
  return hints.take();
}

}  // namespace hiera::server
