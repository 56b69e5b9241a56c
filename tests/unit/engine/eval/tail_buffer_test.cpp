#include "engine/eval/tail_buffer.h"

#include <gtest/gtest.h>

namespace hiera::engine::eval {
namespace {

TEST(TailBufferTest, KeepsEverythingUnderTheCapacity) {
  TailBuffer tail(8);
  tail.append("abc");
  tail.append("def");
  EXPECT_EQ(tail.text(), "abcdef");
  EXPECT_FALSE(tail.truncated());
}

TEST(TailBufferTest, KeepsTheLastBytes) {
  TailBuffer tail(4);
  for (char c = 'a'; c <= 'z'; ++c) tail.append(std::string(1, c));
  EXPECT_EQ(tail.text(), "wxyz");
  EXPECT_TRUE(tail.truncated());
  tail.append("0123456789");
  EXPECT_EQ(tail.text(), "6789");
}

}  // namespace
}  // namespace hiera::engine::eval
