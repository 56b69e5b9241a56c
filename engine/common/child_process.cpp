#include "engine/common/child_process.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace hiera::engine {

namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

int take(int& fd) {
  const int taken = fd;
  fd = -1;
  return taken;
}

// A pipe whose ends are close-on-exec, so a child started later from another
// thread never inherits this one's pipes (an inherited write end would hide
// this child's EOF), and numbered 3 or above, so dup2 onto 0..2 in the child
// always clears the flag and never overwrites another pipe.
std::array<int, 2> make_pipe() {
  std::array<int, 2> fds{-1, -1};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
  for (int& fd : fds) {
    if (fd < 3) {
      const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
      const int error = errno;
      ::close(fd);
      fd = moved;
      if (moved < 0) {
        for (int& other : fds) close_fd(other);
        throw std::system_error(error, std::generic_category(), "fcntl");
      }
    }
  }
  return fds;
}

// posix_spawnp's lookup, done before fork: the child then only calls execve.
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  const std::string_view dirs = path && *path ? path : "/usr/local/bin:/bin:/usr/bin";
  int error = ENOENT;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = std::min(dirs.find(':', begin), dirs.size());
    const std::string_view dir = dirs.substr(begin, end - begin);
    const std::string candidate = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + name;
    struct stat info {};
    if (::stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode)) {
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
      error = EACCES;
    }
    if (end == dirs.size()) break;
    begin = end + 1;
  }
  throw std::system_error(error, std::generic_category(), "cannot start " + name);
}

// What the child does between fork and exec, all prepared by the parent: the
// parent may have other threads, whose locks (malloc's among them) the child
// inherits held, so from here on only async-signal-safe calls.
struct ExecPlan {
  const char* program;
  char* const* argv;
  char* const* envp;
  int stdin_fd;
  int stdout_fd;
  int stderr_fd;  // -1: inherited
  int report_fd;  // the exec error goes here; close-on-exec, so a successful exec reads as EOF
  bool own_group;
  bool die_with_parent;
  pid_t parent;
};

[[noreturn]] void fail_in_child(int report_fd, int error) {
  [[maybe_unused]] const ssize_t n = ::write(report_fd, &error, sizeof error);
  ::_exit(127);
}

[[noreturn]] void exec_child(const ExecPlan& plan) {
  // Every signal is blocked (the parent blocked them around fork). Handlers go
  // back to their defaults first, so that no parent handler runs here, then the mask is cleared.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &default_action, nullptr);  // EINVAL for libc's own: harmless
  }
  if (plan.own_group && ::setpgid(0, 0) != 0) fail_in_child(plan.report_fd, errno);
  if (plan.die_with_parent) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail_in_child(plan.report_fd, errno);
    // The parent died before the prctl took effect: nobody would kill us later.
    if (::getppid() != plan.parent) ::_exit(127);
  }
  if (::dup2(plan.stdin_fd, STDIN_FILENO) < 0 || ::dup2(plan.stdout_fd, STDOUT_FILENO) < 0 ||
      (plan.stderr_fd >= 0 && ::dup2(plan.stderr_fd, STDERR_FILENO) < 0)) {
    fail_in_child(plan.report_fd, errno);
  }
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(plan.program, plan.argv, plan.envp);
  fail_in_child(plan.report_fd, errno);
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

// fork and exec rather than posix_spawn: PR_SET_PDEATHSIG can only be set by
// the child itself, and posix_spawn runs nothing of ours in the child.
ChildProcess::ChildProcess(const std::vector<std::string>& argv, const SpawnOptions& options)
    : own_group_(options.own_process_group) {
  if (argv.empty() || argv.front().empty()) throw std::invalid_argument("empty command line");
  const std::string program = find_program(argv.front());

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_entries;
  std::vector<char*> env;
  if (!options.extra_env.empty() || !options.remove_env.empty()) {
    for (char** entry = environ; *entry; ++entry) {
      const std::string_view text(*entry);
      const std::string name(text.substr(0, text.find('=')));
      const bool removed = std::find(options.remove_env.begin(), options.remove_env.end(), name) != options.remove_env.end();
      if (!removed && !options.extra_env.count(name)) env_entries.emplace_back(text);
    }
    for (const auto& [name, value] : options.extra_env) env_entries.push_back(name + "=" + value);
    for (auto& entry : env_entries) env.push_back(entry.data());
    env.push_back(nullptr);
  }

  const bool pipe_stderr = options.stderr_mode == SpawnOptions::Stderr::Piped;
  std::array<int, 2> in{-1, -1}, out{-1, -1}, err{-1, -1}, report{-1, -1};
  const auto close_all = [&] {
    for (auto* p : {&in, &out, &err, &report}) {
      for (int& fd : *p) close_fd(fd);
    }
  };
  try {
    in = make_pipe();
    out = make_pipe();
    if (pipe_stderr) err = make_pipe();
    report = make_pipe();
  } catch (...) {
    close_all();
    throw;
  }
  const ExecPlan plan{program.c_str(), args.data(), env.empty() ? environ : env.data(),
                      in[0], out[1], err[1], report[1], options.own_process_group, options.die_with_parent,
                      ::getpid()};

  // Signals stay blocked across fork, so none reaches the child while it still
  // has this process's handlers; exec_child restores them and the mask.
  sigset_t all, previous;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(plan);
  const int fork_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  close_fd(in[0]);
  close_fd(out[1]);
  close_fd(err[1]);
  close_fd(report[1]);
  if (pid < 0) {
    close_all();
    throw std::system_error(fork_error, std::generic_category(), "cannot start " + argv.front());
  }

  // EOF: exec succeeded (the report pipe closed on exec); an int: it failed.
  // Either way the child is past setpgid, so its group can be signalled from now on.
  int exec_error = 0;
  ssize_t n = 0;
  do {
    n = ::read(report[0], &exec_error, sizeof exec_error);
  } while (n < 0 && errno == EINTR);
  close_fd(report[0]);
  if (n != 0) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    close_all();
    throw std::system_error(n == sizeof exec_error ? exec_error : EIO, std::generic_category(),
                            "cannot start " + argv.front());
  }
  pid_ = pid;
  stdin_ = in[1];
  stdout_ = out[0];
  stderr_ = err[0];
