// make_undumpable: the process it runs in is no longer dumpable (so other
// processes of the user cannot read its environment or memory). Checked in a
// forked child, so that this test binary stays debuggable.
#include "engine/common/process_protection.h"

#include <string>

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "engine/common/child_process.h"
#include "build_paths.h"

namespace {

TEST(ProcessProtection, MakesTheProcessUndumpable) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int before = ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    const bool done = hiera::engine::make_undumpable();
    const int after = ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    ::_exit(before == 1 && done && after == 0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// hiera's own main calls it first. The kernel gives a non-dumpable process's
// /proc/PID files to root, so as another user the owner tells; as root
// everything is readable anyway and there is nothing to see.
TEST(ProcessProtection, HieraIsNotDumpable) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: /proc/PID ownership does not tell";
  hiera::engine::ChildProcess lsp({::hiera::testing::hiera_bin(), "lsp"});
  struct stat info {};
  const std::string environ_file = "/proc/" + std::to_string(lsp.pid()) + "/environ";
  // Right after exec the flag may not be set yet: look until it is, or give up.
  bool root_owned = false;
  for (int i = 0; i < 500 && !root_owned; ++i) {
    root_owned = ::stat(environ_file.c_str(), &info) == 0 && info.st_uid == 0;
    if (!root_owned) ::usleep(10000);
  }
  EXPECT_TRUE(root_owned) << environ_file << " is readable by its user";
  lsp.kill();
}

}  // namespace
