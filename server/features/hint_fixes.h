#pragma once
// The quick fix of a hint with a mechanical fix (engine/analysis gives the
// edits as byte spans): its title and the WorkspaceEdit, bound to the
// document version the hint was found in when the client takes
// documentChanges.
#include <string>

#include "engine/facade/hints.h"
#include "protocol/lsp_types.h"
#include "server/documents/text_document.h"

namespace hiera::server {

// "Declare `float* x` const __restrict__", "Remove the print statement", ...
std::string fix_title(const TextDocument& document, const engine::analysis::Hint& hint);

// `document` is the version the hint was found in; `document_changes`: the
// client's workspace.workspaceEdit.documentChanges capability.
protocol::lsp::WorkspaceEdit fix_edit(const TextDocument& document, const engine::analysis::Hint& hint,
                                      PositionEncoding encoding, bool document_changes);

}  // namespace hiera::server
