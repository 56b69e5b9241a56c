#pragma once
// The optimizer's progress with the worker allocations' waits folded in, for
// a front end that shows one stream (the CLI's status line, an editor's
// $/progress). While an allocation pends, every report carries its line in
// `waiting` (the optimizer's own reports too, which go on meanwhile); when it
// runs or ends, the last report is shown again without it. Before the
// optimizer has reported anything, a wait is shown as a report of its own.
#include <mutex>
#include <optional>
#include <vector>

#include "engine/eval/allocation_notices.h"
#include "engine/optimize/optimize_progress.h"

namespace hiera::engine::optimize {

class AllocationProgress {
 public:
  // `show` is called one report at a time, from the optimizer's thread or the
  // thread that posts a notice (a worker pool's); it must not post notices.
  // Watches `notices` until destroyed: create it before the worker pool.
  AllocationProgress(const eval::AllocationNotices& notices, ProgressCallback show);
  AllocationProgress(const AllocationProgress&) = delete;
  AllocationProgress& operator=(const AllocationProgress&) = delete;

  // For Optimizer::run; valid while this object lives.
  ProgressCallback callback();
  // Nothing is shown once this returns (the run is over; its pool may still
  // post as it releases the allocation).
  void stop();

 private:
  void on_notice(const eval::AllocationNotice& notice);
  void on_progress(const OptimizeProgress& progress);

  ProgressCallback show_;
  std::mutex mutex_;
  std::optional<OptimizeProgress> last_;  // the optimizer's latest report, as it made it
  std::vector<eval::AllocationNotice> waiting_;  // allocations waited for now, oldest first
  eval::AllocationNotices::Subscription subscription_;  // last: ends before the rest goes
};

}  // namespace hiera::engine::optimize
