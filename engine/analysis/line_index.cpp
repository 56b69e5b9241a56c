#include "engine/analysis/line_index.h"

#include <algorithm>

namespace hiera::engine::analysis {

LineIndex::LineIndex(std::string_view text) : text_(text) {
  starts_.push_back(0);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || (text[i] == '\r' && (i + 1 >= text.size() || text[i + 1] != '\n'))) starts_.push_back(i + 1);
  }
}

std::size_t LineIndex::line_of(std::size_t offset) const {
  offset = std::min(offset, text_.size());
  return static_cast<std::size_t>(std::upper_bound(starts_.begin(), starts_.end(), offset) - starts_.begin()) - 1;
}

Position LineIndex::position(std::size_t offset) const {
  offset = std::min(offset, text_.size());
  const std::size_t line = line_of(offset);
  std::size_t units = 0;
  for (std::size_t i = starts_[line]; i < offset;) {
    const auto c = static_cast<unsigned char>(text_[i]);
    // The length a well-formed lead byte announces; anything else is one byte.
    std::size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
    for (std::size_t k = 1; k < length; ++k) {
      if (i + k >= text_.size() || (static_cast<unsigned char>(text_[i + k]) >> 6) != 0x2) {
        length = 1;
        break;
      }
    }
    if (i + length > offset) break;  // an offset inside a character maps to its start
    units += length == 4 ? 2 : 1;
    i += length;
  }
  return {line, units};
}

}  // namespace hiera::engine::analysis
