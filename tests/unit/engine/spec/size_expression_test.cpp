// Size expressions of launch contracts: names, values and exact errors.
#include "engine/spec/size_expression.h"

#include <gtest/gtest.h>

#include "engine/spec/spec_error.h"

namespace hiera::engine::spec {
namespace {

std::string error_of(const std::string& expression, const SizeMap* sizes = nullptr) {
  try {
    if (sizes) evaluate_size_expression(expression, *sizes);
    else size_expression_names(expression);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

TEST(SizeExpressionTest, NamesInSortedOrder) {
  EXPECT_EQ(size_expression_names("(N+255)/256*M + N%K"), (std::set<std::string>{"K", "M", "N"}));
  EXPECT_EQ(size_expression_names("256"), std::set<std::string>{});
  EXPECT_EQ(size_expression_names("-(a_1)"), std::set<std::string>{"a_1"});
}

TEST(SizeExpressionTest, EvaluatesWithFlooringDivision) {
  const SizeMap sizes = {{"N", 1000}, {"M", 3}};
  EXPECT_EQ(evaluate_size_expression("(N+255)/256", sizes), 4);
  EXPECT_EQ(evaluate_size_expression("2*N*M", sizes), 6000);
  EXPECT_EQ(evaluate_size_expression("-7/2", sizes), -4);
  EXPECT_EQ(evaluate_size_expression("-7%2", sizes), 1);
  EXPECT_EQ(evaluate_size_expression("N % 7", sizes), 6);
}

TEST(SizeExpressionTest, SyntaxErrorsNameTheExpressionAndColumn) {
  EXPECT_EQ(error_of("(N+1"), "size expression '(N+1': expected ')' at column 5");
  EXPECT_EQ(error_of("2*"), "size expression '2*': expected a number, a size name or '(' at column 3");
  EXPECT_EQ(error_of(""), "size expression '': empty expression at column 1");
  EXPECT_EQ(error_of("N N"), "size expression 'N N': unexpected 'N' at column 3");
  EXPECT_EQ(error_of("2N"), "size expression '2N': a number cannot be followed by a letter at column 2");
  EXPECT_EQ(error_of("N.5"), "size expression 'N.5': unexpected '.' at column 2");
}

TEST(SizeExpressionTest, EvaluationErrors) {
  const SizeMap sizes = {{"N", 4}};
  EXPECT_EQ(error_of("M*2", &sizes), "size expression 'M*2': unknown size name 'M' (known: N) at column 1");
  EXPECT_EQ(error_of("N/(N-4)", &sizes), "size expression 'N/(N-4)': division by zero at column 3");
  EXPECT_EQ(error_of("9223372036854775807+N", &sizes),
            "size expression '9223372036854775807+N': integer overflow in '+' at column 22");
  // Only syntax is checked without sizes: no division by zero there.
  EXPECT_EQ(error_of("N/(N-N)"), "");
}

TEST(SizeExpressionTest, Identifiers) {
  EXPECT_TRUE(is_identifier("N"));
  EXPECT_TRUE(is_identifier("_batch2"));
  EXPECT_FALSE(is_identifier("2N"));
  EXPECT_FALSE(is_identifier(""));
  EXPECT_FALSE(is_identifier("a-b"));
}

}  // namespace
}  // namespace hiera::engine::spec
