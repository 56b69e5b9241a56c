#include "server/documents/document_store.h"

#include <utility>

#include "protocol/message.h"

namespace hiera::server {

void DocumentStore::open(const protocol::lsp::TextDocumentItem& item) {
  auto snapshot = std::make_shared<const TextDocument>(item.uri, item.languageId, item.version, item.text);
  Snapshot previous;  // declared before the lock: the old text is freed after unlocking
  std::lock_guard lock(mutex_);
  previous = std::exchange(documents_[item.uri], std::move(snapshot));  // re-open replaces
}

DocumentStore::Snapshot DocumentStore::change(const protocol::lsp::DidChangeTextDocumentParams& params,
                                              PositionEncoding encoding) {
  const std::string& uri = params.textDocument.uri;
  Snapshot previous;  // declared before the lock: the old text is freed after unlocking
  // Held across the edit so concurrent changes to one document cannot lose each
  // other's updates; readers only wait for one string rebuild.
  std::lock_guard lock(mutex_);
  const auto it = documents_.find(uri);
  if (it == documents_.end()) {
    throw protocol::RpcError(protocol::ErrorCode::InvalidParams, "document not open: " + uri);
  }
  // A non-increasing version is stored as given: the client is the authority on versions.
  auto updated = std::make_shared<const TextDocument>(
      it->second->with_changes(params.contentChanges, params.textDocument.version, encoding));
  previous = std::exchange(it->second, updated);
  return updated;
}

void DocumentStore::close(const std::string& uri) {
  Snapshot previous;  // declared before the lock: the old text is freed after unlocking
  std::lock_guard lock(mutex_);
  const auto it = documents_.find(uri);
  if (it == documents_.end()) return;
  previous = std::move(it->second);
  documents_.erase(it);
}

DocumentStore::Snapshot DocumentStore::get(const std::string& uri) const {
  std::lock_guard lock(mutex_);
  const auto it = documents_.find(uri);
  return it == documents_.end() ? nullptr : it->second;
}

std::vector<std::string> DocumentStore::uris() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> result;
  result.reserve(documents_.size());
  for (const auto& [uri, snapshot] : documents_) result.push_back(uri);
  return result;
}

}  // namespace hiera::server
