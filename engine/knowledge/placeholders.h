#pragma once
// {{name}} placeholders in prompt and code templates: finding them, checking
// them, and filling them in one pass (filled-in values are never re-expanded,
// so code that itself contains "{{" is safe to pass).
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hiera::engine::knowledge {

// The distinct names of well-formed placeholders ({{identifier}}), in order of
// first appearance. Other uses of "{{" (C++ brace initialisers) are not placeholders.
std::vector<std::string> find_placeholders(std::string_view text);

// For text that must contain only placeholders from `allowed`: the first
// problem, e.g. "unknown placeholder {{foo}} (allowed: a, b)" or
// "malformed placeholder at line 3: {{ space }}"; nullopt when all is well.
std::optional<std::string> check_placeholders(std::string_view text, const std::vector<std::string>& allowed);

// Replaces every {{name}} with values.at(name). Throws std::invalid_argument
// "no value for placeholder {{name}}" when a placeholder has no value; values
// that no placeholder uses are ignored.
std::string fill_placeholders(std::string_view text, const std::map<std::string, std::string, std::less<>>& values);

}  // namespace hiera::engine::knowledge
