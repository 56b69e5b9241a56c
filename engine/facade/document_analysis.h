#pragma once
// A source document's analysis as the front ends ask for it (the LSP server on
// every version, `hiera analyze` once): the findings and hints of
// engine/analysis with the facts the document's `hiera:` annotations state
// (engine/spec). The analysis vocabulary (Analysis, Language, the findings) is
// re-exported from engine/analysis, as rust-analyzer's `ide` re-exports
// `ide_db` types, so a front end includes only the facade.
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "engine/analysis/analysis.h"

namespace hiera::engine::facade {

struct SourceAnalysis {
  analysis::Analysis analysis;
  // CUDA with annotations: the analysis without facts, which says where each
  // kernel's annotations may be; kept for the next version's incremental reuse.
  std::shared_ptr<const analysis::Analysis> structure;
};

// The language of a document: by its languageId ("cuda", "python"), else by
// its path's extension (.cu, .cuh, .py); nullopt when neither says.
std::optional<analysis::Language> source_language(std::string_view language_id, std::string_view path);

// `previous` and `previous_structure` (either may be null): an earlier
// version's analysis and structure, whose untouched kernels and modules are
// reused. A text without "hiera:" has no facts and skips the structure pass.
SourceAnalysis analyze_source(const std::string& text, analysis::Language language,
                              const analysis::Analysis* previous = nullptr,
                              const analysis::Analysis* previous_structure = nullptr);

}  // namespace hiera::engine::facade
