#include "engine/facade/document_analysis.h"

#include "engine/spec/annotation_facts.h"

namespace hiera::engine::facade {

std::optional<analysis::Language> source_language(std::string_view language_id, std::string_view path) {
  if (auto language = analysis::language_for_id(language_id)) return language;
  return analysis::language_for_path(path);
}

SourceAnalysis analyze_source(const std::string& text, analysis::Language language, const analysis::Analysis* previous,
                              const analysis::Analysis* previous_structure) {
  SourceAnalysis out;
  analysis::AnalysisFacts facts;
  if (text.find("hiera:") != std::string::npos) {  // no annotation, no facts: skip the structure pass
    if (language == analysis::Language::Cuda) {
      out.structure = std::make_shared<analysis::Analysis>(analysis::analyze(text, language, {}, previous_structure));
    }
    facts = spec::annotation_facts(text, language, out.structure ? *out.structure : analysis::Analysis{});
  }
  out.analysis = analysis::analyze(text, language, facts, previous);
  return out;
}

}  // namespace hiera::engine::facade
