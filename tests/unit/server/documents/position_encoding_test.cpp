#include "server/documents/position_encoding.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace hiera::server {
namespace {

using protocol::lsp::Position;
using Starts = std::vector<std::size_t>;

constexpr auto kUtf16 = PositionEncoding::Utf16;
constexpr auto kUtf8 = PositionEncoding::Utf8;

// Small wrappers so each expectation reads as one line.
std::size_t offset(std::string_view text, std::int64_t line, std::int64_t character, PositionEncoding encoding) {
  return position_to_offset(text, compute_line_starts(text), Position{line, character}, encoding);
}
Position position(std::string_view text, std::size_t at, PositionEncoding encoding) {
  return offset_to_position(text, compute_line_starts(text), at, encoding);
}

TEST(PositionEncoding, ToString) {
  EXPECT_STREQ(to_string(kUtf16), "utf-16");
  EXPECT_STREQ(to_string(kUtf8), "utf-8");
}

TEST(PositionEncoding, LineStartsForEveryKindOfBreak) {
  EXPECT_EQ(compute_line_starts(""), (Starts{0}));
  EXPECT_EQ(compute_line_starts("abc"), (Starts{0}));
  EXPECT_EQ(compute_line_starts("a\nb"), (Starts{0, 2}));
  EXPECT_EQ(compute_line_starts("a\n"), (Starts{0, 2}));
  EXPECT_EQ(compute_line_starts("a\r\nb"), (Starts{0, 3}));
  EXPECT_EQ(compute_line_starts("a\rb"), (Starts{0, 2}));
  EXPECT_EQ(compute_line_starts("\r"), (Starts{0, 1}));
  // \r \r\n \n: three breaks, the middle one two bytes wide.
  EXPECT_EQ(compute_line_starts("\r\r\n\n"), (Starts{0, 1, 3, 4}));
  // \n followed by \r is two breaks, not one.
  EXPECT_EQ(compute_line_starts("a\n\rb"), (Starts{0, 2, 3}));
  EXPECT_EQ(compute_line_starts("a\nb\r\nc\rd"), (Starts{0, 2, 5, 7}));
}

TEST(PositionEncoding, Ascii) {
  const std::string text = "hello\nworld";
  for (auto encoding : {kUtf16, kUtf8}) {
    EXPECT_EQ(offset(text, 0, 0, encoding), 0u);
    EXPECT_EQ(offset(text, 0, 5, encoding), 5u);
    EXPECT_EQ(offset(text, 1, 0, encoding), 6u);
    EXPECT_EQ(offset(text, 1, 3, encoding), 9u);
    EXPECT_EQ(offset(text, 1, 5, encoding), 11u);
    EXPECT_EQ(position(text, 0, encoding), (Position{0, 0}));
    EXPECT_EQ(position(text, 5, encoding), (Position{0, 5}));
    EXPECT_EQ(position(text, 6, encoding), (Position{1, 0}));
    EXPECT_EQ(position(text, 9, encoding), (Position{1, 3}));
    EXPECT_EQ(position(text, 11, encoding), (Position{1, 5}));
  }
}

TEST(PositionEncoding, ClampsOutOfRange) {
  const std::string text = "hello\nworld\n";
  EXPECT_EQ(offset(text, 0, 99, kUtf16), 5u);  // before the \n
  EXPECT_EQ(offset(text, 1, 99, kUtf8), 11u);
  EXPECT_EQ(offset(text, 2, 0, kUtf16), 12u);  // the empty last line
  EXPECT_EQ(offset(text, 2, 7, kUtf16), 12u);
  EXPECT_EQ(offset(text, 3, 0, kUtf16), 12u);  // past the last line: end of text
  EXPECT_EQ(offset(text, 1000, 1000, kUtf8), 12u);
  EXPECT_EQ(offset(text, -1, 3, kUtf16), 0u);
  EXPECT_EQ(offset(text, 1, -4, kUtf16), 6u);
  EXPECT_EQ(position(text, 12, kUtf16), (Position{2, 0}));
  EXPECT_EQ(position(text, 500, kUtf16), (Position{2, 0}));
  EXPECT_EQ(position("abc", 500, kUtf8), (Position{0, 3}));
  EXPECT_EQ(offset("", 0, 0, kUtf16), 0u);
  EXPECT_EQ(offset("", 4, 4, kUtf16), 0u);
  EXPECT_EQ(position("", 3, kUtf16), (Position{0, 0}));
}

TEST(PositionEncoding, EmptyLineStartsTableIsOneLine) {
  EXPECT_EQ(position_to_offset("ab\ncd", {}, Position{0, 9}, kUtf16), 5u);
  EXPECT_EQ(offset_to_position("ab\ncd", {}, 4, kUtf16), (Position{0, 4}));
}

TEST(PositionEncoding, CjkIsOneUtf16UnitAndThreeBytes) {
  const std::string text = "日本語x";  // 日 0..2, 本 3..5, 語 6..8, x 9
  ASSERT_EQ(text.size(), 10u);
  EXPECT_EQ(offset(text, 0, 1, kUtf16), 3u);
  EXPECT_EQ(offset(text, 0, 2, kUtf16), 6u);
  EXPECT_EQ(offset(text, 0, 3, kUtf16), 9u);
  EXPECT_EQ(offset(text, 0, 4, kUtf16), 10u);
  EXPECT_EQ(offset(text, 0, 5, kUtf16), 10u);
  EXPECT_EQ(offset(text, 0, 3, kUtf8), 3u);
  EXPECT_EQ(offset(text, 0, 4, kUtf8), 3u);  // inside 本: its start
  EXPECT_EQ(offset(text, 0, 5, kUtf8), 3u);
  EXPECT_EQ(offset(text, 0, 9, kUtf8), 9u);
  EXPECT_EQ(offset(text, 0, 10, kUtf8), 10u);

  EXPECT_EQ(position(text, 3, kUtf16), (Position{0, 1}));
  EXPECT_EQ(position(text, 4, kUtf16), (Position{0, 1}));  // inside 本
  EXPECT_EQ(position(text, 9, kUtf16), (Position{0, 3}));
  EXPECT_EQ(position(text, 10, kUtf16), (Position{0, 4}));
  EXPECT_EQ(position(text, 5, kUtf8), (Position{0, 3}));
  EXPECT_EQ(position(text, 9, kUtf8), (Position{0, 9}));
}

TEST(PositionEncoding, TwoByteCharacter) {
  const std::string text = "caf\xC3\xA9!";  // é is C3 A9
  EXPECT_EQ(offset(text, 0, 4, kUtf16), 5u);
  EXPECT_EQ(offset(text, 0, 4, kUtf8), 3u);
  EXPECT_EQ(offset(text, 0, 5, kUtf8), 5u);
  EXPECT_EQ(position(text, 5, kUtf16), (Position{0, 4}));
  EXPECT_EQ(position(text, 5, kUtf8), (Position{0, 5}));
}

TEST(PositionEncoding, EmojiIsTwoUtf16UnitsAndFourBytes) {
  const std::string text = "a\xF0\x9F\x98\x80" "b";  // a 0, 😀 1..4, b 5
  ASSERT_EQ(text.size(), 6u);
  EXPECT_EQ(offset(text, 0, 1, kUtf16), 1u);
  EXPECT_EQ(offset(text, 0, 2, kUtf16), 1u);  // between the surrogates: the emoji's start
  EXPECT_EQ(offset(text, 0, 3, kUtf16), 5u);
  EXPECT_EQ(offset(text, 0, 4, kUtf16), 6u);
  EXPECT_EQ(offset(text, 0, 2, kUtf8), 1u);
  EXPECT_EQ(offset(text, 0, 4, kUtf8), 1u);
  EXPECT_EQ(offset(text, 0, 5, kUtf8), 5u);
  EXPECT_EQ(offset(text, 0, 6, kUtf8), 6u);

  EXPECT_EQ(position(text, 1, kUtf16), (Position{0, 1}));
  EXPECT_EQ(position(text, 3, kUtf16), (Position{0, 1}));  // inside the emoji
  EXPECT_EQ(position(text, 5, kUtf16), (Position{0, 3}));
  EXPECT_EQ(position(text, 6, kUtf16), (Position{0, 4}));
  EXPECT_EQ(position(text, 3, kUtf8), (Position{0, 1}));
  EXPECT_EQ(position(text, 5, kUtf8), (Position{0, 5}));
  EXPECT_EQ(position(text, 6, kUtf8), (Position{0, 6}));
}

TEST(PositionEncoding, EmojiOnSecondLine) {
  const std::string text = "x\n\xF0\x9F\x8E\x89\xF0\x9F\x8E\x89z";  // 🎉🎉z on line 1
  EXPECT_EQ(offset(text, 1, 2, kUtf16), 6u);
  EXPECT_EQ(offset(text, 1, 3, kUtf16), 6u);
  EXPECT_EQ(offset(text, 1, 4, kUtf16), 10u);
  EXPECT_EQ(offset(text, 1, 8, kUtf8), 10u);
  EXPECT_EQ(position(text, 10, kUtf16), (Position{1, 4}));
  EXPECT_EQ(position(text, 10, kUtf8), (Position{1, 8}));
}

TEST(PositionEncoding, CrLfIsNotPartOfTheLine) {
  const std::string text = "ab\r\ncd\r\n";  // lines start at 0, 4, 8
  EXPECT_EQ(offset(text, 0, 2, kUtf16), 2u);
  EXPECT_EQ(offset(text, 0, 3, kUtf16), 2u);  // not onto the \r
  EXPECT_EQ(offset(text, 0, 5, kUtf8), 2u);
  EXPECT_EQ(offset(text, 1, 0, kUtf16), 4u);
  EXPECT_EQ(offset(text, 1, 9, kUtf16), 6u);
  EXPECT_EQ(offset(text, 2, 0, kUtf16), 8u);
  EXPECT_EQ(offset(text, 3, 0, kUtf16), 8u);
  EXPECT_EQ(position(text, 2, kUtf16), (Position{0, 2}));
  EXPECT_EQ(position(text, 3, kUtf16), (Position{0, 2}));  // the \n of \r\n: line end
  EXPECT_EQ(position(text, 4, kUtf16), (Position{1, 0}));
  EXPECT_EQ(position(text, 7, kUtf8), (Position{1, 2}));
  EXPECT_EQ(position(text, 8, kUtf16), (Position{2, 0}));
}

TEST(PositionEncoding, LoneCrEndsALine) {
  const std::string text = "ab\rcd\re";  // lines start at 0, 3, 6
  EXPECT_EQ(offset(text, 0, 9, kUtf16), 2u);
  EXPECT_EQ(offset(text, 1, 1, kUtf16), 4u);
  EXPECT_EQ(offset(text, 1, 9, kUtf8), 5u);
  EXPECT_EQ(offset(text, 2, 1, kUtf16), 7u);
  EXPECT_EQ(position(text, 2, kUtf16), (Position{0, 2}));
  EXPECT_EQ(position(text, 3, kUtf16), (Position{1, 0}));
  EXPECT_EQ(position(text, 6, kUtf16), (Position{2, 0}));
}

TEST(PositionEncoding, MixedBreaks) {
  const std::string text = "a\nb\r\nc\rd";
  EXPECT_EQ(offset(text, 1, 1, kUtf16), 3u);
  EXPECT_EQ(offset(text, 2, 0, kUtf16), 5u);
  EXPECT_EQ(offset(text, 2, 5, kUtf16), 6u);
  EXPECT_EQ(offset(text, 3, 1, kUtf16), 8u);
  EXPECT_EQ(position(text, 4, kUtf16), (Position{1, 1}));
  EXPECT_EQ(position(text, 7, kUtf16), (Position{3, 0}));
}

TEST(PositionEncoding, InvalidBytesCountOneUnitEach) {
  // a, a stray FF, a truncated 3-byte sequence (E4 B8), b.
  const std::string text = "a\xFF\xE4\xB8" "b";
  for (auto encoding : {kUtf16, kUtf8}) {
    for (std::int64_t character = 0; character <= 5; ++character) {
      EXPECT_EQ(offset(text, 0, character, encoding), static_cast<std::size_t>(character));
    }
    EXPECT_EQ(offset(text, 0, 6, encoding), 5u);
    for (std::size_t at = 0; at <= 5; ++at) {
      EXPECT_EQ(position(text, at, encoding), (Position{0, static_cast<std::int64_t>(at)}));
    }
  }
}

TEST(PositionEncoding, MalformedSequencesAreNotDecoded) {
  // Overlong NUL, an encoded surrogate, a code point above U+10FFFF, and an
  // emoji cut short by the end of the text: every byte is its own unit.
  EXPECT_EQ(offset("\xC0\x80" "x", 0, 2, kUtf16), 2u);
  EXPECT_EQ(offset("\xED\xA0\x80" "x", 0, 3, kUtf16), 3u);
  EXPECT_EQ(offset("\xF4\x90\x80\x80" "x", 0, 4, kUtf16), 4u);
  EXPECT_EQ(offset("x\xF0\x9F\x98", 0, 3, kUtf16), 3u);
  EXPECT_EQ(position("x\xF0\x9F\x98", 4, kUtf16), (Position{0, 4}));
  // A truncated sequence cut by a line break is still per byte.
  EXPECT_EQ(offset("\xE4\xB8\nz", 0, 9, kUtf16), 2u);
  EXPECT_EQ(offset("\xE4\xB8\nz", 1, 1, kUtf16), 4u);
  // Boundary code points that are valid: U+0080, U+0800, U+10000, U+10FFFF.
  EXPECT_EQ(offset("\xC2\x80" "x", 0, 1, kUtf16), 2u);
  EXPECT_EQ(offset("\xE0\xA0\x80" "x", 0, 1, kUtf16), 3u);
  EXPECT_EQ(offset("\xF0\x90\x80\x80" "x", 0, 2, kUtf16), 4u);
  EXPECT_EQ(offset("\xF4\x8F\xBF\xBF" "x", 0, 2, kUtf16), 4u);
}

TEST(PositionEncoding, RoundTripsAtEveryCharacterBoundary) {
  const std::string text = "int 日本 = 1;\r\n\xF0\x9F\x98\x80\xF0\x9F\x98\x80 \xFF\n\rcaf\xC3\xA9\r\n";
  const auto starts = compute_line_starts(text);
  for (auto encoding : {kUtf16, kUtf8}) {
    for (std::size_t at = 0; at <= text.size(); ++at) {
      const Position pos = offset_to_position(text, starts, at, encoding);
      const std::size_t back = position_to_offset(text, starts, pos, encoding);
      EXPECT_LE(back, at) << "offset " << at;  // never moves forward
      // Mapping back lands on the same position (start of the char, or line end).
      EXPECT_EQ(offset_to_position(text, starts, back, encoding), pos) << "offset " << at;
      const bool continuation = at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80;
      const bool in_break = at > 0 && text[at] == '\n' && text[at - 1] == '\r';
      if (!continuation && !in_break) {
        EXPECT_EQ(back, at) << "offset " << at;
      }
    }
  }
}

TEST(PositionEncoding, FiveThousandLineDocument) {
  std::string text;
  for (int i = 0; i < 5000; ++i) {
    text += "line " + std::to_string(i) + " 日\xF0\x9F\x98\x80x" + (i % 2 == 0 ? "\r\n" : "\n");
  }
  const auto starts = compute_line_starts(text);
  ASSERT_EQ(starts.size(), 5001u);
  for (std::int64_t line = 0; line < 5000; ++line) {
    const std::size_t digits = std::to_string(line).size();
    // "line N " is 6 + digits units; 日 is 1 more; the emoji 2 more in UTF-16.
    const auto x16 = static_cast<std::int64_t>(6 + digits + 3);
    const auto x8 = static_cast<std::int64_t>(6 + digits + 7);
    const std::size_t x_offset = starts[static_cast<std::size_t>(line)] + 6 + digits + 7;
    ASSERT_EQ(text[x_offset], 'x');
    ASSERT_EQ(position_to_offset(text, starts, Position{line, x16}, kUtf16), x_offset);
    ASSERT_EQ(position_to_offset(text, starts, Position{line, x8}, kUtf8), x_offset);
    ASSERT_EQ(offset_to_position(text, starts, x_offset, kUtf16), (Position{line, x16}));
    ASSERT_EQ(offset_to_position(text, starts, x_offset, kUtf8), (Position{line, x8}));
  }
  EXPECT_EQ(offset_to_position(text, starts, text.size(), kUtf16), (Position{5000, 0}));
}

}  // namespace
}  // namespace hiera::server
