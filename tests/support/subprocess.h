#pragma once
// Runs a real process with the given stdin and collects stdout, stderr and
// the exit code, killing it after a timeout so a hung server fails the test.
// A thin shape over engine::run_to_completion that the tests were written against.
#include <chrono>
#include <string>
#include <vector>

namespace hiera::testing {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal or the timeout
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Throws std::system_error when argv[0] cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& input,
                          std::chrono::milliseconds timeout = std::chrono::seconds(20));

}  // namespace hiera::testing
