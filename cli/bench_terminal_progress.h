#pragma once
// `hiera bench`'s progress on a terminal, drawn like `hiera optimize`'s
// (terminal_progress.h): one redrawn line with a bar over the suite's
// problems on a TTY, plain lines (one per change) on a file or pipe. While
// workers wait on their allocation (a pending Slurm job), "waiting: <why>"
// takes the step's place; the bar and the counts stay.
#include <cstdio>
#include <mutex>
#include <string>

#include "cli/status_line.h"

#include "engine/bench/bench_progress.h"
#include "engine/eval/allocation_notices.h"
#include "engine/optimize/allocation_progress.h"

namespace hiera::cli {

class BenchTerminalProgress {
 public:
  // Shows the waits `notices` reports from now on: create it before the
  // worker pool. `total`: the suite's problems, counted in a wait that comes
  // before the runner's first report.
  BenchTerminalProgress(std::FILE* out, bool tty, const engine::eval::AllocationNotices& notices, int total);
  BenchTerminalProgress(const BenchTerminalProgress&) = delete;
  BenchTerminalProgress& operator=(const BenchTerminalProgress&) = delete;

  // The runner's reports, one at a time (BenchRunner calls its callback so).
  void update(const engine::bench::BenchProgress& progress);
  // A line of its own above the progress line: an allocation submitted, cancelled, ended.
  void note(const std::string& line) { line_.note(line); }
  // Shows no more reports or waits, and ends the line.
  void finish();

  // The status line, without control characters (tested exactly).
  static std::string render(const engine::bench::BenchProgress& progress, int width);

 private:
  void show(const std::string& waiting);

  StatusLine line_;
  std::mutex mutex_;
  engine::bench::BenchProgress latest_;  // the runner's latest report
  // Folds the waits of every allocation into one line; it sees the runner's
  // steps, so a wait's end redraws the latest report.
  engine::optimize::AllocationProgress waits_;
  engine::optimize::ProgressCallback step_;
};

}  // namespace hiera::cli
