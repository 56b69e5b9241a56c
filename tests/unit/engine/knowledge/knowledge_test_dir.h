#pragma once
// For knowledge tests: the source tree's knowledge/ directory, and a scratch
// copy of it in a fresh temporary directory that a test may break one file of.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "temp_directory.h"
#include "build_paths.h"

namespace hiera::engine::knowledge::testing {

inline std::filesystem::path source_knowledge_dir() {
  return std::filesystem::path(::hiera::testing::source_dir()) / "knowledge";
}

// A copy of the real knowledge directory at path().
class KnowledgeCopy {
 public:
  KnowledgeCopy() : dir_(scratch_.path() / "knowledge") {
    std::filesystem::copy(source_knowledge_dir(), dir_, std::filesystem::copy_options::recursive);
  }
  const std::filesystem::path& path() const { return dir_; }

  // Writes (or overwrites) a file relative to the copy; returns its full path.
  std::filesystem::path write(const std::string& relative, const std::string& text) const {
    const auto file = dir_ / relative;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << text;
    EXPECT_TRUE(out.good()) << "could not write " << file;
    return file;
  }

 private:
  hiera::testing::TempDirectory scratch_{"hiera-knowledge-test-"};
  std::filesystem::path dir_;
};

}  // namespace hiera::engine::knowledge::testing
