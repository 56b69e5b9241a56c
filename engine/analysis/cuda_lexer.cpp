#include "engine/analysis/cuda_lexer.h"


#include "engine/analysis/lexer_cursor.h"

namespace hiera::engine::analysis {

namespace {

using detail::is_digit;
using detail::is_ident_char;
using detail::is_ident_start;
using detail::LexerCursor;


bool is_string_prefix(std::string_view word) {
  return word == "L" || word == "u" || word == "U" || word == "u8" || word == "R" || word == "LR" || word == "uR" ||
         word == "UR" || word == "u8R";
}

class CudaLexer {
 public:
  explicit CudaLexer(std::string_view source) : source_(source), cursor_(source) {}

  CudaLex run() {
    // A token starts its line when the previous token ended on an earlier one.
    std::int64_t previous_end_line = -1;
    while (true) {
      skip_whitespace();
      if (cursor_.done()) break;
      Token token;
      token.line = cursor_.line();
      token.column = cursor_.column();
      token.begin = cursor_.pos();
      token.line_start = static_cast<std::int64_t>(token.line) > previous_end_line;
      lex_one(token);
      token.end = cursor_.pos();
      out_.tokens.push_back(token);
      previous_end_line = line_of_last_byte(token);
    }
    return std::move(out_);
  }

 private:
  // The cursor may already be on the next line when a token ends at a line break.
  std::int64_t line_of_last_byte(const Token& token) const {
    const char last = source_[token.end - 1];
    return static_cast<std::int64_t>(cursor_.line()) - ((last == '\n' || last == '\r') ? 1 : 0);
  }

  void skip_whitespace() {
    while (!cursor_.done()) {
      const unsigned char c = cursor_.peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        cursor_.advance();
      } else if (c == '\\' && (cursor_.peek(1) == '\n' || cursor_.peek(1) == '\r')) {
        cursor_.advance(2);  // a line splice outside a directive
      } else {
        return;
      }
    }
  }

  void problem(std::uint32_t begin, std::string message) {
    out_.problems.push_back({{begin, cursor_.pos()}, std::move(message)});
  }

  void lex_one(Token& token) {
    const unsigned char c = cursor_.peek();
    if (c == '/' && cursor_.peek(1) == '/') {
      token.kind = TokenKind::Comment;
      line_comment();
    } else if (c == '/' && cursor_.peek(1) == '*') {
      token.kind = TokenKind::Comment;
      token.unterminated = !block_comment();
      if (token.unterminated) problem(token.begin, "unterminated comment: '/*' has no '*/'");
    } else if (c == '#' && token.line_start) {
      token.kind = TokenKind::Directive;
      directive(token);
    } else if (c == '"' || c == '\'') {
      token.kind = TokenKind::String;
      token.unterminated = !quoted(c);
      if (token.unterminated) problem(token.begin, c == '"' ? "unterminated string literal" : "unterminated character literal");
    } else if (is_digit(c) || (c == '.' && is_digit(cursor_.peek(1)))) {
      token.kind = TokenKind::Number;
      number();
    } else if (is_ident_start(c)) {
      identifier_or_prefixed_literal(token);
    } else {
      token.kind = TokenKind::Punct;
      punct();
    }
  }

  void line_comment() {
    while (!cursor_.done() && !cursor_.at_line_end()) {
      // A backslash at the end of a // comment continues it onto the next line.
      if (cursor_.peek() == '\\' && (cursor_.peek(1) == '\n' || cursor_.peek(1) == '\r')) {
        cursor_.advance(cursor_.peek(1) == '\r' && cursor_.peek(2) == '\n' ? 3 : 2);
        continue;
      }
      cursor_.advance();
    }
  }

  bool block_comment() {
    cursor_.advance(2);
    while (!cursor_.done()) {
      if (cursor_.peek() == '*' && cursor_.peek(1) == '/') {
        cursor_.advance(2);
        return true;
      }
      cursor_.advance();
    }
    return false;
  }

  // From an opening quote to its closing one; a literal may not span lines
  // (unless a backslash splices them), so a line end closes it, unterminated.
  bool quoted(unsigned char quote) {
    cursor_.advance();
    while (!cursor_.done()) {
      const unsigned char c = cursor_.peek();
      if (c == '\\') {
        cursor_.advance(cursor_.peek(1) == '\r' && cursor_.peek(2) == '\n' ? 3 : 2);
      } else if (c == quote) {
        cursor_.advance();
        return true;
      } else if (c == '\n' || c == '\r') {
        return false;
      } else {
        cursor_.advance();
      }
    }
    return false;
  }

