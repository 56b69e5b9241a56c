#pragma once
// A token of either lexer (cuda_lexer.h, python_lexer.h): its kind, where it
// is, and two facts the structural scanners need. Tokens hold offsets only;
// their text is a view into the document.
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/analysis/source_span.h"

namespace hiera::engine::analysis {

enum class TokenKind : std::uint8_t {
  Identifier,    // keywords included: the scanners know which words matter
  Number,
  String,        // string and character literals, raw strings, with their prefixes
  Comment,
  Directive,     // CUDA: one whole preprocessor line, continuations included
  Punct,         // operators and punctuation, longest match ("<<<", "->", "**=")
  Newline,       // Python: the end of a logical line
};

struct Token {
  TokenKind kind = TokenKind::Punct;
  bool line_start = false;    // the first token on its physical line
  bool unterminated = false;  // a string or comment that the text ends (or a line ends) inside
  std::uint32_t line = 0;     // 0-based line of its first byte
  std::uint32_t column = 0;   // 0-based byte column of its first byte
  std::uint32_t begin = 0, end = 0;

  Span span() const { return {begin, end}; }
  std::string_view text(std::string_view source) const { return source.substr(begin, end - begin); }
};

using Tokens = std::vector<Token>;

}  // namespace hiera::engine::analysis
