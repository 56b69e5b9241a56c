#include "server/features/hint_diagnostics.h"

namespace hiera::server {

namespace lsp = protocol::lsp;

lsp::Diagnostic hint_diagnostic(const TextDocument& document, const engine::analysis::Hint& hint,
                                const HintSettings& settings, PositionEncoding encoding, const RecipeLinks& recipes) {
  lsp::Diagnostic out;
  out.range = {document.position_of(hint.span.begin, encoding), document.position_of(hint.span.end, encoding)};
  out.severity = static_cast<lsp::DiagnosticSeverity>(settings.severity_of(hint));
  out.code = hint.rule;
  out.source = "hiera";
  out.message = hint.message;
  out.data = nlohmann::json{{"rule", hint.rule}};
  if (auto link = recipes.find(hint.recipe); link != recipes.end()) out.codeDescription = lsp::CodeDescription{link->second};
  return out;
}

std::vector<lsp::Diagnostic> hint_diagnostics(const TextDocument& document, const engine::analysis::Analysis& analysis,
                                              const HintSettings& settings, PositionEncoding encoding,
                                              const RecipeLinks& recipes) {
  std::vector<lsp::Diagnostic> out;
  for (const auto& hint : analysis.hints) {
    if (settings.shows(hint)) out.push_back(hint_diagnostic(document, hint, settings, encoding, recipes));
  }
  return out;
}

}  // namespace hiera::server
