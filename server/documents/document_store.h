#pragma once
// The open documents, shared between the message loop and background jobs.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "server/documents/text_document.h"

namespace hiera::server {

class DocumentStore {
 public:
  using Snapshot = std::shared_ptr<const TextDocument>;

  void open(const protocol::lsp::TextDocumentItem& item);
  // Throws protocol::RpcError(InvalidParams) if the document is not open.
  Snapshot change(const protocol::lsp::DidChangeTextDocumentParams& params, PositionEncoding encoding);
  void close(const std::string& uri);
  Snapshot get(const std::string& uri) const;  // null when not open
  std::vector<std::string> uris() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Snapshot> documents_;
};

}  // namespace hiera::server
