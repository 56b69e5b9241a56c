#include "cli/doctor_command.h"

#include <chrono>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/optimizer_options.h"
#include "engine/facade/configuration.h"
#include "engine/facade/doctor_checks.h"
#include "hiera/version.h"

namespace hiera::cli {

namespace {

enum class Status { Ok, Warn, Fail };

class Lines {
 public:
  void add(Status status, const std::string& check, const std::string& found, const std::string& fix = {}) {
    static constexpr const char* kWords[] = {"ok   ", "warn ", "fail "};
    std::cout << kWords[static_cast<int>(status)] << check << ": " << found << (fix.empty() ? "" : "; " + fix) << '\n';
    if (status == Status::Fail) failed_ = true;
  }
  bool failed() const { return failed_; }

 private:
  bool failed_ = false;
};

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

CLI::App* add_doctor_command(CLI::App& app, DoctorArgs& args) {
  auto* cmd = app.add_subcommand("doctor", "Check what optimizing needs (worker, python with torch, GPU, knowledge, configuration)");
  cmd->add_option("--worker", args.worker,
                  "The worker to check: a command line or ssh://... spec (default: the configuration's worker.command, "
                  "else hiera worker)");
  cmd->add_option("--config", args.config, "JSON configuration (default: $HIERA_CONFIG, else .hiera/config.json here or above)");
  cmd->add_option("--knowledge", args.knowledge, "Knowledge directory (default: the installed one)");
  cmd->add_option("--timeout", args.handshake_timeout_s, "Seconds the worker has to answer hello (default 60)")
      ->check(CLI::PositiveNumber);
  cmd->footer("Exit codes: 0 nothing failed (warnings allowed), 1 a check failed.");
  return cmd;
}

int run_doctor(const DoctorArgs& args, const char* argv0) {
  const std::filesystem::path exe = self_path(argv0);
  Lines lines;
  lines.add(Status::Ok, "hiera", std::string(kVersion) + " (" + exe.string() + ")");

  nlohmann::json config = nlohmann::json::object();
  try {
    std::error_code ec;
    const auto here = std::filesystem::current_path(ec);
    const auto loaded = engine::facade::load_configuration(args.config, here);
    config = loaded.json;
    if (loaded.file.empty()) {
      lines.add(Status::Ok, "configuration", "none found in " + here.string() + " or above (the defaults apply)");
    } else {
      const auto unknown = engine::facade::unknown_configuration_keys(loaded.json, engine::facade::configuration_schema());
      if (unknown.empty()) {
        lines.add(Status::Ok, "configuration", loaded.file.string());
      } else {
        lines.add(Status::Warn, "configuration", loaded.file.string() + ": unknown keys " + join(unknown),
                  "remove or correct them (the keys are in docs/config.schema.json)");
      }
    }
  } catch (const std::exception& e) {
    lines.add(Status::Fail, "configuration", e.what(), "correct the file, or point --config or $HIERA_CONFIG at a valid one");
  }

  const auto knowledge = engine::facade::check_knowledge(args.knowledge, exe);
  const std::string counts =
      " (" + std::to_string(knowledge.recipes) + " recipes, " + std::to_string(knowledge.gpus) + " GPUs)";
  const std::string knowledge_fix = "point --knowledge or $HIERA_KNOWLEDGE_DIR at hiera's knowledge/, or reinstall (cmake --install)";
  if (!knowledge.exists) {
    lines.add(Status::Fail, "knowledge", knowledge.dir.string() + " is not a directory", knowledge_fix);
  } else if (knowledge.recipes == 0 || knowledge.gpus == 0) {
    lines.add(Status::Fail, "knowledge", knowledge.dir.string() + counts, knowledge_fix);
  } else if (!knowledge.problems.empty()) {
    lines.add(Status::Warn, "knowledge",
              knowledge.dir.string() + counts + ", " + std::to_string(knowledge.problems.size()) +
                  " did not load: " + knowledge.problems.front(),
              "correct the file named");
  } else {
    lines.add(Status::Ok, "knowledge", knowledge.dir.string() + counts);
  }

  engine::optimize::OptimizerSetupArgs setup;
  if (!args.worker.empty()) setup.workers.push_back(args.worker);
  setup.knowledge_dir = args.knowledge;
  const auto worker = engine::facade::check_worker(
      setup, config, exe, std::chrono::milliseconds(static_cast<long long>(args.handshake_timeout_s * 1000)));
  const std::string not_checked = "not checked: the worker did not start";
  if (worker.skipped) {
    lines.add(Status::Warn, "worker", *worker.skipped, "check it with --worker and a command that runs on an allocated node");
    lines.add(Status::Warn, "python", "not checked: no worker started");
    lines.add(Status::Warn, "gpu", "not checked: no worker started");
  } else if (worker.error) {
    lines.add(Status::Fail, "worker", worker.command + ": " + *worker.error,
              "build hiera-worker (it needs the CUDA toolkit), or point --worker or worker.command at one that starts");
    lines.add(Status::Warn, "python", not_checked);
    lines.add(Status::Warn, "gpu", not_checked);
  } else {
    lines.add(Status::Ok, "worker", "hiera-worker " + worker.worker_version + " (" + worker.command + ")");
    if (worker.python && worker.torch) {
      lines.add(Status::Ok, "python",
                *worker.python + ", torch " + *worker.torch + (worker.cuda ? ", CUDA available" : ", no CUDA"));
    } else {
      lines.add(Status::Fail, "python", "the worker found no python3 that imports torch",
                "install PyTorch for python3, or set HIERA_PYTHON to a python that has it");
    }
    if (worker.cuda && worker.gpu) {
      lines.add(Status::Ok, "gpu", *worker.gpu + (worker.gpu_cc ? " (compute capability " + *worker.gpu_cc + ")" : ""));
    } else {
      lines.add(Status::Warn, "gpu", "no GPU: optimizing needs a GPU worker",
                "set worker.command or worker.specs, e.g. ssh://gpu-host");
    }
  }
  std::cout << std::flush;
  return lines.failed() ? kDoctorFailed : kDoctorOk;
}

}  // namespace hiera::cli
