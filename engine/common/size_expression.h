#pragma once
// Integer size expressions of launch contracts ("(N+255)/256", "2*N*K"):
// integers, size names, + - * / % and parentheses, in 64-bit arithmetic where
// / rounds down (toward negative infinity) and % takes the sign of the divisor.
// One grammar for both sides of the job protocol: engine/spec checks the
// expressions an annotation writes before any job leaves, and engine/worker
// evaluates them at the task's sizes. Every failure is a SizeExpressionError
// naming the expression, the problem and its column; each side wraps it in its
// own error type.
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>

namespace hiera::engine {

// Size names to their values; finds by string_view.
using SizeMap = std::map<std::string, std::int64_t, std::less<>>;

class SizeExpressionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The size names an expression uses, in sorted order. Only the syntax is
// checked ("size expression '(N+1': expected ')' at column 5"); no sizes are
// known, so there is no division by zero or overflow to find.
std::set<std::string> size_expression_names(std::string_view expression);

// The value at these sizes. Throws on bad syntax, an unknown name (the known
// ones are listed), division or modulo by zero, and overflow.
std::int64_t evaluate_size_expression(std::string_view expression, const SizeMap& sizes);

// Whether the text is a C identifier (a size or argument name).
bool is_identifier(std::string_view text);

}  // namespace hiera::engine
