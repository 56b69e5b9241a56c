#include "server/documents/text_document.h"

#include <string_view>
#include <utility>

#include "protocol/message.h"

namespace hiera::server {
namespace {

bool is_after(const protocol::lsp::Position& a, const protocol::lsp::Position& b) {
  return a.line > b.line || (a.line == b.line && a.character > b.character);
}

std::string describe(const protocol::lsp::Position& position) {
  return std::to_string(position.line) + ":" + std::to_string(position.character);
}

}  // namespace

TextDocument::TextDocument(std::string uri, std::string language_id, std::int64_t version, std::string text)
    : uri_(std::move(uri)),
      language_id_(std::move(language_id)),
      version_(version),
      text_(std::move(text)),
      line_starts_(compute_line_starts(text_)) {}

std::size_t TextDocument::offset_of(const protocol::lsp::Position& position, PositionEncoding encoding) const {
  return position_to_offset(text_, line_starts_, position, encoding);
}

protocol::lsp::Position TextDocument::position_of(std::size_t offset, PositionEncoding encoding) const {
  return offset_to_position(text_, line_starts_, offset, encoding);
}

std::string_view TextDocument::line(std::size_t index) const {
  if (index >= line_starts_.size()) return {};
  const std::size_t start = line_starts_[index];
  std::size_t end = index + 1 < line_starts_.size() ? line_starts_[index + 1] : text_.size();
  // Drop the break: \n, \r or \r\n (the table never puts a start between \r and \n).
  if (end > start && text_[end - 1] == '\n') --end;
  if (end > start && text_[end - 1] == '\r') --end;
  return std::string_view(text_).substr(start, end - start);
}

TextDocument TextDocument::with_changes(const std::vector<protocol::lsp::TextDocumentContentChangeEvent>& changes,
                                        std::int64_t new_version, PositionEncoding encoding) const {
  std::string text = text_;
  std::vector<std::size_t> line_starts = line_starts_;
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const auto& change = changes[i];
    if (!change.range) {
      text = change.text;
    } else {
      const auto& range = *change.range;
      // A reversed range has no meaning; guessing (swapping) could silently corrupt the document.
      if (is_after(range.start, range.end)) {
        throw protocol::RpcError(protocol::ErrorCode::InvalidParams,
                                 "didChange for " + uri_ + ": contentChanges[" + std::to_string(i) +
                                     "].range start " + describe(range.start) + " is after end " +
                                     describe(range.end));
      }
      const std::size_t start = position_to_offset(text, line_starts, range.start, encoding);
      const std::size_t end = position_to_offset(text, line_starts, range.end, encoding);
      text.replace(start, end - start, change.text);
    }
    // The next change's range is relative to this result, so its table must be current.
    if (i + 1 < changes.size()) line_starts = compute_line_starts(text);
  }
  return TextDocument(uri_, language_id_, new_version, std::move(text));
}

}  // namespace hiera::server
