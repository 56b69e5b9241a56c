#include "cli/bench_command.h"

#include <fstream>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <optional>

#include <unistd.h>

#include "cli/bench_terminal_progress.h"
#include "engine/bench/bench_report.h"
#include "engine/bench/bench_runner.h"
#include "engine/bench/output_file.h"
#include "engine/bench/problem_discovery.h"
#include "engine/bench/sol_plot.h"
#include "engine/bench/source_commit.h"
#include "engine/bench/speedup_plot.h"
#include "engine/bench/summary.h"
#include "engine/facade/engine.h"
#include "hiera/version.h"

namespace hiera::cli {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The first Ctrl-C stops the suite: running problems end, finished ones stay
// on disk; the default action returns for a second one.
engine::CancellationToken* g_cancel = nullptr;
extern "C" void on_bench_interrupt(int) {
  if (g_cancel) g_cancel->cancel();
  std::signal(SIGINT, SIG_DFL);
}

std::string shell_quoted(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-_./=,:+@%").find(c) != std::string_view::npos;
  });
  if (plain) return word;
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string joined_command(const std::vector<std::string>& words) {
  std::string text;
  for (std::size_t i = 0; i < words.size(); ++i) {
    // argv[0] as "hiera", whatever path started it.
    text += (i ? " " : "") + (i == 0 ? std::string("hiera") : shell_quoted(words[i]));
  }
  return text;
}

// The suite's name for titles and the default output folder: "samples/" -> "samples".
std::string suite_name(const std::string& dir) {
  fs::path path = fs::absolute(dir).lexically_normal();
  if (path.filename().empty()) path = path.parent_path();
  return path.filename().string();
}

}  // namespace

