// Integer size expressions of launch contracts, as engine/spec checks them and
// engine/worker evaluates them: names, exact values, and every error exactly.
#include "engine/common/size_expression.h"

#include <gtest/gtest.h>

#include <limits>
#include <set>
#include <string>

#include "thrown_message.h"

namespace hiera::engine {
namespace {

const SizeMap kSizes = {{"N", 16777216}, {"M", 1000003}, {"K", 7}, {"ZERO", 0}};

// The message of evaluating at these sizes, or "(no error)".
std::string error_of(const std::string& expression, const SizeMap& sizes = kSizes) {
  return hiera::testing::thrown_message<SizeExpressionError>([&] { evaluate_size_expression(expression, sizes); },
                                                             "(no error)");
}

// The message of collecting the names (syntax only), or "(no error)".
std::string syntax_error_of(const std::string& expression) {
  return hiera::testing::thrown_message<SizeExpressionError>([&] { size_expression_names(expression); }, "(no error)");
}

TEST(SizeExpressionTest, NamesInSortedOrder) {
  EXPECT_EQ(size_expression_names("(N+255)/256*M + N%K"), (std::set<std::string>{"K", "M", "N"}));
  EXPECT_EQ(size_expression_names("256"), std::set<std::string>{});
  EXPECT_EQ(size_expression_names("-(a_1)"), std::set<std::string>{"a_1"});
}

TEST(SizeExpressionTest, EvaluatesArithmeticWithPrecedenceAndParentheses) {
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
  const SizeMap sizes = {{"N", 1000}, {"M", 3}};
  EXPECT_EQ(evaluate_size_expression("(N+255)/256", sizes), 4);
  EXPECT_EQ(evaluate_size_expression("2*N*M", sizes), 6000);
  EXPECT_EQ(evaluate_size_expression("N % 7", sizes), 6);
}

TEST(SizeExpressionTest, DivisionRoundsDownAndModuloFollowsIt) {
  EXPECT_EQ(evaluate_size_expression("7/2", kSizes), 3);
  EXPECT_EQ(evaluate_size_expression("-7/2", kSizes), -4);
  EXPECT_EQ(evaluate_size_expression("7/-2", kSizes), -4);
  EXPECT_EQ(evaluate_size_expression("-7/-2", kSizes), 3);
  EXPECT_EQ(evaluate_size_expression("-7%2", kSizes), 1);
  EXPECT_EQ(evaluate_size_expression("7%-2", kSizes), -1);
  // a == (a/b)*b + a%b for every sign combination.
  for (int a : {-7, -6, 0, 6, 7}) {
    for (int b : {-3, -2, 2, 3}) {
      const SizeMap sizes = {{"a", a}, {"b", b}};
      EXPECT_EQ(evaluate_size_expression("(a/b)*b + a%b", sizes), a) << a << " " << b;
    }
  }
}

TEST(SizeExpressionTest, UnknownNamesAreNamedWithTheKnownOnes) {
  EXPECT_EQ(error_of("(X+1)*N"), "size expression '(X+1)*N': unknown size name 'X' (known: K, M, N, ZERO) at column 2");
  EXPECT_EQ(error_of("n"), "size expression 'n': unknown size name 'n' (known: K, M, N, ZERO) at column 1");  // case-sensitive
  EXPECT_EQ(error_of("M*2", {{"N", 4}}), "size expression 'M*2': unknown size name 'M' (known: N) at column 1");
  EXPECT_EQ(error_of("N", {}), "size expression 'N': unknown size name 'N' (known: none) at column 1");
}

TEST(SizeExpressionTest, DivisionAndModuloByZeroAreErrors) {
  EXPECT_EQ(error_of("N/ZERO"), "size expression 'N/ZERO': division by zero at column 3");
  EXPECT_EQ(error_of("N/(K-7)"), "size expression 'N/(K-7)': division by zero at column 3");
  EXPECT_EQ(error_of("N%0"), "size expression 'N%0': modulo by zero at column 3");
  EXPECT_EQ(error_of("N/(N-4)", {{"N", 4}}), "size expression 'N/(N-4)': division by zero at column 3");
  // Only syntax is checked without sizes: no division by zero there.
  EXPECT_EQ(syntax_error_of("N/(N-N)"), "(no error)");
  EXPECT_EQ(syntax_error_of("N%0"), "(no error)");
}

TEST(SizeExpressionTest, OverflowIsAnErrorNotAWrap) {
  EXPECT_EQ(error_of("N*N*N*N"), "size expression 'N*N*N*N': integer overflow in '*' at column 6");
  EXPECT_EQ(error_of("9223372036854775807+1"),
            "size expression '9223372036854775807+1': integer overflow in '+' at column 22");
  EXPECT_EQ(error_of("9223372036854775807+N", {{"N", 4}}),
            "size expression '9223372036854775807+N': integer overflow in '+' at column 22");
  EXPECT_EQ(error_of("-9223372036854775807-2"),
            "size expression '-9223372036854775807-2': integer overflow in '-' at column 23");
  EXPECT_EQ(error_of("99999999999999999999"),
            "size expression '99999999999999999999': integer literal too large at column 19");
  EXPECT_EQ(error_of("(-9223372036854775807-1)/-1"),
            "size expression '(-9223372036854775807-1)/-1': integer overflow in '/' at column 28");
  // Without sizes only the syntax counts, and a literal too large is bad syntax.
  EXPECT_EQ(syntax_error_of("N*N*N*N"), "(no error)");
  EXPECT_EQ(syntax_error_of("99999999999999999999"),
            "size expression '99999999999999999999': integer literal too large at column 19");
}

TEST(SizeExpressionTest, SyntaxErrorsNameTheExpressionAndColumn) {
  EXPECT_EQ(syntax_error_of("(N+1"), "size expression '(N+1': expected ')' at column 5");
  EXPECT_EQ(syntax_error_of("2*"), "size expression '2*': expected a number, a size name or '(' at column 3");
  EXPECT_EQ(syntax_error_of(""), "size expression '': empty expression at column 1");
  EXPECT_EQ(syntax_error_of("N N"), "size expression 'N N': unexpected 'N' at column 3");
  EXPECT_EQ(syntax_error_of("2N"), "size expression '2N': a number cannot be followed by a letter at column 2");
  EXPECT_EQ(syntax_error_of("N.5"), "size expression 'N.5': unexpected '.' at column 2");
  // Evaluating reports the same syntax errors.
  EXPECT_EQ(error_of(""), "size expression '': empty expression at column 1");
  EXPECT_EQ(error_of("   "), "size expression '   ': empty expression at column 4");
  EXPECT_EQ(error_of("(N+1"), "size expression '(N+1': expected ')' at column 5");
  EXPECT_EQ(error_of("N+"), "size expression 'N+': expected a number, a size name or '(' at column 3");
  EXPECT_EQ(error_of("N)"), "size expression 'N)': unexpected ')' at column 2");
  EXPECT_EQ(error_of("N ^ 2"), "size expression 'N ^ 2': unexpected '^' at column 3");
  EXPECT_EQ(error_of("2N"), "size expression '2N': a number cannot be followed by a letter at column 2");
  EXPECT_EQ(error_of("N 2"), "size expression 'N 2': unexpected '2' at column 3");
  EXPECT_EQ(error_of("1.5*N"), "size expression '1.5*N': unexpected '.' at column 2");
}

TEST(SizeExpressionTest, DeepNestingIsRefusedNotACrash) {
  // Built by append: GCC 12's -Warray-bounds misreads operator+ on a temporary this long.
  std::string deep(100000, '(');
  deep.append("1").append(100000, ')');
  EXPECT_NE(error_of(deep).find("': expression nested too deeply at column 201"), std::string::npos);
  EXPECT_NE(syntax_error_of(deep).find("': expression nested too deeply at column 201"), std::string::npos);
  const std::string negations(100000, '-');
  EXPECT_NE(error_of(negations + "1").find("': expression nested too deeply at column 201"), std::string::npos);
}

TEST(SizeExpressionTest, Identifiers) {
  EXPECT_TRUE(is_identifier("N"));
  EXPECT_TRUE(is_identifier("_batch2"));
  EXPECT_FALSE(is_identifier("2N"));
  EXPECT_FALSE(is_identifier(""));
  EXPECT_FALSE(is_identifier("a-b"));
}

}  // namespace
}  // namespace hiera::engine
