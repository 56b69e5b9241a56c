// Which commit a bench result names: git's HEAD of a real checkout (marked when
// its tracked files differ), "unknown" elsewhere, and $HIERA_COMMIT over both.
#include "engine/bench/source_commit.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "engine/common/child_process.h"
#include "temp_directory.h"

namespace {

using hiera::engine::bench::source_commit;

std::string run(const std::vector<std::string>& argv) {
  const auto done = hiera::engine::run_to_completion(argv, "", std::chrono::seconds(30));
  EXPECT_EQ(done.status.code, 0) << done.err;
  std::string out = done.out;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

TEST(SourceCommit, AGitCheckoutIsNamedByItsHead) {
  hiera::testing::TempDirectory repo("hiera-source-commit-");
  const std::string dir = repo.path().string();
  run({"git", "-C", dir, "init", "-q"});
  std::ofstream(repo.path() / "file") << "text\n";
  run({"git", "-C", dir, "add", "file"});
  run({"git", "-C", dir, "-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "one"});
  const std::string head = run({"git", "-C", dir, "rev-parse", "HEAD"});
  ASSERT_EQ(head.size(), 40u);
  EXPECT_EQ(source_commit(repo.path()), head);
  // An untracked file is no change to what was built; a tracked file that differs from HEAD is (a copy
  // shipped with an older .git read 18b88e9 for the files of 12ae45d on 2026-12-07).
  std::ofstream(repo.path() / "untracked") << "output\n";
  EXPECT_EQ(source_commit(repo.path()), head);
  std::ofstream(repo.path() / "file") << "changed\n";
  EXPECT_EQ(source_commit(repo.path()), head + "+modified");
}

TEST(SourceCommit, ADirectoryThatIsNoCheckoutIsUnknown) {
  hiera::testing::TempDirectory plain("hiera-source-commit-");
  EXPECT_EQ(source_commit(plain.path()), "unknown");
  EXPECT_EQ(source_commit(plain.path() / "missing"), "unknown");
  EXPECT_EQ(source_commit(std::filesystem::path()), "unknown");
}

TEST(SourceCommit, HieraCommitNamesACopyWhoseGitIsStale) {
  ASSERT_EQ(setenv("HIERA_COMMIT", "4171b5b", 1), 0);
  EXPECT_EQ(source_commit(), "4171b5b");
  ASSERT_EQ(unsetenv("HIERA_COMMIT"), 0);
  EXPECT_NE(source_commit(), "4171b5b");
}

}  // namespace