  // R"delim( ... )delim", the cursor on the opening quote.
  bool raw_string() {
    cursor_.advance();
    std::string delimiter;
    while (!cursor_.done() && cursor_.peek() != '(' && !cursor_.at_line_end() && delimiter.size() <= 16) {
      delimiter += static_cast<char>(cursor_.peek());
      cursor_.advance();
    }
    if (cursor_.peek() != '(') return false;
    const std::string close = ")" + delimiter + "\"";
    while (!cursor_.done()) {
      if (cursor_.starts_with(close)) {
        cursor_.advance(close.size());
        return true;
      }
      cursor_.advance();
    }
    return false;
  }

  void identifier_or_prefixed_literal(Token& token) {
    while (!cursor_.done() && is_ident_char(cursor_.peek())) cursor_.advance();
    const std::string_view word = source_.substr(token.begin, cursor_.pos() - token.begin);
    const unsigned char next = cursor_.peek();
    if ((next == '"' || next == '\'') && is_string_prefix(word)) {
      token.kind = TokenKind::String;
      const bool raw = word.back() == 'R' && next == '"';
      token.unterminated = raw ? !raw_string() : !quoted(next);
      if (token.unterminated) problem(token.begin, raw ? "unterminated raw string literal" : "unterminated string literal");
      return;
    }
    token.kind = TokenKind::Identifier;
  }

  void number() {
    unsigned char previous = '\0';
    while (!cursor_.done()) {
      const unsigned char d = cursor_.peek();
      const bool exponent_sign = (d == '+' || d == '-') && (previous == 'e' || previous == 'E' || previous == 'p' || previous == 'P');
      const bool separator = d == '\'' && is_ident_char(cursor_.peek(1));
      if (!is_ident_char(d) && d != '.' && !exponent_sign && !separator) break;
      previous = d;
      cursor_.advance();
    }
  }

  // A whole preprocessor line: to the first line end that no backslash
  // splices and no block comment spans.
  void directive(Token& token) {
    while (!cursor_.done()) {
      const unsigned char c = cursor_.peek();
      if (c == '\\' && (cursor_.peek(1) == '\n' || cursor_.peek(1) == '\r')) {
        cursor_.advance(cursor_.peek(1) == '\r' && cursor_.peek(2) == '\n' ? 3 : 2);
      } else if (c == '/' && cursor_.peek(1) == '*') {
        if (!block_comment()) {
          token.unterminated = true;
          problem(token.begin, "unterminated comment: '/*' has no '*/'");
        }
      } else if (c == '/' && cursor_.peek(1) == '/') {
        line_comment();
      } else if (c == '"' || c == '\'') {
        quoted(c);  // #include "a//b.h", #define S "/*"
      } else if (c == '\n' || c == '\r') {
        return;
      } else {
        cursor_.advance();
      }
    }
  }

  // Longest match: <<< >>> <<= >>= ... ->* <=> then :: -> ++ -- << >> <= >= == != && || op= ##.
  void punct() {
    const unsigned char c = cursor_.peek(), d = cursor_.peek(1), e = cursor_.peek(2);
    std::size_t length = 1;
    switch (c) {
      case '<':
        length = d == '<' ? (e == '<' || e == '=' ? 3 : 2) : d == '=' ? (e == '>' ? 3 : 2) : 1;
        break;
      case '>':
        length = d == '>' ? (e == '>' || e == '=' ? 3 : 2) : d == '=' ? 2 : 1;
        break;
      case '.': length = d == '.' && e == '.' ? 3 : 1; break;
      case '-': length = d == '>' ? (e == '*' ? 3 : 2) : (d == '-' || d == '=') ? 2 : 1; break;
      case ':': length = d == ':' ? 2 : 1; break;
      case '+': length = d == '+' || d == '=' ? 2 : 1; break;
      case '&': length = d == '&' || d == '=' ? 2 : 1; break;
      case '|': length = d == '|' || d == '=' ? 2 : 1; break;
      case '#': length = d == '#' ? 2 : 1; break;
      case '=': case '!': case '*': case '/': case '%': case '^': length = d == '=' ? 2 : 1; break;
      default: break;
    }
    cursor_.advance(length);
  }

  std::string_view source_;
  LexerCursor cursor_;
  CudaLex out_;
};

}  // namespace

CudaLex lex_cuda(std::string_view source) { return CudaLexer(source).run(); }

}  // namespace hiera::engine::analysis
