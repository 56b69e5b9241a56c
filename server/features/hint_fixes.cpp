#include "server/features/hint_fixes.h"

namespace hiera::server {

namespace lsp = protocol::lsp;

std::string fix_title(const TextDocument& document, const engine::analysis::Hint& hint) {
  if (hint.rule == "cuda.missing_restrict") {
    bool adds_const = false, adds_restrict = false;
    for (const auto& edit : hint.fix) {
      adds_const = adds_const || edit.new_text.find("const") != std::string::npos;
      adds_restrict = adds_restrict || edit.new_text.find("__restrict__") != std::string::npos;
    }
    std::string words = std::string(adds_const ? " const" : "") + (adds_restrict ? " __restrict__" : "");
    return "Declare `" + std::string(hint.span.text(document.text())) + "`" + words;
  }
  if (hint.rule == "cuda.shared_bank_conflict") return "Pad the shared array's rows by one element";
  if (hint.rule == "cuda.double_in_loop") return "Make the literal single precision (append f)";
  if (hint.rule == "torch.host_sync") return "Remove the print statement";
  return "Apply the fix for " + hint.rule;
}

lsp::WorkspaceEdit fix_edit(const TextDocument& document, const engine::analysis::Hint& hint, PositionEncoding encoding,
                            bool document_changes) {
  std::vector<lsp::TextEdit> edits;
  for (const auto& edit : hint.fix) {
    edits.push_back(lsp::TextEdit{{document.position_of(edit.span.begin, encoding), document.position_of(edit.span.end, encoding)},
                                  edit.new_text, std::nullopt});
  }
  lsp::WorkspaceEdit out;
  if (document_changes) {
    out.documentChanges = std::vector<lsp::TextDocumentEdit>{{{document.uri(), document.version()}, std::move(edits)}};
  } else {
    out.changes = std::vector<std::pair<std::string, std::vector<lsp::TextEdit>>>{{document.uri(), std::move(edits)}};
  }
  return out;
}

}  // namespace hiera::server
