#pragma once
// What every front end builds alike before it runs the optimizer: the
// knowledge base, the proposers (the built-in knowledge proposer, an LLM
// proposer when an endpoint is configured), the worker pool's command lines
// and the optimizer's options (all but the target). `hiera optimize`,
// `hiera bench` and the LSP server's jobs call this, so they run the very same
// optimizer; each front end only maps its own inputs (CLI11 options, editor
// settings) onto OptimizerSetupArgs.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/common/secret_redactor.h"
#include "engine/eval/allocation_notices.h"
#include "engine/eval/worker_pool.h"
#include "engine/knowledge/knowledge_base.h"
#include "engine/optimize/optimizer.h"
#include "engine/propose/llm/endpoint.h"
#include "engine/propose/proposer.h"

namespace hiera::engine::optimize {

struct OptimizerSetupArgs {
  std::optional<int> budget;
  std::optional<double> time_limit_s;
  std::optional<int> candidates_per_round;  // OptimizeOptions::candidates_per_round
  std::string llm;                   // an endpoint name from the configuration, or "none"; "" picks llm.default
  std::optional<propose::llm::LlmEndpoint> endpoint;  // given whole (editor settings): used instead of `llm`
  bool no_knowledge = false;         // leave out the built-in proposers (knowledge, torch.compile)
  // Shell command lines or worker specs (ssh://host, slurm:..., engine/eval/worker_spec.h);
  // default: this executable's `worker`.
  std::vector<std::string> workers;
  // Argument vectors, used as given (before `workers`); a one-word argv may be a worker spec.
  std::vector<std::vector<std::string>> worker_argv;
  // Copies of the default worker command; unset: one per visible GPU (--device i), at least one.
  std::optional<int> worker_count;
  std::string runs_dir;
  std::string knowledge_dir;
  std::string target_gpu;
  // "cpu": a CPU run, asked for (--device cpu, worker.device); "gpu": a run
  // needs a worker with a GPU and is refused without one; "": the
  // configuration's worker.device, else "gpu".
  std::string device;
  // Where worker allocations' news goes (a Slurm job submitted, pending,
  // running, cancelled): subscribe before make_optimizer_setup, which posts
  // the first. Unset: each line on stderr, after the front end's name.
  std::optional<eval::AllocationNotices> allocation_notices;
};

// `path`, else $HIERA_CONFIG, else .hiera/config.json when it exists, else {}.
// Throws std::runtime_error: unreadable, not JSON, not an object.
nlohmann::json load_configuration(const std::string& path);

// This executable (for the default worker command and the knowledge directory).
std::filesystem::path self_path(const char* argv0);

// GPUs this process may use: the entries of $CUDA_VISIBLE_DEVICES when it is
// set (none for "" or a list starting with "-1"), else the devices the NVIDIA
// driver lists in `driver_dir` (/proc/driver/nvidia/gpus); 0 without a driver.
int visible_gpu_count(const char* cuda_visible_devices, const std::filesystem::path& driver_dir);
int visible_gpu_count();

// The configured secrets: the variables named by api_key_env, of the endpoint
// given whole and of every endpoint in the configuration's llm.endpoints (not
// only the one in use: a worker has no business with any key), with their
// values in this environment. Entries that are not endpoints are skipped here.
SecretRedactor configured_secrets(const OptimizerSetupArgs& args, const nlohmann::json& config);

struct OptimizerSetup {
  // Shared and never moved: proposers keep a reference to it.
  std::shared_ptr<const knowledge::KnowledgeBase> knowledge;
  std::vector<std::shared_ptr<propose::Proposer>> proposers;
  eval::WorkerPoolOptions pool;  // with configured_secrets: workers never see or repeat them
  OptimizeOptions options;  // every field but the target
  bool cpu_run = false;     // a CPU run was asked for: the front end runs without a GPU worker
};

// `name` prefixes the knowledge base's problems on stderr ("hiera optimize").
// `default_runs_dir`: when neither args.runs_dir nor the configuration's
// runs_dir says. The spec configuration is the configuration's "spec" object.
// A slurm worker spec submits its allocation here (the pool releases it at
// shutdown; so does destroying the setup unused).
// Throws std::runtime_error: an unknown llm endpoint name, a bad worker command
// line (propose::llm::EndpointError, a std::runtime_error, for a bad endpoint);
// std::invalid_argument: a bad worker spec or device; std::runtime_error: sbatch refused.
OptimizerSetup make_optimizer_setup(const OptimizerSetupArgs& args, const nlohmann::json& config,
                                    const std::filesystem::path& exe, const std::string& name,
                                    const std::filesystem::path& default_runs_dir);

}  // namespace hiera::engine::optimize
