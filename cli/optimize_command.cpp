#include "cli/optimize_command.h"

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/terminal_progress.h"
#include "engine/facade/engine.h"
#include "engine/optimize/report.h"
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

}  // namespace

std::string no_gpu_advice(const engine::facade::NoGpu& refusal) {
  return std::string(refusal.what()) +
         ". Optimizing needs a GPU worker: --worker ssh://gpu-host (a host with a GPU and hiera installed), "
         "--worker slurm:PARTITION,gres=gpu:1, or worker.command in .hiera/config.json; or ask for a CPU run with "
         "--device cpu (PyTorch-operator candidates only, timed on the CPU)";
}

CLI::App* add_optimize_command(CLI::App& app, OptimizeArgs& args) {
  auto* cmd = app.add_subcommand("optimize", "Optimize FILE[::SYMBOL] (a PyTorch module or a CUDA kernel) from the terminal");
  cmd->add_option("target", args.target, "FILE[::SYMBOL]: a KernelBench-format .py module or a .cu kernel")->required();
  add_optimizer_options(*cmd, args.optimizer, "Copies of the default worker command");
  cmd->add_option("--device", args.optimizer.device,
                  "gpu: the run needs a worker with a GPU and stops before it starts without one; cpu: a CPU run, "
                  "PyTorch-operator candidates only (default: the configuration's worker.device, else gpu)")
      ->check(CLI::IsMember({"gpu", "cpu"}));
  cmd->add_option("--json", args.json_out, "Write the result as JSON to this file");
  cmd->add_option("--report", args.report_out, "Write the Markdown report to this file");
  cmd->add_flag("--quiet", args.quiet, "No progress on stderr");
  cmd->footer("Exit codes: 0 improved, 3 no improvement found, 4 no GPU (and no --device cpu), 1 error, 130 cancelled.");
  return cmd;
}

int run_optimize(const OptimizeArgs& args, const char* argv0) {
  engine::optimize::Target target;
  json config;
  try {
    // Found from the target file's directory up, as git finds .git.
    const std::filesystem::path file = args.target.substr(0, args.target.find("::"));
    config = load_configuration(args.optimizer.config, file.parent_path().empty() ? "." : file.parent_path(), "hiera optimize");
    target = engine::optimize::load_target(args.target);
  } catch (const std::exception& e) {
    std::cerr << "hiera optimize: " << e.what() << std::endl;
    return kExitError;
  }
  // Allocations' news: pending and running show in the progress line (allocation_progress.h);
  // the rest as lines above it, and everything with --quiet as lines on stderr.
  // Subscribed before configure(), which posts the first.
  TerminalProgress progress(stderr, ::isatty(STDERR_FILENO) == 1);
  engine::facade::Engine hiera_engine({self_path(argv0), "hiera optimize", ".hiera/runs"});
  auto notice_lines = show_allocation_notices(
      hiera_engine.notices(), "hiera optimize",
      args.quiet ? nullptr : std::function<void(const std::string&)>([&progress](const std::string& line) { progress.note(line); }));
  const engine::facade::EngineConfig engine_config{args.optimizer, config};
  try {
    hiera_engine.configure(engine_config);
  } catch (const std::exception& e) {
    std::cerr << "hiera optimize: " << e.what() << std::endl;
    return kExitError;
  }
  engine::facade::RunRequest request;
  request.target = std::move(target);

  engine::CancellationToken cancel;
  g_cancel = &cancel;
  std::signal(SIGINT, on_interrupt);
  engine::optimize::OptimizeResult result;
  try {
    result = hiera_engine.run(engine_config, request, [&](const engine::optimize::OptimizeProgress& p) {
      if (!args.quiet) progress.update(p);
    }, cancel);
  } catch (const engine::facade::NoGpu& refusal) {
    std::signal(SIGINT, SIG_DFL);
    g_cancel = nullptr;
    progress.finish();
    hiera_engine.shutdown();
    std::cerr << "hiera optimize: " << no_gpu_advice(refusal) << std::endl;
    return kExitNoGpu;
  }
  std::signal(SIGINT, SIG_DFL);
  g_cancel = nullptr;
  progress.finish();
  hiera_engine.shutdown();

  const std::string report = engine::optimize::to_markdown(result);
  std::cout << report << std::flush;
  try {
    if (!args.json_out.empty()) {
      std::ofstream out(args.json_out);
      out << engine::optimize::to_json(result).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
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
