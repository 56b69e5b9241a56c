#include "engine/spec/source_comments.h"

#include <cctype>

namespace hiera::engine::spec {

namespace {

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A cursor over the source that knows its line and column.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}
  bool done() const { return pos_ >= text_.size(); }
  char peek(std::size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  bool starts_with(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }
  std::size_t pos() const { return pos_; }
  int line() const { return line_; }
  int column() const { return static_cast<int>(pos_ - line_start_) + 1; }
  void advance(std::size_t n = 1) {
    for (std::size_t i = 0; i < n && pos_ < text_.size(); ++i) {
      if (text_[pos_++] == '\n') {
        ++line_;
        line_start_ = pos_;
      }
    }
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t line_start_ = 0;
  int line_ = 1;
};

// From the cursor to the end of the line (not consuming the newline).
CommentLine rest_of_line(Cursor& cursor, bool block) {
  CommentLine out{cursor.line(), cursor.column(), "", block};
  while (!cursor.done() && cursor.peek() != '\n') {
    if (cursor.peek() == '\r' && cursor.peek(1) == '\n') break;
    out.text += cursor.peek();
    cursor.advance();
  }
  return out;
}

// A quoted literal that may not span lines (unless a backslash escapes the newline).
void skip_quoted(Cursor& cursor, char quote) {
  cursor.advance();
  while (!cursor.done()) {
    const char c = cursor.peek();
    if (c == '\\') {
      cursor.advance(2);
    } else if (c == quote) {
      cursor.advance();
      return;
    } else if (c == '\n') {
      return;  // unterminated: the line ends it
    } else {
      cursor.advance();
    }
  }
}

std::vector<CommentLine> python_comments(std::string_view source) {
  std::vector<CommentLine> out;
  Cursor cursor(source);
  while (!cursor.done()) {
    const char c = cursor.peek();
    if (c == '#') {
      cursor.advance();
      out.push_back(rest_of_line(cursor, false));
    } else if (c == '"' || c == '\'') {
      const std::string triple(3, c);
      if (cursor.starts_with(triple)) {
        cursor.advance(3);
        while (!cursor.done() && !cursor.starts_with(triple)) cursor.advance(cursor.peek() == '\\' ? 2 : 1);
        cursor.advance(3);
      } else {
        skip_quoted(cursor, c);
      }
    } else {
      cursor.advance();
    }
  }
  return out;
}

std::vector<CommentLine> cuda_comments(std::string_view source) {
  std::vector<CommentLine> out;
  Cursor cursor(source);
  std::size_t ident_start = std::string_view::npos;  // start of the identifier just before the cursor
  char previous = '\0';
  while (!cursor.done()) {
    const char c = cursor.peek();
    if (cursor.starts_with("//")) {
      cursor.advance(2);
      for (;;) {
        CommentLine line = rest_of_line(cursor, false);
        const bool continued = !line.text.empty() && line.text.back() == '\\';
        out.push_back(std::move(line));
        if (!continued || cursor.done()) break;
        cursor.advance(cursor.peek() == '\r' ? 2 : 1);
      }
      previous = '\0';
      ident_start = std::string_view::npos;
      continue;
    }
    if (cursor.starts_with("/*")) {
      cursor.advance(2);
      CommentLine line{cursor.line(), cursor.column(), "", true};
      while (!cursor.done() && !cursor.starts_with("*/")) {
        if (cursor.peek() == '\n') {
          if (!line.text.empty() && line.text.back() == '\r') line.text.pop_back();
          out.push_back(std::move(line));
          cursor.advance();
          line = CommentLine{cursor.line(), cursor.column(), "", true};
        } else {
          line.text += cursor.peek();
          cursor.advance();
        }
      }
      out.push_back(std::move(line));
      cursor.advance(2);
      previous = ' ';
      ident_start = std::string_view::npos;
      continue;
    }
    if (c == '"') {
      const std::string_view prefix = ident_start == std::string_view::npos
                                          ? std::string_view{}
                                          : source.substr(ident_start, cursor.pos() - ident_start);
      if (prefix == "R" || prefix == "u8R" || prefix == "uR" || prefix == "UR" || prefix == "LR") {
        // R"delim( ... )delim"
        cursor.advance();
        std::string delimiter;
        while (!cursor.done() && cursor.peek() != '(' && cursor.peek() != '\n' && delimiter.size() <= 16) {
          delimiter += cursor.peek();
          cursor.advance();
        }
        const std::string close = ")" + delimiter + "\"";
        while (!cursor.done() && !cursor.starts_with(close)) cursor.advance();
        cursor.advance(close.size());
      } else {
        skip_quoted(cursor, '"');
      }
      previous = '"';
      ident_start = std::string_view::npos;
      continue;
    }
    if (c == '\'') {
      skip_quoted(cursor, '\'');
      previous = '\'';
      ident_start = std::string_view::npos;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) && !is_ident_char(previous)) {
      // A number, digit separators (1'000'000) and exponents (1e-3) included.
      while (!cursor.done()) {
        const char d = cursor.peek();
        const bool exponent_sign = (d == '+' || d == '-') && (previous == 'e' || previous == 'E' || previous == 'p' || previous == 'P');
        const bool separator = d == '\'' && std::isalnum(static_cast<unsigned char>(cursor.peek(1)));
        if (!is_ident_char(d) && d != '.' && !exponent_sign && !separator) break;
        previous = d;
        cursor.advance();
      }
      ident_start = std::string_view::npos;
      continue;
    }
    if (is_ident_char(c)) {
      if (!is_ident_char(previous)) ident_start = cursor.pos();
    } else {
      ident_start = std::string_view::npos;
    }
    previous = c;
    cursor.advance();
  }
  return out;
}

}  // namespace

std::vector<CommentLine> comment_lines(std::string_view source, SourceLanguage language) {
  return language == SourceLanguage::Python ? python_comments(source) : cuda_comments(source);
}

}  // namespace hiera::engine::spec
