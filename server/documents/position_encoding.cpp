#include "server/documents/position_encoding.h"

#include <algorithm>
#include <cstdint>

namespace hiera::server {
namespace {

// One character of UTF-8 text: how many bytes it spans and how many code
// units it counts for in the negotiated encoding.
struct Step {
  std::size_t bytes;
  std::int64_t units;
};

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// Length of the well-formed UTF-8 sequence starting at text[pos] (bounded by
// end), or 0 when it is not one. Rejects overlong forms, surrogates and code
// points above U+10FFFF, following the Unicode well-formedness table.
std::size_t valid_sequence_length(std::string_view text, std::size_t pos, std::size_t end) {
  const auto at = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = at(pos);
  std::size_t length = 0;
  unsigned char second_min = 0x80;
  unsigned char second_max = 0xBF;
  if (lead < 0x80) {
    return 1;
  } else if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;  // overlong
    if (lead == 0xED) second_max = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;  // overlong
    if (lead == 0xF4) second_max = 0x8F;  // above U+10FFFF
  } else {
    return 0;  // stray continuation byte, C0/C1 or F5..FF
  }
  if (end - pos < length) return 0;
  if (at(pos + 1) < second_min || at(pos + 1) > second_max) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (!is_continuation(at(pos + i))) return 0;
  }
  return length;
}

// Invalid bytes are one character of one unit each, as if replaced by U+FFFD
// byte by byte; that is what keeps the mapping total and predictable.
Step step_at(std::string_view text, std::size_t pos, std::size_t end, PositionEncoding encoding) {
  const std::size_t length = valid_sequence_length(text, pos, end);
  if (length == 0) return {1, 1};
  if (encoding == PositionEncoding::Utf8) return {length, static_cast<std::int64_t>(length)};
  return {length, length == 4 ? 2 : 1};  // only supplementary planes need a surrogate pair
}

// End of a line's content: the next line's start minus its break (\n, \r or \r\n).
std::size_t line_content_end(std::string_view text, const std::vector<std::size_t>& line_starts, std::size_t line) {
  if (line + 1 >= line_starts.size()) return text.size();
  const std::size_t start = line_starts[line];
  std::size_t end = line_starts[line + 1];
  if (end > start && text[end - 1] == '\n') {
    --end;
    if (end > start && text[end - 1] == '\r') --end;
  } else if (end > start && text[end - 1] == '\r') {
    --end;
  }
  return end;
}

// Callers promise at least one entry; an empty table is read as one line at 0
// rather than indexed out of bounds.
const std::vector<std::size_t>& lines_or_default(const std::vector<std::size_t>& line_starts) {
  static const std::vector<std::size_t> single_line{0};
  return line_starts.empty() ? single_line : line_starts;
}

}  // namespace

const char* to_string(PositionEncoding encoding) {
  switch (encoding) {
    case PositionEncoding::Utf16:
      return "utf-16";
    case PositionEncoding::Utf8:
      return "utf-8";
  }
  return "utf-16";
}

std::vector<std::size_t> compute_line_starts(std::string_view text) {
  std::vector<std::size_t> starts{0};
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      starts.push_back(i + 1);
    } else if (c == '\r') {
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;  // \r\n is one break
      starts.push_back(i + 1);
    }
  }
  return starts;
}

std::size_t position_to_offset(std::string_view text, const std::vector<std::size_t>& line_starts_in,
                               const protocol::lsp::Position& position, PositionEncoding encoding) {
  const auto& line_starts = lines_or_default(line_starts_in);
  // Negative values cannot come from a conforming client; clamp them like any other out-of-range value.
  if (position.line < 0) return 0;
  const auto line = static_cast<std::uint64_t>(position.line);
  if (line >= line_starts.size()) return text.size();
  const std::size_t start = std::min(line_starts[line], text.size());
  const std::size_t end = line_content_end(text, line_starts, line);
  const std::int64_t character = std::max<std::int64_t>(position.character, 0);

  std::size_t pos = start;
  std::int64_t units = 0;
  while (pos < end && units < character) {
    const Step step = step_at(text, pos, end, encoding);
    if (units + step.units > character) break;  // inside a surrogate pair or multi-byte char: its start
    units += step.units;
    pos += step.bytes;
  }
  return pos;
}

protocol::lsp::Position offset_to_position(std::string_view text, const std::vector<std::size_t>& line_starts_in,
                                           std::size_t offset, PositionEncoding encoding) {
  const auto& line_starts = lines_or_default(line_starts_in);
  offset = std::min(offset, text.size());
  // Binary search: the last line starting at or before offset.
  const auto it = std::upper_bound(line_starts.begin(), line_starts.end(), offset);
  const auto line = static_cast<std::size_t>(std::distance(line_starts.begin(), it)) - 1;
  const std::size_t start = line_starts[line];
  const std::size_t end = line_content_end(text, line_starts, line);
  const std::size_t target = std::min(offset, end);  // inside the line break: the line end

  std::size_t pos = start;
  std::int64_t units = 0;
  while (pos < target) {
    const Step step = step_at(text, pos, end, encoding);
    if (pos + step.bytes > target) break;  // inside a multi-byte char: its start
    units += step.units;
    pos += step.bytes;
  }
  return {static_cast<std::int64_t>(line), units};
}

}  // namespace hiera::server
