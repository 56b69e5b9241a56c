#include "protocol/json_text.h"

#include <cstdint>

namespace hiera::protocol {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the well-formed UTF-8 sequence at text[i], or 0 if it is ill-formed.
// On 0, *bad is set to the length of its maximal subpart (at least 1): Unicode's
// recommended practice replaces each maximal subpart with one U+FFFD.
std::size_t sequence_length(std::string_view text, std::size_t i, std::size_t* bad) {
  const auto byte = [&](std::size_t k) { return static_cast<std::uint8_t>(text[k]); };
  const std::uint8_t lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  // The allowed range of the second byte excludes overlongs (E0, F0), surrogates
  // (ED) and code points above U+10FFFF (F4); C0, C1 and F5..FF never start a sequence.
  std::uint8_t low = 0x80;
  std::uint8_t high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    *bad = 1;
    return 0;
  }
  std::size_t k = 1;
  for (; k < length && i + k < text.size(); ++k) {
    const std::uint8_t b = byte(i + k);
    const bool ok = k == 1 ? (b >= low && b <= high) : (b >= 0x80 && b <= 0xBF);
    if (!ok) break;
  }
  if (k == length) return length;
  *bad = k;  // the lead plus the continuation bytes that were still valid
  return 0;
}

}  // namespace

std::string dump_json(const nlohmann::json& value) {
  // replace: invalid UTF-8 in a user's file must not throw out of the server.
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string sanitize_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t bad = 0;
    const std::size_t n = sequence_length(text, i, &bad);
    if (n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out.append(kReplacement);
      i += bad;
    }
  }
  return out;
}

bool is_valid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t bad = 0;
    const std::size_t n = sequence_length(text, i, &bad);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

}  // namespace hiera::protocol
