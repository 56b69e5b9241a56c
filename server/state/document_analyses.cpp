#include "server/state/document_analyses.h"

#include <algorithm>

#include "engine/spec/annotation_facts.h"

namespace hiera::server {

namespace analysis = engine::analysis;

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
    facts = engine::spec::annotation_facts(text, *language, structure ? *structure : analysis::Analysis{});
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

std::shared_ptr<const DocumentAnalysis> DocumentAnalyses::latest(const TextDocument& document) const {
  auto language = analysis::language_for_id(document.language_id());
  if (!language) language = analysis::language_for_path(document.uri());
  if (!language) return nullptr;
  std::lock_guard lock(mutex_);
  auto found = entries_.find(document.uri());
  if (found == entries_.end() || found->second.current->analysis.language != *language) return nullptr;
  return found->second.current;
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
