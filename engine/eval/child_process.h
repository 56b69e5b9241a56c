#pragma once
// A child process started with posix_spawn, its stdin, stdout and stderr
// connected to pipes, in a process group of its own so that signals also reach
// whatever it started in turn (hiera-worker's Python runner, ssh's helpers).
// It owns reaping: every child it starts is waited for, so none is left a
// zombie, and members of its group still alive when it exits are killed.
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace hiera::engine::eval {

struct ExitStatus {
  std::optional<int> code;    // set when the process exited
  std::optional<int> signal;  // set when a signal ended it
  // "exit status 1", "signal 11 SIGSEGV".
  std::string describe() const;
  static ExitStatus from_wait_status(int status);
};

class ChildProcess {
 public:
  // Starts argv (argv[0] is looked up in PATH). Throws std::system_error
  // ("cannot start NAME: No such file or directory") when it cannot.
  explicit ChildProcess(const std::vector<std::string>& argv);
  // A child still running is killed (SIGKILL to its group) and reaped.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // The parent's ends of the pipes (close-on-exec). The caller takes ownership;
  // each can be taken once, later calls return -1.
  int take_stdin();
  int take_stdout();
  int take_stderr();

  // Waits up to timeout for the child to exit, then reaps it. nullopt while it still runs.
  std::optional<ExitStatus> wait_for(std::chrono::milliseconds timeout);
  // Waits for the child however long it takes.
  ExitStatus wait();
  // SIGTERM to the group, up to grace for the child to exit, then SIGKILL.
  ExitStatus terminate(std::chrono::milliseconds grace);
  // The status once reaped.
  const std::optional<ExitStatus>& exit_status() const { return status_; }

 private:
  bool exited_unreaped();  // the child has exited (a zombie, still ours to reap)
  void reap();
  void signal_group(int sig) const;

  pid_t pid_ = -1;
  int pidfd_ = -1;  // readable when the child exits; -1 on kernels without pidfd_open (polled then)
  int stdin_ = -1;
  int stdout_ = -1;
  int stderr_ = -1;
  std::optional<ExitStatus> status_;
};

}  // namespace hiera::engine::eval
