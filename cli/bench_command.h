#pragma once
// `hiera bench DIR`: a KernelBench-format suite through the optimizer (the
// same construction as `hiera optimize`, optimizer_setup.h), each problem
// measured side by side with eager PyTorch and, with --baseline compile,
// torch.compile; writes OUT/problems/<group>/<name>.json, OUT/summary.json,
// OUT/report.md, OUT/speedups.svg and OUT/sol.svg, and prints the report.
// Exit codes: kExitSuiteRan (even when nothing got faster), kExitError (an
// error stopped it), kExitUsage, kExitCancelled.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/optimize_command.h"  // kExitError, kExitCancelled
#include "cli/optimizer_options.h"

namespace hiera::cli {

inline constexpr int kExitSuiteRan = 0;
inline constexpr int kExitUsage = 2;

struct BenchArgs {
  std::string dir;
  std::string out;                   // default: .hiera/bench/<DIR's name>
  std::string baselines = "eager";   // comma-separated: eager, compile
  bool baselines_given = false;      // --baseline was on the command line (--report-only reads them from the records otherwise)
  std::string filter;                // regular expression over "group/name"
  bool force = false;
  bool quiet = false;
  bool report_only = false;          // write summary, report and plots from OUT's results; run nothing
  OptimizerArgs optimizer;           // --workers unset: one per GPU
};

// A command line that cannot be carried out as given (exit code kExitUsage).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

CLI::App* add_bench_command(CLI::App& app, BenchArgs& args);
// `command_line`: the arguments as typed, for the report.
int run_bench(const BenchArgs& args, const char* argv0, const std::vector<std::string>& command_line);

// "eager,compile" -> {"eager", "compile"}: eager always (it is the reference),
// first; repeats dropped. Throws UsageError for any other name or an empty entry.
std::vector<std::string> parse_baselines(std::string_view list);

// What a stored result must have been produced with to be reused (resume):
// hiera's version, the baselines, the candidate budget and time limit, the
// proposers, the knowledge GPU, the spec settings, trials and seed.
nlohmann::json bench_fingerprint(const engine::optimize::OptimizeOptions& options, const std::vector<std::string>& baselines,
                                 const std::vector<std::string>& proposers);

}  // namespace hiera::cli
