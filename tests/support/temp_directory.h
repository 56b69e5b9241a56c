#pragma once
// A fresh, uniquely named directory under the system's temporary directory
// (mkdtemp), removed with its contents when the object goes: the one scratch
// directory of the tests that need files on disk.
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace hiera::testing {

class TempDirectory {
 public:
  // The name starts with the prefix ("hiera-llm-" → /tmp/hiera-llm-Ab3xYz).
  explicit TempDirectory(const std::string& prefix = "hiera-test-") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
    }
    path_ = pattern;
  }
  ~TempDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace hiera::testing
