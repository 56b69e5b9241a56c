// Byte offsets to LSP positions in UTF-16 code units, across line endings.
#include "engine/analysis/line_index.h"

#include <gtest/gtest.h>

namespace hiera::engine::analysis {
namespace {

TEST(LineIndexTest, LinesEndAtLfCrlfAndCr) {
  const std::string text = "ab\ncd\r\nef\rgh";
  const LineIndex index(text);
  EXPECT_EQ(index.line_count(), 4u);
  EXPECT_EQ(index.position(0), (Position{0, 0}));
  EXPECT_EQ(index.position(3), (Position{1, 0}));
  EXPECT_EQ(index.position(7), (Position{2, 0}));
  EXPECT_EQ(index.position(10), (Position{3, 0}));
  EXPECT_EQ(index.position(12), (Position{3, 2}));
  EXPECT_EQ(index.position(99), (Position{3, 2}));  // clamped to the end
}

TEST(LineIndexTest, CharactersCountUtf16Units) {
  // "é" is 2 bytes and 1 unit; "😀" is 4 bytes and 2 units; "中" is 3 bytes and 1 unit.
  const std::string text = "x\xc3\xa9\xf0\x9f\x98\x80\xe4\xb8\xad!";
  const LineIndex index(text);
  EXPECT_EQ(index.position(1).character, 1u);
  EXPECT_EQ(index.position(3).character, 2u);
  EXPECT_EQ(index.position(7).character, 4u);
  EXPECT_EQ(index.position(10).character, 5u);
  EXPECT_EQ(index.position(5).character, 2u);  // inside the emoji: its start
}

TEST(LineIndexTest, InvalidBytesCountOneUnitEach) {
  const std::string text = "a\xff\xc3z";
  const LineIndex index(text);
  EXPECT_EQ(index.position(4).character, 4u);
}

}  // namespace
}  // namespace hiera::engine::analysis
