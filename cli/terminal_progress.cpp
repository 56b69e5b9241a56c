#include "cli/terminal_progress.h"

#include <algorithm>
#include <cstdio>

namespace hiera::cli {

std::string TerminalProgress::render(const engine::optimize::OptimizeProgress& p, int width) {
  std::string line;
  if (p.budget > 0) {
    line = progress_bar(p.tried, p.budget) + " " + std::to_string(p.tried) + "/" +
           std::to_string(p.budget) + " candidates, " + std::to_string(p.verified) + " verified";
  }
  if (p.best_speedup) {
    char best[32];
    std::snprintf(best, sizeof best, "%.2fx", *p.best_speedup);
    line += std::string(line.empty() ? "" : ", ") + "best " + best;
  }
  // A pending allocation is what the run is doing now: it takes the step's place.
  const std::string doing =
      !p.waiting.empty() ? "waiting: " + p.waiting : p.phase + (p.message.empty() ? "" : ": " + p.message);
  line += std::string(line.empty() ? "" : " | ") + doing;
  return fit_to_width(std::move(line), width);
}

void TerminalProgress::update(const engine::optimize::OptimizeProgress& progress) { line_.show(render(progress, line_.tty() ? 120 : 0)); }

}  // namespace hiera::cli
