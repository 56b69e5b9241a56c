#include "cli/bench_progress.h"

#include <algorithm>

namespace hiera::cli {

std::string BenchTerminalProgress::render(const engine::bench::BenchProgress& p, int width) {
  std::string line = progress_bar(p.finished, p.total) + " " + std::to_string(p.finished) +
                     "/" + std::to_string(p.total) + " problems";
  if (p.reused > 0) line += " (" + std::to_string(p.reused) + " reused)";
  line += ", " + std::to_string(p.correct) + " correct";
  if (p.running > 0) line += ", " + std::to_string(p.running) + " running";
  if (!p.step.phase.empty()) {
    line += " | " + (p.problem.empty() ? std::string() : p.problem + ": ") + p.step.phase +
            (p.step.message.empty() ? "" : ": " + p.step.message);
  }
  return fit_to_width(std::move(line), width);
}

void BenchTerminalProgress::update(const engine::bench::BenchProgress& progress) { line_.show(render(progress, line_.tty() ? 120 : 0)); }

}  // namespace hiera::cli
