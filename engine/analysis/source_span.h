#pragma once
// Where something is in a document: byte offsets into its UTF-8 text, the unit
// the lexers work in. Line/character positions (UTF-16, as LSP clients count
// by default) are made from these only at the edge (line_index.h).
#include <cstddef>
#include <string>
#include <string_view>

namespace hiera::engine::analysis {

struct Span {
  std::size_t begin = 0;  // first byte
  std::size_t end = 0;    // one past the last byte
  std::size_t size() const { return end - begin; }
  bool empty() const { return begin == end; }
  bool contains(const Span& other) const { return begin <= other.begin && other.end <= end; }
  std::string_view text(std::string_view source) const { return source.substr(begin, end - begin); }
  bool operator==(const Span&) const = default;
};

// One text replacement: the editor offers a list of these as a quick fix.
// An empty span inserts at span.begin.
struct TextEdit {
  Span span;
  std::string new_text;
  bool operator==(const TextEdit&) const = default;
};

}  // namespace hiera::engine::analysis
