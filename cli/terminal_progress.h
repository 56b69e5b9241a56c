#pragma once
// The optimizer's progress on a terminal: one redrawn status line with a bar
// when stderr is a TTY, plain lines (one per change) when it is a file or pipe.
// While workers wait on their allocation, "waiting: <why>" replaces the phase.
#include <cstdio>
#include <string>

#include "cli/status_line.h"

#include "engine/optimize/optimize_progress.h"

namespace hiera::cli {

class TerminalProgress {
 public:
  // `tty`: redraw in place; otherwise append lines. `out` is usually stderr.
  TerminalProgress(std::FILE* out, bool tty) : line_(out, tty) {}
  void update(const engine::optimize::OptimizeProgress& progress);
  // Ends the status line so what follows starts on a fresh one.
  void finish() { line_.finish(); }
  // A line of its own above the status line (which is redrawn below it).
  void note(const std::string& line) { line_.note(line); }

  // The status line for a state, without control characters (tested exactly).
  static std::string render(const engine::optimize::OptimizeProgress& progress, int width);

 private:
  StatusLine line_;
};

}  // namespace hiera::cli
