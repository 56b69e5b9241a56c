#include "cli/bench_compare_command.h"

#include <iostream>

#include "engine/bench/run_comparison.h"
#include "engine/bench/run_comparison_report.h"

namespace hiera::cli {

CLI::App* add_bench_compare_command(CLI::App& app, BenchCompareArgs& args) {
  auto* cmd = app.add_subcommand("bench-compare", "Compare two hiera bench outputs: wall time and per-problem verdicts");
  cmd->add_option("a", args.a, "A: a hiera bench output directory (its problems/ folder is read)")->required();
  cmd->add_option("b", args.b, "B: another one, e.g. the same suite with more workers")->required();
  cmd->add_flag("--json", args.json, "Print the comparison as JSON instead of Markdown");
  cmd->footer(
      "Problems are matched by group/name. Wall time: the union of the problems' [started_at, finished_at] "
      "intervals (gaps between resumed invocations do not count); ratio A/B above 1 means B took less time.\n"
      "A verdict is a statement of correctness: each candidate's (passed, failed, rejected) and the delivered "
      "result's (correct or not). A problem's verdicts are identical when both sides list the same candidates (same "
      "ids, same code hashes) with the same verdicts and its delivered result is correct on both or on neither. "
      "Timings, speed-ups and which candidate was faster are not verdicts (they vary from run to run); the outcome "
      "(improved, no_improvement) rests on timing and is shown but not compared.\n"
      "Exit codes: 0 every problem is on both sides with identical verdicts, 3 some verdict differs or a problem is "
      "on one side only, 1 an output cannot be read, 2 bad usage.");
  return cmd;
}

int run_bench_compare(const BenchCompareArgs& args) {
  engine::bench::RunComparison comparison;
  try {
    comparison = engine::bench::compare_runs(engine::bench::load_bench_output(args.a), engine::bench::load_bench_output(args.b));
  } catch (const engine::bench::BenchOutputError& e) {
    std::cerr << "hiera bench-compare: " << e.what() << std::endl;
    return kCompareUnreadable;
  }
  if (args.json) std::cout << engine::bench::run_comparison_json(comparison).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  else std::cout << engine::bench::run_comparison_markdown(comparison);
  std::cout << std::flush;
  return comparison.identical() ? kCompareIdentical : kCompareDiffers;
}

}  // namespace hiera::cli
