// The kernel host's system-call filter: the list is parsed exactly, the
// embedded copy is the file the Python runner reads, and in a forked child
// the filter denies its calls with EPERM on every thread (one started before
// it too) while the calls CUDA needs still work. The filter cannot be undone,
// so each case runs in a child that reports through its exit code.
#ifdef HIERA_HAVE_WORKER
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/worker/kernel_host_sandbox.h"
#include "build_paths.h"

namespace {

namespace kh = hiera::engine::worker::kernel_host;

TEST(KernelHostSandbox, TheListIsOneNameALineWithoutCommentsOrBlanks) {
  EXPECT_EQ(kh::denied_syscall_names("# why\nmount\n\n  umount2 \t\r\n# more\nptrace"),
            (std::vector<std::string>{"mount", "umount2", "ptrace"}));
  EXPECT_TRUE(kh::denied_syscall_names("").empty());
  EXPECT_TRUE(kh::denied_syscall_names("# only a comment\n\n").empty());
}

TEST(KernelHostSandbox, TheEmbeddedListIsTheRunnersFile) {
  std::ifstream in(::hiera::testing::source_dir() + "/engine/worker/python/hiera_runner/denied_syscalls.txt");
  ASSERT_TRUE(in) << "denied_syscalls.txt not found";
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(kh::denied_syscalls(), kh::denied_syscall_names(text.str()));
  for (const char* name : {"mount", "umount2", "unshare", "setns", "ptrace", "process_vm_writev", "clock_settime",
                           "bpf", "io_uring_setup", "userfaultfd"}) {
    EXPECT_NE(std::find(kh::denied_syscalls().begin(), kh::denied_syscalls().end(), name), kh::denied_syscalls().end())
        << name;
  }
}

// Runs `body` in a forked child; its return value is the exit code (0 = as expected).
int in_child(int (*body)()) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());  // _exit: no sanitizer teardown (LeakSanitizer needs ptrace, which is denied)
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int filter_denies_on_every_thread() {
  // A thread that exists before the filter, as CUDA's do in the host.
  int early = -1;
  bool go = false;
  std::mutex m;
  std::condition_variable cv;
  std::thread before([&] {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return go; });
    early = ::unshare(CLONE_NEWNS) == -1 && errno == EPERM ? 0 : 1;
  });
  kh::Protections protections;
  kh::filter_syscalls(protections, kh::denied_syscalls());
  const std::string state = protections.state().at("syscall_filter");
  if (state.rfind("not in force: libseccomp.so.2 cannot be loaded", 0) == 0) return 77;
  if (state.find(" system calls denied (mounts, namespaces, ptrace") == std::string::npos) return 2;
  {
    std::lock_guard lock(m);
    go = true;
  }
  cv.notify_one();
  before.join();
  if (early != 0) return 3;
  if (::unshare(CLONE_NEWNS) != -1 || errno != EPERM) return 4;
  if (::umount2("/proc", MNT_DETACH) != -1 || errno != EPERM) return 5;
  int after = -1;
  std::thread later([&] { after = ::unshare(CLONE_NEWNET) == -1 && errno == EPERM ? 0 : 1; });
  later.join();
  if (after != 0) return 6;
  // What a kernel host does all the time still works.
  void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED || ::munmap(page, 4096) != 0 || ::getpid() <= 0) return 7;
  return 0;
}

TEST(KernelHostSandbox, TheFilterDeniesItsCallsOnEveryThreadAndLeavesTheRest) {
  const int code = in_child(filter_denies_on_every_thread);
  if (code == 77) GTEST_SKIP() << "libseccomp.so.2 is not installed here";
  EXPECT_EQ(code, 0) << "1-7 name the step that failed in filter_denies_on_every_thread";
}

int unknown_names_are_left_out() {
  kh::Protections protections;
  kh::filter_syscalls(protections, {"mount", "no_such_call_anywhere"});
  const std::string state = protections.state().at("syscall_filter");
  if (state.rfind("not in force: libseccomp.so.2 cannot be loaded", 0) == 0) return 77;
  if (state.rfind("1 system calls denied", 0) != 0) return 2;
  return ::mount("none", "/mnt", "tmpfs", 0, nullptr) == -1 && errno == EPERM ? 0 : 3;
}

TEST(KernelHostSandbox, ACallThisArchitectureLacksIsLeftOut) {
  const int code = in_child(unknown_names_are_left_out);
  if (code == 77) GTEST_SKIP() << "libseccomp.so.2 is not installed here";
  EXPECT_EQ(code, 0);
}

}  // namespace
#endif
