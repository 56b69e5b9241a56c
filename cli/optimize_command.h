#pragma once
// `hiera optimize FILE[::SYMBOL]`: the optimizer from a terminal. Options are
// registered on a CLI11 subcommand; run() starts the workers and proposers,
// shows progress on stderr, prints the report and maps the outcome to the exit
// code (kExitImproved, kExitNoImprovement, kExitError, kExitNoGpu,
// kExitCancelled).
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/optimizer_options.h"
#include "engine/facade/no_gpu.h"

namespace hiera::cli {

inline constexpr int kExitImproved = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitNoImprovement = 3;
inline constexpr int kExitNoGpu = 4;  // refused before it ran: no worker has a GPU and --device cpu was not given
inline constexpr int kExitCancelled = 130;

struct OptimizeArgs {
  OptimizeArgs() { optimizer.worker_count = 1; }  // one worker unless --workers or --worker says otherwise
  std::string target;
  OptimizerArgs optimizer;
  std::string json_out;
  std::string report_out;
  bool quiet = false;
};

CLI::App* add_optimize_command(CLI::App& app, OptimizeArgs& args);

// The refusal's line on stderr: what no worker had, and the flags that give one (or a CPU run).
std::string no_gpu_advice(const engine::facade::NoGpu& refusal);
int run_optimize(const OptimizeArgs& args, const char* argv0);

}  // namespace hiera::cli
