#include "subprocess.h"

#include "engine/common/child_process.h"

namespace hiera::testing {

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& input,
                          std::chrono::milliseconds timeout) {
  auto run = engine::run_to_completion(argv, input, timeout);
  ProcessResult result;
  result.timed_out = run.timed_out;
  if (!run.timed_out && run.status.code) result.exit_code = *run.status.code;
  result.out = std::move(run.out);
  result.err = std::move(run.err);
  return result;
}

}  // namespace hiera::testing
