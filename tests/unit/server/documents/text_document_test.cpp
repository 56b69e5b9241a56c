#include "server/documents/text_document.h"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "protocol/message.h"

namespace hiera::server {
namespace {

using protocol::lsp::Position;
using protocol::lsp::Range;
using protocol::lsp::TextDocumentContentChangeEvent;
using Changes = std::vector<TextDocumentContentChangeEvent>;

constexpr auto kUtf16 = PositionEncoding::Utf16;
constexpr auto kUtf8 = PositionEncoding::Utf8;

TextDocumentContentChangeEvent edit(std::int64_t l1, std::int64_t c1, std::int64_t l2, std::int64_t c2,
                                    std::string text) {
  return {Range{Position{l1, c1}, Position{l2, c2}}, std::move(text)};
}
TextDocumentContentChangeEvent replace_all(std::string text) { return {std::nullopt, std::move(text)}; }

TextDocument doc(std::string text) { return TextDocument("file:///a.py", "python", 1, std::move(text)); }

TEST(TextDocument, Accessors) {
  const TextDocument d("file:///a.py", "python", 7, "one\r\ntwo\rthree\nfour");
  EXPECT_EQ(d.uri(), "file:///a.py");
  EXPECT_EQ(d.language_id(), "python");
  EXPECT_EQ(d.version(), 7);
  EXPECT_EQ(d.text(), "one\r\ntwo\rthree\nfour");
  EXPECT_EQ(d.line_count(), 4u);
  EXPECT_EQ(d.line(0), "one");
  EXPECT_EQ(d.line(1), "two");
  EXPECT_EQ(d.line(2), "three");
  EXPECT_EQ(d.line(3), "four");
  EXPECT_EQ(d.line(4), "");
  EXPECT_EQ(d.line(99), "");
  EXPECT_EQ(d.offset_of(Position{2, 2}, kUtf16), 11u);
  EXPECT_EQ(d.position_of(11, kUtf16), (Position{2, 2}));
}

TEST(TextDocument, TrailingBreakMakesAnEmptyLastLine) {
  const auto d = doc("a\r\n");
  EXPECT_EQ(d.line_count(), 2u);
  EXPECT_EQ(d.line(0), "a");
  EXPECT_EQ(d.line(1), "");
  EXPECT_EQ(doc("").line_count(), 1u);
  EXPECT_EQ(doc("").line(0), "");
  EXPECT_EQ(doc("\r\r\n").line(1), "");
}

TEST(TextDocument, Insert) {
  const auto before = doc("hello world");
  const auto after = before.with_changes({edit(0, 5, 0, 5, ", big")}, 2, kUtf16);
  EXPECT_EQ(after.text(), "hello, big world");
  EXPECT_EQ(after.version(), 2);
  EXPECT_EQ(after.uri(), "file:///a.py");
  EXPECT_EQ(after.language_id(), "python");
  // The old snapshot is untouched.
  EXPECT_EQ(before.text(), "hello world");
  EXPECT_EQ(before.version(), 1);
}

TEST(TextDocument, InsertLinesUpdatesLineTable) {
  const auto after = doc("ab").with_changes({edit(0, 1, 0, 1, "\nx\r\ny\r")}, 2, kUtf16);
  EXPECT_EQ(after.text(), "a\nx\r\ny\rb");
  EXPECT_EQ(after.line_count(), 4u);
  EXPECT_EQ(after.line(1), "x");
  EXPECT_EQ(after.line(3), "b");
  EXPECT_EQ(after.offset_of(Position{3, 1}, kUtf16), 8u);
}

TEST(TextDocument, Delete) {
  const auto after = doc("hello world").with_changes({edit(0, 5, 0, 11, "")}, 2, kUtf16);
  EXPECT_EQ(after.text(), "hello");
  const auto joined = doc("ab\r\ncd").with_changes({edit(0, 2, 1, 0, "")}, 2, kUtf16);
  EXPECT_EQ(joined.text(), "abcd");
  EXPECT_EQ(joined.line_count(), 1u);
}

TEST(TextDocument, ReplaceAcrossLines) {
  const auto after = doc("one\ntwo\nthree").with_changes({edit(0, 1, 2, 2, "X\nY")}, 5, kUtf16);
  EXPECT_EQ(after.text(), "oX\nYree");
  EXPECT_EQ(after.line_count(), 2u);
  EXPECT_EQ(after.line(1), "Yree");
  EXPECT_EQ(after.version(), 5);
}

TEST(TextDocument, MultipleChangesApplyInOrder) {
  // Each range is relative to the text produced by the previous change.
  const Changes changes{
      edit(0, 3, 0, 3, "\nd"),  // abc -> abc\nd
      edit(1, 1, 1, 1, "e"),    // -> abc\nde
      edit(0, 0, 0, 1, ""),     // -> bc\nde
      edit(1, 0, 1, 2, "XYZ"),  // -> bc\nXYZ
  };
  const auto after = doc("abc").with_changes(changes, 2, kUtf16);
  EXPECT_EQ(after.text(), "bc\nXYZ");
  EXPECT_EQ(after.line(1), "XYZ");
}

TEST(TextDocument, EmojiInsertThenPositionAfterIt) {
  const std::string emoji = "\xF0\x9F\x98\x80";
  // UTF-16: the emoji takes columns 1-2, so column 3 is just after it.
  const auto utf16 = doc("ab").with_changes({edit(0, 1, 0, 1, emoji), edit(0, 3, 0, 3, "X")}, 2, kUtf16);
  EXPECT_EQ(utf16.text(), "a" + emoji + "Xb");
  EXPECT_EQ(utf16.position_of(6, kUtf16), (Position{0, 4}));  // b
  EXPECT_EQ(utf16.position_of(6, kUtf8), (Position{0, 6}));
  // UTF-8: the emoji takes columns 1-4, so column 5 is just after it.
  const auto utf8 = doc("ab").with_changes({edit(0, 1, 0, 1, emoji), edit(0, 5, 0, 5, "X")}, 2, kUtf8);
  EXPECT_EQ(utf8.text(), "a" + emoji + "Xb");
  // A UTF-16 column inside the pair inserts before the emoji, never inside it.
  const auto inside = doc("ab").with_changes({edit(0, 1, 0, 1, emoji), edit(0, 2, 0, 2, "X")}, 2, kUtf16);
  EXPECT_EQ(inside.text(), "aX" + emoji + "b");
}

TEST(TextDocument, DeleteEmojiByUtf16Range) {
  const auto after = doc("a\xF0\x9F\x98\x80" "b").with_changes({edit(0, 1, 0, 3, "")}, 2, kUtf16);
  EXPECT_EQ(after.text(), "ab");
}

TEST(TextDocument, EditAfterCjkInUtf8Columns) {
  const auto after = doc("日本\n語").with_changes({edit(0, 3, 0, 6, "x"), edit(1, 3, 1, 3, "!")}, 2, kUtf8);
  EXPECT_EQ(after.text(), "日x\n語!");
}

TEST(TextDocument, FullReplacement) {
  const auto after = doc("old\ntext\nhere").with_changes({replace_all("new\ntext")}, 3, kUtf16);
  EXPECT_EQ(after.text(), "new\ntext");
  EXPECT_EQ(after.line_count(), 2u);
  EXPECT_EQ(after.version(), 3);
}

TEST(TextDocument, FullReplacementAmongIncrementalChanges) {
  const Changes changes{edit(0, 0, 0, 0, "ignored "), replace_all("new\ntext"), edit(1, 0, 1, 4, "TEXT")};
  const auto after = doc("old").with_changes(changes, 2, kUtf16);
  EXPECT_EQ(after.text(), "new\nTEXT");
}

TEST(TextDocument, NoChangesKeepsTextWithNewVersion) {
  const auto after = doc("same").with_changes({}, 9, kUtf16);
  EXPECT_EQ(after.text(), "same");
  EXPECT_EQ(after.version(), 9);
}

TEST(TextDocument, RangesPastTheEndClamp) {
  const auto after = doc("abc\ndef").with_changes({edit(0, 2, 99, 0, "Z")}, 2, kUtf16);
  EXPECT_EQ(after.text(), "abZ");
  const auto appended = doc("abc").with_changes({edit(5, 5, 6, 6, "!")}, 2, kUtf16);
  EXPECT_EQ(appended.text(), "abc!");
  const auto crlf = doc("ab\r\ncd").with_changes({edit(0, 9, 0, 9, "!")}, 2, kUtf16);
  EXPECT_EQ(crlf.text(), "ab!\r\ncd");  // before the \r\n, not between \r and \n
}

TEST(TextDocument, ReversedRangeIsRejected) {
  const auto before = doc("one\ntwo");
  try {
    (void)before.with_changes({edit(0, 0, 0, 1, "x"), edit(1, 2, 0, 1, "y")}, 2, kUtf16);
    FAIL() << "expected RpcError";
  } catch (const protocol::RpcError& error) {
    EXPECT_EQ(error.code(), protocol::ErrorCode::InvalidParams);
    EXPECT_STREQ(error.what(), "didChange for file:///a.py: contentChanges[1].range start 1:2 is after end 0:1");
  }
  EXPECT_EQ(before.text(), "one\ntwo");
  // Same line, reversed characters.
  EXPECT_THROW((void)before.with_changes({edit(0, 3, 0, 2, "")}, 2, kUtf16), protocol::RpcError);
}

}  // namespace
}  // namespace hiera::server
