#pragma once
// `hiera bench`'s progress on a terminal, drawn like `hiera optimize`'s
// (terminal_progress.h): one redrawn line with a bar over the suite's
// problems on a TTY, plain lines (one per change) on a file or pipe.
#include <cstdio>
#include <string>

#include "cli/status_line.h"

#include "engine/bench/bench_progress.h"

namespace hiera::cli {

class BenchTerminalProgress {
 public:
  BenchTerminalProgress(std::FILE* out, bool tty) : line_(out, tty) {}
  void update(const engine::bench::BenchProgress& progress);
  void finish() { line_.finish(); }

  // The status line, without control characters (tested exactly).
  static std::string render(const engine::bench::BenchProgress& progress, int width);

 private:
  StatusLine line_;
};

}  // namespace hiera::cli
