#include "engine/analysis/language.h"

#include <gtest/gtest.h>

namespace hiera::engine::analysis {
namespace {

TEST(LanguageTest, ByExtensionAndLanguageId) {
  EXPECT_EQ(language_for_path("a/b/k.cu"), Language::Cuda);
  EXPECT_EQ(language_for_path("k.cuh"), Language::Cuda);
  EXPECT_EQ(language_for_path("model.py"), Language::Python);
  EXPECT_EQ(language_for_path("host.cpp"), std::nullopt);
  EXPECT_EQ(language_for_path("dir.cu/file"), std::nullopt);
  EXPECT_EQ(language_for_path("Makefile"), std::nullopt);
  EXPECT_EQ(language_for_id("cuda-cpp"), Language::Cuda);
  EXPECT_EQ(language_for_id("python"), Language::Python);
  EXPECT_EQ(language_for_id("cpp"), std::nullopt);
  EXPECT_STREQ(to_string(Language::Python), "python");
}

}  // namespace
}  // namespace hiera::engine::analysis
