// The optimizer's terminal progress: the exact status line, redrawn in place
// on a TTY and appended line by line otherwise.
#include <gtest/gtest.h>

#include <cstdio>

#include "cli/terminal_progress.h"

namespace {

using hiera::cli::TerminalProgress;
using hiera::engine::optimize::OptimizeProgress;

TEST(TerminalProgress, RendersBarCountsBestAndPhase) {
  OptimizeProgress p;
  p.phase = "evaluate";
  p.message = "c7: passed (2.31x)";
  p.tried = 6;
  p.verified = 3;
  p.budget = 24;
  p.best_speedup = 2.314;
  EXPECT_EQ(TerminalProgress::render(p, 0),
            "[#####...............] 6/24 candidates, 3 verified, best 2.31x | evaluate: c7: passed (2.31x)");
  EXPECT_EQ(TerminalProgress::render(p, 20), "[#####..............");
  OptimizeProgress start;
  start.phase = "probe";
  start.message = "probing the worker's device";
  EXPECT_EQ(TerminalProgress::render(start, 0), "probe: probing the worker's device");
}

TEST(TerminalProgress, RedrawsOnATtyAndAppendsOtherwise) {
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  OptimizeProgress p;
  p.phase = "plan";
  {
    TerminalProgress tty(out, true);
    tty.update(p);
    tty.update(p);  // unchanged: not drawn again
    p.phase = "propose";
    tty.update(p);
    tty.finish();
  }
  std::fflush(out);
  EXPECT_EQ(std::string(text, size), "\r\033[Kplan\r\033[Kpropose\n");
  std::fclose(out);
  std::free(text);

  out = open_memstream(&text, &size);
  {
    TerminalProgress plain(out, false);
    plain.update(p);
    plain.finish();
  }
  std::fflush(out);
  EXPECT_EQ(std::string(text, size), "propose\n");
  std::fclose(out);
  std::free(text);
}

}  // namespace
