#include "engine/eval/child_process.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace hiera::engine::eval {

namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// A pipe whose ends are close-on-exec, so a worker started later from another
// thread never inherits this one's pipes (an inherited write end would hide
// this worker's EOF), and numbered 3 or above, so dup2 onto 0..2 in the child
// always clears the flag.
std::array<int, 2> make_pipe() {
  std::array<int, 2> fds{-1, -1};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
  for (int& fd : fds) {
    if (fd < 3) {
      const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
      const int error = errno;
      ::close(fd);
      fd = moved;
      if (moved < 0) throw std::system_error(error, std::generic_category(), "fcntl");
    }
  }
  return fds;
}

int take(int& fd) {
  const int taken = fd;
  fd = -1;
  return taken;
}

}  // namespace

std::string ExitStatus::describe() const {
  if (code) return "exit status " + std::to_string(*code);
  if (signal) {
    const char* name = ::sigabbrev_np(*signal);
    return "signal " + std::to_string(*signal) + (name ? std::string(" SIG") + name : std::string());
  }
  return "unknown exit status";
}

ExitStatus ExitStatus::from_wait_status(int status) {
  ExitStatus exit;
  if (WIFEXITED(status)) exit.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
  return exit;
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv) {
  if (argv.empty() || argv.front().empty()) throw std::invalid_argument("empty worker command line");
  std::array<int, 2> in{-1, -1}, out{-1, -1}, err{-1, -1};
  const auto close_all = [&] {
    for (auto* p : {&in, &out, &err}) {
      for (int& fd : *p) close_fd(fd);
    }
  };
  try {
    in = make_pipe();
    out = make_pipe();
    err = make_pipe();
  } catch (...) {
    close_all();
    throw;
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);

  // Its own process group (signals reach its children too); no signal blocked
  // and every disposition at its default, whatever this process set (a server
  // that ignores SIGPIPE must not hand that on to its workers).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const int spawned = ::posix_spawnp(&pid_, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close_fd(in[0]);
  close_fd(out[1]);
  close_fd(err[1]);
  if (spawned != 0) {
    pid_ = -1;
    close_all();
    throw std::system_error(spawned, std::generic_category(), "cannot start " + argv.front());
  }
  stdin_ = in[1];
  stdout_ = out[0];
  stderr_ = err[0];
#ifdef SYS_pidfd_open
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));  // close-on-exec by definition
#endif
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !status_) {
    signal_group(SIGKILL);
    wait();
  }
  close_fd(pidfd_);
  close_fd(stdin_);
  close_fd(stdout_);
  close_fd(stderr_);
}

int ChildProcess::take_stdin() { return take(stdin_); }
int ChildProcess::take_stdout() { return take(stdout_); }
int ChildProcess::take_stderr() { return take(stderr_); }

bool ChildProcess::exited_unreaped() {
  // WNOWAIT leaves the zombie in place: its pid, and so its process group id,
  // cannot be reused before reap() has signalled the group.
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    if (errno != EINTR) return true;  // ECHILD: nothing left to wait for
  }
  return info.si_pid == pid_;
}

void ChildProcess::reap() {
  signal_group(SIGKILL);  // what it started and left behind goes with it
  int status = 0;
  pid_t waited = 0;
  do {
    waited = ::waitpid(pid_, &status, 0);
  } while (waited < 0 && errno == EINTR);
  status_ = waited == pid_ ? ExitStatus::from_wait_status(status) : ExitStatus{};
  close_fd(pidfd_);
}

std::optional<ExitStatus> ChildProcess::wait_for(std::chrono::milliseconds timeout) {
  if (status_) return status_;
  if (pid_ <= 0) return ExitStatus{};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (exited_unreaped()) {
      reap();
      return status_;
    }
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return std::nullopt;
    // Rounded up so a sub-millisecond remainder does not become a zero-timeout spin.
    const auto left_ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    const int wait_ms = static_cast<int>(std::min<decltype(left_ms)>(left_ms, 60'000));
    if (pidfd_ >= 0) {
      pollfd fd{pidfd_, POLLIN, 0};
      ::poll(&fd, 1, wait_ms);  // EINTR or a timeout: the loop looks again
    } else {
      // Kernels before 5.3 have no pidfd: look a hundred times a second.
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(wait_ms, 10)));
    }
  }
}

ExitStatus ChildProcess::wait() {
  for (;;) {
    if (auto status = wait_for(std::chrono::hours(1))) return *status;
  }
}

ExitStatus ChildProcess::terminate(std::chrono::milliseconds grace) {
  if (status_) return *status_;
  signal_group(SIGTERM);
  if (auto status = wait_for(grace)) return *status;
  signal_group(SIGKILL);
  return wait();
}

void ChildProcess::signal_group(int sig) const {
  // Only before reaping: afterwards the id may belong to someone else.
  if (pid_ > 0 && !status_) ::kill(-pid_, sig);
}

}  // namespace hiera::engine::eval
