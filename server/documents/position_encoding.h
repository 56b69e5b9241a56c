#pragma once
// Converting LSP positions (line + character in UTF-16 or UTF-8 code units)
// to byte offsets in UTF-8 text and back. Lines end at \n, \r\n or \r, as the
// LSP specifies. Invalid UTF-8 bytes count as one code unit each (as U+FFFD).
#include <cstddef>
#include <string_view>
#include <vector>

#include "protocol/lsp_types.h"

namespace hiera::server {

enum class PositionEncoding { Utf16, Utf8 };
const char* to_string(PositionEncoding encoding);  // "utf-16" / "utf-8"

// Byte offsets at which each line starts; always has at least one entry (0).
std::vector<std::size_t> compute_line_starts(std::string_view text);

// Clamps out-of-range positions: a line past the end maps to the end of the
// text, a character past the end of its line maps to the line end (before the
// line break), a character inside a multi-unit character maps to its start.
std::size_t position_to_offset(std::string_view text, const std::vector<std::size_t>& line_starts,
                               const protocol::lsp::Position& position, PositionEncoding encoding);
protocol::lsp::Position offset_to_position(std::string_view text, const std::vector<std::size_t>& line_starts,
                                           std::size_t offset, PositionEncoding encoding);

}  // namespace hiera::server
