#pragma once
// The last source analysis of each open document, shared by the features of
// one server and safe across threads. A new version is analysed
// incrementally from the previous one (engine::facade::analyze_source reuses
// every kernel and module an edit did not touch), so features can ask on
// every request.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/facade/document_analysis.h"
#include "server/documents/text_document.h"

namespace hiera::server {

struct DocumentAnalysis {
  std::string uri;
  std::int64_t version = 0;
  std::string text;  // the text the spans point into
  engine::analysis::Analysis analysis;
};

class DocumentAnalyses {
 public:
  // The analysis of this version of `document`: the stored one when its text
  // is the same, else a new one computed from it. nullptr when the document
  // is neither CUDA nor Python (by languageId, else by the URI's extension).
  std::shared_ptr<const DocumentAnalysis> of(const TextDocument& document);
  // The newest analysis stored for `document`'s URI and language, of whatever
  // version; nullptr when none (a hover during a storm of edits answers from
  // it instead of analysing).
  std::shared_ptr<const DocumentAnalysis> latest(const TextDocument& document) const;
  // Forgets every document whose URI is not in `open` (the features have no
  // close notification; they call this with the store's URIs instead).
  void retain(const std::vector<std::string>& open);
  std::size_t size() const;

 private:
  struct Entry {
    std::shared_ptr<const DocumentAnalysis> current;
    // CUDA with annotations: the analysis without facts, which says where
    // each kernel's annotations may be; kept for its own incremental reuse.
    std::shared_ptr<const engine::analysis::Analysis> structure;
  };

  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
};

}  // namespace hiera::server
