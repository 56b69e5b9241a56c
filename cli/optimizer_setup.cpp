#include "cli/optimizer_setup.h"

#include <cstdlib>
#include <fstream>
#include <iostream>

#include <wordexp.h>

#include "engine/knowledge/knowledge_dir.h"
#include "engine/propose/llm/endpoint.h"
#include "engine/propose/knowledge/knowledge_proposer.h"
#include "engine/propose/llm_proposer.h"

namespace hiera::cli {

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
std::optional<engine::llm::LlmEndpoint> pick_endpoint(const json& config, std::string name) {
  const json llm = config.value("llm", json::object());
  if (name.empty()) name = llm.value("default", "none");
  if (name == "none") return std::nullopt;
  for (const auto& endpoint : llm.value("endpoints", json::array())) {
    if (endpoint.is_object() && endpoint.value("name", "") == name) return engine::llm::parse_endpoint(endpoint);
  }
  throw std::runtime_error("--llm " + name + ": no endpoint of that name in the configuration's llm.endpoints");
}

std::vector<std::shared_ptr<engine::propose::Proposer>> make_proposers(const OptimizerArgs& args, const json& config,
                                                                        const engine::knowledge::KnowledgeBase& knowledge,
                                                                        const std::filesystem::path& runs_dir) {
  std::vector<std::shared_ptr<engine::propose::Proposer>> proposers;
  // The built-in proposer first: offline, deterministic, and the only one without an LLM endpoint.
  if (!args.no_knowledge) {
    proposers.push_back(std::make_shared<engine::propose::knowledge_proposer::KnowledgeProposer>(knowledge));
  }
  if (auto endpoint = pick_endpoint(config, args.llm)) {
    if (!endpoint->cache_dir) endpoint->cache_dir = runs_dir / "llm-cache";
    auto client = std::make_shared<engine::llm::LlmClient>(*endpoint);
    proposers.push_back(std::make_shared<engine::propose::LlmProposer>(client, knowledge));
  }
  return proposers;
}

std::vector<std::vector<std::string>> worker_commands(const OptimizerArgs& args, const json& config,
                                                      const std::filesystem::path& exe) {
  std::vector<std::string> commands = args.workers;
  if (commands.empty() && config.contains("worker")) {
    const json worker = config["worker"];
    if (worker.contains("command")) commands.push_back(worker["command"].get<std::string>());
  }
  std::vector<std::vector<std::string>> out;
  if (!commands.empty()) {
    for (const auto& c : commands) out.push_back(split_command(c));
  } else if (args.worker_count) {
    for (int i = 0; i < *args.worker_count; ++i) out.push_back({exe.string(), "worker"});
  } else {
    const int gpus = visible_gpu_count();
    for (int i = 0; i < gpus; ++i) out.push_back({exe.string(), "worker", "--device", std::to_string(i)});
    if (out.empty()) out.push_back({exe.string(), "worker"});  // no GPU: one worker, on the CPU
  }
  return out;
}

}  // namespace

void add_optimizer_options(CLI::App& cmd, OptimizerArgs& args, const std::string& workers_help) {
  cmd.add_option("--budget", args.budget, "Candidates to try (default: the spec's, else 24)")->check(CLI::Range(1, 100000));
  cmd.add_option("--time-limit", args.time_limit_s, "Wall-time limit in seconds")->check(CLI::PositiveNumber);
  cmd.add_option("--llm", args.llm, "LLM endpoint name from the configuration, or none (default: llm.default)");
  cmd.add_flag("--no-knowledge", args.no_knowledge, "Leave out the built-in knowledge proposer (rewrites and generated kernels)");
  cmd.add_option("--worker", args.workers, "Command that starts a worker (repeat for several); default: hiera worker");
  cmd.add_option("--workers", args.worker_count, workers_help)->check(CLI::Range(1, 64));
  cmd.add_option("--config", args.config, "JSON configuration (default: $HIERA_CONFIG, else .hiera/config.json)");
  cmd.add_option("--runs-dir", args.runs_dir, "Where run logs go (default: .hiera/runs)");
  cmd.add_option("--knowledge", args.knowledge_dir, "Knowledge directory (default: the installed one)");
  cmd.add_option("--target-gpu", args.target_gpu, "Knowledge GPU id for estimates when no GPU is probed (default: h200)");
}

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

int visible_gpu_count() { return visible_gpu_count(std::getenv("CUDA_VISIBLE_DEVICES"), "/proc/driver/nvidia/gpus"); }

OptimizerSetup make_optimizer_setup(const OptimizerArgs& args, const json& config, const std::filesystem::path& exe,
                                    const std::string& name, const std::filesystem::path& default_runs_dir) {
  OptimizerSetup setup;
  const auto knowledge_dir = args.knowledge_dir.empty() ? engine::knowledge::default_knowledge_dir(exe)
                                                        : std::filesystem::path(args.knowledge_dir);
  auto knowledge = std::make_shared<engine::knowledge::KnowledgeBase>(engine::knowledge::load_knowledge(knowledge_dir));
  for (const auto& problem : knowledge->problems) std::cerr << name << ": knowledge: " << problem.to_string() << std::endl;
  setup.knowledge = knowledge;

  engine::optimize::OptimizeOptions& options = setup.options;
  options.configuration = config.value("spec", json::object());
  options.budget = args.budget;
  options.time_limit_s = args.time_limit_s;
  options.runs_dir = !args.runs_dir.empty() ? std::filesystem::path(args.runs_dir)
                                            : std::filesystem::path(config.value("runs_dir", default_runs_dir.string()));
  options.target_gpu = !args.target_gpu.empty() ? args.target_gpu : config.value("target_gpu", std::string("h200"));

  setup.proposers = make_proposers(args, config, *setup.knowledge, options.runs_dir);
  setup.pool.commands = worker_commands(args, config, exe);
  return setup;
}

}  // namespace hiera::cli
