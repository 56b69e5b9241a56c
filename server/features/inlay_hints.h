#pragma once
// Inlay hints (textDocument/inlayHint) from a document's analysis, for the
// lines of the requested range:
// - Python: at the end of each `forward` line with ops, what they cost: the
//   sum of the line's op estimates ("≈ 3.59 µs"); at the end of the
//   `def forward` line, the module's measured median once profiled
//   ("measured 0.61 µs"), else its summed estimate. "≈ ≥" when a loop or an
//   op without shapes makes the estimate a lower bound.
// - CUDA: at the end of each launch, its threads per block and, when the
//   block and any dynamic shared memory are constants, the occupancy the block
//   shape allows on the settings' GPU ("256 threads/block · occupancy ≤ 100%";
//   registers are not known before compiling, hence "≤").
// Every hint has kind Type (LSP 3.17 has Type and Parameter: these annotate
// what a line or a launch is, not a parameter's name), paddingLeft, and a
// plain-text tooltip saying where the figure comes from.
#include <vector>

#include "engine/facade/document_analysis.h"
#include "engine/facade/knowledge.h"
#include "protocol/lsp_types.h"
#include "server/documents/position_encoding.h"
#include "server/documents/text_document.h"
#include "server/features/estimate_target.h"
#include "server/state/measurement_store.h"

namespace hiera::server {

// `document` holds the text the analysis was made from; `gpu` is the
// settings' GPU (nullptr when unknown: no occupancy). Hints whose position
// lies in `range` (ends included), in document order.
std::vector<protocol::lsp::InlayHint> inlay_hints(const TextDocument& document, const engine::analysis::Analysis& analysis,
                                                  const protocol::lsp::Range& range, const MeasurementStore& measurements,
                                                  const EstimateTarget& target, const engine::knowledge::GpuSpec* gpu,
                                                  PositionEncoding encoding);

}  // namespace hiera::server
