#pragma once
// The position both lexers walk the text with: byte offset, line, and where
// the line starts (for columns). Internal to the lexers.
#include <cstdint>
#include <string_view>

namespace hiera::engine::analysis::detail {

inline bool is_ident_start(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80; }
inline bool is_ident_char(unsigned char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
inline bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

class LexerCursor {
 public:
  explicit LexerCursor(std::string_view text) : text_(text) {}
  bool done() const { return pos_ >= text_.size(); }
  unsigned char peek(std::size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? static_cast<unsigned char>(text_[pos_ + ahead]) : '\0';
  }
  bool starts_with(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }
  std::uint32_t pos() const { return static_cast<std::uint32_t>(pos_); }
  std::uint32_t line() const { return line_; }
  std::uint32_t column() const { return static_cast<std::uint32_t>(pos_ - line_start_); }
  // One byte; a \r\n, a lone \r or a \n ends a line (as LSP counts lines).
  void advance() {
    const char c = text_[pos_++];
    if (c == '\n' || (c == '\r' && (pos_ >= text_.size() || text_[pos_] != '\n'))) {
      ++line_;
      line_start_ = pos_;
    }
  }
  void advance(std::size_t n) {
    for (std::size_t i = 0; i < n && !done(); ++i) advance();
  }
  bool at_line_end() const { return peek() == '\n' || peek() == '\r'; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t line_start_ = 0;
  std::uint32_t line_ = 0;
};

}  // namespace hiera::engine::analysis::detail
