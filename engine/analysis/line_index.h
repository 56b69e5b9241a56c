#pragma once
// Byte offsets to LSP positions: 0-based line and character, the character
// counted in UTF-16 code units (the LSP default; a character outside the BMP
// counts 2), lines ending at \n, \r\n or \r. Invalid UTF-8 bytes count one
// unit each. Built once per document; a lookup is a binary search plus a walk
// over one line.
#include <cstddef>
#include <string_view>
#include <vector>

#include "engine/analysis/source_span.h"

namespace hiera::engine::analysis {

struct Position {
  std::size_t line = 0;
  std::size_t character = 0;  // UTF-16 code units
  bool operator==(const Position&) const = default;
};

class LineIndex {
 public:
  explicit LineIndex(std::string_view text);
  Position position(std::size_t offset) const;  // offsets past the end clamp to the end
  std::size_t line_of(std::size_t offset) const;
  std::size_t line_start(std::size_t line) const { return starts_.at(line); }
  std::size_t line_count() const { return starts_.size(); }

 private:
  std::string_view text_;
  std::vector<std::size_t> starts_;
};

}  // namespace hiera::engine::analysis
