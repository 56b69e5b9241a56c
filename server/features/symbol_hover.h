#pragma once
// The hover over a kernel's name, a launch, a forward op or a module class's
// name: what it costs, as Markdown. The estimate on the target GPU (work,
// roofline time, bound) and, when the symbol was profiled, the measured
// median with its p10–p90 spread, % of speed of light, bottleneck and
// per-kernel breakdown, and the verified speed-up of an optimization.
#include <optional>

#include "engine/facade/document_analysis.h"
#include "protocol/lsp_types.h"
#include "server/documents/text_document.h"
#include "server/features/estimate_target.h"
#include "server/state/measurement_store.h"

namespace hiera::server {

// `document` is the version `analysis` was made from; nullopt when nothing
// costly is at `offset`.
std::optional<protocol::lsp::Hover> symbol_hover(const TextDocument& document, const engine::analysis::Analysis& analysis,
                                                 std::size_t offset, const MeasurementStore& measurements,
                                                 const EstimateTarget& target, PositionEncoding encoding);

}  // namespace hiera::server
