#include "engine/common/byte_size.h"

#include <gtest/gtest.h>

namespace hiera::engine {
namespace {

TEST(ByteSize, MebibytesAndTheExactCount) {
  EXPECT_EQ(describe_bytes(104857600), "100.0 MiB (104857600 bytes)");
  EXPECT_EQ(describe_bytes(67108864), "64.0 MiB (67108864 bytes)");
  EXPECT_EQ(describe_bytes(0), "0.0 MiB (0 bytes)");
}

}  // namespace
}  // namespace hiera::engine
