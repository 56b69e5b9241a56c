// Where the knowledge directory is found: $HIERA_KNOWLEDGE_DIR, then the
// installed share/hiera/knowledge beside the executable, then the source tree.
#include "engine/knowledge/knowledge_dir.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "knowledge_test_dir.h"

namespace hiera::engine::knowledge {
namespace {

namespace fs = std::filesystem;

// Sets or unsets HIERA_KNOWLEDGE_DIR for one test, restoring it afterwards.
class KnowledgeDirEnv {
 public:
  explicit KnowledgeDirEnv(const char* value) {
    if (const char* old = std::getenv("HIERA_KNOWLEDGE_DIR")) saved_ = old;
    if (value) ::setenv("HIERA_KNOWLEDGE_DIR", value, 1);
    else ::unsetenv("HIERA_KNOWLEDGE_DIR");
  }
  ~KnowledgeDirEnv() {
    if (saved_) ::setenv("HIERA_KNOWLEDGE_DIR", saved_->c_str(), 1);
    else ::unsetenv("HIERA_KNOWLEDGE_DIR");
  }

 private:
  std::optional<std::string> saved_;
};

TEST(KnowledgeDirTest, EnvironmentWins) {
  const hiera::testing::TempDirectory prefix;
  fs::create_directories(prefix.path() / "share" / "hiera" / "knowledge");
  const KnowledgeDirEnv env("/somewhere/else");
  EXPECT_EQ(default_knowledge_dir(prefix.path() / "bin" / "hiera"), fs::path("/somewhere/else"));
}

TEST(KnowledgeDirTest, InstalledLayoutBesideTheExecutable) {
  const hiera::testing::TempDirectory prefix;
  fs::create_directories(prefix.path() / "share" / "hiera" / "knowledge");
  fs::create_directories(prefix.path() / "bin");
  const KnowledgeDirEnv env(nullptr);
  EXPECT_EQ(default_knowledge_dir(prefix.path() / "bin" / "hiera"), prefix.path() / "share" / "hiera" / "knowledge");
}

TEST(KnowledgeDirTest, EmptyEnvironmentIsUnset) {
  const hiera::testing::TempDirectory prefix;
  fs::create_directories(prefix.path() / "share" / "hiera" / "knowledge");
  const KnowledgeDirEnv env("");
  EXPECT_EQ(default_knowledge_dir(prefix.path() / "bin" / "hiera"), prefix.path() / "share" / "hiera" / "knowledge");
}

TEST(KnowledgeDirTest, SourceTreeOtherwise) {
  const hiera::testing::TempDirectory prefix;
  const KnowledgeDirEnv env(nullptr);
  EXPECT_EQ(default_knowledge_dir(prefix.path() / "bin" / "hiera"), testing::source_knowledge_dir());
  EXPECT_EQ(default_knowledge_dir(""), testing::source_knowledge_dir());
}

}  // namespace
}  // namespace hiera::engine::knowledge
