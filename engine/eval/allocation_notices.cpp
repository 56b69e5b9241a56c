#include "engine/eval/allocation_notices.h"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

namespace hiera::engine::eval {

struct AllocationNotices::Channel {
  // Observers run under this lock, so one that unsubscribes is never called afterwards.
  std::mutex mutex;
  std::uint64_t next_id = 1;
  std::vector<std::pair<std::uint64_t, Observer>> observers;
  std::vector<AllocationNotice> waiting;  // one per allocation still waiting, oldest first
};

namespace {

void tell(const AllocationNotices::Observer& observer, const AllocationNotice& notice) {
  try {
    observer(notice);
  } catch (...) {
    // One front end failing to show a line must not keep it from the others.
  }
}

}  // namespace

AllocationNotices::Subscription::Subscription(Subscription&& other) noexcept
    : channel_(std::move(other.channel_)), id_(std::exchange(other.id_, 0)) {}

AllocationNotices::Subscription& AllocationNotices::Subscription::operator=(Subscription&& other) noexcept {
  if (this != &other) {
    reset();
    channel_ = std::move(other.channel_);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

void AllocationNotices::Subscription::reset() {
  if (auto channel = channel_.lock()) {
    std::lock_guard lock(channel->mutex);
    std::erase_if(channel->observers, [this](const auto& entry) { return entry.first == id_; });
  }
  channel_.reset();
  id_ = 0;
}

AllocationNotices::AllocationNotices() : channel_(std::make_shared<Channel>()) {}

void AllocationNotices::post(const AllocationNotice& notice) const {
  std::lock_guard lock(channel_->mutex);
  auto& waiting = channel_->waiting;
  if (notice.kind != AllocationNoticeKind::Info) {
    std::erase_if(waiting, [&](const AllocationNotice& w) { return w.source == notice.source; });
  }
  if (notice.kind == AllocationNoticeKind::Waiting) waiting.push_back(notice);
  for (const auto& [id, observer] : channel_->observers) tell(observer, notice);
}

AllocationNoticeCallback AllocationNotices::poster() const {
  return [notices = *this](const AllocationNotice& notice) { notices.post(notice); };
}

AllocationNotices::Subscription AllocationNotices::subscribe(Observer observer) const {
  std::lock_guard lock(channel_->mutex);
  for (const auto& notice : channel_->waiting) tell(observer, notice);
  const std::uint64_t id = channel_->next_id++;
  channel_->observers.emplace_back(id, std::move(observer));
  return Subscription(channel_, id);
}

std::optional<std::string> AllocationNotices::waiting() const {
  std::lock_guard lock(channel_->mutex);
  if (channel_->waiting.empty()) return std::nullopt;
  return channel_->waiting.back().line;
}

}  // namespace hiera::engine::eval
