#include "engine/analysis/python_lexer.h"

#include <array>
#include <cctype>

#include "engine/analysis/lexer_cursor.h"

namespace hiera::engine::analysis {

namespace {

using detail::is_digit;
using detail::is_ident_char;
using detail::is_ident_start;
using detail::LexerCursor;


// Words that begin a statement and can never appear inside brackets.
bool is_statement_only_keyword(std::string_view word) {
  static constexpr std::array<std::string_view, 19> kWords = {
      "def", "class", "return", "pass", "import", "raise", "del", "global", "nonlocal", "assert",
      "break", "continue", "with", "while", "try", "except", "finally", "elif", "async"};
  for (const auto w : kWords) {
    if (word == w) return true;
  }
  return false;
}

bool is_string_prefix(std::string_view word) {
  if (word.empty() || word.size() > 2) return false;
  std::string lower;
  for (const char c : word) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "r" || lower == "b" || lower == "u" || lower == "f" || lower == "rb" || lower == "br" ||
         lower == "fr" || lower == "rf";
}

struct OpenBracket {
  char close;
  std::uint32_t begin;
  std::uint32_t line_indent;  // indentation of the line the bracket opened on
};

class PythonLexer {
 public:
  explicit PythonLexer(std::string_view source) : source_(source), cursor_(source) {}

  PythonLex run() {
    std::int64_t previous_end_line = -1;
    std::uint32_t line_indent = 0;
    while (true) {
      skip_blanks();
      if (cursor_.done()) break;
      if (cursor_.at_line_end()) {
        end_physical_line();
        continue;
      }
      if (cursor_.peek() == '\\' && (cursor_.peek(1) == '\n' || cursor_.peek(1) == '\r')) {
        cursor_.advance(cursor_.peek(1) == '\r' && cursor_.peek(2) == '\n' ? 3 : 2);
        spliced_ = true;
        continue;
      }
      Token token;
      token.line = cursor_.line();
      token.column = cursor_.column();
      token.begin = cursor_.pos();
      token.line_start = static_cast<std::int64_t>(token.line) > previous_end_line;
      if (token.line_start && !spliced_ && brackets_.empty()) line_indent = token.column;
      if (token.line_start && !spliced_ && !brackets_.empty()) recover_at_line_start(token);
      spliced_ = false;
      lex_one(token);
      token.end = cursor_.pos();
      if (token.kind == TokenKind::Punct) track_bracket(token, line_indent);
      out_.tokens.push_back(token);
      if (token.kind != TokenKind::Comment) logical_line_open_ = true;
      previous_end_line = cursor_.line();
      if (token.end > token.begin && (source_[token.end - 1] == '\n' || source_[token.end - 1] == '\r')) --previous_end_line;
    }
    close_logical_line(cursor_.pos(), cursor_.pos(), cursor_.line(), cursor_.column());
    for (const auto& open : brackets_) unclosed(open, cursor_.line());
    return std::move(out_);
  }

 private:
  void skip_blanks() {
    while (!cursor_.done() && (cursor_.peek() == ' ' || cursor_.peek() == '\t' || cursor_.peek() == '\f')) cursor_.advance();
  }

  void end_physical_line() {
    const std::uint32_t begin = cursor_.pos(), line = cursor_.line(), column = cursor_.column();
    cursor_.advance(cursor_.peek() == '\r' && cursor_.peek(1) == '\n' ? 2 : 1);
    if (brackets_.empty() && !spliced_) close_logical_line(begin, cursor_.pos(), line, column);
    spliced_ = false;
  }

  void close_logical_line(std::uint32_t begin, std::uint32_t end, std::uint32_t line, std::uint32_t column) {
    if (!logical_line_open_) return;
    Token newline;
    newline.kind = TokenKind::Newline;
    newline.begin = begin;
    newline.end = end;
    newline.line = line;
    newline.column = column;
    out_.tokens.push_back(newline);
    logical_line_open_ = false;
  }

  // `line` is 0-based: where the bracket was taken as closed.
  void unclosed(const OpenBracket& open, std::uint32_t line) {
    out_.problems.push_back({{open.begin, open.begin + 1},
                             std::string("unclosed '") + source_[open.begin] + "' (closed at line " +
                                 std::to_string(line + 1) + " to read on)"});
  }

  // Inside brackets, a physical line that begins a statement means the
  // brackets were never closed (code being typed): close them here.
  void recover_at_line_start(const Token& token) {
    std::size_t end = token.begin;
    while (end < source_.size() && is_ident_char(static_cast<unsigned char>(source_[end]))) ++end;
    const std::string_view word = source_.substr(token.begin, end - token.begin);
    const bool decorator = source_[token.begin] == '@' && token.column <= brackets_.front().line_indent;
    if (!decorator && !is_statement_only_keyword(word)) return;
    for (const auto& open : brackets_) unclosed(open, token.line);
    brackets_.clear();
    // The logical line ends before this token's line.
    std::uint32_t line_end = token.begin;
    while (line_end > 0 && source_[line_end - 1] != '\n' && source_[line_end - 1] != '\r') --line_end;
    std::uint32_t newline_begin = line_end;
    if (newline_begin > 0) --newline_begin;
    if (newline_begin > 0 && source_[newline_begin] == '\n' && source_[newline_begin - 1] == '\r') --newline_begin;
    close_logical_line(newline_begin, line_end, token.line > 0 ? token.line - 1 : 0, 0);
  }

