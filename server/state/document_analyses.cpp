#include "server/state/document_analyses.h"

#include <algorithm>

namespace hiera::server {

std::shared_ptr<const DocumentAnalysis> DocumentAnalyses::of(const TextDocument& document) {
  const auto language = engine::facade::source_language(document.language_id(), document.uri());
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
  auto analysed = engine::facade::analyze_source(text, *language, previous.current ? &previous.current->analysis : nullptr,
                                                 previous.structure.get());
  auto result = std::make_shared<DocumentAnalysis>(
      DocumentAnalysis{document.uri(), document.version(), text, std::move(analysed.analysis)});
  auto structure = std::move(analysed.structure);

  std::lock_guard lock(mutex_);
  auto& entry = entries_[document.uri()];
  // A job reading an older snapshot must not replace a newer analysis.
  if (!entry.current || entry.current->version <= result->version) entry = Entry{result, structure};
  return result;
}

std::shared_ptr<const DocumentAnalysis> DocumentAnalyses::latest(const TextDocument& document) const {
  const auto language = engine::facade::source_language(document.language_id(), document.uri());
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
