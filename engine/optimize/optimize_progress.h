#pragma once
// What the refinement loop reports while it runs, for whoever shows it: the
// LSP job ($/progress), the terminal's progress bar, or a test.
#include <functional>
#include <optional>
#include <string>

namespace hiera::engine::optimize {

struct OptimizeProgress {
  std::string phase;                   // "probe", "reference", "plan", "propose", "evaluate", "deliver", "done"
  std::string message;                 // one line for a human
  int tried = 0;                       // candidates proposed so far (rejected replies included)
  int verified = 0;                    // candidates that passed verification
  int budget = 0;                      // the candidate budget
  std::optional<double> best_speedup;  // over the reference, verified
  std::string step;                    // "region gemm_epilogue in S1", when a plan step runs
  // What the run waits for instead, when workers wait on their allocation:
  // "Slurm job 123 is pending (Resources); workers start when it runs"
  // (allocation_progress.h fills it in); empty otherwise.
  std::string waiting;
};

using ProgressCallback = std::function<void(const OptimizeProgress&)>;

}  // namespace hiera::engine::optimize
