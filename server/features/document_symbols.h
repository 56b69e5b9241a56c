#pragma once
// The outline of a document (textDocument/documentSymbol, hierarchical),
// read from its analysis:
// - CUDA: kernels (Function) and device functions (Function, detail
//   "__device__"), and each host function that launches kernels (Function)
//   with its launch sites as children. A launch is kind Event: it is an
//   asynchronous occurrence on a stream, not an operator of the language
//   (Operator is what the Python ops are).
// - Python: nn.Module classes (Class) with `forward` (Method) and its ops
//   (Operator) as children.
// `detail` is the cost the hover and lens show: the measurement when the
// symbol was profiled, else the roofline estimate ("est. 2.62 µs on H200
// (memory-bound)"); a launch shows its kernel's, an op its own estimate.
#include <vector>

#include "engine/facade/document_analysis.h"
#include "protocol/lsp_types.h"
#include "server/documents/position_encoding.h"
#include "server/documents/text_document.h"
#include "server/features/estimate_target.h"
#include "server/state/measurement_store.h"

namespace hiera::server {

// `document` holds the text the analysis was made from (its spans point into it).
std::vector<protocol::lsp::DocumentSymbol> document_symbols(const TextDocument& document,
                                                            const engine::analysis::Analysis& analysis,
                                                            const MeasurementStore& measurements,
                                                            const EstimateTarget& target, PositionEncoding encoding);

}  // namespace hiera::server
