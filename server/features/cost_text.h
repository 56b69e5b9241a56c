#pragma once
// The words the editor shows for what a symbol costs: a code lens title, and
// the Markdown sections of a hover for an estimate and for a measurement.
#include <optional>
#include <string>

#include "engine/facade/cost_estimates.h"
#include "server/features/estimate_target.h"
#include "server/state/measurement_store.h"

namespace hiera::server {

// Measured: "1.23 ms on NVIDIA H200 · 41% of speed of light[ · verified 1.80× faster]";
// only optimized: "verified 1.80× faster"; else an estimate with a roofline
// time: "est. 2.62 µs on H200 (memory-bound)" ("est. ≥ …" for a lower bound);
// else "not measured yet".
std::string lens_title(const std::optional<Measurement>& measured, const std::optional<engine::facade::CostEstimate>& estimate,
                       const EstimateTarget& target);

// "**Estimate** on H200: 2.62 µs, memory-bound · 2.1 MFLOP, 12.6 MB (shapes from annotations)";
// without a roofline the work alone and the target's problem.
std::string estimate_markdown(const engine::facade::CostEstimate& estimate, const EstimateTarget& target);

// The measured line (median, p10–p90, % of speed of light, bottleneck, GPU,
// when), the per-kernel breakdown table, and the verified speed-up with its
// report; each part only when the record has it.
std::string measurement_markdown(const Measurement& measured);

// One line: "median 1.23 ms on NVIDIA H200"; "" when nothing was timed.
std::string measured_summary(const Measurement& measured);

}  // namespace hiera::server
