#pragma once
// Malformed `hiera:` annotations as LSP diagnostics: each problem
// engine/spec finds (annotation_problems.h), in the words `hiera optimize`
// uses, at the token it is about; severity Error (Profile and Optimize refuse
// the target until it is fixed), code "hiera.annotation", source "hiera".
#include <vector>

#include "engine/facade/document_analysis.h"
#include "protocol/lsp_types.h"
#include "server/documents/text_document.h"

namespace hiera::server {

inline constexpr const char* kAnnotationDiagnosticCode = "hiera.annotation";

// `document` is the version `analysis` was made from.
std::vector<protocol::lsp::Diagnostic> annotation_diagnostics(const TextDocument& document,
                                                              const engine::analysis::Analysis& analysis,
                                                              PositionEncoding encoding);

}  // namespace hiera::server
