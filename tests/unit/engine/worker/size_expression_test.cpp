// Integer size expressions of launch contracts: exact values and every error.
#ifdef HIERA_HAVE_WORKER
#include <gtest/gtest.h>

#include <limits>

#include "engine/worker/size_expression.h"

namespace {

using hiera::worker::evaluate_size_expression;
using hiera::worker::SizeEnv;
using hiera::worker::SizeExpressionError;

const SizeEnv kSizes = {{"N", 16777216}, {"M", 1000003}, {"K", 7}, {"ZERO", 0}};

std::string error_of(const std::string& expression, const SizeEnv& sizes = kSizes) {
  try {
    evaluate_size_expression(expression, sizes);
  } catch (const SizeExpressionError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SizeExpression, EvaluatesArithmeticWithPrecedenceAndParentheses) {
  EXPECT_EQ(evaluate_size_expression("(N+255)/256", kSizes), 65536);
  EXPECT_EQ(evaluate_size_expression("(M+255)/256", kSizes), 3907);
  EXPECT_EQ(evaluate_size_expression("12*N", kSizes), 201326592);
  EXPECT_EQ(evaluate_size_expression("2 + 3 * 4", kSizes), 14);
  EXPECT_EQ(evaluate_size_expression("(2 + 3) * 4", kSizes), 20);
  EXPECT_EQ(evaluate_size_expression("10 - 4 - 3", kSizes), 3);  // left-associative
  EXPECT_EQ(evaluate_size_expression("100 / 10 / 5", kSizes), 2);
  EXPECT_EQ(evaluate_size_expression("M % 256", kSizes), 1000003 % 256);
  EXPECT_EQ(evaluate_size_expression("  K*K  ", kSizes), 49);
  EXPECT_EQ(evaluate_size_expression("-K + 10", kSizes), 3);
  EXPECT_EQ(evaluate_size_expression("--K", kSizes), 7);
  EXPECT_EQ(evaluate_size_expression("+K", kSizes), 7);
  EXPECT_EQ(evaluate_size_expression("0", kSizes), 0);
  EXPECT_EQ(evaluate_size_expression("9223372036854775807", kSizes), std::numeric_limits<std::int64_t>::max());
}

TEST(SizeExpression, DivisionRoundsDownAndModuloFollowsIt) {
  EXPECT_EQ(evaluate_size_expression("7/2", kSizes), 3);
  EXPECT_EQ(evaluate_size_expression("-7/2", kSizes), -4);
  EXPECT_EQ(evaluate_size_expression("7/-2", kSizes), -4);
  EXPECT_EQ(evaluate_size_expression("-7/-2", kSizes), 3);
  EXPECT_EQ(evaluate_size_expression("-7%2", kSizes), 1);
  EXPECT_EQ(evaluate_size_expression("7%-2", kSizes), -1);
  // a == (a/b)*b + a%b for every sign combination.
  for (int a : {-7, -6, 0, 6, 7}) {
    for (int b : {-3, -2, 2, 3}) {
      const SizeEnv env = {{"a", a}, {"b", b}};
      EXPECT_EQ(evaluate_size_expression("(a/b)*b + a%b", env), a) << a << " " << b;
    }
  }
}

TEST(SizeExpression, UnknownNamesAreNamedWithTheKnownOnes) {
  const std::string error = error_of("(X+1)*N");
  EXPECT_NE(error.find("unknown size name 'X'"), std::string::npos) << error;
  EXPECT_NE(error.find("known: K, M, N, ZERO"), std::string::npos) << error;
  EXPECT_NE(error.find("'(X+1)*N'"), std::string::npos) << error;
  EXPECT_NE(error_of("n").find("unknown size name 'n'"), std::string::npos);  // names are case-sensitive
}

TEST(SizeExpression, DivisionAndModuloByZeroAreErrors) {
  EXPECT_NE(error_of("N/ZERO").find("division by zero"), std::string::npos);
  EXPECT_NE(error_of("N/(K-7)").find("division by zero"), std::string::npos);
  EXPECT_NE(error_of("N%0").find("modulo by zero"), std::string::npos);
}

TEST(SizeExpression, OverflowIsAnErrorNotAWrap) {
  EXPECT_NE(error_of("N*N*N*N").find("integer overflow in '*'"), std::string::npos);
  EXPECT_NE(error_of("9223372036854775807+1").find("integer overflow in '+'"), std::string::npos);
  EXPECT_NE(error_of("-9223372036854775807-2").find("integer overflow in '-'"), std::string::npos);
  EXPECT_NE(error_of("99999999999999999999").find("integer literal too large"), std::string::npos);
  EXPECT_NE(error_of("(-9223372036854775807-1)/-1").find("integer overflow in '/'"), std::string::npos);
}

TEST(SizeExpression, SyntaxErrorsSayWhatAndWhere) {
  EXPECT_NE(error_of("").find("empty expression"), std::string::npos);
  EXPECT_NE(error_of("   ").find("empty expression"), std::string::npos);
  EXPECT_NE(error_of("(N+1").find("expected ')'"), std::string::npos);
  EXPECT_NE(error_of("N+").find("expected a number"), std::string::npos);
  EXPECT_NE(error_of("N)").find("unexpected ')'"), std::string::npos);
  EXPECT_NE(error_of("N ^ 2").find("unexpected '^'"), std::string::npos);
  EXPECT_NE(error_of("2N").find("a number cannot be followed by a letter"), std::string::npos);
  EXPECT_NE(error_of("N 2").find("column 3"), std::string::npos);
  EXPECT_NE(error_of("1.5*N").find("unexpected '.'"), std::string::npos);
}

TEST(SizeExpression, DeepNestingIsRefusedNotACrash) {
  const std::string deep = std::string(100000, '(') + "1" + std::string(100000, ')');
  EXPECT_NE(error_of(deep).find("nested too deeply"), std::string::npos);
  const std::string negations(100000, '-');
  EXPECT_NE(error_of(negations + "1").find("nested too deeply"), std::string::npos);
}

}  // namespace
#endif  // HIERA_HAVE_WORKER
