#include "cli/bench_terminal_progress.h"

#include <algorithm>

namespace hiera::cli {

namespace {

// What the line shows before the runner's first report.
engine::bench::BenchProgress no_report(int total) {
  engine::bench::BenchProgress p;
  p.total = total;
  return p;
}

}  // namespace

BenchTerminalProgress::BenchTerminalProgress(std::FILE* out, bool tty, const engine::eval::AllocationNotices& notices,
                                             int total)
    : line_(out, tty),
      latest_(no_report(total)),
      // Subscribes: from here on the pool's thread may call show().
      waits_(notices, [this](const engine::optimize::OptimizeProgress& shown) { show(shown.waiting); }),
      step_(waits_.callback()) {}

void BenchTerminalProgress::update(const engine::bench::BenchProgress& progress) {
  {
    std::lock_guard lock(mutex_);
    latest_ = progress;
  }
  // Back through waits_, which adds the wait (if any) and calls show().
  step_(progress.step);
}

void BenchTerminalProgress::finish() {
  waits_.stop();
  line_.finish();
}

void BenchTerminalProgress::show(const std::string& waiting) {
  // The latest report, whichever thread calls: a problem's (through update) or the pool's (a notice).
  std::lock_guard lock(mutex_);
  engine::bench::BenchProgress shown = latest_;
  shown.step.waiting = waiting;
  line_.show(render(shown, line_.tty() ? 120 : 0));
}

std::string BenchTerminalProgress::render(const engine::bench::BenchProgress& p, int width) {
  std::string line = progress_bar(p.finished, p.total) + " " + std::to_string(p.finished) +
                     "/" + std::to_string(p.total) + " problems";
  if (p.reused > 0) line += " (" + std::to_string(p.reused) + " reused)";
  line += ", " + std::to_string(p.correct) + " correct";
  if (p.running > 0) line += ", " + std::to_string(p.running) + " running";
  // A pending allocation holds up the suite, not one problem: it takes the step's place.
  if (!p.step.waiting.empty()) {
    line += " | waiting: " + p.step.waiting;
  } else if (!p.step.phase.empty()) {
    line += " | " + (p.problem.empty() ? std::string() : p.problem + ": ") + p.step.phase +
            (p.step.message.empty() ? "" : ": " + p.step.message);
  }
  return fit_to_width(std::move(line), width);
}

}  // namespace hiera::cli
