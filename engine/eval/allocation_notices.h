#pragma once
// What worker allocations (a Slurm job) tell the user, and the channel that
// carries it to whoever shows it: the CLI's progress line, an editor's
// $/progress and log, or a test. A pending allocation is a state, not just a
// line: the channel remembers it until the allocation runs or ends, so a
// run that starts watching meanwhile still learns that it waits.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace hiera::engine::eval {

enum class AllocationNoticeKind {
  Info,     // a line and nothing more: submitted, cancelled
  Waiting,  // the allocation pends: workers wait for it until a Running or Ended notice
  Running,  // it runs: the wait is over
  Ended,    // it ended while workers waited for it: the wait is over, without workers
};

struct AllocationNotice {
  AllocationNoticeKind kind = AllocationNoticeKind::Info;
  std::string source;  // the allocation: "Slurm job 123"
  std::string line;    // for the user: "Slurm job 123 is pending (Resources); workers start when it runs"
  bool operator==(const AllocationNotice&) const = default;
};

using AllocationNoticeCallback = std::function<void(const AllocationNotice&)>;

// A handle: copies share one channel. Thread-safe.
class AllocationNotices {
  struct Channel;

 public:
  using Observer = AllocationNoticeCallback;

  // Ends an observer's subscription when destroyed (or reset); after that
  // it is never called again. Movable.
  class Subscription {
   public:
    Subscription() = default;
    Subscription(Subscription&& other) noexcept;
    Subscription& operator=(Subscription&& other) noexcept;
    ~Subscription() { reset(); }
    void reset();

   private:
    friend class AllocationNotices;
    Subscription(std::weak_ptr<Channel> channel, std::uint64_t id) : channel_(std::move(channel)), id_(id) {}
    std::weak_ptr<Channel> channel_;
    std::uint64_t id_ = 0;
  };

  AllocationNotices();

  // Calls every observer, in the order they subscribed, on the caller's
  // thread and one notice at a time (an observer must not post or subscribe).
  // An observer that throws is skipped: telling must not decide what runs.
  void post(const AllocationNotice& notice) const;
  // post(), as a callback for an allocation (it keeps the channel alive).
  AllocationNoticeCallback poster() const;
  // The observer first hears every allocation that waits now (as its
  // Waiting notice), then every notice posted after.
  [[nodiscard]] Subscription subscribe(Observer observer) const;
  // The latest Waiting line of an allocation still waiting; nullopt when none waits.
  std::optional<std::string> waiting() const;

 private:
  std::shared_ptr<Channel> channel_;
};

}  // namespace hiera::engine::eval
