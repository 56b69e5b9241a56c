// The optimizer's terminal progress: the exact status line, redrawn in place
// on a TTY and appended line by line otherwise.
#include <gtest/gtest.h>

#include <cstdio>

#include "cli/terminal_progress.h"
#include "engine/optimize/allocation_progress.h"

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

TEST(TerminalProgress, APendingAllocationTakesThePhasesPlace) {
  OptimizeProgress p;
  p.phase = "probe";
  p.message = "probing the worker's device";
  p.waiting = "Slurm job 42 is pending (Resources); workers start when it runs";
  EXPECT_EQ(TerminalProgress::render(p, 0), "waiting: Slurm job 42 is pending (Resources); workers start when it runs");
  // Mid-run (a preempted step waiting for its allocation again): the counts stay.
  p.phase = "evaluate";
  p.tried = 6;
  p.verified = 3;
  p.budget = 24;
  p.best_speedup = 2.314;
  EXPECT_EQ(TerminalProgress::render(p, 0),
            "[#####...............] 6/24 candidates, 3 verified, best 2.31x | waiting: Slurm job 42 is pending (Resources); "
            "workers start when it runs");
  EXPECT_EQ(TerminalProgress::render(p, 60), "[#####...............] 6/24 candidates, 3 verified, best ...");
}

TEST(TerminalProgress, APendingAllocationIsRedrawnInPlaceNotAStrayLine) {
  using hiera::engine::eval::AllocationNotice;
  using Kind = hiera::engine::eval::AllocationNoticeKind;
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  {
    TerminalProgress tty(out, true);
    hiera::engine::eval::AllocationNotices notices;
    hiera::engine::optimize::AllocationProgress shown(notices, [&](const OptimizeProgress& p) { tty.update(p); });
    OptimizeProgress p;
    p.phase = "probe";
    p.message = "reading the contract";
    shown.callback()(p);
    notices.post(AllocationNotice{Kind::Waiting, "Slurm job 42", "Slurm job 42 is pending (Resources)"});
    notices.post(AllocationNotice{Kind::Running, "Slurm job 42", "Slurm job 42 is running"});
    shown.stop();
    tty.finish();
  }
  std::fflush(out);
  EXPECT_EQ(std::string(text, size),
            "\r\033[Kprobe: reading the contract\r\033[Kwaiting: Slurm job 42 is pending (Resources)"
            "\r\033[Kprobe: reading the contract\n");
  std::fclose(out);
  std::free(text);
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

// `hiera optimize` prints an allocation's other news (submitted, cancelled) as
// its own line above the status line, which is drawn again below it.
TEST(TerminalProgress, ANoteGoesAboveTheStatusLine) {
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  {
    TerminalProgress tty(out, true);
    tty.note("hiera optimize: Slurm job 42 submitted");  // nothing drawn yet: a plain line
    OptimizeProgress p;
    p.phase = "probe";
    p.message = "reading the contract";
    tty.update(p);
    tty.note("hiera optimize: Slurm job 42 cancelled");
    tty.finish();
  }
  std::fflush(out);
  EXPECT_EQ(std::string(text, size),
            "hiera optimize: Slurm job 42 submitted\n\r\033[Kprobe: reading the contract"
            "\r\033[Khiera optimize: Slurm job 42 cancelled\nprobe: reading the contract\n");
  std::fclose(out);
  std::free(text);
}
