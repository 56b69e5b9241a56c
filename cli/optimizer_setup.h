#pragma once
// What `hiera optimize` and `hiera bench` build alike from their options and
// the configuration file: the knowledge base, the proposers, the worker
// pool's command lines and the optimizer's options (all but the target), so
// the two commands run the very same optimizer.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "engine/eval/worker_pool.h"
#include "engine/knowledge/knowledge_base.h"
#include "engine/optimize/optimizer.h"
#include "engine/propose/proposer.h"

namespace hiera::cli {

struct OptimizerArgs {
  std::optional<int> budget;
  std::optional<double> time_limit_s;
  std::string llm;                   // an endpoint name from the configuration, or "none"
  bool no_knowledge = false;         // leave out the built-in knowledge proposer
  std::vector<std::string> workers;  // command lines; default: this executable's `worker`
  // Copies of the default worker command; unset: one per visible GPU (--device i), at least one.
  std::optional<int> worker_count;
  std::string config;                // JSON configuration file
  std::string runs_dir;
  std::string knowledge_dir;
  std::string target_gpu;
};

// Registers the shared options on a subcommand; `workers_help` says what
// --workers defaults to there.
void add_optimizer_options(CLI::App& command, OptimizerArgs& args, const std::string& workers_help);

// --config FILE, else $HIERA_CONFIG, else .hiera/config.json when it exists,
// else {}. Throws std::runtime_error: unreadable, not JSON, not an object.
nlohmann::json load_configuration(const std::string& path);

// This executable (for the default worker command and the knowledge directory).
std::filesystem::path self_path(const char* argv0);

// GPUs this process may use: the entries of $CUDA_VISIBLE_DEVICES when it is
// set (none for "" or a list starting with "-1"), else the devices the NVIDIA
// driver lists in `driver_dir` (/proc/driver/nvidia/gpus); 0 without a driver.
int visible_gpu_count(const char* cuda_visible_devices, const std::filesystem::path& driver_dir);
int visible_gpu_count();

struct OptimizerSetup {
  // Shared and never moved: proposers keep a reference to it.
  std::shared_ptr<const engine::knowledge::KnowledgeBase> knowledge;
  std::vector<std::shared_ptr<engine::propose::Proposer>> proposers;
  engine::eval::WorkerPoolOptions pool;
  engine::optimize::OptimizeOptions options;  // every field but the target
};

// `name` prefixes the knowledge base's problems on stderr ("hiera optimize").
// `default_runs_dir`: when neither --runs-dir nor the configuration's runs_dir
// says. Throws std::runtime_error: an unknown --llm endpoint, a bad --worker.
OptimizerSetup make_optimizer_setup(const OptimizerArgs& args, const nlohmann::json& config, const std::filesystem::path& exe,
                                    const std::string& name, const std::filesystem::path& default_runs_dir);

}  // namespace hiera::cli
