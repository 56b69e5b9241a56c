#pragma once
// Static hints as LSP diagnostics: the hint's range in the negotiated
// encoding, its severity (the user's override, else the rule's), code = rule
// id, source "hiera", the one-line message, the recipe as codeDescription and
// {"rule": id} as data.
#include <map>
#include <string>
#include <vector>

#include "engine/facade/document_analysis.h"
#include "protocol/lsp_types.h"
#include "server/documents/text_document.h"
#include "server/features/hint_settings.h"

namespace hiera::server {

// Recipe id -> the href of its knowledge file.
using RecipeLinks = std::map<std::string, std::string, std::less<>>;

// `document` is the version the hint was found in.
protocol::lsp::Diagnostic hint_diagnostic(const TextDocument& document, const engine::analysis::Hint& hint,
                                          const HintSettings& settings, PositionEncoding encoding,
                                          const RecipeLinks& recipes);

// The diagnostics of every hint the settings show, in source order.
std::vector<protocol::lsp::Diagnostic> hint_diagnostics(const TextDocument& document,
                                                        const engine::analysis::Analysis& analysis,
                                                        const HintSettings& settings, PositionEncoding encoding,
                                                        const RecipeLinks& recipes);

}  // namespace hiera::server
