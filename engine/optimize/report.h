#pragma once
// The Markdown report of an optimization run (report.md in the run's
// directory, `hiera optimize --report`): outcome and evidence first, then the
// spec, the plan with its reasons, every attempt, and the run's figures.
#include <optional>
#include <string>

#include "engine/optimize/optimize_result.h"

namespace hiera::engine::optimize {

std::string to_markdown(const OptimizeResult& result);

// "1.234 ms (p10 1.200, p90 1.300, 50 trials)"
std::string timing_text(const eval::TimingStats& stats);

// "KernelBench criterion (5 trials, allclose atol=rtol=1e-4): passed, max abs error 1.7e-4"
// (a failure adds its message in parentheses).
std::string kernelbench_text(const eval::KernelBenchVerdict& verdict);

// How the delivered module relies on torch.compile: the mode of its call, and
// its first call's wall time in seconds (the worker's "first_call" phase of the
// delivered form's evaluation: the call that compiles), when measured.
struct CompileUse {
  std::string mode;
  std::optional<double> first_call_s;
  bool operator==(const CompileUse&) const = default;
};
// Set when the delivered source (else the candidate's) calls torch.compile.
std::optional<CompileUse> compile_use(const BestResult& best);
// "The delivered module calls torch.compile (mode default); its first call took 23.4 s (compilation), later calls are timed."
std::string compile_use_text(const CompileUse& use);

}  // namespace hiera::engine::optimize
