// SecretRedactor: every occurrence of a configured secret's value becomes
// "[redacted $NAME]"; short values are not secrets; names are kept for the
// environments they must be removed from.
#include "engine/common/secret_redactor.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace hiera::engine {
namespace {

TEST(SecretRedactor, ReplacesEveryOccurrenceWithTheVariablesName) {
  SecretRedactor secrets;
  secrets.add("OPENAI_API_KEY", "sk-live-0123456789");
  EXPECT_EQ(secrets.redact("key=sk-live-0123456789; again sk-live-0123456789!"),
            "key=[redacted $OPENAI_API_KEY]; again [redacted $OPENAI_API_KEY]!");
  EXPECT_EQ(secrets.redact("sk-live-0123456789sk-live-0123456789"),
            "[redacted $OPENAI_API_KEY][redacted $OPENAI_API_KEY]");
  EXPECT_EQ(secrets.redact("sk-live-012345678 is not it"), "sk-live-012345678 is not it");  // one character short
  EXPECT_TRUE(secrets.contains_secret("x sk-live-0123456789 y"));
  EXPECT_FALSE(secrets.contains_secret("sk-live-"));
}

TEST(SecretRedactor, TheLongerOfTwoOverlappingSecretsWins) {
  SecretRedactor secrets;
  secrets.add("SHORT", "abcdefgh");
  secrets.add("LONG", "abcdefgh-ijklmnop");
  EXPECT_EQ(secrets.redact("abcdefgh-ijklmnop / abcdefgh"), "[redacted $LONG] / [redacted $SHORT]");
}

TEST(SecretRedactor, ValuesShorterThanEightCharactersAreNotSecretsButTheirNamesAreKept) {
  SecretRedactor secrets;
  secrets.add("EMPTY_KEY", "");
  secrets.add("SHORT_KEY", "1234567");
  EXPECT_TRUE(secrets.empty());
  EXPECT_EQ(secrets.redact("1234567 and more"), "1234567 and more");
  EXPECT_EQ(secrets.names(), (std::vector<std::string>{"EMPTY_KEY", "SHORT_KEY"}));
  secrets.add("SHORT_KEY", "12345678");  // the same name again: the last value wins, the name once
  EXPECT_EQ(secrets.redact("12345678"), "[redacted $SHORT_KEY]");
  EXPECT_EQ(secrets.names(), (std::vector<std::string>{"EMPTY_KEY", "SHORT_KEY"}));
}

TEST(SecretRedactor, ReadsValuesFromTheEnvironmentAndKeepsTheNamesOfUnsetOnes) {
  ::setenv("HIERA_TEST_REDACTOR_KEY", "tok-abcdefghijkl", 1);
  ::unsetenv("HIERA_TEST_REDACTOR_UNSET");
  SecretRedactor secrets;
  secrets.add_from_environment("HIERA_TEST_REDACTOR_KEY");
  secrets.add_from_environment("HIERA_TEST_REDACTOR_UNSET");
  ::unsetenv("HIERA_TEST_REDACTOR_KEY");
  EXPECT_EQ(secrets.redact("Traceback: KeyError('tok-abcdefghijkl')"),
            "Traceback: KeyError('[redacted $HIERA_TEST_REDACTOR_KEY]')");
  EXPECT_EQ(secrets.names(), (std::vector<std::string>{"HIERA_TEST_REDACTOR_KEY", "HIERA_TEST_REDACTOR_UNSET"}));
}

TEST(SecretRedactor, WithoutSecretsTextIsUnchanged) {
  const SecretRedactor none;
  EXPECT_EQ(none.redact("anything at all \xff"), "anything at all \xff");
  EXPECT_FALSE(none.contains_secret("anything"));
}

}  // namespace
}  // namespace hiera::engine
