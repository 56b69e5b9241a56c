// Bytes per element of the dtype names the runner and the analysis write.
#include "engine/common/dtype_bytes.h"

#include <gtest/gtest.h>

namespace hiera::engine {
namespace {

TEST(DtypeBytes, EachDtypeAndFourForAnUnknownOne) {
  EXPECT_EQ(dtype_bytes("bfloat16"), 2);
  EXPECT_EQ(dtype_bytes("float16"), 2);
  EXPECT_EQ(dtype_bytes("int64"), 8);
  EXPECT_EQ(dtype_bytes("complex64"), 8);
  EXPECT_EQ(dtype_bytes("bool"), 1);
  EXPECT_EQ(dtype_bytes("float8_e4m3fn"), 1);
  EXPECT_EQ(dtype_bytes("float32"), 4);
  EXPECT_EQ(dtype_bytes("quint4x2"), 4);
}

}  // namespace
}  // namespace hiera::engine