std::vector<std::string> parse_baselines(std::string_view list) {
  std::vector<std::string> baselines{"eager"};
  while (true) {
    const auto comma = list.find(',');
    std::string name(list.substr(0, comma));
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (name != "eager" && name != "compile") {
      throw UsageError("--baseline: '" + name + "' is not a baseline (eager, compile)");
    }
    if (std::find(baselines.begin(), baselines.end(), name) == baselines.end()) baselines.push_back(name);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return baselines;
}

json bench_fingerprint(const engine::optimize::OptimizeOptions& options, const std::vector<std::string>& baselines,
                       const std::vector<std::string>& proposers) {
  return {{"hiera", hiera::kVersion},
          {"baselines", baselines},
          {"budget", options.budget ? json(*options.budget) : json(nullptr)},
          {"time_limit_s", options.time_limit_s ? json(*options.time_limit_s) : json(nullptr)},
          {"candidates_per_round", options.candidates_per_round ? json(*options.candidates_per_round) : json(nullptr)},
          {"proposers", proposers},
          {"target_gpu", options.target_gpu},
          {"spec", options.configuration},
          {"trials", options.trials},
          {"timing_trials", options.timing_trials},
          {"seed", options.seed}};
}

namespace {

// The outputs of a suite from the per-problem results in out_dir (the ones
// there are; a problem without one is left out and counted on stderr).
void write_outputs(const fs::path& out_dir, const std::vector<engine::bench::ProblemResult>& results,
                   const engine::bench::SuiteInfo& info, const std::string& report) {
  engine::bench::write_file_atomically(out_dir / "summary.json", engine::bench::summary_json(results, info).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  engine::bench::write_file_atomically(out_dir / "report.md", report);
  engine::bench::write_file_atomically(out_dir / "speedups.svg", engine::bench::speedup_plot_svg(results, info.with_compile()));
  engine::bench::write_file_atomically(out_dir / "sol.svg", engine::bench::sol_plot_svg(results));
}

int write_report_only(const std::vector<engine::bench::Problem>& problems, const fs::path& out_dir,
                      const std::vector<std::string>& baselines, bool explicit_baselines, const std::string& suite,
                      const std::vector<std::string>& command_line) {
  std::vector<engine::bench::ProblemResult> results;
  for (const auto& problem : problems) {
    const fs::path path = out_dir / engine::bench::result_path(problem);
    if (!fs::exists(path)) continue;
    try {
      std::ifstream in(path);
      results.push_back(engine::bench::problem_result_from_json(json::parse(in)));
    } catch (const std::exception& e) {
      std::cerr << "hiera bench: " << path.string() << " is left out: " << e.what() << std::endl;
    }
  }
  if (results.empty()) {
    std::cerr << "hiera bench: no results in " << (out_dir / "problems").string() << " to report" << std::endl;
    return kExitError;
  }
  engine::bench::SuiteInfo info;
  info.gpu = results.front().gpu;
  info.commit = engine::bench::results_commit(results);  // records gathered from several runs may span commits
  info.date = engine::bench::iso8601_utc(std::chrono::system_clock::now());
  info.command = joined_command(command_line);
  info.baselines = baselines;
  // Without --baseline, the records say what was measured: a torch.compile
  // column whenever any result has a compile speed-up.
  if (!explicit_baselines) {
    const bool compiled = std::any_of(results.begin(), results.end(), [](const auto& r) { return r.speedup_compile.has_value(); });
    if (compiled && std::find(info.baselines.begin(), info.baselines.end(), "compile") == info.baselines.end()) {
      info.baselines.push_back("compile");
    }
  }
  const std::string report = engine::bench::bench_report_markdown(results, info, suite);
  try {
    write_outputs(out_dir, results, info, report);
  } catch (const std::exception& e) {
    std::cerr << "hiera bench: " << e.what() << std::endl;
    return kExitError;
  }
  std::cout << report << std::flush;
  std::cerr << "hiera bench: reported " << results.size() << " of " << problems.size() << " problem(s) from "
            << out_dir.string() << " (the others have no result there)" << std::endl;
  return kExitSuiteRan;
}

}  // namespace

CLI::App* add_bench_command(CLI::App& app, BenchArgs& args) {
  auto* cmd = app.add_subcommand("bench", "Run a KernelBench-format suite and print the fast_p table");
  cmd->add_option("dir", args.dir, "Suite directory: problems (*.py defining Model) in it and in subfolders (groups)")->required();
  cmd->add_option("--out", args.out, "Output directory (default: .hiera/bench/<DIR's name>)");
  cmd->add_option("--baseline", args.baselines, "Baselines to time side by side: eager (always), compile (torch.compile)")
      ->each([&args](const std::string&) { args.baselines_given = true; });
  cmd->add_option("--filter", args.filter, "Only problems whose group/name this regular expression matches");
  cmd->add_flag("--force", args.force, "Run every problem again, even those with a result from this commit and these options");
  add_optimizer_options(*cmd, args.optimizer, "Copies of the default worker command (default: one per GPU, else 1)");
  cmd->add_flag("--quiet", args.quiet, "No progress on stderr");
  cmd->add_flag("--report-only", args.report_only,
                "Run nothing: write summary.json, report.md and the plots from the results already in OUT "
                "(after an interrupted run, or on a machine without the GPU that measured them)");
  cmd->footer("Problems run concurrently, one per worker; --budget and --time-limit apply to each problem; run "
              "directories go to OUT/runs unless --runs-dir or the configuration's runs_dir says otherwise.\n"
              "Exit codes: 0 the suite ran (improved or not), 1 an error stopped it, 2 bad usage, 130 cancelled "
              "(finished problems are kept; run the same command again to resume).");
  return cmd;
}

int run_bench(const BenchArgs& args, const char* argv0, const std::vector<std::string>& command_line) {
  auto fail = [](int code, const std::string& message) {
    std::cerr << "hiera bench: " << message << std::endl;
    return code;
  };
  std::vector<std::string> baselines;
  std::vector<engine::bench::Problem> problems;
  try {
    baselines = parse_baselines(args.baselines);
    problems = engine::bench::discover_problems(args.dir, args.filter);
  } catch (const std::exception& e) {
    return fail(kExitUsage, e.what());
  }
  if (problems.empty()) {
    return fail(kExitUsage, args.dir + ": no problems" + (args.filter.empty() ? "" : " matching --filter '" + args.filter + "'") +
                                " (KernelBench format: a .py file defining class Model(nn.Module), get_inputs() and get_init_inputs())");
  }
  const fs::path out_dir = !args.out.empty() ? fs::path(args.out)
                                             : fs::path(".hiera/bench") / suite_name(args.dir);

  if (args.report_only) return write_report_only(problems, out_dir, baselines, args.baselines_given, suite_name(args.dir), command_line);

  // Allocations' news: pending and running show in the progress line; the
  // rest, and everything with --quiet, as lines on stderr (above the line).
  // Both subscribe before configure(), which posts the first.
  engine::facade::Engine hiera_engine({self_path(argv0), "hiera bench", out_dir / "runs"});
  std::optional<BenchTerminalProgress> terminal;
  if (!args.quiet) terminal.emplace(stderr, ::isatty(STDERR_FILENO) == 1, hiera_engine.notices(), static_cast<int>(problems.size()));
  auto notice_lines = show_allocation_notices(
      hiera_engine.notices(), "hiera bench",
      terminal ? std::function<void(const std::string&)>([&terminal](const std::string& line) { terminal->note(line); })
               : nullptr);
  try {
    const json config = load_configuration(args.optimizer.config, ".", "hiera bench");
    hiera_engine.configure({args.optimizer, config});
    fs::create_directories(out_dir);
  } catch (const std::exception& e) {
    return fail(kExitError, e.what());
  }

  engine::bench::BenchSettings settings;
  settings.out_dir = out_dir;
  settings.baselines = baselines;
  settings.force = args.force;
  settings.commit = engine::bench::source_commit();
  settings.optimize = hiera_engine.default_options();
  settings.options = bench_fingerprint(settings.optimize, baselines, hiera_engine.proposer_names());
  settings.concurrency = static_cast<int>(hiera_engine.worker_count());
  const auto knowledge = hiera_engine.knowledge();
  engine::bench::BenchServices services = hiera_engine.bench_services();  // starts the pool

  engine::CancellationToken cancel;
  g_cancel = &cancel;
  std::signal(SIGINT, on_bench_interrupt);
  engine::bench::BenchRunner runner(services, *knowledge);
  const engine::bench::BenchRun run = runner.run(problems, settings, [&](const engine::bench::BenchProgress& p) {
    if (terminal) terminal->update(p);
  }, cancel);
  if (terminal) terminal->finish();
  hiera_engine.shutdown();
  // Ctrl-C from here on finds every problem finished: the outputs are still written.
  struct RestoreInterrupt {
    ~RestoreInterrupt() {
      std::signal(SIGINT, SIG_DFL);
      g_cancel = nullptr;
    }
  } restore;

  for (const auto& error : run.errors) std::cerr << "hiera bench: " << error << std::endl;
  if (run.cancelled) {
    return fail(kExitCancelled, "cancelled: " + std::to_string(run.results.size()) + " of " + std::to_string(problems.size()) +
                                    " problems finished and are kept in " + (out_dir / "problems").string() +
                                    "; run the same command again to resume");
  }

  engine::bench::SuiteInfo info;
  info.gpu = run.gpu;
  info.commit = settings.commit;
  info.date = engine::bench::iso8601_utc(std::chrono::system_clock::now());
  info.command = joined_command(command_line);
  info.baselines = baselines;
  const std::string report =
      engine::bench::bench_report_markdown(run.results, info, suite_name(args.dir));
  try {
    write_outputs(out_dir, run.results, info, report);
  } catch (const std::exception& e) {
    return fail(kExitError, e.what());
  }
  std::cout << report << std::flush;
  std::cerr << "hiera bench: " << run.ran << " problem(s) run, " << run.reused << " reused; results in " << out_dir.string()
            << std::endl;
  return run.errors.empty() ? kExitSuiteRan : kExitError;
}

}  // namespace hiera::cli
