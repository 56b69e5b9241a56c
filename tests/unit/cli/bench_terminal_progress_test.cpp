// `hiera bench`'s progress line: the exact text for the suite's counts and
// the latest step, a pending allocation in the step's place, and what a
// terminal (TTY or not) receives as reports, waits and notes come in.
#include "cli/bench_terminal_progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>

namespace hiera::cli {
namespace {

using engine::eval::AllocationNotice;
using engine::eval::AllocationNotices;
using Kind = engine::eval::AllocationNoticeKind;

// What `write` puts on a stream, byte for byte.
std::string written(const std::function<void(std::FILE*)>& write) {
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  write(out);
  std::fflush(out);
  std::string result(text, size);
  std::fclose(out);
  std::free(text);
  return result;
}

// A suite three problems in, one of them reused, two running, the latest step c3's verdict.
engine::bench::BenchProgress mid_suite() {
  engine::bench::BenchProgress p;
  p.total = 10;
  p.finished = 3;
  p.reused = 1;
  p.correct = 2;
  p.running = 2;
  p.problem = "fusion/relu";
  p.step.phase = "evaluate";
  p.step.message = "c3: passed (1.20x)";
  return p;
}

TEST(BenchProgressLine, ShowsTheSuiteAndTheLatestStep) {
  engine::bench::BenchProgress p = mid_suite();
  EXPECT_EQ(BenchTerminalProgress::render(p, 0),
            "[######..............] 3/10 problems (1 reused), 2 correct, 2 running | fusion/relu: evaluate: c3: passed (1.20x)");
  p.reused = 0;
  p.running = 0;
  p.problem.clear();
  p.step.phase = "probe";
  p.step.message = "starting the workers";
  EXPECT_EQ(BenchTerminalProgress::render(p, 0), "[######..............] 3/10 problems, 2 correct | probe: starting the workers");
  p.step = {};
  EXPECT_EQ(BenchTerminalProgress::render(p, 0), "[######..............] 3/10 problems, 2 correct");
  EXPECT_EQ(BenchTerminalProgress::render(p, 20), "[######" + std::string(10, '.') + "...");  // cut to the width
}

TEST(BenchProgressLine, APendingAllocationTakesTheStepsPlace) {
  engine::bench::BenchProgress p = mid_suite();
  p.step.waiting = "Slurm job 42 is pending (Resources); workers start when it runs";
  // The wait is the suite's, not the problem's: no problem name before it.
  EXPECT_EQ(BenchTerminalProgress::render(p, 0),
            "[######..............] 3/10 problems (1 reused), 2 correct, 2 running | waiting: Slurm job 42 is pending "
            "(Resources); workers start when it runs");
  EXPECT_EQ(BenchTerminalProgress::render(p, 80),
            "[######..............] 3/10 problems (1 reused), 2 correct, 2 running | waiti...");
  // A wait before any step (the suite's start) shows the same way.
  p.problem.clear();
  p.step = {};
  p.step.waiting = "Slurm job 42 is pending (Priority)";
  EXPECT_EQ(BenchTerminalProgress::render(p, 0),
            "[######..............] 3/10 problems (1 reused), 2 correct, 2 running | waiting: Slurm job 42 is pending (Priority)");
}

TEST(BenchTerminalProgress, AWaitIsRedrawnInPlaceAndNotesGoAboveTheLine) {
  AllocationNotices notices;
  const std::string text = written([&](std::FILE* out) {
    BenchTerminalProgress tty(out, true, notices, 2);
    // Pending before the runner's first report: the suite's counts, and the wait.
    notices.post(AllocationNotice{Kind::Waiting, "Slurm job 42", "Slurm job 42 is pending (Resources)"});
    engine::bench::BenchProgress p;
    p.total = 2;
    p.running = 1;
    p.problem = "fusion/relu";
    p.step.phase = "probe";
    p.step.message = "reading the contract";
    tty.update(p);  // the counts change, the wait stays
    tty.note("hiera bench: submitted Slurm job 43");
    notices.post(AllocationNotice{Kind::Running, "Slurm job 42", "Slurm job 42 is running"});
    tty.finish();
    // The run is over: a wait no longer shows; a note is a plain line.
    notices.post(AllocationNotice{Kind::Waiting, "Slurm job 43", "Slurm job 43 is pending (Resources)"});
    tty.note("hiera bench: cancelled Slurm job 43");
  });
  EXPECT_EQ(text,
            "\r\033[K[....................] 0/2 problems, 0 correct | waiting: Slurm job 42 is pending (Resources)"
            "\r\033[K[....................] 0/2 problems, 0 correct, 1 running | waiting: Slurm job 42 is pending (Resources)"
            "\r\033[Khiera bench: submitted Slurm job 43\n"
            "[....................] 0/2 problems, 0 correct, 1 running | waiting: Slurm job 42 is pending (Resources)"
            "\r\033[K[....................] 0/2 problems, 0 correct, 1 running | fusion/relu: probe: reading the contract\n"
            "hiera bench: cancelled Slurm job 43\n");
}

TEST(BenchTerminalProgress, ShowsTheLatestAllocationStillWaitingOnAPlainStream) {
  AllocationNotices notices;
  const std::string text = written([&](std::FILE* out) {
    BenchTerminalProgress plain(out, false, notices, 2);
    engine::bench::BenchProgress p;
    p.total = 2;
    p.step.phase = "probe";
    p.step.message = "starting the workers";
    plain.update(p);
    notices.post(AllocationNotice{Kind::Waiting, "Slurm job 1", "Slurm job 1 is pending (Priority)"});
    notices.post(AllocationNotice{Kind::Waiting, "Slurm job 2", "Slurm job 2 is pending (Resources)"});
    notices.post(AllocationNotice{Kind::Ended, "Slurm job 2", "stopped waiting for Slurm job 2"});
    notices.post(AllocationNotice{Kind::Info, "Slurm job 3", "submitted Slurm job 3"});  // not the line's news
    notices.post(AllocationNotice{Kind::Running, "Slurm job 1", "Slurm job 1 is running"});
    p.finished = 1;
    p.correct = 1;
    p.problem = "fusion/relu";
    p.step.phase = "done";
    p.step.message = "improved, 1.50x";
    plain.update(p);
    plain.finish();
  });
  EXPECT_EQ(text,
            "[....................] 0/2 problems, 0 correct | probe: starting the workers\n"
            "[....................] 0/2 problems, 0 correct | waiting: Slurm job 1 is pending (Priority)\n"
            "[....................] 0/2 problems, 0 correct | waiting: Slurm job 2 is pending (Resources)\n"
            "[....................] 0/2 problems, 0 correct | waiting: Slurm job 1 is pending (Priority)\n"
            "[....................] 0/2 problems, 0 correct | probe: starting the workers\n"
            "[##########..........] 1/2 problems, 1 correct | fusion/relu: done: improved, 1.50x\n");
}

}  // namespace
}  // namespace hiera::cli
