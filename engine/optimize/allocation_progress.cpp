#include "engine/optimize/allocation_progress.h"

#include <algorithm>

namespace hiera::engine::optimize {

AllocationProgress::AllocationProgress(const eval::AllocationNotices& notices, ProgressCallback show)
    : show_(std::move(show)),
      subscription_(notices.subscribe([this](const eval::AllocationNotice& notice) { on_notice(notice); })) {}

ProgressCallback AllocationProgress::callback() {
  return [this](const OptimizeProgress& progress) { on_progress(progress); };
}

void AllocationProgress::stop() {
  std::lock_guard lock(mutex_);
  show_ = nullptr;
}

void AllocationProgress::on_notice(const eval::AllocationNotice& notice) {
  if (notice.kind == eval::AllocationNoticeKind::Info) return;
  std::lock_guard lock(mutex_);
  std::erase_if(waiting_, [&](const eval::AllocationNotice& w) { return w.source == notice.source; });
  if (notice.kind == eval::AllocationNoticeKind::Waiting) waiting_.push_back(notice);
  // Still waiting for another allocation: its line stays (the latest one).
  OptimizeProgress shown = last_.value_or(OptimizeProgress{});
  shown.waiting = waiting_.empty() ? std::string() : waiting_.back().line;
  if (!last_ && shown.waiting.empty()) return;  // nothing was shown, nothing to take back
  if (show_) show_(shown);
}

void AllocationProgress::on_progress(const OptimizeProgress& progress) {
  std::lock_guard lock(mutex_);
  last_ = progress;
  OptimizeProgress shown = progress;
  shown.waiting = waiting_.empty() ? std::string() : waiting_.back().line;
  if (show_) show_(shown);
}

}  // namespace hiera::engine::optimize
