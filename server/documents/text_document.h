#pragma once
// One open document: immutable snapshot of its text and version. Edits make a
// new snapshot, so background jobs can keep reading the version they started on.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "protocol/lsp_types.h"
#include "server/documents/position_encoding.h"

namespace hiera::server {

class TextDocument {
 public:
  TextDocument(std::string uri, std::string language_id, std::int64_t version, std::string text);

  const std::string& uri() const { return uri_; }
  const std::string& language_id() const { return language_id_; }
  std::int64_t version() const { return version_; }
  const std::string& text() const { return text_; }
  std::size_t line_count() const { return line_starts_.size(); }

  std::size_t offset_of(const protocol::lsp::Position& position, PositionEncoding encoding) const;
  protocol::lsp::Position position_of(std::size_t offset, PositionEncoding encoding) const;
  // The text of one line without its line break; empty past the end.
  std::string_view line(std::size_t index) const;

  // Applies didChange content changes in order (each range is relative to the
  // text after the previous change) and returns the new snapshot.
  TextDocument with_changes(const std::vector<protocol::lsp::TextDocumentContentChangeEvent>& changes,
                            std::int64_t new_version, PositionEncoding encoding) const;

 private:
  std::string uri_;
  std::string language_id_;
  std::int64_t version_;
  std::string text_;
  std::vector<std::size_t> line_starts_;
};

}  // namespace hiera::server