  void track_bracket(const Token& token, std::uint32_t line_indent) {
    const char c = source_[token.begin];
    if (c == '(' || c == '[' || c == '{') {
      brackets_.push_back({c == '(' ? ')' : c == '[' ? ']' : '}', token.begin, line_indent});
    } else if (c == ')' || c == ']' || c == '}') {
      // A stray closer is left for the parser to report; a mismatched one
      // closes up to the bracket it matches, if any.
      for (std::size_t i = brackets_.size(); i-- > 0;) {
        if (brackets_[i].close == c) {
          for (std::size_t j = i + 1; j < brackets_.size(); ++j) unclosed(brackets_[j], token.line);
          brackets_.resize(i);
          break;
        }
      }
    }
  }

  void lex_one(Token& token) {
    const unsigned char c = cursor_.peek();
    if (c == '#') {
      token.kind = TokenKind::Comment;
      while (!cursor_.done() && !cursor_.at_line_end()) cursor_.advance();
    } else if (c == '"' || c == '\'') {
      token.kind = TokenKind::String;
      string_body(token);
    } else if (is_digit(c) || (c == '.' && is_digit(cursor_.peek(1)))) {
      token.kind = TokenKind::Number;
      number();
    } else if (is_ident_start(c)) {
      while (!cursor_.done() && is_ident_char(cursor_.peek())) cursor_.advance();
      const unsigned char next = cursor_.peek();
      if ((next == '"' || next == '\'') && is_string_prefix(source_.substr(token.begin, cursor_.pos() - token.begin))) {
        token.kind = TokenKind::String;
        string_body(token);
      } else {
        token.kind = TokenKind::Identifier;
      }
    } else {
      token.kind = TokenKind::Punct;
      punct();
    }
  }

  // Longest match: **= //= >>= <<= ... then ** // << >> <= >= == != -> op= := <>.
  void punct() {
    const unsigned char c = cursor_.peek(), d = cursor_.peek(1), e = cursor_.peek(2);
    std::size_t length = 1;
    switch (c) {
      case '*': case '/': case '<': case '>':
        length = d == c ? (e == '=' ? 3 : 2) : d == '=' || (c == '<' && d == '>') ? 2 : 1;
        break;
      case '.': length = d == '.' && e == '.' ? 3 : 1; break;
      case '-': length = d == '>' || d == '=' ? 2 : 1; break;
      case ':': case '=': case '!': case '+': case '%': case '&': case '|': case '^': case '@':
        length = d == '=' ? 2 : 1;
        break;
      default: break;
    }
    cursor_.advance(length);
  }

  // The cursor on the opening quote. A backslash always keeps the next
  // character inside (raw strings too: r'\'' is one string).
  void string_body(Token& token) {
    const unsigned char quote = cursor_.peek();
    const bool triple = cursor_.peek(1) == quote && cursor_.peek(2) == quote;
    cursor_.advance(triple ? 3 : 1);
    while (!cursor_.done()) {
      const unsigned char c = cursor_.peek();
      if (c == '\\') {
        cursor_.advance(cursor_.peek(1) == '\r' && cursor_.peek(2) == '\n' ? 3 : 2);
      } else if (c == quote && (!triple || (cursor_.peek(1) == quote && cursor_.peek(2) == quote))) {
        cursor_.advance(triple ? 3 : 1);
        return;
      } else if (!triple && (c == '\n' || c == '\r')) {
        break;
      } else {
        cursor_.advance();
      }
    }
    token.unterminated = true;
    out_.problems.push_back({{token.begin, cursor_.pos()},
                             triple ? "unterminated triple-quoted string: it runs to the end of the file"
                                    : "unterminated string literal"});
  }

  void number() {
    const bool hex = cursor_.peek() == '0' && (cursor_.peek(1) == 'x' || cursor_.peek(1) == 'X');
    unsigned char previous = '\0';
    while (!cursor_.done()) {
      const unsigned char d = cursor_.peek();
      const bool exponent_sign = !hex && (d == '+' || d == '-') && (previous == 'e' || previous == 'E');
      if (!is_ident_char(d) && d != '.' && !exponent_sign) break;
      if (d == '.' && cursor_.peek(1) == '.') break;  // 1..2 is not a number in Python, but never read one as such
      previous = d;
      cursor_.advance();
    }
  }

  std::string_view source_;
  LexerCursor cursor_;
  PythonLex out_;
  std::vector<OpenBracket> brackets_;
  bool spliced_ = false;            // the previous line ended with a backslash
  bool logical_line_open_ = false;  // a non-comment token since the last Newline
};

}  // namespace

PythonLex lex_python(std::string_view source) { return PythonLexer(source).run(); }

}  // namespace hiera::engine::analysis
