#include "engine/bench/bench_report.h"

#include <algorithm>
#include <cstdio>

#include "engine/bench/suite_figures.h"
#include "engine/bench/wall_time.h"

namespace hiera::engine::bench {

namespace {

std::string cell(std::string text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  if (out.size() > 200) out = out.substr(0, 197) + "...";
  return out;
}

std::string times(const std::optional<double>& speedup) {
  if (!speedup) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", *speedup);
  return text;
}

std::string percent(const std::optional<double>& fraction) {
  if (!fraction) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", *fraction * 100.0);
  return text;
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text.empty() ? "-" : text;
}

std::string wall_text(const std::optional<double>& seconds) {
  if (!seconds) return "not recorded";
  char text[64];
  std::snprintf(text, sizeof text, "%.1f s (while problems ran)", *seconds);
  return text;
}

std::string workers_text(const std::vector<int>& counts) {
  std::string text;
  for (const int n : counts) text += (text.empty() ? "" : ", ") + std::to_string(n);
  return text.empty() ? "not recorded" : text;
}

std::string group_title(const std::string& group) { return group == kTopGroup ? "(top level)" : group; }

void fast_p_table(std::string& out, const SuiteFigures& figures) {
  out += "| p | correct and faster than p, over eager |" + std::string(figures.fast_p_compile ? " over torch.compile |" : "") + "\n";
  out += "|---|---|" + std::string(figures.fast_p_compile ? "---|" : "") + "\n";
  for (const auto& [key, p] : kFastPThresholds) {
    out += "| " + key + " | " + percent(figures.fast_p.at(key)) + " |";
    if (figures.fast_p_compile) out += " " + percent(figures.fast_p_compile->at(key)) + " |";
    out += "\n";
  }
}

// The same table with "correct" meaning KernelBench's own criterion passed.
void fast_p_kernelbench_table(std::string& out, const SuiteFigures& figures) {
  const bool compile = figures.fast_p_kernelbench_compile.has_value();
  out += "| p | passed KernelBench's criterion and faster than p, over eager |" +
         std::string(compile ? " over torch.compile |" : "") + "\n";
  out += "|---|---|" + std::string(compile ? "---|" : "") + "\n";
  for (const auto& [key, p] : kFastPThresholds) {
    out += "| " + key + " | " + percent(figures.fast_p_kernelbench.at(key)) + " |";
    if (compile) out += " " + percent(figures.fast_p_kernelbench_compile->at(key)) + " |";
    out += "\n";
  }
}

// "passed (max abs error 1.7e-05)", "failed (...)", "-": a problem's KernelBench verdict in a cell.
std::string kernelbench_cell(const std::optional<eval::KernelBenchVerdict>& k) {
  if (!k) return "-";
  std::string text = k->passed ? "passed" : "failed";
  if (k->max_abs_error) {
    char error[48];
    std::snprintf(error, sizeof error, " (max abs error %.2g)", *k->max_abs_error);
    text += error;
  }
  return text;
}

std::string seconds_cell(const std::optional<double>& seconds) {
  if (!seconds) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", *seconds);
  return text;
}

// A row per problem: its wall time, the optimizer's, the candidate evaluations and
// the delivery inside it, and the side-by-side job; "-" where a record has none.
void time_table(std::string& out, const std::vector<ProblemResult>& results) {
  out += "## Where the time went\n\n"
         "Each problem's wall time: the optimizer (of which its candidate evaluations and the delivery of the best "
         "candidate) and the side-by-side measurement. Its run directory's report.md splits the optimizer's time "
         "further; the problem's JSON has every phase, with the worker's own (`time_breakdown`).\n\n";
  out += "| problem | total | optimize | of which candidates | delivery | measure |\n|---|---|---|---|---|---|\n";
  for (const auto& r : results) {
    out += "| " + cell(r.id()) + " | ";
    if (!r.time_breakdown) {
      out += "- | - | - | - | - |\n";
      continue;
    }
    const ProblemTimeBreakdown& t = *r.time_breakdown;
    out += seconds_cell(t.total_s) + " | " + seconds_cell(t.optimize.total_s) + " | " +
           seconds_cell(t.optimize.seconds("candidates")) + " | " + seconds_cell(t.optimize.seconds("delivery")) + " | " +
           seconds_cell(t.measure_s) + " |\n";
  }
  out += "\n";
}

}  // namespace

std::string bench_report_markdown(const std::vector<ProblemResult>& results, const SuiteInfo& info, const std::string& suite) {
  const bool compile = info.with_compile();
  const SuiteFigures figures = compute_figures(results, compile);
  std::string out = "# hiera bench: " + suite + "\n\n";
  out += "- GPU: " + info.gpu + "\n";
  out += "- Date: " + info.date + "\n";
  out += "- Commit: `" + info.commit + "`\n";
  out += "- Command: `" + info.command + "`\n";
  out += "- Problems: " + std::to_string(figures.problems) + ", " + std::to_string(figures.correct) + " correct; baselines: " +
         joined(info.baselines) + "\n";
  out += "- Wall time: " + wall_text(wall_seconds(results)) + "; workers: " + workers_text(worker_counts(results)) + "\n\n";
  out += "Each speed-up is that of what hiera hands back, timed side by side with the reference (eager)" +
         std::string(compile ? " and torch.compile(reference)" : "") +
         " in one job: the verified faster candidate, or the original (1.00x) when nothing was faster. "
         "fast_p is the fraction of all problems that are correct and faster than p. In the geometric means a problem "
         "without a measured speed-up (its reference failed) counts as 1.00x: the user keeps the original.\n\n";

  out += "## fast_p\n\n";
  fast_p_table(out, figures);
  out += "\nGeometric mean speed-up: **" + times(figures.geomean_eager) + "** over eager";
  if (figures.geomean_compile) out += ", **" + times(figures.geomean_compile) + "** over torch.compile";
  out += ".\n\n";

  // Only records from a runner that applies KernelBench's criterion have a verdict to count.
  const bool any_kernelbench =
      std::any_of(results.begin(), results.end(), [](const ProblemResult& r) { return r.kernelbench.has_value(); });
  if (any_kernelbench) {
    out += "## fast_p by KernelBench's criterion\n\n"
           "The same fractions with a problem counted as correct only when what hiera hands back passed KernelBench's "
           "own check in the side-by-side job (seeded torch.rand inputs, 5 trials, torch.allclose against the "
           "reference's output at atol = rtol = 1e-4 for float32, 1e-2 for float16/bfloat16); a problem without that "
           "verdict counts as not correct.\n\n";
    fast_p_kernelbench_table(out, figures);
    out += "\n";
  }

  const auto groups = by_group(results);
  if (groups.size() > 1) {
    out += "## Groups\n\n| group | problems | correct | fast_1 | geomean over eager |" +
           std::string(compile ? " fast_1 over compile | geomean over compile |" : "") + "\n|---|---|---|---|---|" +
           std::string(compile ? "---|---|" : "") + "\n";
    for (const auto& [group, members] : groups) {
      const SuiteFigures g = compute_figures(members, compile);
      out += "| " + cell(group_title(group)) + " | " + std::to_string(g.problems) + " | " + std::to_string(g.correct) + " | " +
             percent(g.fast_p.at("1")) + " | " + times(g.geomean_eager) + " |";
      if (compile) out += " " + percent(g.fast_p_compile->at("1")) + " | " + times(g.geomean_compile) + " |";
      out += "\n";
    }
    out += "\n";
  }

  for (const auto& [group, members] : groups) {
    out += "## Problems: " + group_title(group) + "\n\n";
    out += "| problem | correct |" + std::string(any_kernelbench ? " KernelBench |" : "") + " over eager |" +
           std::string(compile ? " over compile |" : "") + " of speed of light | spaces | recipes | outcome |\n";
    out += "|---|---|" + std::string(any_kernelbench ? "---|" : "") + "---|" + std::string(compile ? "---|" : "") +
           "---|---|---|---|\n";
    for (const auto& r : members) {
      out += "| [" + cell(r.name) + "](" + cell(result_path(Problem{r.name, r.group, r.file}).generic_string()) + ") | " +
             (r.correct ? "yes" : "no") + " |";
      if (any_kernelbench) out += " " + kernelbench_cell(r.kernelbench) + " |";
      out += " " + times(r.speedup_eager) + " |";
      if (compile) out += " " + times(r.speedup_compile) + " |";
      out += " " + percent(r.sol_fraction) + " | " + cell(joined(r.spaces)) + " | " + cell(joined(r.recipes)) + " | " +
             cell(r.outcome) + " |\n";
    }
    std::string notes;
    for (const auto& r : members) {
      if (r.error) notes += "- " + cell(r.name) + ": " + cell(*r.error) + "\n";
      for (const auto& [baseline, why] : r.baseline_errors) notes += "- " + cell(r.name) + ": no " + baseline + " time: " + cell(why) + "\n";
    }
    if (!notes.empty()) out += "\n" + notes;
    out += "\n";
  }

  // Only records from a hiera that measures its phases have a breakdown to show.
  if (std::any_of(results.begin(), results.end(), [](const ProblemResult& r) { return r.time_breakdown.has_value(); })) {
    time_table(out, results);
  }

  out += "## Plots\n\n";
  out += "- [Delivered speed-up per problem](speedups.svg) (sorted, log scale)\n";
  out += "- [Fraction of the speed of light per problem](sol.svg)\n\n";
  out += "![Delivered speed-up per problem](speedups.svg)\n\n![Fraction of the speed of light per problem](sol.svg)\n\n";
  out += "Per-problem results: `problems/<group>/<name>.json`; the suite's figures: [summary.json](summary.json).\n";
  return out;
}

}  // namespace hiera::engine::bench
