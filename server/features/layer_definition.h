#pragma once
// Go to definition in forward (textDocument/definition): from a call of a
// layer (`self.fc` of `self.fc(x)`) to where __init__ assigns it
// (`self.fc = nn.Linear(...)`).
#include <cstddef>
#include <string_view>

#include "engine/facade/document_analysis.h"

namespace hiera::server {

// The layer whose `self.NAME` call covers `offset` (the byte just after it
// counts) in `text`, the text the analysis was made from; nullptr elsewhere.
const engine::analysis::TorchLayer* layer_at_call(const engine::analysis::Analysis& analysis, std::string_view text,
                                                  std::size_t offset);

}  // namespace hiera::server
