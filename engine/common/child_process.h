#pragma once
// Child processes, the one way hiera starts them: the engine's workers, the
// worker's Python runner, short commands whose output is read, and the tests'
// processes. Pipes on stdin and stdout (stderr piped or shared with ours), an
// environment with extra entries and without named ones, optionally a process group of its own and
// death with the parent; every child is reaped, none is left a zombie.
#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hiera::engine {

// How a process ended: the one description of a wait status.
struct ExitStatus {
  std::optional<int> code;    // set when the process exited
  std::optional<int> signal;  // set when a signal ended it
  // "exit status 1", "signal 11 SIGSEGV".
  std::string describe() const;
  static ExitStatus from_wait_status(int status);
};

struct SpawnOptions {
  // NAME -> VALUE, added to this process's environment (replacing an entry of the same name).
  std::map<std::string, std::string> extra_env;
  // Names removed from the environment the child inherits (the secrets a
  // worker must not see: SecretRedactor::names()); extra_env still adds its own.
  std::vector<std::string> remove_env;
  // Piped: the parent reads it (take_stderr). Inherited: the child writes to
  // our stderr, so a helper's logs land in the log of whoever started us.
  enum class Stderr { Piped, Inherited };
  Stderr stderr_mode = Stderr::Piped;
  // A process group of its own, led by the child: signals from the parent
  // (terminate, kill, the timeout) reach whatever the child starts in turn,
  // and the terminal's Ctrl-C reaches only us. Off: the child stays in our
  // group and only it is signalled.
  bool own_process_group = true;
  // PR_SET_PDEATHSIG(SIGKILL): the child is killed when the parent dies, so a
  // killed worker never leaves its Python runner holding the GPU. Linux sends
  // it when the *thread* that started the child exits, not the process:
  // start such children from a thread that lives as long as they should (the
  // worker's main thread), never from a short-lived one.
  bool die_with_parent = false;
};

class ChildProcess {
 public:
  // Starts argv; argv[0] without a '/' is looked up in this process's PATH.
  // The child starts with no signal blocked and every disposition at its
  // default, whatever this process set (a server that ignores SIGPIPE does
  // not hand that on). Throws std::system_error ("cannot start NAME: No such
  // file or directory") when it cannot be started; the child has then been reaped.
  explicit ChildProcess(const std::vector<std::string>& argv, const SpawnOptions& options = {});
  // A child still running is killed (SIGKILL, to its group when it has one) and reaped.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // The parent's ends of the pipes (close-on-exec). The caller takes ownership;
  // each can be taken once, later calls return -1 (stderr: also when inherited).
  int take_stdin();
  int take_stdout();
  int take_stderr();

  // Waits up to timeout for the child to exit, then reaps it. nullopt while it still runs.
  std::optional<ExitStatus> wait_for(std::chrono::milliseconds timeout);
  // Waits for the child however long it takes.
  ExitStatus wait();
  // SIGTERM (to the group when it has one), up to grace for the child to exit, then SIGKILL.
  ExitStatus terminate(std::chrono::milliseconds grace);
  // SIGKILL (to the group when it has one), then reaps.
  ExitStatus kill();
  // The status once reaped.
  const std::optional<ExitStatus>& exit_status() const { return status_; }

 private:
  bool exited_unreaped();  // the child has exited (a zombie, still ours to reap)
  void reap();
  void signal(int sig) const;

  pid_t pid_ = -1;
  bool own_group_ = true;
  int pidfd_ = -1;  // readable when the child exits; -1 on kernels without pidfd_open (polled then)
  int stdin_ = -1;
  int stdout_ = -1;
  int stderr_ = -1;
  std::optional<ExitStatus> status_;
};

struct CompletedProcess {
  ExitStatus status;
  std::string out;
  std::string err;         // empty when stderr was inherited
  bool timed_out = false;  // it ran past the timeout and was killed (SIGKILL, to its group when it has one)
};

// Runs argv to its end: writes `input` to its stdin (then closes it), reads
// stdout and stderr as they come (poll, so a child filling one pipe while we
// write the other never deadlocks), and kills it when the whole run takes
// longer than `timeout`. A child that exits without reading all its input is
// not an error (no SIGPIPE reaches us). Throws like ChildProcess when argv
// cannot be started.
CompletedProcess run_to_completion(const std::vector<std::string>& argv, std::string_view input,
                                   std::chrono::milliseconds timeout, const SpawnOptions& options = {});

}  // namespace hiera::engine
