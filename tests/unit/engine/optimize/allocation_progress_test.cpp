// The optimizer's reports with allocation waits folded in: what a front end
// is shown, report by report, while a Slurm job pends and after it runs.
#include "engine/optimize/allocation_progress.h"

#include <gtest/gtest.h>

namespace hiera::engine::optimize {
namespace {

using eval::AllocationNotice;
using Kind = eval::AllocationNoticeKind;

const AllocationNotice kSubmitted{Kind::Info, "Slurm job 7", "submitted Slurm job 7"};
const AllocationNotice kPending{Kind::Waiting, "Slurm job 7", "Slurm job 7 is pending (Resources)"};
const AllocationNotice kRunning{Kind::Running, "Slurm job 7", "Slurm job 7 is running"};
const AllocationNotice kCancelled{Kind::Ended, "Slurm job 7", "cancelled Slurm job 7: its resources are released"};

// "phase: message [waiting: ...]", one string per report shown.
struct Shown {
  std::vector<std::string> lines;
  ProgressCallback callback() {
    return [this](const OptimizeProgress& p) {
      lines.push_back(p.phase + ": " + p.message + (p.waiting.empty() ? "" : " [waiting: " + p.waiting + "]"));
    };
  }
};

OptimizeProgress report(const std::string& phase, const std::string& message) {
  OptimizeProgress p;
  p.phase = phase;
  p.message = message;
  return p;
}

TEST(AllocationProgressTest, AWaitMarksEveryReportUntilTheAllocationRunsThenTheLastReportIsShownAgain) {
  eval::AllocationNotices notices;
  Shown shown;
  AllocationProgress progress(notices, shown.callback());
  const ProgressCallback optimizer = progress.callback();
  optimizer(report("probe", "reading the contract"));
  notices.post(kSubmitted);  // a line, not a state: nothing to show
  notices.post(kPending);
  optimizer(report("probe", "probing the worker's device"));
  notices.post(kRunning);
  optimizer(report("reference", "timing the reference"));
  EXPECT_EQ(shown.lines, (std::vector<std::string>{
                             "probe: reading the contract",
                             "probe: reading the contract [waiting: Slurm job 7 is pending (Resources)]",
                             "probe: probing the worker's device [waiting: Slurm job 7 is pending (Resources)]",
                             "probe: probing the worker's device",
                             "reference: timing the reference",
                         }));
}

TEST(AllocationProgressTest, AWaitBeforeAnyReportIsAReportOfItsOwn) {
  eval::AllocationNotices notices;
  Shown shown;
  AllocationProgress progress(notices, shown.callback());
  notices.post(kPending);
  notices.post(kCancelled);  // ended before the optimizer said anything: nothing to take back
  EXPECT_EQ(shown.lines, (std::vector<std::string>{":  [waiting: Slurm job 7 is pending (Resources)]"}));
}

TEST(AllocationProgressTest, AWaitUnderWayWhenTheRunStartsIsShownAtOnce) {
  eval::AllocationNotices notices;
  notices.post(kPending);
  Shown shown;
  AllocationProgress progress(notices, shown.callback());
  progress.callback()(report("probe", "reading the contract"));
  EXPECT_EQ(shown.lines, (std::vector<std::string>{
                             ":  [waiting: Slurm job 7 is pending (Resources)]",
                             "probe: reading the contract [waiting: Slurm job 7 is pending (Resources)]",
                         }));
}

TEST(AllocationProgressTest, NothingIsShownAfterStopOrOnceDestroyed) {
  eval::AllocationNotices notices;
  Shown shown;
  {
    AllocationProgress progress(notices, shown.callback());
    progress.callback()(report("done", "finished"));
    progress.stop();
    notices.post(kPending);
    progress.callback()(report("done", "again"));
  }
  notices.post(kRunning);
  EXPECT_EQ(shown.lines, (std::vector<std::string>{"done: finished"}));
}

}  // namespace
}  // namespace hiera::engine::optimize