#ifdef SYS_pidfd_open
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));  // close-on-exec by definition
#endif
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !status_) kill();
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
  if (own_group_) signal(SIGKILL);  // what it started and left behind in its group goes with it
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
  signal(SIGTERM);
  if (auto status = wait_for(grace)) return *status;
  return kill();
}

ExitStatus ChildProcess::kill() {
  if (status_) return *status_;
  signal(SIGKILL);
  return wait();
}

void ChildProcess::signal(int sig) const {
  // Only before reaping: afterwards the id may belong to someone else.
  if (pid_ > 0 && !status_) ::kill(own_group_ ? -pid_ : pid_, sig);
}

namespace {

// Writing to a child that has exited fails with EPIPE, and the kernel also
// sends SIGPIPE to the writing thread. It is blocked in this thread while we
// write and, if it came, consumed before unblocking: the process-wide
// disposition is left as the program set it.
class SigpipeSuppressed {
 public:
  SigpipeSuppressed() {
    ::sigemptyset(&pipe_);
    ::sigaddset(&pipe_, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_, &previous_);
    sigset_t pending;
    ::sigpending(&pending);
    was_pending_ = ::sigismember(&pending, SIGPIPE) == 1;
  }
  ~SigpipeSuppressed() {
    sigset_t pending;
    ::sigpending(&pending);
    if (!was_pending_ && ::sigismember(&pending, SIGPIPE) == 1) {
      const timespec now{0, 0};
      while (::sigtimedwait(&pipe_, nullptr, &now) < 0 && errno == EINTR) {
      }
    }
    ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SigpipeSuppressed(const SigpipeSuppressed&) = delete;
  SigpipeSuppressed& operator=(const SigpipeSuppressed&) = delete;

 private:
  sigset_t pipe_;
  sigset_t previous_;
  bool was_pending_ = false;
};

// An owned descriptor, closed when it goes.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() { close_fd(fd); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  bool open() const { return fd >= 0; }
};

}  // namespace

CompletedProcess run_to_completion(const std::vector<std::string>& argv, std::string_view input,
                                   std::chrono::milliseconds timeout, const SpawnOptions& options) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  ChildProcess child(argv, options);
  Fd in(child.take_stdin()), out(child.take_stdout()), err(child.take_stderr());
  // Non-blocking: a blocking write larger than the pipe would wait for the
  // child to read it all, while the child waits for us to read its output.
  if (input.empty() || ::fcntl(in.fd, F_SETFL, ::fcntl(in.fd, F_GETFL) | O_NONBLOCK) != 0) close_fd(in.fd);
  const SigpipeSuppressed no_sigpipe;

  CompletedProcess result;
  std::size_t written = 0;
  std::array<char, 64 * 1024> buffer{};
  while (out.open() || err.open()) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) {
      result.timed_out = true;
      break;
    }
    std::array<pollfd, 3> fds{{{out.fd, POLLIN, 0}, {err.fd, POLLIN, 0}, {in.fd, POLLOUT, 0}}};  // -1: ignored
    const auto left_ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    if (::poll(fds.data(), fds.size(), static_cast<int>(std::min<decltype(left_ms)>(left_ms, 60'000))) < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    for (auto [source, text] : {std::pair{&out, &result.out}, std::pair{&err, &result.err}}) {
      const pollfd& polled = source == &out ? fds[0] : fds[1];
      if (!source->open() || !(polled.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(source->fd, buffer.data(), buffer.size());
      if (n > 0) {
        text->append(buffer.data(), static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close_fd(source->fd);
      }
    }
    if (in.open() && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t n = ::write(in.fd, input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      if (written == input.size() || (n < 0 && errno != EINTR && errno != EAGAIN)) close_fd(in.fd);  // EPIPE: it stopped reading
    }
  }
  close_fd(in.fd);  // a child that closed its stdout may still wait for the end of its input
  if (!result.timed_out) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (auto status = child.wait_for(std::max(left, std::chrono::milliseconds(0)))) {
      result.status = *status;
    } else {
      result.timed_out = true;
    }
  }
  if (result.timed_out) result.status = child.kill();
  return result;
}

}  // namespace hiera::engine
