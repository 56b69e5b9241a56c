#include "engine/optimize/optimizer_setup.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include <wordexp.h>

#include "engine/eval/slurm_allocation.h"
#include "engine/eval/worker_spec.h"
#include "engine/knowledge/knowledge_dir.h"
#include "engine/propose/compile_proposer.h"
#include "engine/propose/recipes/recipe_proposer.h"
#include "engine/propose/llm_proposer.h"

namespace hiera::engine::optimize {

using nlohmann::json;

namespace {

std::vector<std::string> split_command(const std::string& command) {
  wordexp_t words{};
  if (wordexp(command.c_str(), &words, WRDE_NOCMD | WRDE_UNDEF) != 0) {
    throw std::runtime_error("--worker '" + command + "': not a valid command line");
  }
  std::vector<std::string> out(words.we_wordv, words.we_wordv + words.we_wordc);
  wordfree(&words);
  if (out.empty()) throw std::runtime_error("--worker: the command is empty");
  return out;
}

// The endpoint called `name` in configuration.llm.endpoints; "" picks llm.default.
std::optional<propose::llm::LlmEndpoint> pick_endpoint(const json& config, std::string name) {
  const json llm = config.value("llm", json::object());
  if (name.empty()) name = llm.value("default", "none");
  if (name == "none") return std::nullopt;
  for (const auto& endpoint : llm.value("endpoints", json::array())) {
    if (endpoint.is_object() && endpoint.value("name", "") == name) return propose::llm::parse_endpoint(endpoint);
  }
  throw std::runtime_error("--llm " + name + ": no endpoint of that name in the configuration's llm.endpoints");
}

std::vector<std::shared_ptr<propose::Proposer>> make_proposers(const OptimizerSetupArgs& args, const json& config,
                                                               const knowledge::KnowledgeBase& knowledge,
                                                               const std::filesystem::path& runs_dir) {
  std::vector<std::shared_ptr<propose::Proposer>> proposers;
  // The built-in proposer first: offline, deterministic, and the only one without an LLM endpoint.
  // torch.compile next: offline and built in as well, so --no-knowledge (the built-in proposers) leaves it out too.
  if (!args.no_knowledge) {
    proposers.push_back(std::make_shared<propose::recipes::RecipeProposer>(knowledge));
    proposers.push_back(std::make_shared<propose::CompileProposer>());
  }
  auto endpoint = args.endpoint ? args.endpoint : pick_endpoint(config, args.llm);
  if (endpoint) {
    propose::llm::validate(*endpoint);
    if (!endpoint->cache_dir) endpoint->cache_dir = runs_dir / "llm-cache";
    auto client = std::make_shared<propose::llm::LlmClient>(*endpoint);
    proposers.push_back(std::make_shared<propose::LlmProposer>(client, knowledge));
  }
  return proposers;
}

std::vector<std::vector<std::string>> default_worker_commands(const OptimizerSetupArgs& args,
                                                              const std::filesystem::path& exe);

// The ssh client and its options: $HIERA_SSH_COMMAND (as git's GIT_SSH_COMMAND), else plain ssh.
std::vector<std::string> ssh_command() {
  const char* env = std::getenv("HIERA_SSH_COMMAND");
  if (!env || !*env) return {"ssh"};
  try {
    return split_command(env);
  } catch (const std::runtime_error&) {
    throw std::runtime_error(std::string("$HIERA_SSH_COMMAND '") + env + "': not a valid command line");
  }
}

// Adds the workers one --worker value stands for: an ssh:// or slurm spec
// (a Slurm allocation is requested here, and released by the pool), else a
// command line already split.
void add_workers(eval::WorkerPoolOptions& pool, const std::string& spec, std::vector<std::string> argv,
                 const std::filesystem::path& exe, const eval::AllocationNoticeCallback& notice) {
  eval::SlurmTools tools;
  tools.remove_env = pool.secrets.names();  // sbatch would copy them into the job's stored environment
  switch (eval::worker_spec_kind(spec)) {
    case eval::WorkerSpecKind::Command:
      pool.commands.push_back(std::move(argv));
      pool.allocations.push_back(nullptr);
      return;
    case eval::WorkerSpecKind::Ssh:
      for (auto& command : eval::ssh_worker_commands(eval::parse_ssh_worker(spec), ssh_command())) {
        pool.commands.push_back(std::move(command));
        pool.allocations.push_back(nullptr);
      }
      return;
    case eval::WorkerSpecKind::Slurm: {
      const eval::SlurmWorkerSpec slurm = eval::parse_slurm_worker(spec);
      auto allocation = slurm.job_id.empty() ? eval::SlurmAllocation::request(slurm, notice, tools)
                                             : eval::SlurmAllocation::attach(slurm, notice, tools);
      const std::vector<std::string> worker{slurm.hiera.empty() ? exe.string() : slurm.hiera, "worker"};
      for (int i = 0; i < slurm.workers; ++i) {
        pool.commands.push_back(allocation->step_command(pool.commands.size(), worker));
        pool.allocations.push_back(allocation);
      }
      return;
    }
  }
}

eval::WorkerPoolOptions worker_pool_options(const OptimizerSetupArgs& args, const json& config,
                                            const std::filesystem::path& exe, const std::string& name) {
  eval::WorkerPoolOptions pool;
  pool.secrets = configured_secrets(args, config);  // first: no child, Slurm's clients included, may see them
  // Allocations' news goes to the front end's channel, else where its logs go.
  const eval::AllocationNoticeCallback notice =
      args.allocation_notices ? args.allocation_notices->poster()
                              : [name](const eval::AllocationNotice& n) { std::cerr << name << ": " << n.line << std::endl; };
  for (const auto& argv : args.worker_argv) {
    if (argv.empty() || argv.front().empty()) throw std::runtime_error("worker command: the command is empty");
    // A one-word argv may be a spec (editor settings: "worker.command": ["ssh://gpu1"]).
    add_workers(pool, argv.size() == 1 ? argv.front() : std::string(), argv, exe, notice);
  }
  std::vector<std::string> commands = args.workers;
  if (pool.commands.empty() && commands.empty() && config.contains("worker")) {
    const json worker = config["worker"];
    if (worker.contains("command")) commands.push_back(worker["command"].get<std::string>());
  }
  for (const auto& c : commands) {
    add_workers(pool, c, eval::worker_spec_kind(c) == eval::WorkerSpecKind::Command ? split_command(c)
                                                                                     : std::vector<std::string>{},
                exe, notice);
  }
  // Only a pool with an allocation needs the list; the rest of the code reads commands.
  const bool any_allocation = std::any_of(pool.allocations.begin(), pool.allocations.end(),
                                          [](const auto& allocation) { return allocation != nullptr; });
  if (!any_allocation) pool.allocations.clear();
  if (!pool.commands.empty()) return pool;
  pool.commands = default_worker_commands(args, exe);
  return pool;
}

std::vector<std::vector<std::string>> default_worker_commands(const OptimizerSetupArgs& args,
                                                              const std::filesystem::path& exe) {
  std::vector<std::vector<std::string>> out;
  if (args.worker_count) {
    for (int i = 0; i < *args.worker_count; ++i) out.push_back({exe.string(), "worker"});
  } else {
    const int gpus = visible_gpu_count();
    for (int i = 0; i < gpus; ++i) out.push_back({exe.string(), "worker", "--device", std::to_string(i)});
    if (out.empty()) out.push_back({exe.string(), "worker"});  // no GPU: one worker, on the CPU
  }
  return out;
}

}  // namespace

json load_configuration(const std::string& path) {
  std::filesystem::path file = path;
  if (file.empty()) {
    if (const char* env = std::getenv("HIERA_CONFIG")) file = env;
    else if (std::filesystem::exists(".hiera/config.json")) file = ".hiera/config.json";
    else return json::object();
  }
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read the configuration " + file.string());
  try {
    json config = json::parse(in);
    if (!config.is_object()) throw std::runtime_error("must be a JSON object");
    return config;
  } catch (const std::exception& e) {
    throw std::runtime_error("the configuration " + file.string() + " is not valid: " + e.what());
  }
}

std::filesystem::path self_path(const char* argv0) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path(argv0) : self;
}

