#include "cli/optimizer_options.h"

#include <iostream>

#include "engine/facade/configuration.h"

namespace hiera::cli {

void add_optimizer_options(CLI::App& cmd, OptimizerArgs& args, const std::string& workers_help) {
  cmd.add_option("--budget", args.budget,
                 "At most N candidates (a ceiling: the run stops earlier when the plan is exhausted, the time limit "
                 "is reached or the result is near the speed of light; default: the spec's, else 24)")
      ->check(CLI::Range(1, 100000));
  cmd.add_option("--time-limit", args.time_limit_s, "Wall-time limit in seconds")->check(CLI::PositiveNumber);
  cmd.add_option("--candidates-per-round", args.candidates_per_round,
                 "Candidates proposed per round (default: one per worker; fix it to make the same proposals on any "
                 "number of workers)")
      ->check(CLI::Range(1, 64));
  cmd.add_option("--llm", args.llm, "LLM endpoint name from the configuration, or none (default: llm.default)");
  cmd.add_flag("--no-knowledge", args.no_knowledge, "Leave out the built-in proposers (knowledge rewrites and generated kernels, torch.compile)");
  cmd.add_option("--worker", args.workers,
                 "Where workers run (repeat for several): a command line, ssh://[user@]host[:port][/path/to/hiera][?gpus=N], "
                 "or slurm[:PARTITION][,gres=gpu:N][,workers=W][,mem=SIZE][,jobid=ID]...; default: hiera worker per visible GPU");
  cmd.add_option("--workers", args.worker_count, workers_help)->check(CLI::Range(1, 64));
  cmd.add_option("--config", args.config, "JSON configuration (default: $HIERA_CONFIG, else the first .hiera/config.json in the target's "
                 "directory, for bench the current one, or above)");
  cmd.add_option("--runs-dir", args.runs_dir, "Where run logs go (default: .hiera/runs)");
  cmd.add_option("--knowledge", args.knowledge_dir, "Knowledge directory (default: the installed one)");
  cmd.add_option("--target-gpu", args.target_gpu, "Knowledge GPU id for estimates when no GPU is probed (default: h200)");
}

nlohmann::json load_configuration(const std::string& path, const std::filesystem::path& start, const std::string& program) {
  auto loaded = engine::facade::load_configuration(path, start);
  for (const auto& warning : loaded.warnings) std::cerr << program << ": " << warning << std::endl;
  return std::move(loaded.json);
}

engine::eval::AllocationNotices::Subscription show_allocation_notices(const engine::eval::AllocationNotices& notices,
                                                                     const std::string& program,
                                                                     std::function<void(const std::string&)> note) {
  return notices.subscribe([program, note = std::move(note)](const engine::eval::AllocationNotice& n) {
    const bool in_progress_line =
        n.kind == engine::eval::AllocationNoticeKind::Waiting || n.kind == engine::eval::AllocationNoticeKind::Running;
    if (!note) {
      std::cerr << program << ": " << n.line << std::endl;
    } else if (!in_progress_line) {
      note(program + ": " + n.line);
    }
  });
}

}  // namespace hiera::cli
