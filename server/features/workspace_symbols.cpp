#include "server/features/workspace_symbols.h"

#include <cctype>

#include "server/features/analysis_symbols.h"

namespace hiera::server {

namespace lsp = protocol::lsp;

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// The last path segment of a URI: "saxpy.cu" of file:///w/saxpy.cu.
std::string file_name(const std::string& uri) {
  const auto slash = uri.rfind('/');
  return slash == std::string::npos ? uri : uri.substr(slash + 1);
}

}  // namespace

bool symbol_matches(std::string_view name, std::string_view query) {
  std::size_t next = 0;
  for (char c : name) {
    if (next < query.size() && lower(c) == lower(query[next])) ++next;
  }
  return next == query.size();
}

std::vector<lsp::SymbolInformation> workspace_symbols(const std::vector<AnalysedDocument>& documents, std::string_view query,
                                                      PositionEncoding encoding) {
  std::vector<lsp::SymbolInformation> out;
  for (const auto& [document, analysis] : documents) {
    for (const auto& symbol : cost_symbols(*analysis)) {
      if (!symbol_matches(symbol.name, query)) continue;
      out.push_back({symbol.name, symbol.kind == SymbolKind::Kernel ? lsp::SymbolKind::Function : lsp::SymbolKind::Class,
                     lsp::Location{document->uri(),
                                   {document->position_of(symbol.name_span.begin, encoding),
                                    document->position_of(symbol.name_span.end, encoding)}},
                     file_name(document->uri())});
    }
  }
  return out;
}

}  // namespace hiera::server
