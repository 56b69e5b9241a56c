// engine/common/child_process: real processes (sh, cat, sleep), no fakes.
// The pipes, the environment, stderr piped or shared, process groups, death
// with the parent, reaping, and run_to_completion's timeout and large output.
#include "engine/common/child_process.h"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace {

using hiera::engine::ChildProcess;
using hiera::engine::ExitStatus;
using hiera::engine::run_to_completion;
using hiera::engine::SpawnOptions;
using namespace std::chrono_literals;

std::string read_all(int fd) {
  std::string text;
  std::array<char, 4096> buffer{};
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

// Ended: no such process, or a zombie nobody reaps (an orphan's new parent
// here may be a container's init that never waits).
bool ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const auto state = line.find(") ");
  return state != std::string::npos && (line[state + 2] == 'Z' || line[state + 2] == 'X');
}

bool ends_within(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!ended(pid)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// "sh -c 'sleep 30 & echo $!; wait'": a child with a grandchild whose pid it prints.
const std::vector<std::string> kWithGrandchild{"sh", "-c", "sleep 30 & echo $!; wait"};

pid_t first_line_pid(const std::string& text) { return static_cast<pid_t>(std::stol(text.substr(0, text.find('\n')))); }

TEST(ChildProcessTest, ExitStatusDescribesExitsAndSignals) {
  EXPECT_EQ(ExitStatus::from_wait_status(W_EXITCODE(3, 0)).describe(), "exit status 3");
  EXPECT_EQ(ExitStatus::from_wait_status(W_EXITCODE(0, 0)).code, 0);
  EXPECT_FALSE(ExitStatus::from_wait_status(W_EXITCODE(0, 0)).signal);
  const ExitStatus crashed = ExitStatus::from_wait_status(W_EXITCODE(0, SIGSEGV));
  EXPECT_EQ(crashed.describe(), "signal 11 SIGSEGV");
  EXPECT_EQ(crashed.signal, SIGSEGV);
  EXPECT_FALSE(crashed.code);
  EXPECT_EQ(ExitStatus{}.describe(), "unknown exit status");
}

TEST(ChildProcessTest, TalksThroughItsPipesAndIsReaped) {
  ChildProcess child({"cat"});
  const int in = child.take_stdin();
  ASSERT_GE(in, 3);
  EXPECT_EQ(child.take_stdin(), -1);  // taken once
  ASSERT_EQ(::write(in, "hello", 5), 5);
  ::close(in);
  EXPECT_EQ(read_all(child.take_stdout()), "hello");
  EXPECT_EQ(read_all(child.take_stderr()), "");
  const ExitStatus status = child.wait();
  EXPECT_EQ(status.describe(), "exit status 0");
  ASSERT_TRUE(child.exit_status());
  EXPECT_EQ(child.exit_status()->code, 0);
  int ignored = 0;
  EXPECT_EQ(::waitpid(child.pid(), &ignored, WNOHANG), -1);  // already reaped
  EXPECT_EQ(errno, ECHILD);
}

TEST(ChildProcessTest, ReportsWhatCannotBeStarted) {
  const auto what = [](const std::vector<std::string>& argv) -> std::string {
    try {
      ChildProcess child(argv);
    } catch (const std::system_error& e) {
      return e.what();
    }
    return "started";
  };
  EXPECT_EQ(what({"/nonexistent/program"}), "cannot start /nonexistent/program: No such file or directory");
  EXPECT_EQ(what({"hiera-no-such-program-on-path"}),
            "cannot start hiera-no-such-program-on-path: No such file or directory");
  const auto not_executable = std::filesystem::temp_directory_path() / ("hiera-child-" + std::to_string(::getpid()));
  std::ofstream(not_executable) << "#!/bin/sh\n";
  std::filesystem::permissions(not_executable, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  EXPECT_EQ(what({not_executable.string()}), "cannot start " + not_executable.string() + ": Permission denied");
  std::filesystem::remove(not_executable);
  EXPECT_THROW(ChildProcess({}), std::invalid_argument);
}

TEST(ChildProcessTest, AddsAndReplacesEnvironmentEntries) {
  ::setenv("HIERA_CHILD_TEST_INHERITED", "kept", 1);
  ::setenv("HIERA_CHILD_TEST_REPLACED", "old", 1);
  SpawnOptions options;
  options.extra_env = {{"HIERA_CHILD_TEST_EXTRA", "a b=c"}, {"HIERA_CHILD_TEST_REPLACED", "new"}};
  const auto run = run_to_completion({"sh", "-c", "env | grep ^HIERA_CHILD_TEST_ | sort"}, "", 10s, options);
  ::unsetenv("HIERA_CHILD_TEST_INHERITED");
  ::unsetenv("HIERA_CHILD_TEST_REPLACED");
  EXPECT_EQ(run.out,
            "HIERA_CHILD_TEST_EXTRA=a b=c\n"
            "HIERA_CHILD_TEST_INHERITED=kept\n"
            "HIERA_CHILD_TEST_REPLACED=new\n");
  EXPECT_EQ(run.status.code, 0);
}

TEST(ChildProcessTest, SharesOurStderrWhenInherited) {
  // Our fd 2 goes to a file for the length of the run.
  const auto path = std::filesystem::temp_directory_path() / ("hiera-stderr-" + std::to_string(::getpid()));
  const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(file, 0);
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(file, STDERR_FILENO);
  SpawnOptions options;
  options.stderr_mode = SpawnOptions::Stderr::Inherited;
  const auto run = run_to_completion({"sh", "-c", "echo to-out; echo to-our-stderr >&2"}, "", 10s, options);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(file);
  std::ifstream written(path);
  const std::string text((std::istreambuf_iterator<char>(written)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  EXPECT_EQ(text, "to-our-stderr\n");
  EXPECT_EQ(run.out, "to-out\n");
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(run.status.code, 0);

  ChildProcess child({"true"}, options);
  EXPECT_EQ(child.take_stderr(), -1);  // nothing to take
}

TEST(ChildProcessTest, LeadsItsOwnProcessGroupOrStaysInOurs) {
  ChildProcess own({"sleep", "30"});
  EXPECT_EQ(::getpgid(own.pid()), own.pid());
  SpawnOptions options;
  options.own_process_group = false;
  ChildProcess shared({"sleep", "30"}, options);
  EXPECT_EQ(::getpgid(shared.pid()), ::getpgrp());
  EXPECT_EQ(shared.kill().describe(), "signal 9 SIGKILL");
  EXPECT_EQ(own.kill().describe(), "signal 9 SIGKILL");
}

TEST(ChildProcessTest, StartsWithDefaultSignalsWhateverWeSet) {
  // What this process ignores or blocks is not handed on.
  struct sigaction ignore {}, previous_action {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGUSR1, &ignore, &previous_action);
  sigset_t usr2, previous_mask;
  ::sigemptyset(&usr2);
  ::sigaddset(&usr2, SIGUSR2);
  ::pthread_sigmask(SIG_BLOCK, &usr2, &previous_mask);
  const auto masks = run_to_completion({"sh", "-c", "exec grep -E '^Sig(Blk|Ign):' /proc/self/status"}, "", 10s);
  const auto killed = run_to_completion({"sh", "-c", "kill -USR1 $$; echo survived"}, "", 10s);
  ::pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
  ::sigaction(SIGUSR1, &previous_action, nullptr);
  EXPECT_EQ(masks.out, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
  EXPECT_EQ(killed.status.describe(), "signal 10 SIGUSR1");
  EXPECT_EQ(killed.out, "");
}

TEST(ChildProcessTest, WaitsTerminatesAndKillsAfterTheGrace) {
  ChildProcess polite({"sleep", "30"});
  EXPECT_FALSE(polite.wait_for(50ms));
  EXPECT_FALSE(polite.exit_status());
  EXPECT_EQ(polite.terminate(5s).describe(), "signal 15 SIGTERM");

  // Ignores SIGTERM (and so does its sleep): SIGKILL after the grace.
  ChildProcess stubborn({"sh", "-c", "trap '' TERM; echo ready; sleep 30"});
  const int out = stubborn.take_stdout();
  char ready[6] = {};
  ASSERT_EQ(::read(out, ready, sizeof ready), 6);  // the trap is set
  ::close(out);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(stubborn.terminate(200ms).describe(), "signal 9 SIGKILL");
  EXPECT_GE(std::chrono::steady_clock::now() - started, 200ms);
  EXPECT_EQ(stubborn.terminate(200ms).describe(), "signal 9 SIGKILL");  // reaped once, remembered
}

TEST(ChildProcessTest, DestructionKillsTheWholeGroup) {
  pid_t grandchild = -1;
  {
    ChildProcess child(kWithGrandchild);
    const int out = child.take_stdout();
    std::string line;
    char c = 0;
    while (::read(out, &c, 1) == 1 && c != '\n') line += c;
    ::close(out);
    grandchild = first_line_pid(line);
    ASSERT_FALSE(ended(grandchild));
  }
  EXPECT_TRUE(ends_within(grandchild, 5s));
}

// The spawning process P is this test forked; P starts the grandchild G
// (sleep 30), reports G's pid and waits to be killed.
pid_t grandchild_of_killed_parent(bool die_with_parent) {
  int report[2];
  if (::pipe(report) != 0) return -1;
  const pid_t parent = ::fork();
  if (parent == 0) {
    ::close(report[0]);
    try {
      SpawnOptions options;
      options.die_with_parent = die_with_parent;
      ChildProcess grandchild({"sleep", "30"}, options);
      const pid_t pid = grandchild.pid();
      if (::write(report[1], &pid, sizeof pid) != sizeof pid) ::_exit(1);
      for (;;) ::pause();
    } catch (...) {
      ::_exit(1);
    }
  }
  ::close(report[1]);
  pid_t grandchild = -1;
  const ssize_t n = ::read(report[0], &grandchild, sizeof grandchild);
  ::close(report[0]);
  ::kill(parent, SIGKILL);
  int status = 0;
  ::waitpid(parent, &status, 0);
  EXPECT_EQ(ExitStatus::from_wait_status(status).describe(), "signal 9 SIGKILL");
  return n == sizeof grandchild ? grandchild : -1;
}

TEST(ChildProcessTest, DiesWithItsParentWhenAsked) {
  const pid_t grandchild = grandchild_of_killed_parent(true);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(ends_within(grandchild, 5s));
}

TEST(ChildProcessTest, OutlivesItsParentByDefault) {
  const pid_t grandchild = grandchild_of_killed_parent(false);
  ASSERT_GT(grandchild, 0);
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(ended(grandchild));
  ::kill(grandchild, SIGKILL);  // no longer ours to reap
  EXPECT_TRUE(ends_within(grandchild, 5s));
}

TEST(ChildProcessTest, DiesWithTheThreadThatStartedItNotTheProcess) {
  // The documented caveat: PR_SET_PDEATHSIG follows the spawning thread.
  std::unique_ptr<ChildProcess> child;
  std::thread([&] {
    SpawnOptions options;
    options.die_with_parent = true;
    child = std::make_unique<ChildProcess>(std::vector<std::string>{"sleep", "30"}, options);
  }).join();
  const auto status = child->wait_for(5s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->describe(), "signal 9 SIGKILL");
}

TEST(ChildProcessRunToCompletionTest, CollectsOutputErrorAndExitStatus) {
  const auto run = run_to_completion({"sh", "-c", "cat; echo err >&2; exit 3"}, "in\n", 10s);
  EXPECT_EQ(run.out, "in\n");
  EXPECT_EQ(run.err, "err\n");
  EXPECT_EQ(run.status.describe(), "exit status 3");
  EXPECT_FALSE(run.timed_out);
}

TEST(ChildProcessRunToCompletionTest, MovesMegabytesBothWaysWithoutDeadlock) {
  // 2 MB in (echoed to stdout by cat) while 2 MB go to stderr at the same
  // time: every pipe fills many times over, in any order.
  const std::string input(2'000'000, 'i');
  const auto run = run_to_completion({"sh", "-c", R"(head -c 2000000 /dev/zero | tr '\0' e >&2 & cat; wait)"}, input, 60s);
  EXPECT_FALSE(run.timed_out);
  EXPECT_EQ(run.status.code, 0);
  EXPECT_EQ(run.out.size(), input.size());
  EXPECT_TRUE(run.out == input);
  EXPECT_EQ(run.err.size(), 2'000'000u);
  EXPECT_EQ(run.err.find_first_not_of('e'), std::string::npos);
}

TEST(ChildProcessRunToCompletionTest, TimeoutKillsTheGroup) {
  const auto started = std::chrono::steady_clock::now();
  const auto run = run_to_completion(kWithGrandchild, "", 1s);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  EXPECT_TRUE(run.timed_out);
  EXPECT_EQ(run.status.describe(), "signal 9 SIGKILL");
  ASSERT_FALSE(run.out.empty());
  EXPECT_TRUE(ends_within(first_line_pid(run.out), 5s));  // the grandchild that held the pipes went too
}

TEST(ChildProcessRunToCompletionTest, AChildThatDoesNotReadItsInputIsNoError) {
  struct sigaction before {};
  ::sigaction(SIGPIPE, nullptr, &before);
  const auto run = run_to_completion({"true"}, std::string(1'000'000, 'x'), 10s);
  EXPECT_EQ(run.status.describe(), "exit status 0");
  EXPECT_FALSE(run.timed_out);
  struct sigaction after {};
  ::sigaction(SIGPIPE, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);  // no process-wide change
  sigset_t pending;
  ::sigpending(&pending);
  EXPECT_EQ(::sigismember(&pending, SIGPIPE), 0);  // the SIGPIPE, if any, was consumed
}

TEST(ChildProcessRunToCompletionTest, ThrowsWhenItCannotStart) {
  EXPECT_THROW(run_to_completion({"/nonexistent/program"}, "", 1s), std::system_error);
}

}  // namespace
