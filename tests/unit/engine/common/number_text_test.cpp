#include "engine/common/number_text.h"

#include <gtest/gtest.h>

namespace hiera::engine {
namespace {

TEST(NumberText, FixedGeneralAndSignificantAsPrintfWritesThem) {
  EXPECT_EQ(fixed(1.2345, 2), "1.23");
  EXPECT_EQ(fixed(2.0, 0), "2");
  EXPECT_EQ(fixed(-0.05, 1), "-0.1");  // rounds half away as printf does for this binary value
  EXPECT_EQ(general(0.0001), "0.0001");
  EXPECT_EQ(general(1.5e-7), "1.5e-07");
  EXPECT_EQ(general(250.0), "250");
  EXPECT_EQ(significant(1234.5), "1.23e+03");
  EXPECT_EQ(significant(0.01234), "0.0123");
  EXPECT_EQ(significant(9.87654, 2), "9.9");
}

}  // namespace
}  // namespace hiera::engine
