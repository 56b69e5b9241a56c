// {{name}} placeholders: found in order, checked against a vocabulary, and
// filled in one pass.
#include "engine/knowledge/placeholders.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hiera::engine::knowledge {
namespace {

using ::testing::ElementsAre;

TEST(PlaceholdersTest, FindsDistinctNamesInOrder) {
  EXPECT_THAT(find_placeholders("{{b}} x {{a_1}} {{b}} {{_c}}"), ElementsAre("b", "a_1", "_c"));
}

TEST(PlaceholdersTest, BracesThatAreNotPlaceholdersAreIgnored) {
  EXPECT_THAT(find_placeholders("dim3 g{{1, 2}}; {{ spaced }} {{9x}} {{}} {{a-b}} {x}"), ElementsAre());
  EXPECT_THAT(find_placeholders("{{{inner}}}"), ElementsAre("inner"));
}

TEST(PlaceholdersTest, CheckAcceptsAllowedNames) {
  EXPECT_EQ(check_placeholders("a {{x}} b {{y}}", {"x", "y"}), std::nullopt);
  EXPECT_EQ(check_placeholders("no placeholders", {}), std::nullopt);
}

TEST(PlaceholdersTest, CheckRejectsUnknownAndMalformed) {
  EXPECT_EQ(check_placeholders("{{x}} {{z}}", {"x", "y"}), "unknown placeholder {{z}} (allowed: x, y)");
  EXPECT_EQ(check_placeholders("a\nb {{x }} c", {"x"}), "malformed placeholder at line 2: {{x }} (expected {{name}})");
  EXPECT_EQ(check_placeholders("{{x", {"x"}), "malformed placeholder at line 1: {{x (expected {{name}})");
}

TEST(PlaceholdersTest, FillReplacesEveryOccurrence) {
  EXPECT_EQ(fill_placeholders("{{a}}+{{b}}={{a}}{{b}}", {{"a", "1"}, {"b", "2"}, {"unused", "x"}}), "1+2=12");
  EXPECT_EQ(fill_placeholders("{{{a}}}", {{"a", "v"}}), "{v}");
  EXPECT_EQ(fill_placeholders("dim3 g{{1, 2}};", {}), "dim3 g{{1, 2}};");
}

TEST(PlaceholdersTest, FilledValuesAreNotExpandedAgain) {
  EXPECT_EQ(fill_placeholders("code: {{code}}", {{"code", "x = {{code}} {{other}}"}}), "code: x = {{code}} {{other}}");
}

TEST(PlaceholdersTest, FillWithoutAValueThrows) {
  try {
    fill_placeholders("{{a}} {{b}}", {{"a", "1"}});
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "no value for placeholder {{b}}");
  }
}

}  // namespace
}  // namespace hiera::engine::knowledge
