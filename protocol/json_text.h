#pragma once
// Serialising JSON that may hold text from the user's files: invalid UTF-8 is
// replaced with U+FFFD instead of throwing out of the server.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace hiera::protocol {

std::string dump_json(const nlohmann::json& value);

// Replaces each invalid UTF-8 sequence in text with U+FFFD.
std::string sanitize_utf8(std::string_view text);
bool is_valid_utf8(std::string_view text);

}  // namespace hiera::protocol
