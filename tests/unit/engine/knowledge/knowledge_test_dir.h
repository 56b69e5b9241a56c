#pragma once
// For knowledge tests: the source tree's knowledge/ directory, and a scratch
// copy of it in a fresh temporary directory that a test may break one file of.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace hiera::engine::knowledge::testing {

inline std::filesystem::path source_knowledge_dir() { return std::filesystem::path(HIERA_SOURCE_DIR) / "knowledge"; }

// A unique empty directory under the system's temp directory, removed with the object.
class ScratchDir {
 public:
  ScratchDir() {
    std::random_device random;
    path_ = std::filesystem::temp_directory_path() /
            ("hiera-knowledge-test-" + std::to_string(random()) + "-" + std::to_string(random()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

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
  ScratchDir scratch_;
  std::filesystem::path dir_;
};

}  // namespace hiera::engine::knowledge::testing