int visible_gpu_count(const char* cuda_visible_devices, const std::filesystem::path& driver_dir) {
  if (cuda_visible_devices) {
    // CUDA stops at the first invalid entry; "-1" is the usual way to hide every device.
    int count = 0;
    std::string_view list = cuda_visible_devices;
    while (!list.empty()) {
      const auto comma = list.find(',');
      const std::string_view entry = list.substr(0, comma);
      if (entry.empty() || entry.front() == '-') break;
      ++count;
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
    return count;
  }
  std::error_code ec;
  int count = 0;
  for (std::filesystem::directory_iterator it(driver_dir, ec), end; !ec && it != end; it.increment(ec)) ++count;
  return count;
}

SecretRedactor configured_secrets(const OptimizerSetupArgs& args, const json& config) {
  SecretRedactor secrets;
  if (args.endpoint && !args.endpoint->api_key_env.empty()) secrets.add_from_environment(args.endpoint->api_key_env);
  const json llm = config.value("llm", json::object());
  const json endpoints = llm.is_object() ? llm.value("endpoints", json::array()) : json::array();
  if (!endpoints.is_array()) return secrets;
  for (const auto& endpoint : endpoints) {
    if (!endpoint.is_object()) continue;
    const auto name = endpoint.find("api_key_env");
    if (name != endpoint.end() && name->is_string() && !name->get<std::string>().empty()) {
      secrets.add_from_environment(name->get<std::string>());
    }
  }
  return secrets;
}

int visible_gpu_count() { return visible_gpu_count(std::getenv("CUDA_VISIBLE_DEVICES"), "/proc/driver/nvidia/gpus"); }

OptimizerSetup make_optimizer_setup(const OptimizerSetupArgs& args, const json& config, const std::filesystem::path& exe,
                                    const std::string& name, const std::filesystem::path& default_runs_dir) {
  OptimizerSetup setup;
  const auto knowledge_dir = args.knowledge_dir.empty() ? knowledge::default_knowledge_dir(exe)
                                                        : std::filesystem::path(args.knowledge_dir);
  auto knowledge = std::make_shared<knowledge::KnowledgeBase>(knowledge::load_knowledge(knowledge_dir));
  for (const auto& problem : knowledge->problems) std::cerr << name << ": knowledge: " << problem.to_string() << std::endl;
  setup.knowledge = knowledge;

  OptimizeOptions& options = setup.options;
  options.configuration = config.value("spec", json::object());
  options.budget = args.budget;
  options.candidates_per_round = args.candidates_per_round;
  options.time_limit_s = args.time_limit_s;
  options.runs_dir = !args.runs_dir.empty() ? std::filesystem::path(args.runs_dir)
                                            : std::filesystem::path(config.value("runs_dir", default_runs_dir.string()));
  options.target_gpu = !args.target_gpu.empty() ? args.target_gpu : config.value("target_gpu", std::string("h200"));

  std::string device = args.device;
  const json worker = config.value("worker", json::object());
  if (device.empty() && worker.is_object() && worker.contains("device")) {
    const json& value = worker["device"];
    device = value.is_string() ? value.get<std::string>() : value.dump();
  }
  if (device.empty()) device = "gpu";
  if (device != "gpu" && device != "cpu") {
    throw std::invalid_argument("device: '" + device + "' is not a device; accepted: gpu (a GPU worker, the default), cpu (a CPU run)");
  }
  setup.cpu_run = device == "cpu";

  setup.proposers = make_proposers(args, config, *setup.knowledge, options.runs_dir);
  setup.pool = worker_pool_options(args, config, exe, name);
  return setup;
}

}  // namespace hiera::engine::optimize
