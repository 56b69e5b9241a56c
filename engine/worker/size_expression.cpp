#include "engine/worker/size_expression.h"

#include <cctype>
#include <limits>

namespace hiera::worker {

namespace {

// Recursive descent over the grammar
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/' | '%') unary)*
//   unary   := ('+' | '-') unary | primary
//   primary := integer | name | '(' expr ')'
class Parser {
 public:
  Parser(std::string_view text, const SizeEnv& sizes) : text_(text), sizes_(sizes) {}

  std::int64_t parse() {
    skip_space();
    if (pos_ == text_.size()) fail("empty expression");
    const std::int64_t value = expr();
    skip_space();
    if (pos_ != text_.size()) fail(std::string("unexpected '") + text_[pos_] + "'");
    return value;
  }

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
    if (overflowed) fail(std::string("integer overflow in '") + op + "'");
  }

  std::int64_t expr() {
    std::int64_t value = term();
    for (;;) {
      std::int64_t rhs = 0;
      if (accept('+')) {
        rhs = term();
        check(__builtin_add_overflow(value, rhs, &value), "+");
      } else if (accept('-')) {
        rhs = term();
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
      pos_ = at;
      fail("division by zero");
    }
    if (a == std::numeric_limits<std::int64_t>::min() && b == -1) fail("integer overflow in '/'");
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;  // round down, not toward zero
    return q;
  }

  std::int64_t modulo(std::int64_t a, std::int64_t b, std::size_t at) {
    if (b == 0) {
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
      if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
        fail("a number cannot be followed by a letter");
      }
      return value;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
      const std::string_view name = text_.substr(start, pos_ - start);
      auto it = sizes_.find(name);
      if (it == sizes_.end()) {
        std::string known;
        for (const auto& [size_name, unused] : sizes_) known += (known.empty() ? "" : ", ") + size_name;
        pos_ = start;
        fail("unknown size name '" + std::string(name) + "' (known: " + (known.empty() ? "none" : known) + ")");
      }
      return it->second;
    }
    fail(std::string("unexpected '") + c + "'");
  }

  std::string_view text_;
  const SizeEnv& sizes_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

std::int64_t evaluate_size_expression(std::string_view expression, const SizeEnv& sizes) {
  return Parser(expression, sizes).parse();
}

}  // namespace hiera::worker
