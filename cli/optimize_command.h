#pragma once
// `hiera optimize FILE[::SYMBOL]`: the optimizer from a terminal. Options are
// registered on a CLI11 subcommand; run() starts the workers and proposers,
// shows progress on stderr, prints the report and maps the outcome to the exit
// code (kExitImproved, kExitNoImprovement, kExitError, kExitCancelled).
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace hiera::cli {

inline constexpr int kExitImproved = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitNoImprovement = 3;
inline constexpr int kExitCancelled = 130;

struct OptimizeArgs {
  std::string target;
  std::optional<int> budget;
  std::optional<double> time_limit_s;
  std::string llm;                   // an endpoint name from the configuration, or "none"
  std::vector<std::string> workers;  // command lines; default: this executable's `worker`
  int worker_count = 1;              // copies of the default worker command
  std::string json_out;
  std::string report_out;
  std::string config;                // JSON configuration file
  std::string runs_dir;
  std::string knowledge_dir;
  std::string target_gpu;
  bool quiet = false;
};

CLI::App* add_optimize_command(CLI::App& app, OptimizeArgs& args);
int run_optimize(const OptimizeArgs& args, const char* argv0);

}  // namespace hiera::cli
