#include "server/features/annotation_diagnostics.h"

#include "engine/facade/annotation_contracts.h"

namespace hiera::server {

namespace lsp = protocol::lsp;

std::vector<lsp::Diagnostic> annotation_diagnostics(const TextDocument& document, const engine::analysis::Analysis& analysis,
                                                    PositionEncoding encoding) {
  std::vector<lsp::Diagnostic> out;
  for (const auto& problem : engine::spec::annotation_problems(document.text(), analysis)) {
    lsp::Diagnostic d;
    d.range = {document.position_of(problem.span.begin, encoding), document.position_of(problem.span.end, encoding)};
    d.severity = lsp::DiagnosticSeverity::Error;
    d.code = kAnnotationDiagnosticCode;
    d.source = "hiera";
    d.message = problem.message;
    if (!problem.target.empty()) d.data = nlohmann::json{{"kernel", problem.target}};
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace hiera::server
