#pragma once
// Something the lexer or a scanner recovered from (an unterminated string or
// comment, an unclosed bracket, a def without a body). Analysis goes on past
// it; the editor can show it, and it explains findings that look incomplete.
#include <string>

#include "engine/analysis/source_span.h"

namespace hiera::engine::analysis {

struct SyntaxProblem {
  Span span;
  std::string message;
  bool operator==(const SyntaxProblem&) const = default;
};

}  // namespace hiera::engine::analysis
