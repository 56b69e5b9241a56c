#include "cli/optimize_command.h"

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <unistd.h>
#include <wordexp.h>

#include <nlohmann/json.hpp>

#include "cli/terminal_progress.h"
#include "engine/eval/worker_pool.h"
#include "engine/knowledge/knowledge_dir.h"
#include "engine/optimize/optimizer.h"
#include "engine/optimize/report.h"
#include "engine/propose/llm/endpoint.h"
#include "engine/propose/llm_proposer.h"
#include "hiera/version.h"

namespace hiera::cli {

using nlohmann::json;

namespace {

// The first Ctrl-C cancels the run (it ends cleanly, with its log and report);
// the default action returns for a second one.
engine::CancellationToken* g_cancel = nullptr;
extern "C" void on_interrupt(int) {
  if (g_cancel) g_cancel->cancel();
  std::signal(SIGINT, SIG_DFL);
}

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

std::filesystem::path self_path(const char* argv0) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path(argv0) : self;
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

}  // namespace

CLI::App* add_optimize_command(CLI::App& app, OptimizeArgs& args) {
  auto* cmd = app.add_subcommand("optimize", "Optimize FILE[::SYMBOL] (a PyTorch module or a CUDA kernel) from the terminal");
  cmd->add_option("target", args.target, "FILE[::SYMBOL]: a KernelBench-format .py module or a .cu kernel")->required();
  cmd->add_option("--budget", args.budget, "Candidates to try (default: the spec's, else 24)")->check(CLI::Range(1, 100000));
  cmd->add_option("--time-limit", args.time_limit_s, "Wall-time limit in seconds")->check(CLI::PositiveNumber);
  cmd->add_option("--llm", args.llm, "LLM endpoint name from the configuration, or none (default: llm.default)");
  cmd->add_option("--worker", args.workers, "Command that starts a worker (repeat for several); default: hiera worker");
  cmd->add_option("--workers", args.worker_count, "Copies of the default worker command")->check(CLI::Range(1, 64));
  cmd->add_option("--json", args.json_out, "Write the result as JSON to this file");
  cmd->add_option("--report", args.report_out, "Write the Markdown report to this file");
  cmd->add_option("--config", args.config, "JSON configuration (default: $HIERA_CONFIG, else .hiera/config.json)");
  cmd->add_option("--runs-dir", args.runs_dir, "Where run logs go (default: .hiera/runs)");
  cmd->add_option("--knowledge", args.knowledge_dir, "Knowledge directory (default: the installed one)");
  cmd->add_option("--target-gpu", args.target_gpu, "Knowledge GPU id for estimates when no GPU is probed (default: h200)");
  cmd->add_flag("--quiet", args.quiet, "No progress on stderr");
  cmd->footer("Exit codes: 0 improved, 3 no improvement found, 1 error, 130 cancelled.");
  return cmd;
}

int run_optimize(const OptimizeArgs& args, const char* argv0) {
  engine::optimize::OptimizeOptions options;
  json config;
  try {
    config = load_configuration(args.config);
    options.target = engine::optimize::load_target(args.target);
  } catch (const std::exception& e) {
    std::cerr << "hiera optimize: " << e.what() << std::endl;
    return kExitError;
  }
  const auto exe = self_path(argv0);
  const auto knowledge_dir = args.knowledge_dir.empty() ? engine::knowledge::default_knowledge_dir(exe)
                                                        : std::filesystem::path(args.knowledge_dir);
  const engine::knowledge::KnowledgeBase knowledge = engine::knowledge::load_knowledge(knowledge_dir);
  for (const auto& problem : knowledge.problems) std::cerr << "hiera optimize: knowledge: " << problem.to_string() << std::endl;

  options.configuration = config.value("spec", json::object());
  options.budget = args.budget;
  options.time_limit_s = args.time_limit_s;
  options.runs_dir = !args.runs_dir.empty() ? args.runs_dir : config.value("runs_dir", std::string(".hiera/runs"));
  options.target_gpu = !args.target_gpu.empty() ? args.target_gpu : config.value("target_gpu", std::string("h200"));

  std::vector<std::shared_ptr<engine::propose::Proposer>> proposers;
  engine::eval::WorkerPoolOptions pool_options;
  try {
    if (auto endpoint = pick_endpoint(config, args.llm)) {
      if (!endpoint->cache_dir) endpoint->cache_dir = options.runs_dir / "llm-cache";
      auto client = std::make_shared<engine::llm::LlmClient>(*endpoint);
      proposers.push_back(std::make_shared<engine::propose::LlmProposer>(client, knowledge));
    }
    std::vector<std::string> commands = args.workers;
    if (commands.empty() && config.contains("worker")) {
      const json worker = config["worker"];
      if (worker.contains("command")) commands.push_back(worker["command"].get<std::string>());
    }
    if (commands.empty()) {
      for (int i = 0; i < args.worker_count; ++i) pool_options.commands.push_back({exe.string(), "worker"});
    } else {
      for (const auto& c : commands) pool_options.commands.push_back(split_command(c));
    }
  } catch (const std::exception& e) {
    std::cerr << "hiera optimize: " << e.what() << std::endl;
    return kExitError;
  }

  engine::eval::WorkerPool pool(pool_options);
  engine::optimize::Optimizer optimizer(pool, knowledge, proposers);
  TerminalProgress progress(stderr, ::isatty(STDERR_FILENO) == 1);
  engine::CancellationToken cancel;
  g_cancel = &cancel;
  std::signal(SIGINT, on_interrupt);
  const auto result = optimizer.run(options, [&](const engine::optimize::OptimizeProgress& p) {
    if (!args.quiet) progress.update(p);
  }, cancel);
  std::signal(SIGINT, SIG_DFL);
  g_cancel = nullptr;
  progress.finish();
  pool.shutdown();

  const std::string report = engine::optimize::to_markdown(result);
  std::cout << report << std::flush;
  try {
    if (!args.json_out.empty()) {
      std::ofstream out(args.json_out);
      out << engine::optimize::to_json(result).dump(1) << '\n';
      if (!out) throw std::runtime_error("cannot write " + args.json_out);
    }
    if (!args.report_out.empty()) {
      std::ofstream out(args.report_out);
      out << report;
      if (!out) throw std::runtime_error("cannot write " + args.report_out);
    }
  } catch (const std::exception& e) {
    std::cerr << "hiera optimize: " << e.what() << std::endl;
    return kExitError;
  }
  switch (result.outcome) {
    case engine::optimize::Outcome::Improved: return kExitImproved;
    case engine::optimize::Outcome::NoImprovement: return kExitNoImprovement;
    case engine::optimize::Outcome::Cancelled: return kExitCancelled;
    case engine::optimize::Outcome::Error: break;
  }
  std::cerr << "hiera optimize: " << result.message << std::endl;
  return kExitError;
}

}  // namespace hiera::cli
