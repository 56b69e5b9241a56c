#include "engine/common/size_expression.h"

#include <cctype>
#include <limits>

namespace hiera::engine {

namespace {

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Recursive descent over
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/' | '%') unary)*
//   unary   := ('+' | '-') unary | primary
//   primary := integer | name | '(' expr ')'
// With no sizes given (collect mode) names count as 1 and only syntax is
// checked: overflow and division by zero are not errors there.
class Parser {
 public:
  Parser(std::string_view text, const SizeMap* sizes) : text_(text), sizes_(sizes) {}

  std::int64_t parse() {
    skip_space();
    if (pos_ == text_.size()) fail("empty expression");
    const std::int64_t value = expr();
    skip_space();
    if (pos_ != text_.size()) fail(std::string("unexpected '") + text_[pos_] + "'");
    return value;
  }

  std::set<std::string> names;

 private:
  static constexpr int kMaxDepth = 200;  // a hostile "((((…" cannot overflow the stack

  [[noreturn]] void fail(const std::string& what) const {
    throw SizeExpressionError("size expression '" + std::string(text_) + "': " + what + " at column " +
                              std::to_string(pos_ + 1));
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void check(bool overflowed, const char* op) const {
    if (overflowed && sizes_) fail(std::string("integer overflow in '") + op + "'");
  }

  std::int64_t expr() {
    std::int64_t value = term();
    for (;;) {
      if (accept('+')) {
        const std::int64_t rhs = term();
        check(__builtin_add_overflow(value, rhs, &value), "+");
      } else if (accept('-')) {
        const std::int64_t rhs = term();
        check(__builtin_sub_overflow(value, rhs, &value), "-");
      } else {
        return value;
      }
    }
  }

  std::int64_t term() {
    std::int64_t value = unary();
    for (;;) {
      if (accept('*')) {
        const std::int64_t rhs = unary();
        check(__builtin_mul_overflow(value, rhs, &value), "*");
      } else if (accept('/')) {
        const std::size_t at = pos_;
        const std::int64_t rhs = unary();
        value = divide(value, rhs, at);
      } else if (accept('%')) {
        const std::size_t at = pos_;
        const std::int64_t rhs = unary();
        value = modulo(value, rhs, at);
      } else {
        return value;
      }
    }
  }

  std::int64_t divide(std::int64_t a, std::int64_t b, std::size_t at) {
    if (b == 0) {
      if (!sizes_) return 0;
      pos_ = at;
      fail("division by zero");
    }
    if (a == std::numeric_limits<std::int64_t>::min() && b == -1) {
      check(true, "/");
      return 0;
    }
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;  // round down, not toward zero
    return q;
  }

  std::int64_t modulo(std::int64_t a, std::int64_t b, std::size_t at) {
    if (b == 0) {
      if (!sizes_) return 0;
      pos_ = at;
      fail("modulo by zero");
    }
    if (b == -1) return 0;
    std::int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;  // consistent with rounding down
    return r;
  }

  std::int64_t unary() {
    if (++depth_ > kMaxDepth) fail("expression nested too deeply");
    std::int64_t value = 0;
    if (accept('-')) {
      const std::int64_t operand = unary();
      check(__builtin_sub_overflow(std::int64_t{0}, operand, &value), "-");
    } else if (accept('+')) {
      value = unary();
    } else {
      value = primary();
    }
    --depth_;
    return value;
  }

  std::int64_t primary() {
    skip_space();
    if (pos_ == text_.size()) fail("expected a number, a size name or '('");
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      const std::int64_t value = expr();
      if (!accept(')')) fail("expected ')'");
      return value;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::int64_t value = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        const int digit = text_[pos_] - '0';
        if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, digit, &value)) {
          fail("integer literal too large");
        }
        ++pos_;
      }
      if (pos_ < text_.size() && is_name_char(text_[pos_])) fail("a number cannot be followed by a letter");
      return value;
    }
    if (is_name_start(c)) {
      const std::size_t start = pos_;
      while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
      const std::string_view name = text_.substr(start, pos_ - start);
      names.emplace(name);
      if (!sizes_) return 1;
      auto it = sizes_->find(name);
      if (it == sizes_->end()) {
        std::string known;
        for (const auto& [size_name, unused] : *sizes_) known += (known.empty() ? "" : ", ") + size_name;
        pos_ = start;
        fail("unknown size name '" + std::string(name) + "' (known: " + (known.empty() ? "none" : known) + ")");
      }
      return it->second;
    }
    fail(std::string("unexpected '") + c + "'");
  }

  std::string_view text_;
  const SizeMap* sizes_;  // null: collect mode
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

std::set<std::string> size_expression_names(std::string_view expression) {
  Parser parser(expression, nullptr);
  parser.parse();
  return std::move(parser.names);
}

std::int64_t evaluate_size_expression(std::string_view expression, const SizeMap& sizes) {
  return Parser(expression, &sizes).parse();
}

bool is_identifier(std::string_view text) {
  if (text.empty() || !is_name_start(text[0])) return false;
  for (char c : text) {
    if (!is_name_char(c)) return false;
  }
  return true;
}

}  // namespace hiera::engine
