#pragma once
// Making text from a provider safe to put in an error or a log line: the API
// key replaced wherever it occurs, the length bounded, UTF-8 left intact.
#include <cstddef>
#include <string>
#include <string_view>

namespace hiera::engine::propose::llm {

inline constexpr std::string_view kRedacted = "[redacted]";

// Every occurrence of secret replaced by kRedacted; text unchanged when secret is empty.
std::string redact(std::string_view text, std::string_view secret);

// At most max_bytes of text, cut at a UTF-8 character boundary, with "..."
// appended when something was cut.
std::string excerpt(std::string_view text, std::size_t max_bytes = 200);

}  // namespace hiera::engine::propose::llm
