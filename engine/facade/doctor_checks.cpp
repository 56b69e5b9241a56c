#include "engine/facade/doctor_checks.h"

#include <exception>

#include "engine/eval/worker_process.h"
#include "engine/eval/worker_spec.h"
#include "engine/knowledge/knowledge_base.h"
#include "engine/knowledge/knowledge_dir.h"

namespace hiera::engine::facade {

WorkerCheck check_worker(optimize::OptimizerSetupArgs args, const nlohmann::json& config, const std::filesystem::path& exe,
                         std::chrono::milliseconds handshake_timeout) {
  WorkerCheck check;
  std::string spec;
  if (!args.workers.empty()) {
    spec = args.workers.front();
  } else if (config.is_object() && config.contains("worker") && config["worker"].is_object() &&
             config["worker"].contains("command") && config["worker"]["command"].is_string()) {
    spec = config["worker"]["command"].get<std::string>();
  }
  if (!spec.empty() && eval::worker_spec_kind(spec) == eval::WorkerSpecKind::Slurm) {
    check.command = spec;
    check.skipped = "a Slurm worker (" + spec + "): a check submits no job";
    return check;
  }
  args.llm = "none";
  args.endpoint.reset();
  args.no_knowledge = true;
  args.workers = spec.empty() ? std::vector<std::string>{} : std::vector<std::string>{spec};
  args.worker_argv.clear();
  if (spec.empty()) args.worker_count = 1;  // the default worker, once (device 0 where there is a GPU)
  try {
    const optimize::OptimizerSetup setup = optimize::make_optimizer_setup(args, config, exe, "hiera doctor", ".hiera/runs");
    if (setup.pool.commands.empty()) throw std::runtime_error("no worker command");
    eval::WorkerConfig worker;
    worker.command = setup.pool.commands.front();
    worker.handshake_timeout = handshake_timeout;
    worker.secrets = setup.pool.secrets;
    check.command = eval::describe_command(worker.command);
    eval::WorkerProcess process(std::move(worker));
    if (auto failure = process.start()) {
      check.error = failure->message;
      return check;
    }
    const eval::WorkerHello& hello = process.hello();
    check.worker_version = hello.worker_version;
    check.cuda = hello.cuda;
    if (hello.device) {
      check.gpu = hello.device->name;
      check.gpu_cc = hello.device->cc;
    }
    if (hello.pytorch) {
      check.python = hello.pytorch->python;
      check.torch = hello.pytorch->torch;
    }
    process.shutdown(std::chrono::seconds(2));
  } catch (const std::exception& e) {
    if (check.command.empty()) check.command = spec;
    check.error = e.what();
  }
  return check;
}

KnowledgeCheck check_knowledge(const std::string& dir, const std::filesystem::path& exe) {
  KnowledgeCheck check;
  check.dir = dir.empty() ? knowledge::default_knowledge_dir(exe) : std::filesystem::path(dir);
  std::error_code ec;
  check.exists = std::filesystem::is_directory(check.dir, ec);
  if (!check.exists) return check;
  const knowledge::KnowledgeBase kb = knowledge::load_knowledge(check.dir);
  check.recipes = kb.recipes.size();
  check.gpus = kb.gpus.size();
  for (const auto& problem : kb.problems) check.problems.push_back(problem.to_string());
  return check;
}

}  // namespace hiera::engine::facade
