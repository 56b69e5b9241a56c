#pragma once
// The comments of a Python or CUDA source, line by line with positions, and
// nothing that only looks like one: a `#` or `//` inside a string literal (a
// docstring, a load_inline source string, a raw string) is not a comment.
// hiera: annotations live in these lines (annotations.h).
#include <string>
#include <string_view>
#include <vector>

namespace hiera::engine::spec {

enum class SourceLanguage { Python, Cuda };

struct CommentLine {
  int line = 0;    // 1-based
  int column = 0;  // 1-based byte column of text's first character
  // The comment's text on this line, without the marker (`#`, `//`, `/*`) and
  // without a closing `*/`.
  std::string text;
  bool block = false;  // a line of a /* */ comment
  bool operator==(const CommentLine&) const = default;
};

std::vector<CommentLine> comment_lines(std::string_view source, SourceLanguage language);

}  // namespace hiera::engine::spec
