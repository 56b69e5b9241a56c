#include "engine/knowledge/placeholders.h"

#include <algorithm>
#include <stdexcept>

#include "engine/knowledge/vocabulary.h"

namespace hiera::engine::knowledge {

namespace {

bool is_identifier_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_identifier_char(char c) { return is_identifier_start(c) || (c >= '0' && c <= '9'); }

// If a well-formed placeholder starts at `at` ("{{" identifier "}}"), its name
// and the length of the whole placeholder.
std::optional<std::pair<std::string_view, std::size_t>> placeholder_at(std::string_view text, std::size_t at) {
  if (text.substr(at, 2) != "{{") return std::nullopt;
  std::size_t end = at + 2;
  if (end >= text.size() || !is_identifier_start(text[end])) return std::nullopt;
  while (end < text.size() && is_identifier_char(text[end])) ++end;
  if (text.substr(end, 2) != "}}") return std::nullopt;
  return std::pair{text.substr(at + 2, end - at - 2), end + 2 - at};
}

}  // namespace

std::vector<std::string> find_placeholders(std::string_view text) {
  std::vector<std::string> names;
  for (std::size_t at = text.find("{{"); at != std::string_view::npos; at = text.find("{{", at + 1)) {
    if (auto found = placeholder_at(text, at)) {
      if (!contains(names, found->first)) names.emplace_back(found->first);
      at += found->second - 1;
    }
  }
  return names;
}

std::optional<std::string> check_placeholders(std::string_view text, const std::vector<std::string>& allowed) {
  for (std::size_t at = text.find("{{"); at != std::string_view::npos; at = text.find("{{", at + 1)) {
    const auto found = placeholder_at(text, at);
    if (!found) {
      const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
      const std::size_t close = text.find("}}", at);
      const std::size_t line_end = text.find('\n', at);
      const std::size_t shown_end = std::min(close == std::string_view::npos ? text.size() : close + 2, line_end);
      return "malformed placeholder at line " + std::to_string(line) + ": " +
             std::string(text.substr(at, std::min<std::size_t>(shown_end - at, 40))) + " (expected {{name}})";
    }
    if (!contains(allowed, found->first))
      return "unknown placeholder {{" + std::string(found->first) + "}} (allowed: " + join(allowed) + ")";
    at += found->second - 1;
  }
  return std::nullopt;
}

std::string fill_placeholders(std::string_view text, const std::map<std::string, std::string, std::less<>>& values) {
  std::string out;
  out.reserve(text.size());
  std::size_t copied = 0;
  for (std::size_t at = text.find("{{"); at != std::string_view::npos; at = text.find("{{", at + 1)) {
    const auto found = placeholder_at(text, at);
    if (!found) continue;
    const auto value = values.find(found->first);
    if (value == values.end())
      throw std::invalid_argument("no value for placeholder {{" + std::string(found->first) + "}}");
    out.append(text.substr(copied, at - copied));
    out += value->second;
    copied = at + found->second;
    at = copied - 1;
  }
  out.append(text.substr(copied));
  return out;
}

}  // namespace hiera::engine::knowledge
