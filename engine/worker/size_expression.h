#pragma once
// Integer size expressions of launch contracts ("(N+255)/256", "2*N*K"):
// integers, size names, + - * / % and parentheses, in 64-bit arithmetic where
// / rounds down (toward negative infinity) and % takes the sign of the divisor.
// Every failure is a SizeExpressionError naming the expression and the problem.
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

namespace hiera::worker {

using SizeEnv = std::map<std::string, std::int64_t, std::less<>>;

class SizeExpressionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::int64_t evaluate_size_expression(std::string_view expression, const SizeEnv& sizes);

}  // namespace hiera::worker
