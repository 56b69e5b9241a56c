#pragma once
// Child processes of the worker: the persistent Python runner (pipes on its
// stdin/stdout, stderr shared with ours so its logs reach the engine's log),
// and short commands whose output we read (locating python, asking torch's
// version). Children die with the worker (PR_SET_PDEATHSIG), so an engine
// that kills a hung worker never leaves a runner holding the GPU.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace hiera::worker {

struct ChildProcess {
  pid_t pid = -1;
  int stdin_fd = -1;   // write end, to the child's stdin
  int stdout_fd = -1;  // read end, from the child's stdout
};

// Starts argv[0] (searched on PATH) with `extra_env` added to our environment.
// Throws std::runtime_error when it cannot be started.
ChildProcess spawn_child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& extra_env);

// "exited with status 1", "was killed by signal 9 (Killed)".
std::string describe_wait_status(int status);

// Closes the pipes, waits up to `grace` for the child to exit, then kills it;
// returns the wait status.
int stop_child(ChildProcess& child, std::chrono::milliseconds grace);

// Runs a command to completion (killed after `timeout`) and returns its
// stdout, or nullopt when it failed, exited non-zero or ran too long.
std::optional<std::string> capture_output(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

}  // namespace hiera::worker
