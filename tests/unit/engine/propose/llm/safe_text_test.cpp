// Redacting the key and bounding excerpts of provider text.
#include "engine/propose/llm/safe_text.h"

#include <gtest/gtest.h>

namespace hiera::engine::propose::llm {
namespace {

TEST(LlmSafeTextTest, RedactsEveryOccurrence) {
  EXPECT_EQ(redact("key sk-1 and sk-1sk-1.", "sk-1"), "key [redacted] and [redacted][redacted].");
  EXPECT_EQ(redact("nothing here", "sk-1"), "nothing here");
  EXPECT_EQ(redact("no secret", ""), "no secret");
}

TEST(LlmSafeTextTest, ExcerptCutsAtCharacterBoundaries) {
  EXPECT_EQ(excerpt("short", 10), "short");
  EXPECT_EQ(excerpt("0123456789abc", 10), "0123456789...");
  // "é" is two bytes (C3 A9): a cut in its middle backs off before it.
  EXPECT_EQ(excerpt("abcd\xC3\xA9", 5), "abcd...");
  EXPECT_EQ(excerpt("abcd\xC3\xA9z", 6), "abcd\xC3\xA9...");
}

}  // namespace
}  // namespace hiera::engine::propose::llm
