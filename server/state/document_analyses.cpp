#include "server/state/document_analyses.h"

#include <algorithm>

#include "engine/analysis/line_index.h"
#include "engine/spec/annotations.h"

namespace hiera::server {

namespace analysis = engine::analysis;

namespace {

engine::SizeMap sizes_of(const engine::spec::Annotations& annotations) {
  engine::SizeMap sizes;
  for (const auto& clause : annotations.clauses) {
    if (clause.name != "interface.sizes" || !clause.value.is_object()) continue;
    for (const auto& [name, value] : clause.value.items()) {
      if (value.is_number_integer()) sizes[name] = value.get<std::int64_t>();
    }
  }
  return sizes;
}

}  // namespace

analysis::AnalysisFacts annotation_facts(std::string_view text, analysis::Language language,
                                         const analysis::Analysis& structure) {
  analysis::AnalysisFacts facts;
  if (language == analysis::Language::Python) {
    facts.sizes = sizes_of(engine::spec::parse_annotations(text, engine::spec::SourceLanguage::Python));
    return facts;
  }
  const analysis::LineIndex lines(text);
  int first_line = 1;
  for (const auto& function : structure.functions) {
    const int last_line = static_cast<int>(lines.line_of(function.span.end)) + 1;
    if (function.kind == analysis::CudaFunctionKind::Kernel) {
      const auto annotations =
          engine::spec::parse_annotations(text, engine::spec::SourceLanguage::Cuda, first_line, last_line);
      analysis::KernelWorkAnnotation work;
      work.sizes = sizes_of(annotations);
      for (const auto& clause : annotations.clauses) {
        if (clause.name == "performance.flops" && clause.value.is_string()) work.flops = clause.value.get<std::string>();
        if (clause.name == "performance.bytes" && clause.value.is_string()) work.bytes = clause.value.get<std::string>();
      }
      if (!work.flops.empty() || !work.bytes.empty()) facts.kernels[function.name] = work;
    }
    first_line = last_line + 1;
  }
  return facts;
}

std::shared_ptr<const DocumentAnalysis> DocumentAnalyses::of(const TextDocument& document) {
  auto language = analysis::language_for_id(document.language_id());
  if (!language) language = analysis::language_for_path(document.uri());
  if (!language) return nullptr;

  Entry previous;
  {
    std::lock_guard lock(mutex_);
    if (auto found = entries_.find(document.uri()); found != entries_.end()) {
      const auto& current = found->second.current;
      if (current->version == document.version() && current->analysis.language == *language &&
          current->text == document.text()) {
        return current;
      }
      previous = found->second;
    }
  }

  // Analysed outside the lock: documents do not wait on each other.
  const std::string& text = document.text();
  analysis::AnalysisFacts facts;
  std::shared_ptr<const analysis::Analysis> structure;
  if (text.find("hiera:") != std::string::npos) {  // no annotation, no facts: skip the structure pass
    if (*language == analysis::Language::Cuda) {
      structure = std::make_shared<analysis::Analysis>(analysis::analyze(text, *language, {}, previous.structure.get()));
    }
    facts = annotation_facts(text, *language, structure ? *structure : analysis::Analysis{});
  }
  auto result = std::make_shared<DocumentAnalysis>(DocumentAnalysis{
      document.uri(), document.version(), text,
      analysis::analyze(text, *language, facts, previous.current ? &previous.current->analysis : nullptr)});

  std::lock_guard lock(mutex_);
  auto& entry = entries_[document.uri()];
  // A job reading an older snapshot must not replace a newer analysis.
  if (!entry.current || entry.current->version <= result->version) entry = Entry{result, structure};
  return result;
}

void DocumentAnalyses::retain(const std::vector<std::string>& open) {
  std::lock_guard lock(mutex_);
  std::erase_if(entries_, [&](const auto& entry) { return std::find(open.begin(), open.end(), entry.first) == open.end(); });
}

std::size_t DocumentAnalyses::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace hiera::server
