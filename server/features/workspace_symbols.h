#pragma once
// workspace/symbol over the open documents: their kernels (Function) and
// nn.Module classes (Class) whose name matches the query, each with its
// document as containerName.
#include <string>
#include <string_view>
#include <vector>

#include "engine/facade/document_analysis.h"
#include "protocol/lsp_types.h"
#include "server/documents/position_encoding.h"
#include "server/documents/text_document.h"

namespace hiera::server {

// The query's characters appear in `name` in order, ignoring case (a
// subsequence, so every substring matches too: "sxp" finds "saxpy"). An empty
// query matches everything.
bool symbol_matches(std::string_view name, std::string_view query);

// One open document and the analysis made from `document`'s text.
struct AnalysedDocument {
  const TextDocument* document = nullptr;
  const engine::analysis::Analysis* analysis = nullptr;
};

// In the documents' order, each document's symbols in source order.
std::vector<protocol::lsp::SymbolInformation> workspace_symbols(const std::vector<AnalysedDocument>& documents,
                                                                std::string_view query, PositionEncoding encoding);

}  // namespace hiera::server
