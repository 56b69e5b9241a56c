#include "protocol/json_text.h"

#include <gtest/gtest.h>

#include <string>

namespace hiera::protocol {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(IsValidUtf8, AcceptsWellFormedText) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii\n\t"));
  EXPECT_TRUE(is_valid_utf8(std::string("nul\0inside", 10)));
  EXPECT_TRUE(is_valid_utf8("\x7F"));                  // U+007F
  EXPECT_TRUE(is_valid_utf8("\xC2\x80"));              // U+0080
  EXPECT_TRUE(is_valid_utf8("\xDF\xBF"));              // U+07FF
  EXPECT_TRUE(is_valid_utf8("\xE0\xA0\x80"));          // U+0800
  EXPECT_TRUE(is_valid_utf8("\xED\x9F\xBF"));          // U+D7FF, just below the surrogates
  EXPECT_TRUE(is_valid_utf8("\xEE\x80\x80"));          // U+E000, just above them
  EXPECT_TRUE(is_valid_utf8("\xEF\xBF\xBF"));          // U+FFFF
  EXPECT_TRUE(is_valid_utf8("\xF0\x90\x80\x80"));      // U+10000
  EXPECT_TRUE(is_valid_utf8("\xF4\x8F\xBF\xBF"));      // U+10FFFF
  EXPECT_TRUE(is_valid_utf8("h\xC3\xA9llo \xF0\x9F\x98\x80"));
}

TEST(IsValidUtf8, RejectsIllFormedText) {
  EXPECT_FALSE(is_valid_utf8("\x80"));                 // lone continuation byte
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));             // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xC1\xBF"));             // overlong
  EXPECT_FALSE(is_valid_utf8("\xE0\x80\xAF"));         // overlong 3-byte
  EXPECT_FALSE(is_valid_utf8("\xF0\x80\x80\xAF"));     // overlong 4-byte
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));         // U+D800 surrogate
  EXPECT_FALSE(is_valid_utf8("\xED\xBF\xBF"));         // U+DFFF surrogate
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));     // U+110000
  EXPECT_FALSE(is_valid_utf8("\xF5\x80\x80\x80"));     // lead byte past U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xFF"));
  EXPECT_FALSE(is_valid_utf8("\xE2\x82"));             // truncated at the end
  EXPECT_FALSE(is_valid_utf8("\xE2\x82" "A"));         // truncated before ASCII
  EXPECT_FALSE(is_valid_utf8("ok\xF0\x9F\x98"));       // truncated emoji
}

TEST(SanitizeUtf8, ValidTextIsUnchanged) {
  const std::string text = "__global__ void k() {} // h\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80";
  EXPECT_EQ(sanitize_utf8(text), text);
  EXPECT_EQ(sanitize_utf8(""), "");
}

TEST(SanitizeUtf8, EachMaximalSubpartBecomesOneReplacement) {
  EXPECT_EQ(sanitize_utf8("a\xFF" "b"), "a" + kFffd + "b");
  EXPECT_EQ(sanitize_utf8("\x80\x80"), kFffd + kFffd);
  // Overlongs: C0 can never start a sequence, so each byte is replaced.
  EXPECT_EQ(sanitize_utf8("a\xC0\xAF" "b"), "a" + kFffd + kFffd + "b");
  EXPECT_EQ(sanitize_utf8("\xE0\x80\xAF"), kFffd + kFffd + kFffd);
  // Surrogates and code points past U+10FFFF.
  EXPECT_EQ(sanitize_utf8("\xED\xA0\x80"), kFffd + kFffd + kFffd);
  EXPECT_EQ(sanitize_utf8("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);
  // A truncated sequence is one replacement, and the next character survives.
  EXPECT_EQ(sanitize_utf8("\xE2\x82"), kFffd);
  EXPECT_EQ(sanitize_utf8("\xE2\x82" "A"), kFffd + "A");
  EXPECT_EQ(sanitize_utf8("x\xF0\x9F\x98"), "x" + kFffd);
  EXPECT_EQ(sanitize_utf8("\xF0\x9F\x98\xC3\xA9"), kFffd + "\xC3\xA9");
}

TEST(SanitizeUtf8, OutputIsAlwaysValid) {
  std::string all;
  for (int b = 0; b < 256; ++b) {
    for (int c = 0x70; c < 0xC8; c += 7) {
      all.push_back(static_cast<char>(b));
      all.push_back(static_cast<char>(c));
    }
  }
  EXPECT_FALSE(is_valid_utf8(all));
  EXPECT_TRUE(is_valid_utf8(sanitize_utf8(all)));
}

TEST(DumpJson, IsCompactAndKeepsUnicodeUnescaped) {
  EXPECT_EQ(dump_json(nlohmann::json{{"a", {1, 2}}, {"b", "h\xC3\xA9"}}), "{\"a\":[1,2],\"b\":\"h\xC3\xA9\"}");
}

TEST(DumpJson, InvalidUtf8IsReplacedNotThrown) {
  const nlohmann::json value = {{"text", "int x; // \xFF\xFE bad \xC0"}};
  EXPECT_THROW((void)value.dump(), nlohmann::json::type_error);  // what dump_json protects against
  std::string out;
  ASSERT_NO_THROW(out = dump_json(value));
  EXPECT_EQ(out, "{\"text\":\"int x; // " + kFffd + kFffd + " bad " + kFffd + "\"}");
  EXPECT_TRUE(is_valid_utf8(out));
}

}  // namespace
}  // namespace hiera::protocol
